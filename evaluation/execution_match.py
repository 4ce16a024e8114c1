"""Execution-result match, in SQL-Eval's two tiers: *exact* (same result) and *subset* (the
ground truth's result is contained in the prediction's).

Both sides are executed with `SCORING_OPTIONS`, whose fetch limit covers whole filtered sets,
so filter comparisons see every matching object rather than the first page.

- Objects without search: uuid sets. Exact: equal sets; subset: truth ⊆ prediction.
- Search: top-k, k = the truth's hit count. Exact: the same k objects (order inside the top-k is
  ignored, so equal-score swaps never count as a mismatch); subset: every truth hit appears among
  the prediction's hits; recall = |truth ∩ prediction top-k| / k.
- Aggregates: per property and metric, numbers within `RELATIVE_TOLERANCE`; TOP_OCCURRENCES as
  (value, count) lists with ties ordered by value. Subset: the truth's metrics all present and equal.
- Group-by: per group value, the count and the metrics. Subset: every truth group present and equal.
A result on another collection, or of another shape (objects vs aggregate vs groups), never matches.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from executors import ExecutorOptions, QueryResult
from executors.options import SEARCH_HIT_LIMIT

RELATIVE_TOLERANCE = 1e-6
#: Weaviate caps limit at QUERY_MAXIMUM_RESULTS (10,000) and the executor asks for one extra.
SCORING_OPTIONS = ExecutorOptions(fetch_limit=9_999, search_limit=SEARCH_HIT_LIMIT, max_groups=1000)


@dataclass(frozen=True)
class ExecutionMatch:
    exact: bool
    subset: bool
    recall: float | None = None
    reason: str = ""


def shape(result: QueryResult) -> str:
    if result.groups is not None:
        return "groups"
    return "aggregate" if result.aggregations else "objects"


def values_close(expected: Any, actual: Any) -> bool:
    if isinstance(expected, list) or isinstance(actual, list):
        return _occurrences(expected) == _occurrences(actual)
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected == actual
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return math.isclose(float(expected), float(actual), rel_tol=RELATIVE_TOLERANCE, abs_tol=1e-9)
    return expected == actual


def _occurrences(items: Any) -> list[tuple[str, int]] | None:
    if not isinstance(items, list):
        return None
    pairs = [(str(_get(i, "value")), int(_get(i, "count"))) for i in items]
    return sorted(pairs, key=lambda pair: (-pair[1], pair[0]))


def _get(item: Any, key: str) -> Any:
    return item[key] if isinstance(item, dict) else getattr(item, key)


def _metrics_match(expected: dict[str, dict[str, Any]], actual: dict[str, dict[str, Any]], subset: bool) -> bool:
    for prop, metrics in expected.items():
        for metric, value in metrics.items():
            if metric not in actual.get(prop, {}) or not values_close(value, actual[prop][metric]):
                return False
    if subset:
        return True
    keys = lambda aggs: {(p, m) for p, ms in aggs.items() for m in ms}  # noqa: E731
    return keys(expected) == keys(actual)


def compare(truth: QueryResult, prediction: QueryResult) -> ExecutionMatch:
    if truth.collection != prediction.collection:
        return ExecutionMatch(False, False, reason=f"collection {prediction.collection} != {truth.collection}")
    kind = shape(truth)
    if shape(prediction) != kind:
        return ExecutionMatch(False, False, reason=f"result shape {shape(prediction)} != {kind}")
    if kind == "aggregate":
        exact = _metrics_match(truth.aggregations, prediction.aggregations, subset=False) and _same_total(
            truth, prediction
        )
        subset = _metrics_match(truth.aggregations, prediction.aggregations, subset=True)
        return ExecutionMatch(exact, subset or exact, reason="" if exact else "aggregate values differ")
    if kind == "groups":
        return _compare_groups(truth, prediction)
    return _compare_objects(truth, prediction)


def _same_total(truth: QueryResult, prediction: QueryResult) -> bool:
    return truth.total_count is None or prediction.total_count is None or truth.total_count == prediction.total_count


def _compare_groups(truth: QueryResult, prediction: QueryResult) -> ExecutionMatch:
    expected, actual = truth.groups or {}, prediction.groups or {}

    def group_equal(key: str, subset: bool) -> bool:
        if key not in actual or actual[key].count != expected[key].count:
            return False
        return _metrics_match(expected[key].aggregations, actual[key].aggregations, subset)

    subset = all(group_equal(key, True) for key in expected)
    exact = set(expected) == set(actual) and all(group_equal(key, False) for key in expected)
    return ExecutionMatch(exact, subset or exact, reason="" if exact else "groups differ")


def _compare_objects(truth: QueryResult, prediction: QueryResult) -> ExecutionMatch:
    expected = [o.uuid for o in truth.objects]
    actual = [o.uuid for o in prediction.objects]
    if truth.search_mode is None:
        exact = set(expected) == set(actual) and truth.truncated == prediction.truncated
        subset = set(expected) <= set(actual) and not prediction.truncated
        return ExecutionMatch(exact, subset or exact, reason="" if exact else "object sets differ")
    k = len(expected)
    top = set(actual[:k])
    recall = len(set(expected) & top) / k if k else (1.0 if not actual else 0.0)
    exact = set(expected) == top and len(actual) >= k
    subset = set(expected) <= set(actual)
    return ExecutionMatch(exact, subset or exact, recall, "" if exact else f"top-{k} overlap {recall:.2f}")


def vacuity(truth: QueryResult, collection_size: int | None) -> str | None:
    """ "empty" or "all_objects" when a ground truth cannot tell a right query from a wrong one."""
    kind = shape(truth)
    if kind == "groups":
        return "empty" if not truth.groups else None
    if kind == "aggregate":
        values = [v for metrics in truth.aggregations.values() for v in metrics.values()]
        return "empty" if truth.total_count == 0 or all(v is None or v == [] for v in values) else None
    if not truth.objects:
        return "empty"
    if truth.search_mode is None and collection_size is not None and len(truth.objects) >= collection_size:
        return "all_objects"
    return None
