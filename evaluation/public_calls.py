"""A composed question's calls scored as our splits' are: the model's last call against the last gold call, by
its arguments (`evaluation.argument_match`) and by the rows Weaviate returns for each (`execution_match`; for a
count, the number: `same_result`).

A hand-written question of the public suite has no gold call: it is graded on its answer alone. The oracle of
a composed question replays its gold calls and commits its key, as `eval --model oracle` does on our splits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from agent import OracleModel
from evaluation.answer_key import AnswerKey
from evaluation.argument_match import score_canonical, try_canonical
from evaluation.execution_match import compare
from evaluation.statistics import rate_with_interval
from executors import ExecutorError, QueryResult, WeaviateExecutor
from fixtures.datasets.public import PublicQuestion


class CallScores(BaseModel):
    """The last call's scores; `execution_exact` None when the gold call itself did not run."""

    exact_match: bool = False
    ast_score: float = 0.0
    routing: bool = False
    execution_exact: bool | None = None


def score_calls(
    question: PublicQuestion, calls: Sequence[dict[str, Any]], executor: WeaviateExecutor
) -> CallScores | None:
    """The model's last call against the question's last gold call (None: the question has no gold call)."""
    if not question.gold_calls:
        return None
    gold, read = question.gold_calls[-1].call, question.gold_calls[-1].read
    schema = executor.schema
    truth = try_canonical(gold, schema)
    last = calls[-1] if calls else None
    arguments = score_canonical([truth] if truth is not None else [], try_canonical(last, schema) if last else None)
    scores = CallScores(exact_match=arguments.exact_match, ast_score=arguments.ast_score, routing=arguments.routing)
    gold_result = _run(executor, gold)
    if gold_result is None:
        return scores
    mine = _run(executor, last) if last is not None else None
    return scores.model_copy(update={"execution_exact": mine is not None and same_result(gold_result, mine, read)})


def same_result(gold: QueryResult, mine: QueryResult, read: str) -> bool:
    """The same rows (`execution_match.compare`); for a question whose answer is how many objects matched
    (`read` "count") or how many groups there are ("groups"), the same number, as SQL-Eval compares the one
    value of a COUNT: the objects listed with their count and a COUNT aggregation over them agree."""
    if read == "count":
        return gold.total_count is not None and gold.total_count == mine.total_count
    if read == "groups":
        return gold.groups is not None and mine.groups is not None and len(gold.groups) == len(mine.groups)
    return compare(gold, mine).exact


def _run(executor: WeaviateExecutor, call: dict[str, Any]) -> QueryResult | None:
    try:
        return executor.execute(call)
    except ExecutorError:
        return None


def oracle_of(question: PublicQuestion) -> OracleModel:
    """The gold calls replayed and the key committed; a question the data cannot answer refused."""
    if question.kind == "unanswerable":
        return OracleModel.abstaining(f"The data cannot answer this: it holds no {question.lacks or 'such values'}.")
    if not question.gold_calls:
        raise ValueError(f"{question.id} has no gold call to replay")
    calls = [g.call for g in question.gold_calls]
    key = AnswerKey.model_validate(question.answer or {})
    return OracleModel(calls[0], calls[1:], key.text(), key.committed().model_dump())


def call_rates(scored: Sequence[CallScores]) -> dict[str, Any]:
    """Argument and execution rates over the questions whose calls were scored."""
    executed = [s.execution_exact for s in scored if s.execution_exact is not None]
    return {
        "scored": len(scored),
        "exact_match": rate_with_interval([s.exact_match for s in scored]),
        "ast_score": round(sum(s.ast_score for s in scored) / len(scored), 4) if scored else None,
        "routing": rate_with_interval([s.routing for s in scored]),
        "execution_exact": rate_with_interval(executed),
    }
