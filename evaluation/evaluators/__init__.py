"""The scores, one evaluator each (pydantic_evals' `Evaluator` is the pattern).

The scorer runs every evaluator over a record's `ScoreContext` and keeps their named results as the
record's `Scores`; `evaluation.summary` builds the run summary from their numbers, and the report takes
their leaderboard columns (in this order), caption sentences and failure reasons. A new score is its
evaluator module and a line here; the fields it writes in `Scores` and, if it adds summary numbers,
in `evaluation.formats.RunSummary` (the published formats: docs/schemas are generated from them);
and a test.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evaluation.evaluators.abstained import Abstention
from evaluation.evaluators.answer import Answer
from evaluation.evaluators.arguments import Arguments
from evaluation.evaluators.base import Evaluator, Executions, Results, ScoreContext, mean
from evaluation.evaluators.cited import Citations
from evaluation.evaluators.contract import Contract
from evaluation.evaluators.execution import Execution
from evaluation.evaluators.trajectory import Trajectory
from evaluation.records import EvalRecord

EVALUATORS: tuple[Evaluator, ...] = (
    Arguments(),
    Execution(),
    Answer(),
    Abstention(),
    Trajectory(),
    Citations(),
    Contract(),
)


def evaluator(name: str) -> Evaluator:
    return next(e for e in EVALUATORS if e.name == name)


def evaluate(ctx: ScoreContext) -> dict[str, Any]:
    """Every evaluator's named results for one record, merged: protocol blocks field by field."""
    merged: dict[str, Any] = {}
    for each in EVALUATORS:
        if not each.scores(ctx.record):
            continue
        for name, value in each.evaluate(ctx).items():
            if isinstance(value, dict) and isinstance(merged.get(name), dict):
                merged[name] = {**merged[name], **value}
            else:
                merged[name] = value
    return merged


def failures(record: EvalRecord, evaluators: Sequence[Evaluator] = EVALUATORS) -> list[str]:
    """Why each score that applies counts the record against the model."""
    return [reason for each in evaluators if each.scores(record) for reason in each.failures(record)]


__all__ = [
    "EVALUATORS",
    "Evaluator",
    "Executions",
    "Results",
    "ScoreContext",
    "evaluate",
    "evaluator",
    "failures",
    "mean",
]
