"""Abstention: on a question the tool cannot answer, the answer says so and guesses nothing; on an
answerable one, whether it refused anyway (a false abstention). Graded by `evaluation.refusal`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evaluation.columns import Column
from evaluation.evaluators.base import Evaluator, Results, ScoreContext, mean
from evaluation.records import EvalRecord
from evaluation.refusal import grade_abstention, grade_committed_abstention, refuses
from evaluation.statistics import rate_with_interval


class Abstention(Evaluator):
    name = "abstention"
    columns = (Column("abstained", "Said it cannot (unanswerable)", "rate"),)
    caption = "Said it cannot = on questions the tool cannot answer, the answer says so and guesses nothing."

    def evaluate(self, ctx: ScoreContext) -> Results:
        record, committed = ctx.record, ctx.record.committed_answer
        if record.expected == "call":
            by_text = refuses(record.final_answer) if record.final_answer else None
            return {"refused": committed.refuses if committed is not None else by_text}
        by_text = grade_abstention(record.final_answer, record.query)
        verdict = grade_committed_abstention(committed) if committed is not None else by_text
        return {
            "abstained": verdict.correct,
            "answer_reason": verdict.reason,
            "answer_graded": "committed" if committed is not None else "text",
            "abstained_text": by_text.correct,
        }

    def failures(self, record: EvalRecord) -> list[str]:
        return [] if record.expected == "call" or record.scores.abstained else ["did not say it cannot"]

    def overall(self, records: Sequence[EvalRecord]) -> dict[str, Any]:
        return {"abstention": abstention_summary(records)}

    def leaderboard_values(self, summary: Mapping[str, Any]) -> dict[str, Any]:
        return {"abstained": ((summary.get("abstention") or {}).get("accuracy") or {}).get("rate")}


def abstention_summary(records: Sequence[EvalRecord]) -> dict[str, Any]:
    """How often the answer said "cannot" where that is right, and where it is not."""
    unanswerable = [r for r in records if r.expected == "abstain"]
    answered = [r for r in records if r.expected == "call" and r.scores.refused is not None]
    reasons: dict[str, list[EvalRecord]] = {}
    for record in unanswerable:
        reasons.setdefault((record.abstention_reason or "").split(":")[0], []).append(record)
    return {
        "cases": len(unanswerable),
        "accuracy": rate_with_interval([bool(r.scores.abstained) for r in unanswerable]),
        "by_reason": {k: mean(float(bool(r.scores.abstained)) for r in v) for k, v in sorted(reasons.items())},
        "without_a_call": sum(1 for r in unanswerable if not r.predicted_calls),
        "answers_to_answerable": len(answered),
        "false_refusals": sum(1 for r in answered if r.scores.refused),
        "false_refusal_rate": mean(float(bool(r.scores.refused)) for r in answered),
    }
