"""Offline scoring: read prediction files (ours, or the DBGorilla paper's result format) and score them again."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from evaluation.records import RESULT_LINE, EvalRecord, Outcome, PredictedCall, parse_results
from evaluation.runner import live_scorer, scoring_executor
from evaluation.scorer import Scorer
from executors import DatabaseSchema, QueryDatabaseArguments, WeaviateExecutor
from executors.ownership import CollectionNames
from executors.vocabulary import COMPONENT_FIELDS, COMPONENT_OF_FIELD, GROUPBY_FIELD, ToolOperations
from fixtures.datasets import PAPER_ID_PREFIX, complexity_of, components_of, paper_case_id
from fixtures.datasets.cases import operations_needed
from fixtures.datasets.paper import PaperSchema, schema_to_use_case, weaviate_collection_name, weaviate_property_name
from fixtures.input_files import (
    SHOWN_PROBLEMS,
    InputFileError,
    Problem,
    decoded,
    kind_of,
    not_what,
    os_problem,
    parse_json,
    validation_problems,
)
from fixtures.use_cases import database_schema_of, get_use_case, use_case_names

PAPER_QUERY_FIELDS = ("collection_name", *COMPONENT_FIELDS)
#: The use case of records read from the paper's result format (their schemas are not ours).
PAPER_USE_CASE = "paper"


#: What `score --predictions` reads, as an error says it.
PREDICTION_FORMATS = (
    f"our results.jsonl ({RESULT_LINE}) or the DBGorilla paper's result JSON "
    '({"model_name": ..., "detailed_results": [{"query_index": ..., "ground_truth_query": {...}, '
    '"predicted_query": {...}}, ...]})'
)


class PredictionFileError(InputFileError):
    """A prediction file from which nothing can be scored (or, under --strict, one with a line that cannot
    be read): scoring nothing is not a score."""


class PaperResult(BaseModel):
    """One entry of the paper's `detailed_results`; other keys (its own scores) are kept, not read."""

    model_config = ConfigDict(extra="allow")
    query_index: int | None = None
    natural_language_query: str = ""
    ground_truth_query: dict[str, Any] | None = None
    predicted_query: dict[str, Any] | None = None
    error: str | None = None


class PaperResults(BaseModel):
    model_config = ConfigDict(extra="allow")
    model_name: str = "unknown"
    detailed_results: list[Any]


@dataclass
class Predictions:
    """The records a prediction file holds, and the lines (or `detailed_results` entries) skipped."""

    records: list[EvalRecord]
    format: str  # "results" (ours) | "paper"
    skipped: list[Problem] = field(default_factory=list)
    skipped_count: int = 0
    #: Lines (or entries) the file holds, read or not.
    entries: int = 0
    #: By record id, the schema its label was written against where the file carries it (the paper's
    #: format): offline scoring checks labels and calls against it, as `--execute` does on the loaded set.
    schemas: dict[str, DatabaseSchema] = field(default_factory=dict)

    def first_skipped(self) -> list[Problem]:
        """The problems of the first few skipped lines, for a message."""
        firsts = sorted({p.item for p in self.skipped if p.item is not None})[:SHOWN_PROBLEMS]
        return [p for p in self.skipped if p.item in firsts]

    def skipped_message(self, path: Path) -> str:
        """What `score` warns of when it scores the rest: the skipped lines, the first few with why."""
        listed = self.first_skipped()
        more = self.skipped_count - len({p.item for p in listed})
        what = "entries of detailed_results" if self.format == "paper" else "lines"
        return "\n".join(
            [
                f"{path}: skipped {self.skipped_count} of {self.entries} {what} that are not predictions "
                "(--strict makes this an error):",
                *(f"  {problem}" for problem in listed),
                *([f"  ... and {more} more"] if more else []),
            ]
        )


