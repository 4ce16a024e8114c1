"""The pure-Python reference executor on hand-checked data (the live differential test is separate)."""

from __future__ import annotations

import uuid

import pytest

from executors import (
    CollectionSchema,
    DatabaseSchema,
    ExecutorError,
    ExecutorOptions,
    PropertySchema,
    ReferenceExecutor,
)

SCHEMA = DatabaseSchema(
    collections=(
        CollectionSchema(
            name="Shops",
            properties=(
                PropertySchema(name="name", data_type="text", tokenization="word"),
                PropertySchema(name="kind", data_type="text", tokenization="field"),
                PropertySchema(name="price", data_type="number"),
                PropertySchema(name="rooms", data_type="int"),
                PropertySchema(name="open", data_type="boolean"),
            ),
        ),
    )
)
ROWS = [
    # name,                kind,     price, rooms, open
    ("Blue bakery", "bakery", 3.0, 1, True),
    ("Red bakery", "bakery", 2.0, 2, False),
    ("Green cafe", "cafe", 2.0, 3, None),
    ("The old cafe", "cafe", 5.5, None, True),
    ("Corner bar", "bar", None, 2, False),
    ("Night bar", None, 3.0, 4, True),
]
OBJECTS = [
    {
        "uuid": str(uuid.UUID(int=index + 1)),
        "properties": {"name": n, "kind": k, "price": p, "rooms": r, "open": o},
    }
    for index, (n, k, p, r, o) in enumerate(ROWS)
]
EXECUTOR = ReferenceExecutor(SCHEMA, {"Shops": OBJECTS})


def run(**slots: object) -> dict:
    return EXECUTOR.execute({"collection_name": "Shops", **slots}).model_dump()


def number(metric: str, prop: str = "price", **slots: object) -> object:
    result = run(integer_property_aggregation={"property_name": prop, "metrics": metric}, **slots)
    return result["aggregations"][prop][metric]


@pytest.mark.parametrize(
    ("metric", "expected"),
    [
        ("COUNT", 5.0),  # the null price is not counted
        ("MIN", 2.0),
        ("MAX", 5.5),
        ("SUM", 15.5),
        ("MEAN", 3.1),
        ("MEDIAN", 3.0),  # 2, 2, 3, 3, 5.5
        ("MODE", 2.0),  # 2 and 3 both twice: the smaller wins
        ("TYPE", "number"),
    ],
)
def test_number_metrics(metric: str, expected: object) -> None:
    assert number(metric) == (pytest.approx(expected) if isinstance(expected, float) else expected)


def test_int_metrics_and_even_median() -> None:
    assert number("MEDIAN", "rooms") == 2.0  # 1, 2, 2, 3, 4
    assert (
        number("MEDIAN", "rooms", boolean_property_filter={"property_name": "open", "operator": "=", "value": False})
        == 2.0
    )
    filtered = {"integer_property_filter": {"property_name": "rooms", "operator": ">=", "value": 2}}
    assert number("MEDIAN", "rooms", **filtered) == 2.5  # 2, 2, 3, 4
    assert number("TYPE", "rooms") == "int"


def test_metrics_over_no_objects() -> None:
    nothing = {"integer_property_filter": {"property_name": "price", "operator": ">", "value": 100}}
    assert number("COUNT", **nothing) == 0.0
    assert number("MEAN", **nothing) is None
    result = run(boolean_property_aggregation={"property_name": "open", "metrics": "PERCENTAGE_TRUE"}, **nothing)
    assert result["aggregations"]["open"]["PERCENTAGE_TRUE"] is None
    assert result["total_count"] == 0


@pytest.mark.parametrize(
    ("metric", "expected"),
    [("COUNT", 5.0), ("TOTAL_TRUE", 3.0), ("TOTAL_FALSE", 2.0), ("PERCENTAGE_TRUE", 0.6), ("PERCENTAGE_FALSE", 0.4)],
)
def test_boolean_metrics(metric: str, expected: float) -> None:
    result = run(boolean_property_aggregation={"property_name": "open", "metrics": metric})
    assert result["aggregations"]["open"][metric] == pytest.approx(expected)


def test_top_occurrences_counts_whole_values_with_ties_by_value() -> None:
    result = run(
        text_property_aggregation={"property_name": "kind", "metrics": "TOP_OCCURRENCES", "top_occurrences_limit": 2}
    )
    assert result["aggregations"]["kind"]["TOP_OCCURRENCES"] == [
        {"value": "bakery", "count": 2},
        {"value": "cafe", "count": 2},
    ]
    result = run(text_property_aggregation={"property_name": "name", "metrics": "TOP_OCCURRENCES"})
    assert len(result["aggregations"]["name"]["TOP_OCCURRENCES"]) == 5  # Weaviate's default limit
    assert result["aggregations"]["name"]["TOP_OCCURRENCES"][0] == {"value": "Blue bakery", "count": 1}


