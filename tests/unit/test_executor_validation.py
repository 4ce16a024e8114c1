"""Every validation error: its code, its field and a message that tells the model how to fix the call."""

from __future__ import annotations

import json

import pytest

from executors import (
    ERROR_CODES,
    CollectionSchema,
    DatabaseSchema,
    ExecutorError,
    PropertySchema,
    QueryDatabaseArguments,
    ReferenceExecutor,
    parse_arguments,
)

SCHEMA = DatabaseSchema(
    collections=(
        CollectionSchema(
            name="Restaurants",
            description="Places to eat",
            properties=(
                PropertySchema(name="title", data_type="text", tokenization="word"),
                PropertySchema(name="cuisine", data_type="text", tokenization="field"),
                PropertySchema(name="price", data_type="number"),
                PropertySchema(name="seats", data_type="int"),
                PropertySchema(name="open_late", data_type="boolean"),
                PropertySchema(name="opened", data_type="date"),
            ),
        ),
        CollectionSchema(name="Menus", properties=(PropertySchema(name="dish", data_type="text"),)),
    )
)
EXECUTOR = ReferenceExecutor(SCHEMA, {"Restaurants": [], "Menus": []})


def error_of(arguments: object) -> ExecutorError:
    with pytest.raises(ExecutorError) as caught:
        EXECUTOR.validate(arguments)  # type: ignore[arg-type]
    return caught.value


def args(**slots: object) -> dict[str, object]:
    return {"collection_name": "Restaurants", **slots}


def test_error_codes_are_stable_and_unique() -> None:
    assert len(set(ERROR_CODES)) == len(ERROR_CODES)
    for code in (
        "unknown_collection",
        "unknown_property",
        "type_mismatch",
        "invalid_operator",
        "invalid_metric",
        "invalid_value",
        "invalid_arguments",
        "weaviate_error",
        "weaviate_unavailable",
    ):
        assert code in ERROR_CODES


def test_unknown_collection_lists_the_collections_and_suggests_a_near_miss() -> None:
    error = error_of({"collection_name": "restaurants"})
    assert error.code == "unknown_collection"
    assert error.field == "collection_name"
    assert "Available collections: Menus, Restaurants" in error.message
    assert "Did you mean 'Restaurants'?" in error.message


def test_unknown_property_lists_properties_with_types() -> None:
    error = error_of(args(integer_property_filter={"property_name": "prise", "operator": "<", "value": 3}))
    assert error.code == "unknown_property"
    assert error.field == "integer_property_filter.property_name"
    assert "title (text), cuisine (text), price (number), seats (number), open_late (boolean)" in error.message
    assert "Did you mean 'price'?" in error.message


@pytest.mark.parametrize(
    ("slot", "name"),
    [
        ("text_property_aggregation", "nope"),
        ("boolean_property_filter", ""),
        ("groupby_property", "cuisines"),
    ],
)
def test_unknown_property_in_every_slot(slot: str, name: str) -> None:
    value: object = name
    if slot == "text_property_aggregation":
        value = {"property_name": name, "metrics": "COUNT"}
    elif slot == "boolean_property_filter":
        value = {"property_name": name, "operator": "=", "value": True}
    error = error_of(args(**{slot: value}))
    assert error.code == "unknown_property"
    assert slot in error.message
    assert "Its properties:" in error.message


def test_text_filter_on_a_number_property_is_a_type_mismatch() -> None:
    error = error_of(args(text_property_filter={"property_name": "price", "operator": "=", "value": "5"}))
    assert error.code == "type_mismatch"
    assert "'price' is a number property but text_property_filter is for text properties" in error.message
    assert "Use integer_property_filter for 'price' (operators =, <, >, <=, >=)" in error.message
    assert "Text properties of 'Restaurants': title (text), cuisine (text)" in error.message


def test_number_aggregation_on_a_boolean_property_is_a_type_mismatch() -> None:
    error = error_of(args(integer_property_aggregation={"property_name": "open_late", "metrics": "MEAN"}))
    assert error.code == "type_mismatch"
    assert "Use boolean_property_aggregation for 'open_late' (metrics COUNT, TYPE, TOTAL_TRUE" in error.message


def test_unsupported_data_types_are_type_mismatches() -> None:
    error = error_of(args(integer_property_filter={"property_name": "opened", "operator": "<", "value": 3}))
    assert error.code == "type_mismatch"
    assert "'opened' has type date, which query_database cannot filter" in error.message
    error = error_of(args(groupby_property="opened"))
    assert error.code == "type_mismatch"
    assert "Group by one of: title (text)" in error.message


def test_operator_not_valid_for_the_type() -> None:
    error = error_of(args(integer_property_filter={"property_name": "price", "operator": "LIKE", "value": 3}))
    assert error.code == "invalid_operator"
    assert error.field == "integer_property_filter.operator"
    assert "use one of: =, <, >, <=, >=" in error.message
    assert "accepted by text_property_filter" in error.message
    error = error_of(args(boolean_property_filter={"property_name": "open_late", "operator": "<", "value": True}))
    assert error.code == "invalid_operator"
    assert "use one of: =, !=" in error.message


