"""Offline scoring: read prediction files (ours or DBGorilla's) and score them again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dbgorilla.evaluation.argument_match import COMPONENT_LABELS
from dbgorilla.evaluation.cases import Case
from dbgorilla.evaluation.records import EvalRecord, Outcome, PredictedCall
from dbgorilla.evaluation.runner import GroundTruthCache, read_records, score_record, scoring_executor
from fixtures.benchmark import complexity_of, components_of

DBGORILLA_QUERY_FIELDS = ("collection_name", *COMPONENT_LABELS)


def load_predictions(path: Path) -> list[EvalRecord]:
    """Our `results.jsonl`, or the DBGorilla result format `{"model_name", "detailed_results": [...]}`."""
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("{") and '"detailed_results"' in text[:100_000]:
        return from_dbgorilla_results(json.loads(text))
    return read_records(path)


def _dbgorilla_arguments(query: dict[str, Any] | None) -> dict[str, Any] | None:
    """DBGorilla queries name the collection `target_collection`; ours `collection_name`."""
    if query is None:
        return None
    arguments = {k: v for k, v in query.items() if k in DBGORILLA_QUERY_FIELDS and v not in (None, "", {})}
    collection = query.get("collection_name") or query.get("target_collection")
    if collection is not None:
        arguments["collection_name"] = str(collection)[:1].upper() + str(collection)[1:]
    return arguments


def from_dbgorilla_results(payload: dict[str, Any]) -> list[EvalRecord]:
    from executors import QueryDatabaseArguments

    records = []
    for item in payload.get("detailed_results", []):
        truth = _dbgorilla_arguments(item.get("ground_truth_query")) or {}
        predicted = _dbgorilla_arguments(item.get("predicted_query"))
        try:
            parsed = QueryDatabaseArguments.model_validate(truth)
            complexity, components = complexity_of(parsed).value, [c.value for c in components_of(parsed)]
        except ValueError:
            complexity, components = "unknown", [COMPONENT_LABELS[f] for f in COMPONENT_LABELS if truth.get(f)]
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
                id=f"dbgorilla-{int(item.get('query_index', len(records))):04d}",
                use_case="dbgorilla",
                query=item.get("natural_language_query", ""),
                complexity=complexity,
                components=components,
                ground_truth=truth,
                model=str(payload.get("model_name", "unknown")),
                tool_design="dbgorilla",
                predicted_calls=calls,
                outcome=Outcome.NO_TOOL_CALL if predicted is None else Outcome.OK,
                error=item.get("error"),
            )
        )
    return records


def rescore(records: list[EvalRecord], client: Any | None) -> list[EvalRecord]:
    """Argument scores always; execution scores too when a live client is given."""
    if client is None:
        return [score_record(r, None, None) for r in records]
    scorer = scoring_executor(client)
    truths = GroundTruthCache(scorer, client)
    rescored = []
    for record in records:
        case = Case.of(record)
        rescored.append(score_record(record, truths.result(case), scorer, truths.collection_size(case.collection)))
    return rescored