@pytest.mark.parametrize(
    ("slot", "expected_rows"),
    [
        ({"boolean_property_filter": {"property_name": "open", "operator": "!=", "value": True}}, [1, 2, 4]),
        ({"boolean_property_filter": {"property_name": "open", "operator": "=", "value": False}}, [1, 4]),
        ({"text_property_filter": {"property_name": "name", "operator": "=", "value": "BAKERY"}}, [0, 1]),
        ({"text_property_filter": {"property_name": "name", "operator": "=", "value": "the cafe"}}, [2, 3]),
        ({"text_property_filter": {"property_name": "kind", "operator": "=", "value": "Bakery"}}, []),
        ({"text_property_filter": {"property_name": "kind", "operator": "LIKE", "value": "ba*"}}, [0, 1, 4]),
        ({"text_property_filter": {"property_name": "kind", "operator": "LIKE", "value": "ba?"}}, [4]),
        ({"text_property_filter": {"property_name": "name", "operator": "LIKE", "value": "*ar"}}, [4, 5]),
        ({"integer_property_filter": {"property_name": "price", "operator": "=", "value": 2}}, [1, 2]),
        ({"integer_property_filter": {"property_name": "price", "operator": "<=", "value": 3}}, [0, 1, 2, 5]),
        ({"integer_property_filter": {"property_name": "rooms", "operator": "<", "value": 2.5}}, [0, 1, 4]),
        ({"integer_property_filter": {"property_name": "rooms", "operator": ">", "value": 2.5}}, [2, 5]),
    ],
)
def test_filters(slot: dict, expected_rows: list[int]) -> None:
    result = run(**slot)
    assert [o["uuid"] for o in result["objects"]] == [OBJECTS[i]["uuid"] for i in expected_rows]
    assert result["total_count"] == len(expected_rows)


def test_filters_are_anded() -> None:
    result = run(
        integer_property_filter={"property_name": "price", "operator": "<", "value": 4},
        text_property_filter={"property_name": "kind", "operator": "=", "value": "bakery"},
        boolean_property_filter={"property_name": "open", "operator": "=", "value": True},
    )
    assert [o["properties"]["name"] for o in result["objects"]] == ["Blue bakery"]


def test_group_by_orders_by_count_then_value_and_keys_are_strings() -> None:
    result = run(groupby_property="kind")
    assert list(result["groups"]) == ["bakery", "cafe", "bar"]
    assert [g["count"] for g in result["groups"].values()] == [2, 2, 1]
    assert result["total_count"] == 5
    assert [s["properties"]["name"] for s in result["groups"]["cafe"]["samples"]] == ["Green cafe", "The old cafe"]
    result = run(groupby_property="open")
    assert list(result["groups"]) == ["true", "false"]
    result = run(groupby_property="rooms", integer_property_aggregation={"property_name": "price", "metrics": "MAX"})
    assert list(result["groups"]) == ["2", "1", "3", "4"]
    assert result["groups"]["2"]["aggregations"] == {"price": {"MAX": 2.0}}
    assert result["groups"]["2"]["samples"] == []


def test_group_limit_and_fetch_limit_truncate() -> None:
    small = ReferenceExecutor(
        SCHEMA, {"Shops": OBJECTS}, ExecutorOptions(max_groups=2, fetch_limit=4, samples_per_group=1)
    )
    result = small.execute({"collection_name": "Shops", "groupby_property": "kind"}).model_dump()
    assert list(result["groups"]) == ["bakery", "cafe"]
    assert result["truncated"] is True and result["total_count"] is None
    result = small.execute({"collection_name": "Shops"}).model_dump()
    # the page is cut, the count is not: the listing says how many matched
    assert len(result["objects"]) == 4 and result["truncated"] is True and result["total_count"] == 6
    assert [o["uuid"] for o in result["objects"]] == sorted(o["uuid"] for o in OBJECTS)[:4]


def test_search_is_unsupported() -> None:
    with pytest.raises(ExecutorError) as caught:
        EXECUTOR.execute({"collection_name": "Shops", "search_query": "bakery"})
    assert caught.value.code == "unsupported_query"


def test_properties_normalised_and_nulls_omitted() -> None:
    result = run(text_property_filter={"property_name": "name", "operator": "=", "value": "night"})
    assert result["objects"][0]["properties"] == {"name": "Night bar", "price": 3.0, "rooms": 4.0, "open": True}


@pytest.mark.parametrize(
    "prop",
    [
        PropertySchema(name="t", data_type="text", tokenization="trigram"),
        PropertySchema(name="t", data_type="text", tokenization="word", ascii_fold=True),
    ],
)
def test_unmodelled_text_analysis_is_unsupported_not_wrong(prop: PropertySchema) -> None:
    schema = DatabaseSchema(collections=(CollectionSchema(name="C", properties=(prop,)),))
    executor = ReferenceExecutor(schema, {"C": [{"uuid": str(uuid.UUID(int=1)), "properties": {"t": "crème"}}]})
    with pytest.raises(ExecutorError) as caught:
        executor.execute(
            {"collection_name": "C", "text_property_filter": {"property_name": "t", "operator": "=", "value": "creme"}}
        )
    assert caught.value.code == "unsupported_query"


def test_unfiltered_listing_starts_after_the_nil_uuid_like_weaviates_cursor() -> None:
    rows = [{"uuid": str(uuid.UUID(int=i)), "properties": {"name": f"n{i}", "kind": "k"}} for i in range(3)]
    executor = ReferenceExecutor(SCHEMA, {"Shops": rows})
    listed = executor.execute({"collection_name": "Shops"})
    assert [o.uuid for o in listed.objects] == [rows[1]["uuid"], rows[2]["uuid"]]
    filtered = executor.execute(
        {"collection_name": "Shops", "text_property_filter": {"property_name": "kind", "operator": "=", "value": "k"}}
    )
    assert len(filtered.objects) == 3
    grouped = executor.execute({"collection_name": "Shops", "groupby_property": "kind"})
    assert grouped.groups is not None and grouped.groups["k"].count == 3
    assert [s.uuid for s in grouped.groups["k"].samples] == [rows[1]["uuid"], rows[2]["uuid"]]
