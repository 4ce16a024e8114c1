"""A validated, backend-neutral query: what both executors (Weaviate and reference) run.

`QueryDatabaseArguments` is what the model said; a `QuerySpec` is what it means once checked
against the live schema: resolved property schemas, a flat list of filters that are ANDed, all
aggregations together, and the group-by property. New operators (`!=` on numbers, ranges,
`contains_any`, AND/OR trees, sort, limit) extend these classes and the two interpreters rather
than adding new code paths per argument slot.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from executors.arguments import QueryDatabaseArguments
from executors.schema import CollectionSchema, PropertySchema
from executors.vocabulary import DATE_DATA_TYPE, PropertyKind

FilterValue = str | float | int | bool | datetime


@dataclass(frozen=True)
class FilterSpec:
    """`prop <operator> value`; operators are the tool's symbols (`=`, `!=`, `<`, `<=`, `>`, `>=`, `LIKE`).

    `via` names the reference the property is read through (`prop` is then a property of the
    referenced collection); a date filter is `prop < value` etc. with `value` an aware datetime."""

    prop: PropertySchema
    operator: str
    value: FilterValue
    slot: str
    via: str | None = None

    @property
    def kind(self) -> PropertyKind:
        assert self.prop.kind is not None
        return self.prop.kind

    @property
    def is_date(self) -> bool:
        return self.prop.data_type == DATE_DATA_TYPE


@dataclass(frozen=True)
class SortSpec:
    """Order by a number or date property, then by id (so equal values have one order), first `limit`."""

    prop: PropertySchema
    descending: bool
    limit: int


@dataclass(frozen=True)
class AggregationSpec:
    """Metrics over one property (the tool sends one per slot; the spec allows several)."""

    prop: PropertySchema
    metrics: tuple[str, ...]
    slot: str
    top_occurrences_limit: int | None = None

    @property
    def kind(self) -> PropertyKind:
        assert self.prop.kind is not None
        return self.prop.kind


@dataclass(frozen=True)
class QuerySpec:
    collection: CollectionSchema
    arguments: QueryDatabaseArguments
    search_query: str | None = None
    filters: tuple[FilterSpec, ...] = ()
    aggregations: tuple[AggregationSpec, ...] = ()
    group_by: PropertySchema | None = None
    notes: tuple[str, ...] = field(default=())
    #: The caller's scoping filters (see `executors.scope`): applied with the model's, never shown as its own.
    scope: tuple[FilterSpec, ...] = ()
    sort: SortSpec | None = None
    #: The `compound` operations' alternatives (`match: any`): an object matches when all the filters of at
    #: least one alternative hold, besides `applied_filters`. Empty: no such group.
    any_of: tuple[tuple[FilterSpec, ...], ...] = ()

    @property
    def all_filters(self) -> tuple[FilterSpec, ...]:
        """The model's filters, those inside the alternatives too (the scope's not)."""
        return self.filters + tuple(f for alternative in self.any_of for f in alternative)

    @property
    def applied_filters(self) -> tuple[FilterSpec, ...]:
        """What every Weaviate call is filtered by: the model's filters and the scope's."""
        return self.filters + self.scope

    @property
    def is_filtered(self) -> bool:
        """Any filter at all: the model's, the alternatives or the scope's."""
        return bool(self.applied_filters or self.any_of)

    @property
    def has_search(self) -> bool:
        return self.search_query is not None

    @property
    def has_aggregation(self) -> bool:
        return bool(self.aggregations)

    def operator_class(self) -> str:
        """`search+filter+aggregate+group_by`-style label used by benchmarks and reports."""
        parts = [
            name
            for name, present in (
                ("search", self.has_search),
                ("filter", bool(self.filters or self.any_of)),
                ("aggregate", self.has_aggregation),
                ("group_by", self.group_by is not None),
                ("sort", self.sort is not None),
            )
            if present
        ]
        return "+".join(parts) or "fetch"
