"""An evaluator: one score, read off a shared context (pydantic_evals' `Evaluator` is the pattern).

`ScoreContext` is what every score of one record reads: the record, the schema its calls are
validated against, the accepted ground truths in canonical form, the label and the gold executed
once, and each distinct predicted call executed once. An `Evaluator` returns named results from
it: the `Scores` fields it owns, and per protocol the `ProtocolScores` fields it owns
(`{"first": {...}, "final": {...}}`). Over a run it gives its numbers to the summary and its
columns to the report, so a score is named once, in its evaluator (`evaluation.evaluators`).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

from evaluation.argument_match import Canonical, try_canonical
from evaluation.columns import Column
from evaluation.ground_truth import Gold, TruthOutcome
from evaluation.protocols import ScoringProtocol, protocol_calls
from evaluation.records import EvalRecord, PredictedCall
from evaluation.search_cut import SearchCut
from executors import Blame, DatabaseSchema, ExecutorError, QueryResult, WeaviateExecutor

#: An evaluator's named results: `Scores` fields, and per protocol name a dict of `ProtocolScores` fields.
Results = Mapping[str, Any]


def mean(values: Iterable[float]) -> float | None:
    """The mean rounded to 6 places (None for no values): every rate of the summary."""
    values = list(values)
    return round(sum(values) / len(values), 6) if values else None


class Executions:
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


@dataclass
class ScoreContext:
    """What the scores of one record read. An abstention question has no schema and no ground truth."""

    record: EvalRecord
    executions: Executions
    schema: DatabaseSchema | None = None
    #: The label and its alternatives in canonical form (those the executor accepts).
    truths: list[Canonical] = field(default_factory=list)
    #: The label executed (None: no live executor).
    truth: TruthOutcome | None = None
    collection_size: int | None = None
    #: The question's gold: its chain run on the data (or its one ground truth) and answer key.
    gold: Gold | ExecutorError | None = None
    #: What `final` is scored against: a chain's last gold call, otherwise the label.
    final_truths: list[Canonical] = field(default_factory=list)
    final_truth: TruthOutcome | None = None
    #: The question's search cut on this data (`evaluation.search_cut`; None: its label does not search).
    search_cut: SearchCut | None = None

    def targets(self, protocol: ScoringProtocol) -> tuple[list[Canonical], TruthOutcome | None]:
        """The accepted ground truths and the executed one a protocol's calls are scored against."""
        return (self.truths, self.truth) if protocol is ScoringProtocol.FIRST else (self.final_truths, self.final_truth)

    def calls(self, protocol: ScoringProtocol) -> list[PredictedCall]:
        return protocol_calls(self.record, protocol)

    def predicted(self, protocol: ScoringProtocol) -> Canonical | None:
        """The protocol's one call in canonical form; None for no call, several, or one the executor rejects."""
        calls = self.calls(protocol)
        if len(calls) != 1 or not calls[0].arguments or self.schema is None:
            return None
        return try_canonical(calls[0].arguments, self.schema)

    @cached_property
    def got(self) -> list[QueryResult]:
        """The results of every successful predicted call, from any step, each executed once."""
        ran = [
            self.executions.run(c.arguments) for c in self.record.predicted_calls if c.ok and c.arguments is not None
        ]
        return [r for r in ran if isinstance(r, QueryResult)]


class Evaluator(ABC):
    """One score. `evaluate` scores a record; the other methods give its numbers over a run.

    `summary` adds its keys to the run summary over the answerable questions, `overall` over every
    question; `protocol_numbers` adds its numbers to each protocol's block (and each slice's),
    `slice_numbers` its other numbers to each use case's and complexity's slice. `columns` are its
    leaderboard columns (their values from `leaderboard_values`), `kind_columns` its columns of the
    table by question kind (from `kind_values`), `caption` its sentence of the leaderboard's caption.
    """

    #: The score's name.
    name: ClassVar[str]
    #: Which questions it scores, by `EvalRecord.expected`: "call" (answerable), "abstain", or both.
    expects: ClassVar[frozenset[str]] = frozenset({"call", "abstain"})
    #: Its numbers need the predictions executed (absent from `score` without --execute).
    needs_execution: ClassVar[bool] = False
    columns: ClassVar[tuple[Column, ...]] = ()
    kind_columns: ClassVar[tuple[Column, ...]] = ()
    caption: ClassVar[str] = ""

    def scores(self, record: EvalRecord) -> bool:
        return record.expected in self.expects

    @abstractmethod
    def evaluate(self, ctx: ScoreContext) -> Results:
        """The named results of one record."""

    def failures(self, record: EvalRecord) -> list[str]:
        """Why this score counts the record against the model (empty: it does not)."""
        return []

    def protocol_numbers(self, records: Sequence[EvalRecord], protocol: ScoringProtocol) -> dict[str, Any]:
        return {}

    def slice_numbers(self, records: Sequence[EvalRecord]) -> dict[str, Any]:
        return {}

    def summary(self, records: Sequence[EvalRecord], executed_scoring: bool) -> dict[str, Any]:
        return {}

    def overall(self, records: Sequence[EvalRecord]) -> dict[str, Any]:
        return {}

    def leaderboard_values(self, summary: Mapping[str, Any]) -> dict[str, Any]:
        return {}

    def kind_values(self, records: Sequence[EvalRecord]) -> dict[str, Any]:
        return {}
