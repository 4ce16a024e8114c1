"""Scoring one record: argument match and execution match under each protocol, and diagnostics.

The same code scores a live eval, a rescoring of a results file (`dbgorilla score`) and the audit's
gameability probes, so a probe that earns nothing here earns nothing in an eval.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from agent.citations import check_citations, received_uuids
from evaluation.abstention import grade_abstention, grade_committed_abstention, refuses
from evaluation.answers import AnswerKey, chain_key, grade, grade_committed, single_call_key
from evaluation.argument_match import (
    Canonical,
    exact_as_written,
    score_canonical,
    score_rejected,
    search_similarity,
    try_canonical,
)
from evaluation.execution_match import compare, vacuity
from evaluation.protocols import PROTOCOLS, Protocol, protocol_calls
from evaluation.records import EvalRecord, ProtocolScores, Scores
from executors import (
    SHORT_ID_CHARS,
    Blame,
    CollectionSchema,
    DatabaseSchema,
    ExecutorError,
    PropertySchema,
    QueryResult,
    WeaviateExecutor,
)
from executors.vocabulary import FIELD_KIND, GROUPBY_FIELD, PropertyKind
from fixtures.datasets.chains import run_chain

#: What a ground truth is read from: anything with an id, a ground truth dict and a collection.
TruthOutcome = QueryResult | ExecutorError
#: The schema a record's calls are validated against (None: derive one from the calls themselves).
SchemaFor = Callable[[EvalRecord], DatabaseSchema | None]


class Gold(BaseModel):
    """A question's gold calls as resolved on the data, their results, and its answer key."""

    calls: list[dict[str, Any]]
    results: list[QueryResult]
    key: AnswerKey
    #: The values a chain's steps picked, by name (empty for a one-call question).
    values: dict[str, str | float] = {}


class GroundTruthCache:
    """Executes each ground truth once per run (and each collection's size once)."""

    def __init__(self, executor: WeaviateExecutor, client: Any) -> None:
        self.executor = executor
        self.client = client
        self._results: dict[str, TruthOutcome] = {}
        self._sizes: dict[str, int | None] = {}
        self._golds: dict[str, Gold] = {}
        self._values: dict[tuple[str, str], list[str]] = {}
        self._lock = threading.Lock()

    def gold(self, record: EvalRecord) -> Gold | ExecutorError:
        """The record's gold: its chain run on the data (or its one ground truth) and answer key."""
        with self._lock:
            cached = self._golds.get(record.id)
        if cached is not None:
            return cached
        try:
            if record.chain:
                run = run_chain(record.chain, self.executor.execute)
                key = (
                    chain_key(record.answer, run.values, self.values)
                    if run.ok
                    else AnswerKey(unscored="; ".join(run.issues))
                )
                gold = Gold(calls=run.calls, results=run.results, key=key, values=run.values)
            else:
                truth = self.result(record)
                if isinstance(truth, ExecutorError):
                    return truth
                key = single_call_key(
                    truth,
                    lambda prop: _kind(self.executor.schema, record.collection, prop),
                    lambda prop: self.values(record.collection, prop),
                )
                gold = Gold(calls=[record.ground_truth], results=[truth], key=key)
        except ExecutorError as error:
            return error  # not cached: the server may come back
        with self._lock:
            self._golds[record.id] = gold
        return gold

    def values(self, collection: str, prop: str) -> list[str]:
        """Every value `prop` takes in `collection` (empty when it cannot be read)."""
        with self._lock:
            if (collection, prop) in self._values:
                return self._values[(collection, prop)]
        try:
            result = self.executor.execute({"collection_name": collection, "groupby_property": prop})
        except ExecutorError:
            return []
        values = list(result.groups or {})
        with self._lock:
            self._values[(collection, prop)] = values
        return values

    def result(self, case: Any) -> TruthOutcome:
        with self._lock:
            cached = self._results.get(case.id)
        if cached is not None:
            return cached
        try:
            outcome: TruthOutcome = self.executor.execute(case.ground_truth)
        except ExecutorError as error:
            return error  # not cached: the server may come back
        with self._lock:
            self._results[case.id] = outcome
        return outcome

    def collection_size(self, collection: str) -> int | None:
        with self._lock:
            if collection in self._sizes:
                return self._sizes[collection]
        size = self.executor.collection_size(collection)  # best effort: vacuity is then reported as unknown
        if size is None:
            return None
        with self._lock:
            self._sizes[collection] = size
        return size


