"""Result assembly shared by both executors, so ordering and truncation rules exist once."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime

from executors.options import ExecutorOptions
from executors.results import GroupResult, PropertyValue, ResultObject, group_key, normalize_property_value
from executors.schema import CollectionSchema, PropertySchema
from executors.spec import QuerySpec


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
    for name in collection.names:
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
    if spec.group_by is not None and not spec.aggregations and not spec.has_search:
        notes.append(
            f"Sample objects come from the first {options.group_sample_scan_limit} matching objects in UUID order."
        )
    return notes
