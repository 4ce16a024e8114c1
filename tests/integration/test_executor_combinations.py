"""The executor on a live Weaviate: all 63 operator combinations, every metric, operator and group type.

Expected values are computed here from the inserted objects with plain Python (statistics,
Counter, hand-written predicates), independently of the executor and of the reference executor.
"""

from __future__ import annotations

import itertools
import statistics
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from weaviate.classes.query import Filter

from executors import ExecutorOptions, QueryResult, WeaviateExecutor
from executors.testing import create_sample_collection, sample_objects, unique_name

pytestmark = pytest.mark.integration

COUNT = 80
Props = dict[str, Any]


@dataclass
class Live:
    client: Any
    name: str
    rows: list[tuple[str, Props]]  # (uuid, properties) as inserted

    def executor(self, **options: Any) -> WeaviateExecutor:
        return WeaviateExecutor(self.client, ExecutorOptions(**options))

    def where(self, predicate: Callable[[Props], bool]) -> list[tuple[str, Props]]:
        return [(u, p) for u, p in self.rows if predicate(p)]


@pytest.fixture(scope="module")
def live(weaviate_stack: Any) -> Iterator[Live]:
    from dbgorilla.connection import connect

    client = connect(weaviate_stack.settings)
    name = unique_name("ExecCombo")
    objects = sample_objects(COUNT, seed=11)
    try:
        create_sample_collection(client, name, objects)
        yield Live(client, name, [(o.uuid, dict(o.properties)) for o in objects])
    finally:
        client.collections.delete(name)
        client.close()


# --- independent expectations -----------------------------------------------------------------


def values(rows: list[tuple[str, Props]], prop: str) -> list[Any]:
    return [p[prop] for _, p in rows if p.get(prop) is not None]


def expected_metric(rows: list[tuple[str, Props]], prop: str, metric: str, limit: int = 5) -> Any:
    present = values(rows, prop)
    if metric == "COUNT":
        return float(len(present))
    if metric == "TYPE":
        return {"title": "text", "cuisine": "text", "price": "number", "seats": "int", "open_late": "boolean"}[prop]
    if metric == "TOP_OCCURRENCES":
        counts = Counter(present)
        return [{"value": v, "count": c} for v, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]]
    if metric in ("TOTAL_TRUE", "TOTAL_FALSE", "PERCENTAGE_TRUE", "PERCENTAGE_FALSE"):
        true = sum(1 for v in present if v)
        chosen = true if metric.endswith("TRUE") else len(present) - true
        if metric.startswith("TOTAL"):
            return float(chosen)
        return chosen / len(present) if present else None
    if not present:
        return None
    numbers = [float(v) for v in present]
    return {
        "MIN": min(numbers),
        "MAX": max(numbers),
        "SUM": sum(numbers),
        "MEAN": statistics.fmean(numbers),
        "MEDIAN": statistics.median(numbers),
        "MODE": min(statistics.multimode(numbers)),
    }[metric]


