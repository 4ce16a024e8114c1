"""Result assembly: the live executor's responses -> `QueryResult` (`assemble_result`), and the
ordering, truncation and note rules the reference executor shares, so they exist once.

Weaviate's quirks corrected here: PERCENTAGE_* over no values is NaN (reported as None, like
MEAN over no values); the unfiltered scan returns TOP_OCCURRENCES values JSON-escaped (unescaped
here); group-by picks arbitrarily among equal-sized groups at its limit (more are fetched, cut here).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from executors._metrics import aggregate
from executors._plan import QueryPlan, top_occurrences_limit
from executors.options import ExecutorOptions
from executors.results import (
    GroupResult,
    MetricValue,
    PropertyValue,
    QueryResult,
    ResultObject,
    TopOccurrence,
    group_key,
    normalize_property_value,
)
from executors.schema import CollectionSchema, PropertySchema
from executors.spec import AggregationSpec, QuerySpec
from executors.vocabulary import METRIC_ATTRIBUTES, SCHEMA_METRICS


@dataclass(slots=True)
class Hit:
    """A raw object before it becomes a `ResultObject` (only the ones shown are converted)."""

    uuid: str
    properties: Mapping[str, object]
    score: float | None = None
    distance: float | None = None


def object_properties(collection: CollectionSchema, properties: Mapping[str, object]) -> dict[str, PropertyValue]:
    """Non-null properties in schema order, values normalised (numbers as float)."""
    out: dict[str, PropertyValue] = {}
    for name in collection.shown_names:
        value = properties.get(name)
        if value is None:
            continue
        kind = type(value)
        if kind is str or kind is float or kind is bool:  # the common cases first: this runs per value
            out[name] = value  # type: ignore[assignment]
        elif isinstance(value, datetime | date):
            out[name] = value.isoformat()
        else:
            out[name] = normalize_property_value(value)
    return out


def to_object(collection: CollectionSchema, hit: Hit, rank: int | None = None) -> ResultObject:
    return ResultObject(
        uuid=hit.uuid,
        properties=object_properties(collection, hit.properties),
        rank=rank,
        score=hit.score,
        distance=hit.distance,
    )


def rank_hits(hits: list[Hit]) -> list[Hit]:
    """Search hits best first, ties broken by UUID (Weaviate's tie order is arbitrary)."""
    if any(hit.distance is not None for hit in hits):
        return sorted(hits, key=lambda h: (h.distance if h.distance is not None else float("inf"), h.uuid))
    return sorted(hits, key=lambda h: (-(h.score if h.score is not None else float("-inf")), h.uuid))


def ranked_objects(collection: CollectionSchema, hits: list[Hit]) -> list[ResultObject]:
    return [to_object(collection, hit, rank) for rank, hit in enumerate(rank_hits(hits), start=1)]


def order_groups(groups: Iterable[GroupResult], max_groups: int) -> tuple[dict[str, GroupResult], bool]:
    """Largest groups first, ties by key; cut to `max_groups` and say whether anything was cut."""
    ordered = sorted(groups, key=lambda g: (-g.count, g.value))
    return {g.value: g for g in ordered[:max_groups]}, len(ordered) > max_groups


def attach_samples(
    collection: CollectionSchema,
    groups: dict[str, GroupResult],
    hits: Iterable[Hit],
    prop: PropertySchema,
    per_group: int,
    ranked: bool,
) -> None:
    """Give each group its first `per_group` hits, in the order `hits` come (rank or UUID)."""
    missing = len(groups) * per_group
    for rank, hit in enumerate(hits, start=1):
        if missing <= 0:
            return
        value = hit.properties.get(prop.name)
        if value is None:
            continue
        group = groups.get(group_key(value))
        if group is not None and len(group.samples) < per_group:
            group.samples.append(to_object(collection, hit, rank if ranked else None))
            missing -= 1


def groups_total(groups: dict[str, GroupResult], truncated: bool) -> int | None:
    return None if truncated else sum(g.count for g in groups.values())


def notes_for(spec: QuerySpec, options: ExecutorOptions) -> list[str]:
    """Plain-language statements of the limits that shaped this result."""
    notes: list[str] = []
    if spec.has_search:
        what = "aggregated" if spec.aggregations else "grouped" if spec.group_by is not None else "listed"
        notes.append(
            f"The search matched the objects within cosine distance {options.search_max_distance:g} of the query "
            f"({options.search_mode.value}, at most {options.search_hit_limit}); only they are {what}."
        )
    if spec.sort is not None:
        order = "largest (latest) first" if spec.sort.descending else "smallest (earliest) first"
        done = "aggregated" if spec.aggregations else "listed"
        notes.append(f"Objects ordered by {spec.sort.prop.name}, {order}; the first {spec.sort.limit} are {done}.")
    if spec.group_by is not None and not spec.aggregations and not spec.has_search:
        notes.append(
            f"Sample objects come from the first {options.group_sample_scan_limit} matching objects in UUID order."
        )
    return notes


def assemble_result(plan: QueryPlan, responses: dict[str, Any]) -> QueryResult:
    spec, options = plan.spec, plan.options
    result = QueryResult(
        collection=spec.collection.name,
        operator_class=spec.operator_class(),
        search_mode=options.search_mode if spec.has_search else None,
        group_by=spec.group_by.name if spec.group_by is not None else None,
        calls=plan.rendered(),
        notes=notes_for(spec, options),
    )
    hits = rank_hits(_hits(spec, responses["hits"])) if "hits" in responses else None
    if "objects" in responses and spec.sort is not None:
        fetched = _hits(spec, responses["objects"])
        result.objects = [to_object(spec.collection, hit) for hit in fetched]
        result.total_count = responses["count"].total_count
        result.truncated = result.total_count > len(fetched)
    elif "objects" in responses:
        fetched = _hits(spec, responses["objects"])
        result.truncated = len(fetched) > options.fetch_limit
        result.objects = [to_object(spec.collection, hit) for hit in fetched[: options.fetch_limit]]
        count = responses.get("count")
        result.total_count = count.total_count if count is not None else None if result.truncated else len(fetched)
    elif hits is not None and spec.group_by is None and not spec.aggregations:
        result.objects = ranked_objects(spec.collection, hits[: options.search_limit])
        result.truncated = len(hits) > options.search_limit
        result.total_count = None if len(hits) >= options.search_hit_limit else len(hits)
    if "aggregate" in responses:
        response = responses["aggregate"]
        if response is None:  # a search without hits: the metrics of no objects
            result.aggregations = {a.prop.name: aggregate(a, [], options) for a in spec.aggregations}
            result.total_count = 0
        else:
            # Weaviate's unfiltered scan returns TOP_OCCURRENCES values still JSON-escaped.
            escaped = not spec.is_filtered and not spec.has_search
            result.aggregations = {
                a.prop.name: _metric_values(a, response.properties.get(a.prop.name), options, escaped)
                for a in spec.aggregations
            }
            result.total_count = response.total_count
    if "groups" in responses:
        assert spec.group_by is not None
        found = responses["groups"].groups if responses["groups"] is not None else []
        groups = [
            GroupResult(
                value=group_key(group.grouped_by.value),
                count=int(group.total_count or 0),
                aggregations={
                    a.prop.name: _metric_values(a, group.properties.get(a.prop.name), options)
                    for a in spec.aggregations
                },
            )
            for group in found
        ]
        result.groups, result.truncated = order_groups(groups, options.max_groups)
        result.total_count = groups_total(result.groups, result.truncated)
        if not spec.aggregations and options.samples_per_group > 0:
            if hits is not None:
                attach_samples(spec.collection, result.groups, hits, spec.group_by, options.samples_per_group, True)
            elif "group_samples" in responses:
                samples = _lazy_hits(spec, responses["group_samples"])
                attach_samples(spec.collection, result.groups, samples, spec.group_by, options.samples_per_group, False)
    return result


def _hits(spec: QuerySpec, response: Any) -> list[Hit]:
    """Response objects as `Hit`s; without search they come in UUID order (`Sort.by_id()`)."""
    if spec.has_search:
        return [
            Hit(str(obj.uuid), _with_links(obj), _float(obj.metadata.score), _float(obj.metadata.distance))
            for obj in response.objects
        ]
    return [Hit(str(obj.uuid), _with_links(obj)) for obj in response.objects]


def _with_links(obj: Any) -> Mapping[str, object]:
    """An object's properties and, when references were returned, each reference's target id."""
    properties = obj.properties or {}
    references = getattr(obj, "references", None)
    if not references:
        return properties
    links = {name: ", ".join(str(o.uuid) for o in ref.objects) for name, ref in references.items() if ref.objects}
    return {**properties, **links}


def _lazy_hits(spec: QuerySpec, response: Any) -> Iterator[Hit]:
    """Like `_hits` without search, converting only as far as the caller reads (group samples)."""
    return (Hit(str(obj.uuid), obj.properties or {}) for obj in response.objects)


def _float(value: Any) -> float | None:
    """Floats, with NaN (Weaviate's PERCENTAGE_* over no values) as None."""
    if value is None:
        return None
    number = float(value)
    return None if math.isnan(number) else number


def _metric_values(
    spec: AggregationSpec, aggregate: Any, options: ExecutorOptions, escaped: bool = False
) -> dict[str, MetricValue]:
    values: dict[str, MetricValue] = {}
    for metric in spec.metrics:
        if metric in SCHEMA_METRICS:
            values[metric] = spec.prop.data_type
            continue
        raw = getattr(aggregate, METRIC_ATTRIBUTES[metric], None) if aggregate is not None else None
        if metric == "TOP_OCCURRENCES":
            values[metric] = _top_occurrences(raw or [], top_occurrences_limit(spec, options), escaped)
        elif metric == "COUNT":
            values[metric] = float(raw or 0)
        else:
            values[metric] = _float(raw)
    return values


def _top_occurrences(items: list[Any], limit: int, escaped: bool) -> list[TopOccurrence]:
    pairs = [
        TopOccurrence(value=_unescape(str(item.value)) if escaped else str(item.value), count=int(item.count or 0))
        for item in items
    ]
    return sorted(pairs, key=lambda p: (-p.count, p.value))[:limit]


def stored_text_values(response: Any, prop: str, escaped: bool) -> list[str]:
    """The values of `stored_values_call`'s TOP_OCCURRENCES (none when absent); `escaped`: it ran
    unfiltered, so they come JSON-escaped."""
    metrics = (getattr(response, "properties", None) or {}).get(prop)
    items = getattr(metrics, "top_occurrences", None) or []
    return [_unescape(str(item.value)) if escaped else str(item.value) for item in items if item.value is not None]


def _unescape(value: str) -> str:
    """Undo the JSON string escaping (`\\u0026` for `&`, `\\n`...) of Weaviate's unfiltered text scan."""
    if "\\" not in value:
        return value
    try:
        decoded = json.loads(f'"{value}"')
    except ValueError:
        return value
    return decoded if isinstance(decoded, str) else value