def read_predictions(path: Path, strict: bool = False) -> Predictions:
    """Our `results.jsonl`, or the DBGorilla result format `{"model_name", "detailed_results": [...]}`.

    Lines that cannot be read are skipped and listed; `PredictionFileError` when none can be read, or
    under `strict` when any cannot."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise PredictionFileError(path, os_problem(error)) from None
    head = data[:100_000].decode("utf-8", errors="replace")
    if head.lstrip("\ufeff \t\r\n").startswith("{") and '"detailed_results"' in head:
        predictions = _read_paper_results(data, path)
        nouns = ("entry of detailed_results", "entries of detailed_results")
    else:
        read = parse_results(data)
        predictions = Predictions(read.records, "results", read.unreadable, len(read.unreadable_lines), read.lines)
        nouns = ("line", "lines")
    if not predictions.entries:
        raise PredictionFileError(path, f"holds no predictions: nothing to score; expected {PREDICTION_FORMATS}")
    if not predictions.records or (strict and predictions.skipped_count):
        why = "--strict: every line must be read" if predictions.records else "nothing to score"
        bad = not_what(predictions.skipped_count, predictions.entries, "a prediction", "predictions", nouns)
        raise PredictionFileError(
            path,
            f"{bad} ({why}); expected {PREDICTION_FORMATS}:",
            predictions.first_skipped(),
            predictions.skipped_count,
        )
    return predictions


def load_predictions(path: Path) -> list[EvalRecord]:
    """The records of a prediction file (unreadable lines skipped; see `read_predictions`)."""
    return read_predictions(path).records


def _read_paper_results(data: bytes, path: Path) -> Predictions:
    """The paper's result JSON: a malformed file or top level is an error; a malformed entry is skipped."""
    text, problem = decoded(data)
    payload = None
    if problem is None:
        payload, problem = parse_json(text or "", None, "the DBGorilla paper's result JSON")
    if problem is not None:
        raise PredictionFileError(path, "is not the DBGorilla paper's result JSON:", [problem])
    if not isinstance(payload, dict):
        summary = "is not the DBGorilla paper's result JSON:"
        raise PredictionFileError(path, summary, [Problem("top level", kind_of(payload), "a JSON object")])
    records, skipped, schemas = paper_results(payload, path)
    entries = len(payload["detailed_results"])
    return Predictions(records, "paper", skipped, len({p.item for p in skipped}), entries, schemas)


def paper_results(
    payload: dict[str, Any], path: Path
) -> tuple[list[EvalRecord], list[Problem], dict[str, DatabaseSchema]]:
    """The records of the paper's result payload, the problems of the entries that are not results, and
    by record id the schema its label carries (`ground_truth_query.database_schema`)."""
    try:
        results = PaperResults.model_validate(payload)
    except ValidationError as error:
        raise PredictionFileError(
            path, "is not the DBGorilla paper's result JSON:", validation_problems(error, "", separator=".")
        ) from None
    records: list[EvalRecord] = []
    skipped: list[Problem] = []
    schemas: dict[str, DatabaseSchema] = {}
    seen: dict[str, DatabaseSchema | None] = {}
    for index, entry in enumerate(results.detailed_results):
        where = f"detailed_results[{index}]"
        try:
            item = PaperResult.model_validate(entry)
            records.append(_paper_record(item, results.model_name, len(records)))
        except ValidationError as error:
            problems = validation_problems(error, where, index, separator=".")
            skipped += problems or [Problem(where, kind_of(entry), "a JSON object", index)]
            continue
        schema = _carried_schema((item.ground_truth_query or {}).get("database_schema"), seen)
        if schema is not None:
            schemas[records[-1].id] = schema
    return records, skipped, schemas


def _carried_schema(raw: Any, seen: dict[str, DatabaseSchema | None]) -> DatabaseSchema | None:
    """The schema the paper set's loader creates from a label's `database_schema` (an object, or a JSON
    string as published); None when it is not one. Each distinct schema is read once."""
    key = raw if isinstance(raw, str) else json.dumps(raw, sort_keys=True, default=str)
    if key not in seen:
        try:
            parsed = PaperSchema.model_validate(json.loads(raw) if isinstance(raw, str) else raw)
            seen[key] = database_schema_of([schema_to_use_case(parsed, PAPER_USE_CASE)])
        except (ValueError, RecursionError):  # ValidationError and JSONDecodeError are ValueErrors
            seen[key] = None
    return seen[key]


def from_paper_results(payload: dict[str, Any]) -> list[EvalRecord]:
    """The records of a paper result payload (entries that are not results are skipped)."""
    return paper_results(payload, Path("<paper results>"))[0]