def key_of(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def approx(value: Any) -> Any:
    return pytest.approx(value, rel=1e-9, abs=1e-9) if isinstance(value, float) else value


def dumped(result: QueryResult) -> dict[str, Any]:
    return result.model_dump(mode="json")


# --- the 63 combinations ---------------------------------------------------------------------

FILTERS: dict[str, tuple[dict[str, Any], Callable[[Props], bool]]] = {
    "number": (
        {"integer_property_filter": {"property_name": "price", "operator": "<", "value": 40}},
        lambda p: p.get("price") is not None and p["price"] < 40,
    ),
    "text": (
        {"text_property_filter": {"property_name": "title", "operator": "=", "value": "Pizza"}},
        lambda p: "pizza" in p["title"].lower().split(),
    ),
    "boolean": (
        {"boolean_property_filter": {"property_name": "open_late", "operator": "=", "value": True}},
        lambda p: p.get("open_late") is True,
    ),
}
AGGREGATIONS: dict[str, tuple[dict[str, Any], str, str]] = {
    "number": ({"integer_property_aggregation": {"property_name": "price", "metrics": "MEAN"}}, "price", "MEAN"),
    "text": (
        {
            "text_property_aggregation": {
                "property_name": "cuisine",
                "metrics": "TOP_OCCURRENCES",
                "top_occurrences_limit": 3,
            }
        },
        "cuisine",
        "TOP_OCCURRENCES",
    ),
    "boolean": (
        {"boolean_property_aggregation": {"property_name": "open_late", "metrics": "PERCENTAGE_TRUE"}},
        "open_late",
        "PERCENTAGE_TRUE",
    ),
}
COMBINATIONS = [
    combo
    for combo in itertools.product([False, True], [None, *FILTERS], [None, *AGGREGATIONS], [False, True])
    if combo != (False, None, None, False)
]
assert len(COMBINATIONS) == 63


@pytest.mark.parametrize(("search", "filter_", "aggregation", "group"), COMBINATIONS)
def test_combination(live: Live, search: bool, filter_: str | None, aggregation: str | None, group: bool) -> None:
    """With the relevance cut at the largest cosine distance every object is a search hit, so search
    combinations must equal the same query without search, computed from the inserted objects."""
    raw: dict[str, Any] = {"collection_name": live.name}
    predicate: Callable[[Props], bool] = lambda p: True  # noqa: E731
    if search:
        raw["search_query"] = "cozy pizza"
    if filter_:
        slot, predicate = FILTERS[filter_]
        raw |= slot
    if aggregation:
        raw |= AGGREGATIONS[aggregation][0]
    if group:
        raw["groupby_property"] = "cuisine"
    executor = live.executor(search_max_distance=2.0, search_hit_limit=1000, search_limit=1000, fetch_limit=1000)
    result = dumped(executor.execute(raw))
    matched = live.where(predicate)
    assert matched, "test data must match every filter"

    if filter_:
        assert all("filters=" in call for call in result["calls"]), result["calls"]
    if not aggregation and not group:
        if search:
            ranks = [o["rank"] for o in result["objects"]]
            assert ranks == list(range(1, len(ranks) + 1))
            distances = [o["distance"] for o in result["objects"]]
            assert distances == sorted(distances)
        assert sorted(o["uuid"] for o in result["objects"]) == sorted(u for u, _ in matched)
        return

    def check_aggregations(aggregations: dict[str, Any], rows: list[tuple[str, Props]]) -> None:
        if aggregation:
            _, prop, metric = AGGREGATIONS[aggregation]
            assert aggregations == {prop: {metric: approx(expected_metric(rows, prop, metric, limit=3))}}
        else:
            assert aggregations == {}

    if not group:
        assert result["total_count"] == len(matched)
        check_aggregations(result["aggregations"], matched)
        return

    by_cuisine: dict[str, list[tuple[str, Props]]] = {}
    for uuid, props in matched:
        if props.get("cuisine") is not None:
            by_cuisine.setdefault(props["cuisine"], []).append((uuid, props))
    expected_order = sorted(by_cuisine, key=lambda k: (-len(by_cuisine[k]), k))
    assert list(result["groups"]) == expected_order
    for key, group_result in result["groups"].items():
        assert group_result["count"] == len(by_cuisine[key])
        check_aggregations(group_result["aggregations"], by_cuisine[key])
        members = {uuid for uuid, _ in by_cuisine[key]}
        if aggregation:
            assert group_result["samples"] == []
        else:
            samples = group_result["samples"]
            assert 1 <= len(samples) <= 3 and {s["uuid"] for s in samples} <= members
            if search:
                assert [s["rank"] for s in samples] == sorted(s["rank"] for s in samples)
            else:
                assert [s["uuid"] for s in samples] == sorted(members)[: len(samples)]


# --- every metric of every type ----------------------------------------------------------------

METRICS = [
    *[
        ("integer_property_aggregation", p, m)
        for p in ("price", "seats")
        for m in ("COUNT", "TYPE", "MIN", "MAX", "MEAN", "MEDIAN", "MODE", "SUM")
    ],
    *[("text_property_aggregation", p, m) for p in ("cuisine", "title") for m in ("COUNT", "TYPE", "TOP_OCCURRENCES")],
    *[
        ("boolean_property_aggregation", "open_late", m)
        for m in ("COUNT", "TYPE", "TOTAL_TRUE", "TOTAL_FALSE", "PERCENTAGE_TRUE", "PERCENTAGE_FALSE")
    ],
]
SCOPES: dict[str, tuple[dict[str, Any], Callable[[Props], bool]]] = {
    "all": ({}, lambda p: True),
    "filtered": (
        {"integer_property_filter": {"property_name": "seats", "operator": ">=", "value": 42.5}},
        lambda p: p.get("seats") is not None and p["seats"] >= 42.5,
    ),
    "empty": (
        {"integer_property_filter": {"property_name": "price", "operator": ">", "value": 10_000}},
        lambda p: False,
    ),
}


@pytest.mark.parametrize("scope", list(SCOPES))
@pytest.mark.parametrize(("slot", "prop", "metric"), METRICS)
def test_every_metric(live: Live, slot: str, prop: str, metric: str, scope: str) -> None:
    extra, predicate = SCOPES[scope]
    raw = {"collection_name": live.name, slot: {"property_name": prop, "metrics": metric}, **extra}
    result = dumped(live.executor().execute(raw))
    rows = live.where(predicate)
    assert result["total_count"] == len(rows)
    assert result["aggregations"] == {prop: {metric: approx(expected_metric(rows, prop, metric))}}


@pytest.mark.parametrize("limit", [1, 2, 7, 100])
def test_top_occurrences_limit_is_honoured(live: Live, limit: int) -> None:
    raw = {
        "collection_name": live.name,
        "text_property_aggregation": {
            "property_name": "cuisine",
            "metrics": "TOP_OCCURRENCES",
            "top_occurrences_limit": limit,
        },
    }
    result = dumped(live.executor().execute(raw))
    assert result["aggregations"]["cuisine"]["TOP_OCCURRENCES"] == expected_metric(
        live.rows, "cuisine", "TOP_OCCURRENCES", limit
    )


def test_all_three_aggregations_and_filters_in_one_call(live: Live) -> None:
    raw = {
        "collection_name": live.name,
        "groupby_property": "open_late",
        "integer_property_filter": {"property_name": "price", "operator": "<", "value": 40},
        "text_property_filter": {"property_name": "title", "operator": "=", "value": "pizza"},
        "boolean_property_filter": {"property_name": "open_late", "operator": "=", "value": False},
    }
    for slot, _, _ in AGGREGATIONS.values():
        raw |= slot
    result = dumped(live.executor().execute(raw))
    assert len(result["calls"]) == 1
    rows = live.where(
        lambda p: (
            p.get("price") is not None
            and p["price"] < 40
            and "pizza" in p["title"].lower().split()
            and p.get("open_late") is False
        )
    )
    assert len(rows) >= 3
    assert list(result["groups"]) == ["false"]
    expected = {
        prop: {metric: approx(expected_metric(rows, prop, metric, limit=3))}
        for _, prop, metric in AGGREGATIONS.values()
    }
    assert result["groups"]["false"]["aggregations"] == expected
    assert result["groups"]["false"]["count"] == len(rows)


# --- filters: every operator of every type -------------------------------------------------------

FILTER_CASES: list[tuple[str, str, str, Any, Callable[[Props], bool]]] = [
    ("integer_property_filter", "price", "=", 20, lambda p: p.get("price") == 20),
    ("integer_property_filter", "price", "<", 20, lambda p: p.get("price") is not None and p["price"] < 20),
    ("integer_property_filter", "price", "<=", 20, lambda p: p.get("price") is not None and p["price"] <= 20),
    ("integer_property_filter", "price", ">", 20.25, lambda p: p.get("price") is not None and p["price"] > 20.25),
    ("integer_property_filter", "price", ">=", 20, lambda p: p.get("price") is not None and p["price"] >= 20),
    ("integer_property_filter", "seats", "=", 40, lambda p: p.get("seats") == 40),
    ("integer_property_filter", "seats", "<", 42.5, lambda p: p.get("seats") is not None and p["seats"] < 42.5),
    ("integer_property_filter", "seats", "<=", 44.9, lambda p: p.get("seats") is not None and p["seats"] <= 44.9),
    ("integer_property_filter", "seats", ">", 44.9, lambda p: p.get("seats") is not None and p["seats"] > 44.9),
    ("integer_property_filter", "seats", ">=", 42.5, lambda p: p.get("seats") is not None and p["seats"] >= 42.5),
    ("text_property_filter", "cuisine", "=", "Thai", lambda p: p.get("cuisine") == "Thai"),
    ("text_property_filter", "cuisine", "=", "thai", lambda p: False),
    ("text_property_filter", "cuisine", "LIKE", "*ai", lambda p: (p.get("cuisine") or "").endswith("ai")),
    ("text_property_filter", "cuisine", "LIKE", "?r*", lambda p: (p.get("cuisine") or " ")[1:2] == "r"),
    (
        "text_property_filter",
        "title",
        "=",
        "PIZZA the Bar",
        lambda p: {"pizza", "bar"} <= set(p["title"].lower().split()),
    ),
    ("text_property_filter", "title", "LIKE", "cur?y", lambda p: "curry" in p["title"].lower().split()),
    ("text_property_filter", "title", "LIKE", "d*s k*", lambda p: _word_like(p["title"], ("d", "s"), "k")),
    ("boolean_property_filter", "open_late", "=", True, lambda p: p.get("open_late") is True),
    ("boolean_property_filter", "open_late", "=", False, lambda p: p.get("open_late") is False),
    ("boolean_property_filter", "open_late", "!=", True, lambda p: p.get("open_late") is not True),
    ("boolean_property_filter", "open_late", "!=", False, lambda p: p.get("open_late") is not False),
]


def _word_like(title: str, first: tuple[str, str], second_prefix: str) -> bool:
    words = title.lower().split()
    return any(w.startswith(first[0]) and w.endswith(first[1]) for w in words) and any(
        w.startswith(second_prefix) for w in words
    )


@pytest.mark.parametrize(("slot", "prop", "operator", "value", "predicate"), FILTER_CASES)
def test_every_filter_operator(live: Live, slot: str, prop: str, operator: str, value: Any, predicate: Any) -> None:
    raw = {"collection_name": live.name, slot: {"property_name": prop, "operator": operator, "value": value}}
    result = dumped(live.executor(fetch_limit=1000).execute(raw))
    expected = sorted(uuid for uuid, _ in live.where(predicate))
    assert [o["uuid"] for o in result["objects"]] == expected
    assert result["total_count"] == len(expected)


def test_boolean_not_equal_includes_missing_values(live: Live) -> None:
    """Weaviate runs != as a deny list; the sample data has objects without open_late."""
    missing = live.where(lambda p: p.get("open_late") is None)
    assert missing
    raw = {
        "collection_name": live.name,
        "boolean_property_filter": {"property_name": "open_late", "operator": "!=", "value": True},
    }
    uuids = {o["uuid"] for o in dumped(live.executor(fetch_limit=1000).execute(raw))["objects"]}
    assert {u for u, _ in missing} <= uuids


def test_fetch_limit_truncates_in_uuid_order(live: Live) -> None:
    result = dumped(live.executor(fetch_limit=7).execute({"collection_name": live.name}))
    assert [o["uuid"] for o in result["objects"]] == sorted(u for u, _ in live.rows)[:7]
    # the page is cut at 7; the count call says how many objects there are
    assert result["truncated"] is True and result["total_count"] == len(live.rows)


# --- group-by on every type ---------------------------------------------------------------------


@pytest.mark.parametrize("prop", ["cuisine", "price", "seats", "open_late"])
def test_group_by_every_type(live: Live, prop: str) -> None:
    result = dumped(live.executor(max_groups=1000).execute({"collection_name": live.name, "groupby_property": prop}))
    counts = Counter(key_of(v) for v in values(live.rows, prop))
    assert {k: g["count"] for k, g in result["groups"].items()} == dict(counts)
    assert list(result["groups"]) == sorted(counts, key=lambda k: (-counts[k], k))
    assert result["total_count"] == sum(counts.values())


def test_group_limit_truncates(live: Live) -> None:
    result = dumped(live.executor(max_groups=3).execute({"collection_name": live.name, "groupby_property": "seats"}))
    counts = Counter(key_of(v) for v in values(live.rows, "seats"))
    assert len(result["groups"]) == 3 and result["truncated"] is True
    top = sorted(counts.values(), reverse=True)[:3]
    assert [g["count"] for g in result["groups"].values()] == top


# --- search + aggregation: exactly the search's hits -----------------------------------------------


def test_bm25_aggregation_covers_exactly_the_bm25_hits(live: Live) -> None:
    executor = live.executor(search_mode="bm25", search_hit_limit=6)
    raw = {
        "collection_name": live.name,
        "search_query": "pizza",
        "integer_property_aggregation": {"property_name": "price", "metrics": "SUM"},
    }
    result = dumped(executor.execute(raw))
    hits = live.client.collections.use(live.name).query.bm25("pizza", limit=6).objects
    rows = [(str(o.uuid), dict(o.properties)) for o in hits]
    assert result["total_count"] == len(rows) == 6
    assert result["aggregations"]["price"]["SUM"] == approx(expected_metric(rows, "price", "SUM"))
    assert result["calls"][0].startswith("collection.query.bm25('pizza', limit=6")
    assert "Filter.by_id().contains_any(hit_ids)" in result["calls"][1]


def test_near_text_aggregation_with_filter_covers_the_filtered_hits_within_the_cut(live: Live) -> None:
    executor = live.executor(search_max_distance=0.8)
    raw = {
        "collection_name": live.name,
        "search_query": "sushi bar",
        "boolean_property_filter": {"property_name": "open_late", "operator": "=", "value": False},
        "boolean_property_aggregation": {"property_name": "open_late", "metrics": "TOTAL_FALSE"},
    }
    result = dumped(executor.execute(raw))
    hits = live.client.collections.use(live.name).query.near_text(
        "sushi bar", distance=0.8, limit=1000, filters=Filter.by_property("open_late").equal(False)
    )
    assert 0 < len(hits.objects) < len(live.rows)
    assert result["total_count"] == len(hits.objects)
    assert result["aggregations"]["open_late"]["TOTAL_FALSE"] == float(len(hits.objects))


def test_a_search_without_hits_aggregates_nothing(live: Live) -> None:
    executor = live.executor(search_max_distance=0.01)
    raw = {
        "collection_name": live.name,
        "search_query": "quantum chromodynamics lecture notes",
        "integer_property_aggregation": {"property_name": "price", "metrics": "MEAN"},
        "groupby_property": "cuisine",
    }
    result = dumped(executor.execute(raw))
    assert result["groups"] == {} and result["total_count"] == 0
    listing = dumped(executor.execute({"collection_name": live.name, "search_query": raw["search_query"]}))
    assert listing["objects"] == [] and listing["total_count"] == 0


def test_listing_groups_and_aggregates_of_one_search_cover_the_same_objects(live: Live) -> None:
    executor = live.executor(search_max_distance=0.7, search_limit=1000)
    base = {"collection_name": live.name, "search_query": "spicy curry"}
    listed = dumped(executor.execute(base))
    counted = dumped(
        executor.execute({**base, "text_property_aggregation": {"property_name": "cuisine", "metrics": "COUNT"}})
    )
    grouped = dumped(executor.execute({**base, "groupby_property": "cuisine"}))
    with_cuisine = [o for o in listed["objects"] if o["properties"].get("cuisine") is not None]
    assert 0 < len(listed["objects"]) == listed["total_count"] < len(live.rows)
    assert counted["total_count"] == len(listed["objects"])
    assert counted["aggregations"]["cuisine"]["COUNT"] == float(len(with_cuisine))
    assert sum(g["count"] for g in grouped["groups"].values()) == len(with_cuisine)


@pytest.mark.parametrize("mode", ["hybrid", "bm25", "near_text"])
def test_search_modes_rank_hits(live: Live, mode: str) -> None:
    raw = {
        "collection_name": live.name,
        "search_query": "pizza",
        "text_property_filter": {"property_name": "cuisine", "operator": "LIKE", "value": "*a*"},
    }
    result = dumped(live.executor(search_mode=mode, search_limit=5).execute(raw))
    objects = result["objects"]
    # Once (one CI run of many) hybrid and near_text found nothing here while bm25 did: say what came back.
    assert 0 < len(objects) <= 5, {k: result.get(k) for k in ("total_count", "notes", "calls")}
    assert all("a" in o["properties"]["cuisine"] for o in objects)
    assert [o["rank"] for o in objects] == list(range(1, len(objects) + 1))
    if mode == "near_text":
        assert [o["distance"] for o in objects] == sorted(o["distance"] for o in objects)
    else:
        assert [o["score"] for o in objects] == sorted((o["score"] for o in objects), reverse=True)
    if mode == "bm25":
        assert all("pizza" in o["properties"]["title"].lower().split() for o in objects)
