"""The final answer against the answer key (`evaluation.answers`): the committed value where the model
committed one, otherwise the prose; and how many of the gold calls (one, or a chain's) the run reached."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evaluation.answers import grade, grade_committed
from evaluation.columns import Column
from evaluation.evaluators.base import Evaluator, Results, ScoreContext, mean
from evaluation.execution_match import compare
from evaluation.records import EvalRecord
from executors import ExecutorError


class Answer(Evaluator):
    name = "answer"
    expects = frozenset({"call"})
    columns = (Column("answer_accuracy", "Answer right", "rate"),)
    kind_columns = (
        Column("answer_accuracy", "Answer right", "rate"),
        Column("keyed", "With a key", "int"),
        Column("gold_calls_reached", "Every gold call reached", "rate"),
    )
    caption = "Answer right = the final answer states the answer key (over questions with a key)."

    def evaluate(self, ctx: ScoreContext) -> Results:
        gold, record = ctx.gold, ctx.record
        if gold is None:  # no live executor: no key to grade against
            return {}
        if isinstance(gold, ExecutorError):
            return {"answer_reason": f"no key: {gold.code}: {gold.message}"}
        by_text = grade(record.final_answer, gold.key, record.query)
        committed = record.committed_answer
        verdict = grade_committed(committed, gold.key) if committed is not None else by_text
        results: dict[str, Any] = {
            "answer": verdict.correct,
            "answer_reason": verdict.reason or None,
            "answer_text": by_text.correct,
        }
        if verdict.correct is not None:
            results["answer_graded"] = "committed" if committed is not None else "text"
        reached = sum(any(compare(result, r).exact for r in ctx.got) for result in gold.results)
        results["gold_calls_reached"] = round(reached / len(gold.results), 6) if gold.results else None
        return results

    def failures(self, record: EvalRecord) -> list[str]:
        return ["answer wrong"] if record.scores.answer is False else []

    def slice_numbers(self, records: Sequence[EvalRecord]) -> dict[str, Any]:
        return {"answer_accuracy": answer_summary(records)["accuracy"]}

    def summary(self, records: Sequence[EvalRecord], executed_scoring: bool) -> dict[str, Any]:
        return {"answers": answer_summary(records)}

    def leaderboard_values(self, summary: Mapping[str, Any]) -> dict[str, Any]:
        return {"answer_accuracy": (summary.get("answers") or {}).get("accuracy")}

    def kind_values(self, records: Sequence[EvalRecord]) -> dict[str, Any]:
        keyed = [bool(r.scores.answer) for r in records if r.scores.answer is not None]
        reached = [r.scores.gold_calls_reached == 1.0 for r in records if r.scores.gold_calls_reached is not None]
        return {"answer_accuracy": share(keyed), "keyed": len(keyed), "gold_calls_reached": share(reached)}


def answer_summary(records: Sequence[EvalRecord]) -> dict[str, Any]:
    """Final-answer accuracy over the questions with a key, and how far runs got along the gold calls."""
    keyed = [r for r in records if r.scores.answer is not None]
    reached = [r.scores.gold_calls_reached for r in records if r.scores.gold_calls_reached is not None]
    return {
        "accuracy": mean(float(bool(r.scores.answer)) for r in keyed),
        "keyed_cases": len(keyed),
        "unscored_cases": sum(1 for r in records if r.scores.answer is None),
        "gold_calls_reached": mean(reached),
        "all_gold_calls_reached": mean(float(value == 1.0) for value in reached),
    }


def share(flags: Sequence[bool]) -> float | None:
    """The unrounded share of true flags (None for none): the kind table's rates."""
    return sum(flags) / len(flags) if flags else None
