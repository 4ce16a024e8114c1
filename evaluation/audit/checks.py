"""Checks of a label beyond "it runs": no tie at a cut, alternatives that agree, a search that finds its topic.

- Ties. A label's expected result must not depend on an arbitrary choice. TOP_OCCURRENCES with a
  limit `k` is executed again with `k + 1`: if the k-th and (k+1)-th values occur equally often,
  which of them is listed is arbitrary. A search is executed again with the relevance cut moved by
  `SEARCH_CUT_MARGIN` either way: if the result changes, an object sits on the cut and an
  embedding computed on another machine could move it across. The cut moved is the question's own
  on this data (`evaluation.search_cut`), the one its gold and the agent's calls run at.
- Alternatives. Every accepted alternative is executed and must give the label's own result.
- Search relevance. The objects a search label's query finds (search alone, no filter) are
  compared with the objects of the generator topic the label means (`Case.search_topic`): the
  precision and recall of the relevance cut, per use case, on the loaded data.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from evaluation.execution_match import compare
from evaluation.search_cut import SEARCH_CUT_MARGIN
from evaluation.search_cut import top_occurrences_tie as top_occurrences_tie_at
from executors import ExecutorError, QueryDatabaseArguments, QueryResult, WeaviateExecutor
from fixtures import DEFAULT_SEED, ObjectGenerator
from fixtures.datasets import Case
from fixtures.use_cases import UseCase

Execute = Callable[[WeaviateExecutor, QueryDatabaseArguments], "QueryResult | ExecutorError"]


class Tie(BaseModel):
    id: str
    kind: str  # "top_occurrences" | "search_cut"
    detail: str


class AlternativeMismatch(BaseModel):
    id: str
    alternative: dict[str, Any]
    reason: str


class SearchRelevance(BaseModel):
    """Mean precision and recall of the search labels' hits against their topics, in one use case."""

    queries: int
    precision: float
    recall: float


def _run(executor: WeaviateExecutor, arguments: QueryDatabaseArguments) -> QueryResult | ExecutorError:
    try:
        return executor.execute(arguments)
    except ExecutorError as error:
        return error


def top_occurrences_tie(executor: WeaviateExecutor, case: Case) -> Tie | None:
    """The label's TOP_OCCURRENCES cut through a tie, at its search cut (`evaluation.search_cut`, whose
    rule passes over cuts where it does)."""
    try:
        detail = top_occurrences_tie_at(executor, case.ground_truth)
    except ExecutorError:
        return None  # the label's own execution reports errors
    return Tie(id=case.id, kind="top_occurrences", detail=detail) if detail else None


def search_cut_tie(executors: tuple[WeaviateExecutor, WeaviateExecutor], case: Case, truth: QueryResult) -> Tie | None:
    if case.ground_truth.search_query is None:
        return None
    for executor, direction in zip(executors, ("narrower", "wider"), strict=True):
        moved = _run(executor, case.ground_truth)
        if isinstance(moved, QueryResult) and not compare(truth, moved).exact:
            return Tie(
                id=case.id,
                kind="search_cut",
                detail=f"the result changes with a cut {SEARCH_CUT_MARGIN:g} {direction} "
                f"({executor.options.search_max_distance:.4f})",
            )
    return None


def moved_cut_executors(executor: WeaviateExecutor) -> tuple[WeaviateExecutor, WeaviateExecutor]:
    """Siblings of `executor` (same collections) with its search cut (a question's own, from
    `evaluation.search_cut`) a margin narrower and wider."""
    cut = executor.options.search_max_distance
    return tuple(  # type: ignore[return-value]
        executor.with_options(executor.options.model_copy(update={"search_max_distance": cut + delta}))
        for delta in (-SEARCH_CUT_MARGIN, SEARCH_CUT_MARGIN)
    )


def alternative_mismatches(executor: WeaviateExecutor, case: Case, truth: QueryResult) -> list[AlternativeMismatch]:
    mismatches = []
    for alternative in case.alternatives:
        result = _run(executor, alternative)
        if isinstance(result, ExecutorError):
            reason = f"{result.code}: {result.message}"
        else:
            match = compare(truth, result)
            reason = "" if match.exact else match.reason or "results differ"
        if reason:
            mismatches.append(
                AlternativeMismatch(id=case.id, alternative=alternative.to_tool_arguments(), reason=reason)
            )
    return mismatches


def topics_of(use_case: UseCase, sizes: dict[str, int | None]) -> dict[str, dict[str, str | None]]:
    """collection -> object UUID -> generator topic, for collections loaded at the default seed."""
    topics: dict[str, dict[str, str | None]] = {}
    for spec in use_case.collections:
        size = sizes.get(spec.name)
        if size:
            topics[spec.name] = {str(o.uuid): o.topic for o in ObjectGenerator(spec, DEFAULT_SEED).stream(size)}
    return topics


def search_relevance(
    executor: WeaviateExecutor, case: Case, topics: dict[str, str | None]
) -> tuple[float, float] | None:
    """(precision, recall) of the label's search alone against its topic; None when not measurable."""
    if case.search_topic is None or case.ground_truth.search_query is None or not topics:
        return None
    relevant = {uuid for uuid, topic in topics.items() if topic == case.search_topic}
    result = _run(
        executor, QueryDatabaseArguments(collection_name=case.collection, search_query=case.ground_truth.search_query)
    )
    if isinstance(result, ExecutorError) or not relevant:
        return None
    hits = {o.uuid for o in result.objects}
    if not hits <= set(topics):  # loaded with another seed: the topics are not these objects'
        return None
    found = len(hits & relevant)
    return (found / len(hits) if hits else 0.0), found / len(relevant)


def relevance_by_use_case(measured: dict[str, list[tuple[float, float]]]) -> dict[str, SearchRelevance]:
    return {
        use_case: SearchRelevance(
            queries=len(pairs),
            precision=round(statistics.mean(p for p, _ in pairs), 3),
            recall=round(statistics.mean(r for _, r in pairs), 3),
        )
        for use_case, pairs in sorted(measured.items())
        if pairs
    }
