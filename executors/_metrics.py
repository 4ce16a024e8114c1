"""Metrics over a list of property values, with Weaviate's semantics: the reference executor's
aggregations, and what an aggregation over no objects (a search without hits) returns.

COUNT counts objects with a non-null value; MEDIAN is the middle value (mean of the two middle
ones for an even count); MODE is the most frequent value, the smallest on ties; MEAN/SUM/MIN/MAX
and PERCENTAGE_* (a fraction) are undefined (None) over no values, TOTAL_* are 0.
TOP_OCCURRENCES counts whole values (not tokens), most frequent first, ties by value.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from executors._plan import top_occurrences_limit
from executors.errors import UnsupportedQueryError
from executors.options import ExecutorOptions
from executors.results import MetricValue, TopOccurrence
from executors.spec import AggregationSpec
from executors.vocabulary import SCHEMA_METRICS, PropertyKind


def aggregate(
    spec: AggregationSpec, objects: Iterable[Mapping[str, Any]], options: ExecutorOptions
) -> dict[str, MetricValue]:
    """The requested metrics of one property over `objects`, normalised like the live executor's."""
    values = [properties.get(spec.prop.name) for properties in objects]
    present = [value for value in values if value is not None]
    out: dict[str, MetricValue] = {}
    for metric in spec.metrics:
        if metric in SCHEMA_METRICS:
            out[metric] = spec.prop.data_type
        elif metric == "COUNT":
            out[metric] = float(len(present))
        elif spec.kind == PropertyKind.NUMBER:
            out[metric] = _number_metric(metric, sorted(float(v) for v in present))
        elif spec.kind == PropertyKind.TEXT:
            out[metric] = _top_occurrences([str(v) for v in present], top_occurrences_limit(spec, options))
        else:
            out[metric] = _boolean_metric(metric, [bool(v) for v in present])
    return out


def _number_metric(metric: str, values: list[float]) -> float | None:
    if not values:
        return None
    if metric == "MIN":
        return values[0]
    if metric == "MAX":
        return values[-1]
    if metric == "SUM":
        return float(sum(values))
    if metric == "MEAN":
        return sum(values) / len(values)
    if metric == "MEDIAN":
        middle = len(values) // 2
        return values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2
    if metric == "MODE":
        counts = Counter(values)
        return min(counts, key=lambda v: (-counts[v], v))
    raise UnsupportedQueryError(f"Unknown number metric {metric}.")


def _top_occurrences(values: list[str], limit: int) -> list[TopOccurrence]:
    counts = Counter(values)
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [TopOccurrence(value=value, count=count) for value, count in ordered[:limit]]


def _boolean_metric(metric: str, values: list[bool]) -> float | None:
    true, total = sum(values), len(values)
    false = total - true
    if metric == "TOTAL_TRUE":
        return float(true)
    if metric == "TOTAL_FALSE":
        return float(false)
    if metric == "PERCENTAGE_TRUE":
        return true / total if total else None
    if metric == "PERCENTAGE_FALSE":
        return false / total if total else None
    raise UnsupportedQueryError(f"Unknown boolean metric {metric}.")