def _cited_text(record: EvalRecord) -> str:
    """The prose answer and the committed sources: everything the answer cites."""
    committed = record.committed_answer
    sources = " ".join(f"[{s}]" if len(s) == SHORT_ID_CHARS else s for s in committed.sources) if committed else ""
    return f"{record.final_answer or ''} {sources}".strip()


def _kind(schema: DatabaseSchema, collection: str, prop: str) -> PropertyKind | None:
    found = schema.get(collection)
    found_property = found.get_property(prop) if found is not None else None
    return found_property.kind if found_property is not None else None


def schema_from_calls(calls: list[dict[str, Any]]) -> DatabaseSchema:
    """A schema in which every property the calls name has the kind of the slot that first names it.

    For predictions of a dataset whose schema is not at hand (the paper's result files): a call is
    then judged on its own structure, as the executor would judge it against such a database.
    """
    properties: dict[str, dict[str, PropertySchema]] = {}
    data_types = {PropertyKind.TEXT: "text", PropertyKind.NUMBER: "number", PropertyKind.BOOLEAN: "boolean"}
    for call in calls:
        collection = properties.setdefault(str(call.get("collection_name", "")), {})
        for slot, kind in FIELD_KIND.items():
            part = call.get(slot)
            name = part.get("property_name") if isinstance(part, dict) else None
            if isinstance(name, str) and name not in collection:
                collection[name] = PropertySchema(name=name, data_type=data_types[kind], tokenization="word")
        group = call.get(GROUPBY_FIELD)
        if isinstance(group, str) and group.strip() and group not in collection:
            collection[group] = PropertySchema(name=group, data_type="text", tokenization="word")
    collections = [CollectionSchema(name=name, properties=tuple(props.values())) for name, props in properties.items()]
    return DatabaseSchema(collections=tuple(sorted(collections, key=lambda c: c.name)))


