"""Offline scoring: read prediction files (ours, or the DBGorilla paper's result format) and score them again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evaluation.records import EvalRecord, Outcome, PredictedCall
from evaluation.runner import live_scorer, read_records, scoring_executor
from evaluation.scorer import Scorer
from executors import DatabaseSchema, QueryDatabaseArguments, WeaviateExecutor
from executors.ownership import CollectionNames
from executors.vocabulary import COMPONENT_FIELDS, COMPONENT_OF_FIELD
from fixtures.datasets import PAPER_ID_PREFIX, complexity_of, components_of, paper_case_id
from fixtures.datasets.paper import weaviate_collection_name
from fixtures.use_cases import database_schema_of, get_use_case, use_case_names

PAPER_QUERY_FIELDS = ("collection_name", *COMPONENT_FIELDS)
#: The use case of records read from the paper's result format (their schemas are not ours).
PAPER_USE_CASE = "paper"


def load_predictions(path: Path) -> list[EvalRecord]:
    """Our `results.jsonl`, or the DBGorilla result format `{"model_name", "detailed_results": [...]}`."""
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("{") and '"detailed_results"' in text[:100_000]:
        return from_paper_results(json.loads(text))
    return read_records(path)


def _paper_arguments(query: dict[str, Any] | None, label: bool) -> dict[str, Any] | None:
    """The paper's queries name the collection `target_collection`; ours `collection_name`.

    A label's collection is given Weaviate's capitalisation (the paper's labels were never run
    against Weaviate); a prediction keeps the name it gave: `restaurants` is not `Restaurants`.
    """
    if query is None:
        return None
    arguments = {k: v for k, v in query.items() if k in PAPER_QUERY_FIELDS and v not in (None, "", {})}
    collection = query.get("collection_name") or query.get("target_collection")
    if collection is not None:
        arguments["collection_name"] = weaviate_collection_name(str(collection)) if label else str(collection)
    return arguments


def from_paper_results(payload: dict[str, Any]) -> list[EvalRecord]:
    records = []
    for item in payload.get("detailed_results", []):
        truth = _paper_arguments(item.get("ground_truth_query"), label=True) or {}
        predicted = _paper_arguments(item.get("predicted_query"), label=False)
        try:
            parsed = QueryDatabaseArguments.model_validate(truth)
            complexity, components = complexity_of(parsed).value, [c.value for c in components_of(parsed)]
        except ValueError:
            complexity, components = "unknown", [COMPONENT_OF_FIELD[f].value for f in COMPONENT_FIELDS if truth.get(f)]
        calls = (
            []
            if predicted is None
            else [
                PredictedCall(
                    tool_name="query_database", raw_arguments=json.dumps(predicted), arguments=predicted, ok=True
                )
            ]
        )
        records.append(
            EvalRecord(
                id=paper_case_id(int(item.get("query_index", len(records)))),
                use_case=PAPER_USE_CASE,
                query=item.get("natural_language_query", ""),
                complexity=complexity,
                components=components,
                ground_truth=truth,
                model=str(payload.get("model_name", "unknown")),
                tool_design=PAPER_ID_PREFIX,
                predicted_calls=calls,
                outcome=Outcome.NO_TOOL_CALL if predicted is None else Outcome.OK,
                error=item.get("error"),
            )
        )
    return records


def offline_schema(record: EvalRecord) -> DatabaseSchema | None:
    """The schema our loader creates for the record's use case; None for a use case not ours."""
    if record.use_case not in use_case_names():
        return None
    return database_schema_of([get_use_case(record.use_case)])


def collection_names(records: list[EvalRecord], namespace: str | None = None) -> CollectionNames:
    """Where the records' collections live: predictions on the DBGorilla paper's format (ids
    `dbgorilla-NNNN`) run on the paper set's collections, any others on our use cases'."""
    paper = bool(records) and all(r.id.startswith(f"{PAPER_ID_PREFIX}-") for r in records)
    return CollectionNames.for_dataset("paper/" if paper else "usecase/", namespace)


def rescore(records: list[EvalRecord], client: Any | None, names: CollectionNames | None = None) -> list[EvalRecord]:
    """Argument scores always; execution scores too when a live client is given (on the collections
    `names` maps the logical names to)."""
    if client is None:
        scorer = Scorer(offline_schema)
    else:
        scorer = live_scorer(client, scoring_executor(client, WeaviateExecutor(client, names=names)))
    return [scorer.score(record) for record in records]
