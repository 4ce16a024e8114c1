"""A question's gold, executed once per run: its ground truth's result, its chain run on the data,
and the answer key read from them (`GroundTruthCache`, shared by the scorer, the audit and the
inspect tasks)."""

from __future__ import annotations

import threading
from typing import Any

from pydantic import BaseModel

from evaluation.answers import AnswerKey, chain_key, single_call_key
from evaluation.records import EvalRecord
from evaluation.search_cut import SearchCut, at_cut, search_cut
from executors import Blame, DatabaseSchema, ExecutorError, QueryResult, WeaviateExecutor
from executors.vocabulary import PropertyKind
from fixtures.datasets.chains import run_chain

#: What a ground truth is read from: anything with an id, a ground truth dict and a collection.
TruthOutcome = QueryResult | ExecutorError


class Gold(BaseModel):
    """A question's gold calls as resolved on the data, their results, and its answer key."""

    calls: list[dict[str, Any]]
    results: list[QueryResult]
    key: AnswerKey
    #: The values a chain's steps picked, by name (empty for a one-call question).
    values: dict[str, str | float] = {}


class GroundTruthCache:
    """Executes each ground truth once per run (and each collection's size once), at its question's
    search cut (`evaluation.search_cut`): the one place that cut is chosen, so every door agrees."""

    def __init__(self, executor: WeaviateExecutor, client: Any) -> None:
        self.executor = executor
        self.client = client
        self._results: dict[str, TruthOutcome] = {}
        self._sizes: dict[str, int | None] = {}
        self._golds: dict[str, Gold] = {}
        self._values: dict[tuple[str, str], list[str]] = {}
        self._cuts: dict[str, SearchCut | None] = {}
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
                cut = self.search_cut(record)
                key = (
                    AnswerKey(unscored=f"unstable on this data: {cut.unstable}")
                    if cut is not None and cut.unstable
                    else single_call_key(
                        truth,
                        lambda prop: _kind(self.executor.schema, record.collection, prop),
                        lambda prop: self.values(record.collection, prop),
                    )
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

    def search_cut(self, case: Any) -> SearchCut | None:
        """The case's search cut on this data (None: its label does not search); computed once.
        Raises `ExecutorError` when the data cannot be read (not cached: the server may come back)."""
        with self._lock:
            if case.id in self._cuts:
                return self._cuts[case.id]
        try:
            cut = search_cut(self.executor, case.ground_truth)
        except ExecutorError as error:
            if error.blame is Blame.INFRASTRUCTURE:
                raise
            cut = None  # a label that does not run: its execution reports why
        with self._lock:
            self._cuts[case.id] = cut
        return cut

    def executor_for(self, case: Any, executor: WeaviateExecutor | None = None) -> WeaviateExecutor:
        """`executor` (default: the cache's own) at the case's search cut: what its gold and every
        call made for it run on."""
        return at_cut(executor or self.executor, self.search_cut(case))

    def result(self, case: Any) -> TruthOutcome:
        with self._lock:
            cached = self._results.get(case.id)
        if cached is not None:
            return cached
        try:
            outcome: TruthOutcome = self.executor_for(case).execute(case.ground_truth)
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


def _kind(schema: DatabaseSchema, collection: str, prop: str) -> PropertyKind | None:
    found = schema.get(collection)
    found_property = found.get_property(prop) if found is not None else None
    return found_property.kind if found_property is not None else None
