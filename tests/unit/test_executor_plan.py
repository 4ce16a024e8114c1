"""Translation to weaviate-client calls: the right method for every combination, and rendered
source that, when evaluated, rebuilds exactly the arguments the executor passes."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from pydantic import BaseModel
from weaviate.classes.aggregate import GroupByAggregate
from weaviate.classes.query import Filter, MetadataQuery, Metrics, Sort

from executors import (
    CollectionSchema,
    DatabaseSchema,
    ExecutorOptions,
    PropertySchema,
    SearchMode,
    parse_arguments,
    validate_arguments,
)
from executors._plan import build_plan, int_filter_bound

SCHEMA = DatabaseSchema(
    collections=(
        CollectionSchema(
            name="Shops",
            properties=(
                PropertySchema(name="name", data_type="text", tokenization="word"),
                PropertySchema(name="price", data_type="number"),
                PropertySchema(name="rooms", data_type="int"),
                PropertySchema(name="open", data_type="boolean"),
            ),
        ),
    )
)
FILTERS: dict[str, dict[str, Any]] = {
    "number": {"integer_property_filter": {"property_name": "price", "operator": "<", "value": 20}},
    "text": {"text_property_filter": {"property_name": "name", "operator": "LIKE", "value": "b*"}},
    "boolean": {"boolean_property_filter": {"property_name": "open", "operator": "!=", "value": False}},
}
AGGREGATIONS: dict[str, dict[str, Any]] = {
    "number": {"integer_property_aggregation": {"property_name": "price", "metrics": "SUM"}},
    "text": {"text_property_aggregation": {"property_name": "name", "metrics": "TOP_OCCURRENCES"}},
    "boolean": {"boolean_property_aggregation": {"property_name": "open", "metrics": "PERCENTAGE_TRUE"}},
}
COMBINATIONS = list(itertools.product([False, True], [None, *FILTERS], [None, *AGGREGATIONS], [False, True]))


def arguments(search: bool, filter_: str | None, aggregation: str | None, group: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"collection_name": "Shops"}
    if search:
        out["search_query"] = "bakery"
    out.update(FILTERS.get(filter_ or "", {}))
    out.update(AGGREGATIONS.get(aggregation or "", {}))
    if group:
        out["groupby_property"] = "rooms"
    return out


def plan_for(raw: dict[str, Any], **options: Any) -> Any:
    return build_plan(validate_arguments(parse_arguments(raw), SCHEMA), ExecutorOptions(**options))


class Recorder:
    """Stands in for `collection` when evaluating rendered source."""

    def __getattr__(self, namespace: str) -> Any:
        class Namespace:
            def __getattr__(self, method: str) -> Any:
                return lambda *args, **kwargs: (namespace, method, args, kwargs)

        return Namespace()


def canonical(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return (type(value).__name__, canonical(value.model_dump()))
    if isinstance(value, list | tuple):
        return [canonical(v) for v in value]
    if isinstance(value, dict):
        return {k: canonical(v) for k, v in value.items()}
    if hasattr(value, "__dict__"):
        return (type(value).__name__, canonical(vars(value)))
    return value


HIT_IDS = ["5a1b2c3d-0000-4000-8000-000000000001", "5a1b2c3d-0000-4000-8000-000000000002"]


@pytest.mark.parametrize(("search", "filter_", "aggregation", "group"), COMBINATIONS)
@pytest.mark.parametrize("mode", list(SearchMode))
def test_every_combination_renders_the_call_it_makes(search, filter_, aggregation, group, mode) -> None:
    plan = plan_for(arguments(search, filter_, aggregation, group), search_mode=mode)
    namespace = {"collection": Recorder(), "Filter": Filter, "Metrics": Metrics, "Sort": Sort}
    namespace |= {"GroupByAggregate": GroupByAggregate, "MetadataQuery": MetadataQuery, "hit_ids": HIT_IDS}
    for planned in plan.calls:
        # A call over a search's hits gets their ids when it runs; it renders them as `hit_ids`.
        call = planned.restricted_to(HIT_IDS) if planned.over_hits else planned
        assert call.source() == planned.source()
        made_ns, made_method, made_args, made_kwargs = eval(call.source(), namespace)
        args, kwargs = call.arguments()
        assert (made_ns, made_method) == (call.namespace, call.method)
        assert canonical(made_args) == canonical(args)
        assert canonical(made_kwargs) == canonical(kwargs)
        if filter_ is not None:
            assert "filters" in kwargs, "filters must reach every call"


@pytest.mark.parametrize(("search", "filter_", "aggregation", "group"), COMBINATIONS)
def test_methods_per_combination(search, filter_, aggregation, group) -> None:
    plan = plan_for(arguments(search, filter_, aggregation, group))
    made = [(c.namespace, c.method, c.purpose, c.over_hits) for c in plan.calls]
    hits = [("query", "near_text", "hits", False)] if search else []
    if not aggregation and not group:
        listing = [("query", "fetch_objects", "objects", False), ("aggregate", "over_all", "count", False)]
        assert made == (hits or listing)
    elif not group:
        assert made == [*hits, ("aggregate", "over_all", "aggregate", search)]
    elif aggregation or search:
        assert made == [*hits, ("aggregate", "over_all", "groups", search)]
    else:
        assert made == [("aggregate", "over_all", "groups", False), ("query", "fetch_objects", "group_samples", False)]


def test_search_modes_and_limits_are_explicit() -> None:
    raw = {"collection_name": "Shops", "search_query": "bakery", **AGGREGATIONS["number"]}
    assert plan_for(raw).rendered() == [
        "collection.query.near_text('bakery', distance=0.65, limit=1000, return_properties=[], "
        "return_metadata=MetadataQuery(distance=True))",
        "collection.aggregate.over_all(return_metrics=[Metrics('price').number(sum_=True)], total_count=True, "
        "filters=Filter.by_id().contains_any(hit_ids))",
    ]
    assert plan_for(raw, search_mode="bm25", search_hit_limit=7).rendered()[0] == (
        "collection.query.bm25('bakery', limit=7, return_properties=[], return_metadata=MetadataQuery(score=True))"
    )
    raw = {"collection_name": "Shops", "search_query": "bakery"}
    assert plan_for(raw, search_mode="hybrid", alpha=0.5, search_max_distance=0.4).rendered() == [
        "collection.query.hybrid('bakery', alpha=0.5, max_vector_distance=0.4, limit=1000, "
        "return_metadata=MetadataQuery(score=True))"
    ]
    assert plan_for({"collection_name": "Shops"}).rendered() == [
        "collection.query.fetch_objects(limit=11, after='00000000-0000-0000-0000-000000000000')",
        "collection.aggregate.over_all(total_count=True)",
    ]
    raw = {
        "collection_name": "Shops",
        "boolean_property_filter": {"property_name": "open", "operator": "=", "value": True},
    }
    assert plan_for(raw).rendered() == [
        "collection.query.fetch_objects(limit=11, filters=Filter.by_property('open').equal(True), sort=Sort.by_id())",
        "collection.aggregate.over_all(filters=Filter.by_property('open').equal(True), total_count=True)",
    ]


def test_all_filters_and_all_aggregations_in_one_call() -> None:
    raw = {"collection_name": "Shops", "groupby_property": "open"}
    for part in (*FILTERS.values(), *AGGREGATIONS.values()):
        raw |= part
    (call,) = plan_for(raw).rendered()
    assert call == (
        "collection.aggregate.over_all(filters=Filter.all_of([Filter.by_property('price').less_than(20.0), "
        "Filter.by_property('name').like('b*'), Filter.by_property('open').not_equal(False)]), "
        "group_by=GroupByAggregate(prop='open', limit=1000), return_metrics=[Metrics('price').number(sum_=True), "
        "Metrics('name').text(top_occurrences_count=True, top_occurrences_value=True, limit=5), "
        "Metrics('open').boolean(percentage_true=True)], total_count=True)"
    )


@pytest.mark.parametrize(
    ("metric", "expected"),
    [
        ("COUNT", "Metrics('rooms').integer(count=True)"),
        ("MIN", "Metrics('rooms').integer(minimum=True)"),
        ("MAX", "Metrics('rooms').integer(maximum=True)"),
        ("MEAN", "Metrics('rooms').integer(mean=True)"),
        ("MEDIAN", "Metrics('rooms').integer(median=True)"),
        ("MODE", "Metrics('rooms').integer(mode=True)"),
        ("SUM", "Metrics('rooms').integer(sum_=True)"),
        ("TYPE", None),
    ],
)
def test_each_number_metric_maps_to_its_keyword(metric: str, expected: str | None) -> None:
    (call,) = plan_for(
        {"collection_name": "Shops", "integer_property_aggregation": {"property_name": "rooms", "metrics": metric}}
    ).calls
    if expected is None:
        assert "return_metrics" not in call.kwargs
    else:
        assert call.kwargs["return_metrics"].source == f"[{expected}]"


def test_top_occurrences_limit_is_sent() -> None:
    raw = {
        "collection_name": "Shops",
        "text_property_aggregation": {
            "property_name": "name",
            "metrics": "TOP_OCCURRENCES",
            "top_occurrences_limit": 3,
        },
    }
    (call,) = plan_for(raw).calls
    assert call.kwargs["return_metrics"].value[0].limit == 3


@pytest.mark.parametrize(
    ("operator", "value", "bound"),
    [("<", 2.5, 3), ("<", 2.0, 2), ("<=", 2.5, 2), (">", 2.5, 2), (">=", 2.5, 3), (">=", -2.5, -2), ("=", 4.0, 4)],
)
def test_int_filter_bounds_keep_the_meaning(operator: str, value: float, bound: int) -> None:
    assert int_filter_bound(operator, value) == bound
    for candidate in range(-5, 6):
        real = {"<": candidate < value, "<=": candidate <= value, ">": candidate > value, ">=": candidate >= value}
        as_int = {"<": candidate < bound, "<=": candidate <= bound, ">": candidate > bound, ">=": candidate >= bound}
        if operator in real:
            assert real[operator] == as_int[operator]
    raw = {
        "collection_name": "Shops",
        "integer_property_filter": {"property_name": "rooms", "operator": operator, "value": value},
    }
    assert f"({bound})" in plan_for(raw).rendered()[0]


@pytest.mark.parametrize(("operator", "value", "doubled"), [("<", 3, True), ("LIKE", "b*", True), ("=", "b", False)])
def test_lone_range_or_like_filter_is_anded_with_itself_for_sorted_fetches(
    operator: str, value: Any, doubled: bool
) -> None:
    """Weaviate resolves a lone range/LIKE filter only up to the limit before sorting by id."""
    slot = "integer_property_filter" if operator == "<" else "text_property_filter"
    prop = "price" if operator == "<" else "name"
    raw = {"collection_name": "Shops", slot: {"property_name": prop, "operator": operator, "value": value}}
    call, count = plan_for(raw).rendered()
    assert call.startswith("collection.query.fetch_objects(")
    assert count.startswith("collection.aggregate.over_all(") and "Filter.all_of([" not in count
    assert ("Filter.all_of([" in call) is doubled
    searched = plan_for({**raw, "search_query": "x"}).rendered()[0]
    assert "Filter.all_of([" not in searched