def test_metric_not_valid_for_the_type() -> None:
    error = error_of(args(text_property_aggregation={"property_name": "cuisine", "metrics": "MEAN"}))
    assert error.code == "invalid_metric"
    assert "use one of: COUNT, TYPE, TOP_OCCURRENCES" in error.message
    assert 'MEAN" is a metric of integer_property_aggregation' in error.message


@pytest.mark.parametrize(
    ("slot", "value", "expected"),
    [
        ("integer_property_filter", {"property_name": "price", "operator": "<", "value": "cheap"}, "must be a number"),
        ("integer_property_filter", {"property_name": "price", "operator": "<", "value": True}, "must be a number"),
        ("integer_property_filter", {"property_name": "price", "operator": "<", "value": float("nan")}, "finite"),
        ("integer_property_filter", {"property_name": "price", "operator": ">", "value": float("inf")}, "finite"),
        ("integer_property_filter", {"property_name": "seats", "operator": "=", "value": 3.5}, "whole numbers"),
        ("integer_property_filter", {"property_name": "seats", "operator": "<", "value": 1e300}, "out of range"),
        ("text_property_filter", {"property_name": "cuisine", "operator": "=", "value": 5}, "must be a string"),
        ("text_property_filter", {"property_name": "cuisine", "operator": "=", "value": "  "}, "is empty"),
        ("text_property_filter", {"property_name": "title", "operator": "=", "value": "the and"}, "no searchable"),
        ("text_property_filter", {"property_name": "title", "operator": "LIKE", "value": "--"}, "no searchable"),
        ("text_property_filter", {"property_name": "title", "operator": "=", "value": "x" * 5000}, "characters long"),
        ("boolean_property_filter", {"property_name": "open_late", "operator": "=", "value": "maybe"}, "true or false"),
        (
            "text_property_aggregation",
            {"property_name": "cuisine", "metrics": "TOP_OCCURRENCES", "top_occurrences_limit": 10**9},
            "from 1 to 100",
        ),
        (
            "text_property_aggregation",
            {"property_name": "cuisine", "metrics": "TOP_OCCURRENCES", "top_occurrences_limit": 0},
            "from 1 to 100",
        ),
        ("search_query", "pizza " * 1000, "characters long"),
    ],
)
def test_invalid_values(slot: str, value: object, expected: str) -> None:
    error = error_of(args(**{slot: value}))
    assert error.code == "invalid_value"
    assert expected in error.message
    assert error.field is not None and error.field.startswith(slot)


def test_nan_in_a_json_string_is_rejected() -> None:
    raw = (
        '{"collection_name": "Restaurants", '
        '"integer_property_filter": {"property_name": "price", "operator": "<", "value": NaN}}'
    )
    assert error_of(raw).code == "invalid_value"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"collection_name": "Restaurants"', "not valid JSON"),
        ("", "not valid JSON"),
        ("[1, 2]", "got an array"),
        ("42", "got a number"),
        (None, "got null"),
        (["collection_name"], "got an array"),
        ({}, "collection_name is required"),
        ({"collection_name": 7}, "collection_name must be a string"),
        ({"collection_name": "Restaurants", "limit": 5}, "'limit' is not an argument of query_database"),
        (
            {"collection_name": "Restaurants", "integer_property_filter": {"property_name": "price", "op": "<"}},
            "'op' is not a key of integer_property_filter",
        ),
        ({"collection_name": "Restaurants", "integer_property_filter": "price < 20"}, "must be an object"),
        ({"collection_name": "Restaurants", "integer_property_filter": {"property_name": "price"}}, "is required"),
        ({"collection_name": "Restaurants", "search_query": 12}, "search_query must be a string"),
    ],
)
def test_invalid_arguments(raw: object, expected: str) -> None:
    error = error_of(raw)
    assert error.code == "invalid_arguments"
    assert expected in error.message


def test_models_habits_are_accepted() -> None:
    """A JSON string, double-encoded JSON, a rationale, empty slots and slots as JSON strings."""
    slot = {"property_name": "price", "operator": "<", "value": "20"}
    raw = {
        "rationale": "cheap places",
        "collection_name": "Restaurants",
        "search_query": "",
        "groupby_property": "",
        "text_property_filter": None,
        "integer_property_filter": json.dumps(slot),
    }
    for form in (raw, json.dumps(raw), json.dumps(json.dumps(raw))):
        spec = EXECUTOR.validate(form)  # type: ignore[arg-type]
        assert spec.search_query is None and spec.group_by is None
        assert [(f.prop.name, f.operator, f.value) for f in spec.filters] == [("price", "<", 20.0)]


def test_parse_arguments_passes_models_through() -> None:
    model = QueryDatabaseArguments(collection_name="Restaurants")
    assert parse_arguments(model) is model


def test_errors_render_for_the_model() -> None:
    error = error_of({"collection_name": "Nope"})
    assert error.to_llm_text().startswith("Error (unknown_collection): Unknown collection 'Nope'")
    assert error.to_payload().model_dump() == {
        "code": "unknown_collection",
        "message": error.message,
        "field": "collection_name",
    }
