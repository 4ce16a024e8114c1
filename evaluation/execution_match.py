"""Execution-result match, in SQL-Eval's two tiers plus BIRD's row-level soft F1.

Both sides are executed with `SCORING_OPTIONS`, whose limits cover whole result sets (every object
a filter keeps, every hit of a search), so comparisons see complete results rather than a page.

- *Exact*: the same result. Objects: the same set of UUIDs (a search's hits compare as a set, so
  swaps of equal distance never count). Aggregates: the same metrics with the same values (within
  `RELATIVE_TOLERANCE`; TOP_OCCURRENCES as (value, count) lists) over the same number of objects.
  Groups: the same group keys, each with the same count and metrics.
- *Subset*, in SQL-Eval's sense: the same rows with extra *columns* allowed, never extra rows. The
  same objects; the same groups with the same counts; every metric of the truth present and equal,
  extra metrics allowed.
- *Precision, recall, F1 over rows*: objects are rows keyed by UUID; groups are rows that match
  when their key, count and the truth's metrics agree; an aggregate is one row. Reported beside
  the tiers, so a search that finds most of the right objects gets partial credit there, and only
  there.

A result on another collection, or of another shape (objects vs aggregate vs groups), never matches.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from executors import QueryResult
from executors.options import COMPLETE_RESULTS

RELATIVE_TOLERANCE = 1e-6
SCORING_OPTIONS = COMPLETE_RESULTS


@dataclass(frozen=True)
class ExecutionMatch:
    exact: bool
    subset: bool
    precision: float
    recall: float
    reason: str = ""

    @property
    def f1(self) -> float:
        total = self.precision + self.recall
        return 2 * self.precision * self.recall / total if total else 0.0

    @classmethod
    def miss(cls, reason: str) -> ExecutionMatch:
        return cls(False, False, 0.0, 0.0, reason)


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


def _rows(expected: set[Any], actual: set[Any], matched: int) -> tuple[float, float]:
    """Precision and recall of `actual` rows against `expected`, `matched` of them agreeing."""
    precision = matched / len(actual) if actual else (1.0 if not expected else 0.0)
    recall = matched / len(expected) if expected else (1.0 if not actual else 0.0)
    return precision, recall


def compare(truth: QueryResult, prediction: QueryResult) -> ExecutionMatch:
    if truth.collection != prediction.collection:
        return ExecutionMatch.miss(f"collection {prediction.collection} != {truth.collection}")
    kind = shape(truth)
    if shape(prediction) != kind:
        return ExecutionMatch.miss(f"result shape {shape(prediction)} != {kind}")
    if kind == "aggregate":
        same_total = truth.total_count == prediction.total_count
        exact = same_total and _metrics_match(truth.aggregations, prediction.aggregations, subset=False)
        subset = same_total and _metrics_match(truth.aggregations, prediction.aggregations, subset=True)
        score = 1.0 if subset else 0.0
        return ExecutionMatch(exact, subset, score, score, "" if exact else "aggregate values differ")
    if kind == "groups":
        return _compare_groups(truth, prediction)
    return _compare_objects(truth, prediction)


def _compare_groups(truth: QueryResult, prediction: QueryResult) -> ExecutionMatch:
    expected, actual = truth.groups or {}, prediction.groups or {}

    def group_equal(key: str, subset: bool) -> bool:
        if key not in actual or actual[key].count != expected[key].count:
            return False
        return _metrics_match(expected[key].aggregations, actual[key].aggregations, subset)

    same_keys = set(expected) == set(actual)
    exact = same_keys and all(group_equal(key, False) for key in expected)
    subset = same_keys and all(group_equal(key, True) for key in expected)
    precision, recall = _rows(set(expected), set(actual), sum(group_equal(key, True) for key in expected))
    return ExecutionMatch(exact, subset, precision, recall, "" if exact else "groups differ")


def _compare_objects(truth: QueryResult, prediction: QueryResult) -> ExecutionMatch:
    expected = {o.uuid for o in truth.objects}
    actual = {o.uuid for o in prediction.objects}
    same = expected == actual and truth.truncated == prediction.truncated
    precision, recall = _rows(expected, actual, len(expected & actual))
    reason = "" if same else f"objects differ (precision {precision:.2f}, recall {recall:.2f})"
    return ExecutionMatch(same, same, precision, recall, reason)


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
    if collection_size is not None and len(truth.objects) >= collection_size:
        return "all_objects"
    return None
