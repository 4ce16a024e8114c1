"""`QuerySpec` -> the weaviate-client v4 calls that answer it, built with the typed API only.

One plan per operator combination (S = search, F = filters, A = aggregations, G = group-by):

- S:           first the search's hits: `query.near_text(q, distance=SEARCH_MAX_DISTANCE,
               limit=SEARCH_HIT_LIMIT)` (or hybrid with `max_vector_distance`, or bm25), closest first
- no A, no G:  the hits themselves (the first SEARCH_LIMIT are listed), or without search
               `query.fetch_objects(limit=FETCH_LIMIT+1)` in UUID order: the cursor (`after=NIL_UUID`)
               without filters, `sort=Sort.by_id()` with, and `aggregate.over_all(total_count=True)`
               with the same filters: how many matched, beyond the page listed
- A, no G:     `aggregate.over_all()`, all metrics at once; with S restricted to the hits' ids, with a
               sort to the ids of its first `limit` objects (`fetch_objects(sort=..., limit=N)`)
- G (any A):   the same aggregate call with `group_by=GroupByAggregate(prop, limit=GROUP_FETCH_LIMIT)`
- G, no A:     plus sample objects: the hits (closest first) or the first `GROUP_SAMPLE_SCAN_LIMIT`
               matches in UUID order, bucketed by group value locally

So a search always means the same set of objects, whether they are listed, aggregated or grouped:
the aggregate call that follows a search (`over_hits`) gets `Filter.by_id().contains_any(hit_ids)`
ANDed in when it runs. Every filter is ANDed (`Filter.all_of`) and passed to every call, a text `=`
taken as its whole value with its `not_equal` filters (`whole_value`, resolved before planning). Filters
on `int` properties are sent as integers with the bound rounded so the meaning of a fractional
value is kept (`< 3.5` -> `< 4`, `<= 3.5` -> `<= 3`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from weaviate.classes.aggregate import GroupByAggregate
from weaviate.classes.query import Filter, MetadataQuery, Metrics, QueryReference, Sort

from executors._render import Expr, attribute_call, list_expr, literal, render_arguments, render_literal
from executors.options import ExecutorOptions, SearchMode
from executors.spec import AggregationSpec, FilterSpec, QuerySpec, SortSpec
from executors.vocabulary import (
    FILTER_METHODS,
    METRIC_ATTRIBUTES,
    OPERATORS,
    SCHEMA_METRICS,
    NumberOperator,
    PropertyKind,
    TextOperator,
)
from executors.whole_value import STORED_VALUES_LIMIT, WholeValue

#: The only client methods a plan can name; `ReadOnlyWeaviate` refuses anything else.
READ_METHODS: frozenset[tuple[str, str]] = frozenset(
    {
        ("query", "fetch_objects"),
        ("query", "hybrid"),
        ("query", "bm25"),
        ("query", "near_text"),
        ("aggregate", "over_all"),
    }
)
#: How the hit-restricted call renders its id filter: `hit_ids` are the ids the search returned.
HITS_FILTER_SOURCE = "Filter.by_id().contains_any(hit_ids)"

#: Start of the cursor for unfiltered fetches; an object whose UUID is the nil UUID itself is
#: therefore never listed by them (the reference executor mirrors this).
NIL_UUID = "00000000-0000-0000-0000-000000000000"
_FILTER = Expr(Filter, "Filter")
_TRUE = literal(True)


@dataclass(frozen=True)
class PlannedCall:
    """One client call: `collection.<namespace>.<method>(*args, **kwargs)` and why it is made."""

    namespace: str
    method: str
    purpose: str
    args: tuple[Expr, ...] = ()
    kwargs: dict[str, Expr] = field(default_factory=dict)
    #: Runs over exactly the objects of the preceding search, or of the sort's first `limit` (see
    #: `restricted_to`; `ids_from` names the call whose objects they are).
    over_hits: bool = False

    def source(self) -> str:
        return f"collection.{self.namespace}.{self.method}({render_arguments(self.args, self.shown_kwargs())})"

    def shown_kwargs(self) -> dict[str, Expr]:
        """The keyword arguments as shown: a call over the hits names their ids (`hit_ids`) in its filters."""
        if not self.over_hits:
            return self.kwargs
        return {**self.kwargs, "filters": _and(self.kwargs.get("filters"), Expr(None, HITS_FILTER_SOURCE))}

    def restricted_to(self, hit_ids: list[str]) -> PlannedCall:
        """This call with the search's hits ANDed into its filters (done when the hits are known)."""
        ids = Expr(Filter.by_id().contains_any(hit_ids), HITS_FILTER_SOURCE)
        kwargs = {**self.kwargs, "filters": _and(self.kwargs.get("filters"), ids)}
        return PlannedCall(self.namespace, self.method, self.purpose, self.args, kwargs)

    def arguments(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return tuple(a.value for a in self.args), {k: v.value for k, v in self.kwargs.items()}


@dataclass(frozen=True)
class QueryPlan:
    spec: QuerySpec
    options: ExecutorOptions
    calls: tuple[PlannedCall, ...]
    #: The text `=` filters taken as whole values: their `not_equal` filters are in every call.
    whole_values: tuple[WholeValue, ...] = ()

    def call(self, purpose: str) -> PlannedCall | None:
        return next((c for c in self.calls if c.purpose == purpose), None)

    @property
    def ids_from(self) -> str:
        """The purpose of the call whose objects a call `over_hits` runs over: the search's hits, or the
        sort's first objects."""
        return "top" if self.call("top") is not None else "hits"

    def rendered(self) -> list[str]:
        return [c.source() for c in self.calls]


def _and(first: Expr | None, second: Expr) -> Expr:
    return second if first is None else attribute_call(_FILTER, "all_of", list_expr([first, second]))


def int_filter_bound(operator: str, value: float) -> int:
    """The integer bound with the same meaning on an int property as `value` has on the reals."""
    if operator in ("<", ">="):
        return math.ceil(value)
    if operator in ("<=", ">"):
        return math.floor(value)
    return int(value)


def filter_expr(spec: FilterSpec) -> Expr:
    value: Any = spec.value
    if not spec.is_date and spec.kind == PropertyKind.NUMBER:
        value = int_filter_bound(spec.operator, float(value)) if spec.prop.is_int else float(value)
    method = FILTER_METHODS[spec.operator]
    shown = f"datetime.fromisoformat({value.isoformat()!r})" if isinstance(value, datetime) else render_literal(value)
    if spec.via is not None:  # a property of the referenced object: Filter.by_ref(link).by_property(...)
        built = getattr(Filter.by_ref(link_on=spec.via).by_property(spec.prop.name), method)(value)
        source = f"Filter.by_ref(link_on={render_literal(spec.via)}).by_property({render_literal(spec.prop.name)})"
        return Expr(built, f"{source}.{method}({shown})")
    built = getattr(Filter.by_property(spec.prop.name), method)(value)
    return Expr(built, f"Filter.by_property({render_literal(spec.prop.name)}).{method}({shown})")


#: Operators whose lone filter Weaviate (v1.39) resolves only up to the query's `limit`.
LIMITED_OPERATORS = frozenset(OPERATORS[PropertyKind.NUMBER]) - {NumberOperator.EQUAL.value} | {TextOperator.LIKE.value}


def filters_expr(
    specs: tuple[FilterSpec, ...], *, sorted_fetch: bool = False, whole_values: tuple[WholeValue, ...] = ()
) -> Expr | None:
    """All filters ANDed, each whole value's `not_equal` filters after its `=`; None without filters.

    `sorted_fetch`: Weaviate resolves a lone range or LIKE filter only up to the query's limit
    and then sorts that partial set, so `fetch_objects(limit=10, sort=Sort.by_id())` would list
    some matches in UUID order rather than the first ten. A filter ANDed with itself is resolved
    completely (nested filters are never limited), which makes the result exact.
    """
    exprs = _filter_exprs(specs, whole_values)
    if not exprs:
        return None
    if len(exprs) == 1 and sorted_fetch and specs[0].operator in LIMITED_OPERATORS:
        exprs = [exprs[0], exprs[0]]
    if len(exprs) == 1:
        return exprs[0]
    return attribute_call(_FILTER, "all_of", list_expr(exprs))


def _filter_exprs(specs: tuple[FilterSpec, ...], whole_values: tuple[WholeValue, ...]) -> list[Expr]:
    wholes = {whole.filter: whole for whole in whole_values}
    exprs = []
    for spec in specs:
        exprs.append(filter_expr(spec))
        if spec in wholes:
            exprs += wholes[spec].exprs()
    return exprs


def query_filters(
    spec: QuerySpec, *, sorted_fetch: bool = False, whole_values: tuple[WholeValue, ...] = ()
) -> Expr | None:
    """What a call of the plan is filtered by: `applied_filters` ANDed (`filters_expr`), and with them
    `Filter.any_of` of the alternatives (`QuerySpec.any_of`), each alternative's filters ANDed."""
    if not spec.any_of:
        return filters_expr(spec.applied_filters, sorted_fetch=sorted_fetch, whole_values=whole_values)
    exprs = _filter_exprs(spec.applied_filters, whole_values)
    options = [filters_expr(alternative, whole_values=whole_values) for alternative in spec.any_of]
    exprs.append(attribute_call(_FILTER, "any_of", list_expr([o for o in options if o is not None])))
    return exprs[0] if len(exprs) == 1 else attribute_call(_FILTER, "all_of", list_expr(exprs))


def top_occurrences_limit(spec: AggregationSpec, options: ExecutorOptions) -> int:
    return spec.top_occurrences_limit or options.default_top_occurrences_limit


def metrics_expr(spec: AggregationSpec, options: ExecutorOptions) -> Expr | None:
    """`Metrics(prop).<type>(flag=True, ...)` for every metric except TYPE; None if only TYPE."""
    flags: dict[str, Any] = {
        METRIC_ATTRIBUTES[m]: True for m in spec.metrics if m not in SCHEMA_METRICS and m != "TOP_OCCURRENCES"
    }
    if "TOP_OCCURRENCES" in spec.metrics:
        # Always send the limit: Weaviate's gRPC handler mis-parses TOP_OCCURRENCES without one.
        flags.update(top_occurrences_count=True, top_occurrences_value=True, limit=top_occurrences_limit(spec, options))
    if not flags:
        return None
    method = {PropertyKind.NUMBER: "integer" if spec.prop.is_int else "number"}.get(spec.kind, spec.kind.value)
    built = getattr(Metrics(spec.prop.name), method)(**flags)
    arguments = ", ".join(f"{key}={value!r}" for key, value in flags.items())
    return Expr(built, f"Metrics({render_literal(spec.prop.name)}).{method}({arguments})")


def _hits_call(spec: QuerySpec, options: ExecutorOptions, filters: Expr | None, properties: bool) -> PlannedCall:
    """The search's hits: every object within the relevance cut, closest (best) first."""
    mode = options.search_mode
    kwargs: dict[str, Expr] = {}
    if mode == SearchMode.NEAR_TEXT:
        kwargs["distance"] = literal(float(options.search_max_distance))
    elif mode == SearchMode.HYBRID:
        if options.alpha is not None:
            kwargs["alpha"] = literal(float(options.alpha))
        kwargs["max_vector_distance"] = literal(float(options.search_max_distance))
    kwargs["limit"] = literal(options.search_hit_limit)
    if filters is not None:
        kwargs["filters"] = filters
    if not properties:
        kwargs["return_properties"] = literal([])
    elif (references := references_expr(spec)) is not None:
        kwargs["return_references"] = references
    wanted = "distance" if mode == SearchMode.NEAR_TEXT else "score"
    kwargs["return_metadata"] = Expr(MetadataQuery(**{wanted: True}), f"MetadataQuery({wanted}=True)")
    return PlannedCall("query", mode.value, "hits", (literal(spec.search_query),), kwargs)


def references_expr(spec: QuerySpec) -> Expr | None:
    """The collection's references, returned with each object (their targets' ids): none under `paper`."""
    links = [reference.name for reference in spec.collection.references]
    if not links:
        return None
    built = [QueryReference(link_on=name, return_properties=[]) for name in links]
    shown = ", ".join(f"QueryReference(link_on={render_literal(name)}, return_properties=[])" for name in links)
    return Expr(built, f"[{shown}]")


def sort_expr(sort: SortSpec) -> Expr:
    """The property's order, then ids ascending: equal values always come in one order."""
    ascending = not sort.descending
    built = Sort.by_property(sort.prop.name, ascending=ascending).by_id(ascending=True)
    source = f"Sort.by_property({render_literal(sort.prop.name)}, ascending={ascending}).by_id(ascending=True)"
    return Expr(built, source)


def _fetch_call(spec: QuerySpec, limit: int, purpose: str, whole_values: tuple[WholeValue, ...]) -> PlannedCall:
    kwargs: dict[str, Expr] = {"limit": literal(limit)}
    fetch_filters = query_filters(spec, sorted_fetch=True, whole_values=whole_values)
    references = references_expr(spec)
    if references is not None:
        kwargs["return_references"] = references
    if spec.sort is not None:
        if fetch_filters is not None:
            kwargs["filters"] = fetch_filters
        kwargs["sort"] = sort_expr(spec.sort)
    elif fetch_filters is None:
        # The cursor lists objects in UUID order reading only `limit` of them; Sort.by_id()
        # would read the whole collection. (It starts *after* the nil UUID, see NIL_UUID.)
        kwargs["after"] = literal(NIL_UUID)
    else:
        kwargs["filters"] = fetch_filters
        kwargs["sort"] = attribute_call(Expr(Sort, "Sort"), "by_id")
    return PlannedCall("query", "fetch_objects", purpose, (), kwargs)


def _top_call(spec: QuerySpec, whole_values: tuple[WholeValue, ...]) -> PlannedCall:
    """The ids of the sort's first `limit` objects, which the aggregation after it runs over ("the average
    horsepower of the 5 heaviest cars"): Weaviate's aggregate neither sorts nor limits."""
    assert spec.sort is not None
    listed = _fetch_call(spec, spec.sort.limit, "top", whole_values)
    kwargs = {k: v for k, v in listed.kwargs.items() if k != "return_references"}  # their ids alone
    return PlannedCall("query", "fetch_objects", "top", (), {**kwargs, "return_properties": literal([])})


def _aggregate_call(
    spec: QuerySpec, options: ExecutorOptions, filters: Expr | None, metrics: list[Expr], purpose: str
) -> PlannedCall:
    kwargs: dict[str, Expr] = {}
    if filters is not None:
        kwargs["filters"] = filters
    if spec.group_by is not None:
        # Fetch more groups than are shown (at least one extra, to know whether any were cut)
        # and cut locally: Weaviate breaks ties between equal-sized groups arbitrarily.
        limit = max(options.group_fetch_limit, options.max_groups + 1)
        group = GroupByAggregate(prop=spec.group_by.name, limit=limit)
        kwargs["group_by"] = Expr(group, f"GroupByAggregate(prop={literal(spec.group_by.name).source}, limit={limit})")
    if metrics:
        kwargs["return_metrics"] = list_expr(metrics)
    kwargs["total_count"] = _TRUE
    over = spec.has_search or spec.sort is not None
    return PlannedCall("aggregate", "over_all", purpose, (), kwargs, over_hits=over)


def _count_call(filters: Expr | None) -> PlannedCall:
    """How many objects a listing matched: the page shows FETCH_LIMIT of them, the count says how many
    there are, so "how many cost more than 800?" is never answered with the page size."""
    kwargs: dict[str, Expr] = {"filters": filters} if filters is not None else {}
    kwargs["total_count"] = _TRUE
    return PlannedCall("aggregate", "over_all", "count", (), kwargs)


def stored_values_call(prop: str, scope: tuple[FilterSpec, ...] = ()) -> PlannedCall:
    """A text property's distinct stored values (in the scope) for `whole_value`: one more than
    STORED_VALUES_LIMIT is asked for, to know when there are too many (TOP_OCCURRENCES always with a
    limit, see `metrics_expr`)."""
    flags = f"top_occurrences_count=True, top_occurrences_value=True, limit={STORED_VALUES_LIMIT + 1}"
    built = Metrics(prop).text(top_occurrences_count=True, top_occurrences_value=True, limit=STORED_VALUES_LIMIT + 1)
    kwargs = {"return_metrics": Expr([built], f"[Metrics({render_literal(prop)}).text({flags})]")}
    if (filters := filters_expr(scope)) is not None:
        kwargs["filters"] = filters
    return PlannedCall("aggregate", "over_all", "stored_values", (), kwargs)


def build_plan(spec: QuerySpec, options: ExecutorOptions, whole_values: tuple[WholeValue, ...] = ()) -> QueryPlan:
    """The calls for `spec`, with the text `=` filters in `whole_values` taken as whole values."""
    filters = query_filters(spec, whole_values=whole_values)
    calls: list[PlannedCall] = []
    listing = spec.group_by is None and not spec.aggregations
    samples = spec.group_by is not None and not spec.aggregations and options.samples_per_group > 0
    if spec.has_search:
        calls.append(_hits_call(spec, options, filters, properties=listing or samples))
    elif listing and spec.sort is not None:
        calls.append(_fetch_call(spec, spec.sort.limit, "objects", whole_values))
        calls.append(_count_call(filters))
    elif listing:
        calls.append(_fetch_call(spec, options.fetch_limit + 1, "objects", whole_values))
        calls.append(_count_call(filters))
    if not listing and spec.sort is not None:
        calls.append(_top_call(spec, whole_values))
    if not listing:
        metrics = [m for m in (metrics_expr(a, options) for a in spec.aggregations) if m is not None]
        purpose = "groups" if spec.group_by is not None else "aggregate"
        calls.append(_aggregate_call(spec, options, filters, metrics, purpose))
        if samples and not spec.has_search and options.group_sample_scan_limit > 0:
            calls.append(_fetch_call(spec, options.group_sample_scan_limit, "group_samples", whole_values))
    for call in calls:
        assert (call.namespace, call.method) in READ_METHODS, call
    return QueryPlan(spec=spec, options=options, calls=tuple(calls), whole_values=whole_values)
