"""How a run got to its answer: one label per question, and the calls it wasted on the way.

A pass rate says whether the answer was right; the trajectory says how. A question answered right
after two failed calls and one answered right at once both pass, and are told apart here; a run that
stopped after its first call is told apart from one that ran out of steps. Read off the record alone
(calls, their errors, the answer and its verdict), so any results file can be labelled again.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from evaluation.columns import Column
from evaluation.evaluators.base import Evaluator, Results, ScoreContext, mean
from evaluation.records import EvalRecord, Outcome
from evaluation.statistics import passed

#: The labels, in the order a report lists them (best first).
TRAJECTORIES = (
    "right at once",
    "right after failed calls",
    "right without a call",
    "wrong",
    "wrong after failed calls",
    "every call failed",
    "no call",
    "no answer",
)


def failed_calls(record: EvalRecord) -> int:
    return sum(1 for call in record.predicted_calls if not call.ok)


def redundant_calls(record: EvalRecord) -> int:
    """Calls that repeated an earlier call's arguments exactly (their result was already known)."""
    seen = [json.dumps(c.arguments, sort_keys=True) for c in record.predicted_calls if c.arguments is not None]
    return len(seen) - len(set(seen))


def trajectory(record: EvalRecord) -> str:
    calls, failed = record.predicted_calls, failed_calls(record)
    answered = bool(record.final_answer and record.final_answer.strip())
    if record.outcome in (Outcome.MODEL_ERROR, Outcome.TIMEOUT) or (calls and not answered):
        return "no answer"
    if passed(record):
        if not calls:
            return "right without a call"
        return "right after failed calls" if failed else "right at once"
    if not calls:
        return "no call"
    if failed == len(calls):
        return "every call failed"
    return "wrong after failed calls" if failed else "wrong"


def trajectory_summary(records: Sequence[EvalRecord]) -> dict[str, Any]:
    """How many questions took each path, and the failed and repeated calls per question."""
    counts = Counter(trajectory(r) for r in records)
    return {
        "counts": {label: counts[label] for label in TRAJECTORIES if counts[label]},
        "failed_calls_per_question": round(sum(map(failed_calls, records)) / len(records), 6) if records else None,
        "redundant_calls_per_question": round(sum(map(redundant_calls, records)) / len(records), 6)
        if records
        else None,
    }


class Trajectory(Evaluator):
    """How many calls, steps and corrections a question took, and the path it took (`trajectory`)."""

    name = "trajectory"
    kind_columns = (Column("calls", "Calls per question", "score"),)

    def evaluate(self, ctx: ScoreContext) -> Results:
        return {"calls_made": len(ctx.record.predicted_calls)}

    def summary(self, records: Sequence[EvalRecord], executed_scoring: bool) -> dict[str, Any]:
        return {
            "avg_calls_made": mean(r.scores.calls_made for r in records),
            "avg_steps": mean(r.steps for r in records),
            "avg_corrections": mean(r.corrections for r in records),
            "recovered_text_call_rate": mean(
                float(any(c.recovered_from_text for c in r.predicted_calls)) for r in records
            ),
        }

    def overall(self, records: Sequence[EvalRecord]) -> dict[str, Any]:
        return {"trajectories": trajectory_summary(records)}

    def kind_values(self, records: Sequence[EvalRecord]) -> dict[str, Any]:
        return {"calls": sum(r.scores.calls_made for r in records) / len(records) if records else None}