def _paper_arguments(query: dict[str, Any] | None, label: bool) -> dict[str, Any] | None:
    """The paper's queries name the collection `target_collection`; ours `collection_name`.

    A label's names are given Weaviate's capitalisation, as the paper set's loader gives them
    (`fixtures.datasets.paper.to_arguments`; the labels were never run against Weaviate); a prediction
    keeps the names it gave: `restaurants` is not `Restaurants`.
    """
    if query is None:
        return None
    arguments = {k: v for k, v in query.items() if k in PAPER_QUERY_FIELDS and v not in (None, "", {})}
    collection = query.get("collection_name") or query.get("target_collection")
    if collection is not None:
        arguments["collection_name"] = weaviate_collection_name(str(collection)) if label else str(collection)
    if label:
        for name, value in arguments.items():
            if isinstance(value, dict) and isinstance(value.get("property_name"), str):
                arguments[name] = {**value, "property_name": weaviate_property_name(value["property_name"])}
        if isinstance(arguments.get(GROUPBY_FIELD), str):
            arguments[GROUPBY_FIELD] = weaviate_property_name(arguments[GROUPBY_FIELD])
    return arguments


def _paper_record(item: PaperResult, model_name: str, position: int) -> EvalRecord:
    truth = _paper_arguments(item.ground_truth_query, label=True) or {}
    predicted = _paper_arguments(item.predicted_query, label=False)
    try:
        parsed = QueryDatabaseArguments.model_validate(truth)
        complexity, components = complexity_of(parsed).value, [c.value for c in components_of(parsed)]
    except ValueError:
        complexity, components = "unknown", [COMPONENT_OF_FIELD[f].value for f in COMPONENT_FIELDS if truth.get(f)]
    calls = (
        []
        if predicted is None
        else [
            PredictedCall(tool_name="query_database", raw_arguments=json.dumps(predicted), arguments=predicted, ok=True)
        ]
    )
    return EvalRecord(
        id=paper_case_id(position if item.query_index is None else item.query_index),
        use_case=PAPER_USE_CASE,
        query=item.natural_language_query,
        complexity=complexity,
        components=components,
        ground_truth=truth,
        model=model_name,
        tool_design=PAPER_ID_PREFIX,
        predicted_calls=calls,
        outcome=Outcome.NO_TOOL_CALL if predicted is None else Outcome.OK,
        error=item.error,
    )


def offline_schema(record: EvalRecord) -> DatabaseSchema | None:
    """The schema our loader creates for the record's use case; None for a use case not ours."""
    if record.use_case not in use_case_names():
        return None
    return database_schema_of([get_use_case(record.use_case)])


def _viewed(schema: DatabaseSchema | None, operations: ToolOperations) -> DatabaseSchema | None:
    return schema.for_operations(operations) if schema is not None else None


def collection_names(records: list[EvalRecord], namespace: str | None = None) -> CollectionNames:
    """Where the records' collections live: predictions on the DBGorilla paper's format (ids
    `dbgorilla-NNNN`) run on the paper set's collections, any others on our use cases'."""
    paper = bool(records) and all(r.id.startswith(f"{PAPER_ID_PREFIX}-") for r in records)
    return CollectionNames.for_dataset("paper/" if paper else "usecase/", namespace)


def unknown_schemas(records: list[EvalRecord], schemas: Mapping[str, DatabaseSchema]) -> list[str]:
    """The ids offline scoring has no schema for (not our use case, none carried or given): their labels
    and calls are checked against one read off the calls, which `eval` and `--execute` do not use."""
    return [r.id for r in records if r.expected == "call" and r.id not in schemas and offline_schema(r) is None]


def rescore(
    records: list[EvalRecord],
    client: Any | None,
    names: CollectionNames | None = None,
    schemas: Mapping[str, DatabaseSchema] | None = None,
) -> list[EvalRecord]:
    """Argument scores always; execution scores too when a live client is given (on the collections
    `names` maps the logical names to). Offline, a record is checked against `schemas[id]` (the
    dataset's, or the one its file carries), else its use case's: the schema the live set has, so a
    label is valid or not the same way in both."""
    # Records are scored with the smallest tool their gold calls are written in (as they were run).
    operations = operations_needed(records)
    if client is None:
        given = schemas or {}
        scorer = Scorer(lambda record: _viewed(given.get(record.id) or offline_schema(record), operations))
    else:
        executor = WeaviateExecutor(client, names=names, operations=operations)
        scorer = live_scorer(client, scoring_executor(client, executor))
    return [scorer.score(record) for record in records]