class Scorer:
    """Scores records; with a live `executor` (and its ground-truth cache) execution match too."""

    def __init__(
        self,
        schema_for: SchemaFor,
        executor: WeaviateExecutor | None = None,
        truths: GroundTruthCache | None = None,
    ) -> None:
        self.schema_for = schema_for
        self.executor = executor
        self.truths = truths

    def score(self, record: EvalRecord) -> EvalRecord:
        committed = record.committed_answer
        cited = check_citations(_cited_text(record), received_uuids(c.result for c in record.predicted_calls))
        if record.expected == "abstain":  # no ground truth to run: the answer alone is graded
            by_text = grade_abstention(record.final_answer, record.query)
            verdict = grade_committed_abstention(committed) if committed is not None else by_text
            scores = Scores(
                calls_made=len(record.predicted_calls),
                abstained=verdict.correct,
                answer_reason=verdict.reason,
                answer_graded="committed" if committed is not None else "text",
                abstained_text=by_text.correct,
            )
            scores.citations, scores.citations_received = len(cited.cited), len(cited.received)
            scores.citation_precision = cited.precision
            return record.model_copy(update={"scores": scores})
        schema = self.schema_for(record)
        if schema is None:
            calls = [record.ground_truth, *record.alternatives, *(c.arguments for c in record.predicted_calls)]
            schema = schema_from_calls([c for c in calls if isinstance(c, dict)])
        truths = [t for t in (try_canonical(a, schema) for a in [record.ground_truth, *record.alternatives]) if t]
        first_call = record.first_arguments
        scores = Scores(
            exact_match_as_written=exact_as_written(record.ground_truth, first_call),
            search_similarity=search_similarity(
                record.ground_truth.get("search_query"), (first_call or {}).get("search_query")
            ),
            calls_made=len(record.predicted_calls),
            refused=committed.refuses
            if committed is not None
            else (refuses(record.final_answer) if record.final_answer else None),
            citations=len(cited.cited),
            citations_received=len(cited.received),
            citation_precision=cited.precision,
        )
        truth: TruthOutcome | None = None
        if self.executor is not None and self.truths is not None:
            truth = self.truths.result(record)
            if isinstance(truth, QueryResult):
                scores.ground_truth_vacuous = vacuity(truth, self.truths.collection_size(record.collection))
                record = record.model_copy(update={"ground_truth_result": truth.model_dump(mode="json")})
            else:
                record = record.model_copy(update={"ground_truth_error": f"{truth.code}: {truth.message}"})
        gold = self.truths.gold(record) if self.executor is not None and self.truths is not None else None
        final_truths, final_truth = truths, truth
        if record.chain:  # the answer's calls are scored against the chain's last gold call
            last = gold.calls[-1] if isinstance(gold, Gold) else (record.gold_calls or [None])[-1]
            final_truths = [t for t in [try_canonical(last, schema)] if t] if last else []
            final_truth = gold.results[-1] if isinstance(gold, Gold) else gold
        results = _Executions(self.executor)
        for protocol in PROTOCOLS:
            targets = (truths, truth) if protocol is Protocol.FIRST else (final_truths, final_truth)
            setattr(scores, protocol.value, self._protocol(record, protocol, schema, *targets, results))
        ran = [results.run(c.arguments) for c in record.predicted_calls if c.ok and c.arguments is not None]
        got = [r for r in ran if isinstance(r, QueryResult)]
        if isinstance(truth, QueryResult):
            scores.any_call_execution_exact = any(compare(truth, r).exact for r in got)
        if gold is not None:
            record = self._grade_answer(record, scores, got, gold)
        scores.scoring_error = results.infrastructure_error
        return record.model_copy(update={"scores": scores})

    @staticmethod
    def _grade_answer(
        record: EvalRecord, scores: Scores, got: list[QueryResult], gold: Gold | ExecutorError
    ) -> EvalRecord:
        """The final answer against the key, and how many gold calls the run reached."""
        if isinstance(gold, ExecutorError):
            scores.answer_reason = f"no key: {gold.code}: {gold.message}"
            return record
        by_text = grade(record.final_answer, gold.key, record.query)
        committed = record.committed_answer
        verdict = grade_committed(committed, gold.key) if committed is not None else by_text
        scores.answer, scores.answer_reason = verdict.correct, verdict.reason or None
        scores.answer_text = by_text.correct
        if verdict.correct is not None:
            scores.answer_graded = "committed" if committed is not None else "text"
        reached = sum(any(compare(result, r).exact for r in got) for result in gold.results)
        scores.gold_calls_reached = round(reached / len(gold.results), 6) if gold.results else None
        return record.model_copy(update={"gold_calls": gold.calls, "answer_key": gold.key})

    def _protocol(
        self,
        record: EvalRecord,
        protocol: Protocol,
        schema: DatabaseSchema,
        truths: list[Canonical],
        truth: TruthOutcome | None,
        results: _Executions,
    ) -> ProtocolScores:
        calls = protocol_calls(record, protocol)
        predicted = try_canonical(calls[0].arguments, schema) if len(calls) == 1 and calls[0].arguments else None
        arguments = score_canonical(truths, predicted) if truths else score_canonical([], None)
        if predicted is None and len(calls) == 1 and isinstance(calls[0].arguments, dict):
            arguments = score_rejected(truths, calls[0].arguments, schema)  # routing still counts
        scores = ProtocolScores(
            calls=len(calls),
            exact_match=arguments.exact_match,
            ast_score=arguments.ast_score,
            ast_score_lenient=arguments.ast_score_lenient,
            routing=arguments.routing,
            components=arguments.components or {},
        )
        if not isinstance(truth, QueryResult):
            return scores
        scores.execution_exact = scores.execution_subset = False
        scores.precision = scores.recall = scores.f1 = 0.0
        if predicted is None:  # no call, several calls at once, or one the executor rejects
            return scores
        result = results.run(calls[0].arguments)
        if isinstance(result, QueryResult):
            match = compare(truth, result)
            scores.execution_exact, scores.execution_subset = match.exact, match.subset
            scores.precision, scores.recall, scores.f1 = match.precision, match.recall, round(match.f1, 6)
        return scores


class _Executions:
    """Each distinct predicted call executed once per record; an infrastructure failure is remembered."""

    def __init__(self, executor: WeaviateExecutor | None) -> None:
        self.executor = executor
        self._done: dict[str, TruthOutcome] = {}
        self.infrastructure_error: str | None = None

    def run(self, arguments: dict[str, Any] | None) -> TruthOutcome | None:
        if self.executor is None or arguments is None:
            return None
        key = json.dumps(arguments, sort_keys=True, default=str)
        if key not in self._done:
            try:
                self._done[key] = self.executor.execute(arguments)
            except ExecutorError as error:
                self._done[key] = error
                if error.blame is Blame.INFRASTRUCTURE:
                    self.infrastructure_error = f"{error.code}: {error.message}"
        return self._done[key]
