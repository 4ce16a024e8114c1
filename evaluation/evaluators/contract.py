"""The answer contract (`agent.answer`): how often the model committed a typed answer, the pass rate with
the contract (the committed part graded where there is one) and without it (the prose graded alone),
and what the commit turn cost. It scores nothing of its own: it reads the answer and abstention grades."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from evaluation.evaluators.base import Evaluator, Results, ScoreContext, mean
from evaluation.records import EvalRecord


class Contract(Evaluator):
    name = "contract"

    def evaluate(self, ctx: ScoreContext) -> Results:
        return {}

    def overall(self, records: Sequence[EvalRecord]) -> dict[str, Any]:
        return {"contract": contract_summary(records)}


def contract_summary(records: Sequence[EvalRecord]) -> dict[str, Any]:
    """The contract's numbers over a run (see the module)."""
    commits = [r.commit for r in records if r.commit is not None]
    graded = [r for r in records if r.scores.answer is not None or r.expected == "abstain"]

    def right(record: EvalRecord, contract: bool) -> bool:
        s = record.scores
        if record.expected == "abstain":
            return bool(s.abstained if contract else s.abstained_text)
        return bool(s.answer if contract else s.answer_text)

    new_tokens = [c.usage.new_prompt_tokens for c in commits if c.usage.new_prompt_tokens is not None]
    return {
        "commit_turns": len(commits),
        "committed": sum(c.answer is not None for c in commits),
        "commit_rate": mean(float(r.committed_answer is not None) for r in records),
        "commit_errors": dict(Counter(_problem(c.error) for c in commits if c.error)),
        "graded_cases": len(graded),
        "answer_right_with_contract": mean(float(right(r, True)) for r in graded),
        "answer_right_without_contract": mean(float(right(r, False)) for r in graded),
        "commit_prompt_tokens": mean(c.usage.prompt_tokens for c in commits),
        "commit_new_prompt_tokens": mean(new_tokens),
        "commit_completion_tokens": mean(c.usage.completion_tokens for c in commits),
        "commit_latency_s": mean(c.latency_s for c in commits),
    }


def contract_note(summary: dict[str, Any]) -> str:
    """The contract in words, for the line that reports final answers ("" when no commit was asked)."""
    contract = summary.get("contract") or {}
    if not contract.get("commit_turns"):
        return ""

    def shown(key: str, form: str) -> str:
        return "n/a" if contract.get(key) is None else format(contract[key], form)

    return (
        f"\ncommitted answers: {contract['committed']} of {summary.get('cases', contract['commit_turns'])} "
        f"questions; right {shown('answer_right_with_contract', '.3f')} with the contract, "
        f"{shown('answer_right_without_contract', '.3f')} from the prose alone; the commit turn "
        f"{shown('commit_completion_tokens', '.0f')} completion tokens, {shown('commit_latency_s', '.1f')} s"
    )


def _problem(error: str) -> str:
    """An error's kind, its words before the details ("the commit reply is not JSON")."""
    return error.split(" (")[0].split(":")[0]
