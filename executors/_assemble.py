"""Result assembly shared by both executors, so ordering and truncation rules exist once."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date, datetime

from executors.options import ExecutorOptions
from executors.results import GroupResult, PropertyValue, ResultObject, group_key, normalize_property_value
from executors.schema import CollectionSchema, PropertySchema
from executors.spec import QuerySpec


def object_properties(collection: CollectionSchema, properties: Mapping[str, object]) -> dict[str, PropertyValue]:
    """Non-null properties in schema order, values normalised (numbers as float)."""
    out: dict[str, PropertyValue] = {}
    for prop in collection.properties:
        value = properties.get(prop.name)
        if value is None:
            continue
        if isinstance(value, datetime | date):
            value = value.isoformat()
        out[prop.name] = normalize_property_value(value)
    return out


def rank_hits(hits: Iterable[ResultObject], by_distance: bool) -> list[ResultObject]:
    """Order search hits best first, ties broken by UUID (Weaviate's tie order is arbitrary)."""

    def key(hit: ResultObject) -> tuple[float, str]:
        if by_distance:
            return (hit.distance if hit.distance is not None else float("inf"), hit.uuid)
        return (-(hit.score if hit.score is not None else float("-inf")), hit.uuid)

    ordered = sorted(hits, key=key)
    return [hit.model_copy(update={"rank": index}) for index, hit in enumerate(ordered, start=1)]


def order_groups(groups: Iterable[GroupResult], max_groups: int) -> tuple[dict[str, GroupResult], bool]:
    """Largest groups first, ties by key; cut to `max_groups` and say whether anything was cut."""
    ordered = sorted(groups, key=lambda g: (-g.count, g.value))
    return {g.value: g for g in ordered[:max_groups]}, len(ordered) > max_groups


def attach_samples(
    groups: dict[str, GroupResult], objects: Iterable[ResultObject], prop: PropertySchema, per_group: int
) -> None:
    """Give each group its first `per_group` objects, in the order `objects` come."""
    for obj in objects:
        value = obj.properties.get(prop.name)
        if value is None:
            continue
        group = groups.get(group_key(value))
        if group is not None and len(group.samples) < per_group:
            group.samples.append(obj)


def groups_total(groups: dict[str, GroupResult], truncated: bool) -> int | None:
    return None if truncated else sum(g.count for g in groups.values())


def notes_for(spec: QuerySpec, options: ExecutorOptions) -> list[str]:
    """Plain-language statements of the limits that shaped this result."""
    notes: list[str] = []
    if spec.has_search and (spec.aggregations or spec.group_by is not None):
        notes.append(
            f"Aggregated over the top {options.search_object_limit} {options.search_mode.value} hits "
            "for the search query."
        )
    if spec.group_by is not None and not spec.aggregations and not spec.has_search:
        notes.append(
            f"Sample objects come from the first {options.group_sample_scan_limit} matching objects in UUID order."
        )
    return notes
