"""The `compound` operations without a server: the tool's schema, conditions resolved to filters (dates
as people write them, a between as two bounds, or as alternatives), typed errors for what is wrong, and
argument match that compares conditions as a set, against paper labels too."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from agent.tooldef import ToolDesign, build_tools, schema_limit_violations
from evaluation.argument_match import canonical, score_canonical
from executors import ExecutorError, parse_arguments, tool_parameters_schema, validate_arguments
from executors._conditions import date_span
from executors.errors import InvalidArgumentsError, InvalidDateError, InvalidOperatorError, InvalidValueError
from executors.options import COMPLETE_RESULTS
from executors.reference import ReferenceExecutor
from executors.vocabulary import MAX_CONDITIONS, ToolOperations
from fixtures.use_cases import database_schema_of, get_use_case
from tests.unit.test_related_operations import snapshot

COMPOUND = ToolOperations.COMPOUND
SCHEMA = database_schema_of([get_use_case("restaurants")]).for_operations(COMPOUND)


def cond(prop: str, operator: str, value: Any, value_to: Any = None) -> dict[str, Any]:
    found = {"property_name": prop, "operator": operator, "value": value}
    return found if value_to is None else {**found, "value_to": value_to}


def spec_of(raw: dict[str, Any]) -> Any:
    return validate_arguments(parse_arguments(raw, COMPOUND), SCHEMA)


def error_of(raw: dict[str, Any]) -> ExecutorError:
    with pytest.raises(ExecutorError) as caught:
        spec_of(raw)
    return caught.value


@pytest.fixture(scope="module")
def executor() -> ReferenceExecutor:
    return ReferenceExecutor(SCHEMA, snapshot(), COMPLETE_RESULTS, operations=COMPOUND)


def test_the_tool_puts_conditions_beside_the_filters_and_dates_in_them_within_provider_limits() -> None:
    schema = tool_parameters_schema(["Restaurants"], operations=COMPOUND)
    names = list(schema["properties"])
    assert names[3:6] == ["boolean_property_filter", "conditions", "match"]
    assert names[-3:] == ["reference_filter", "sort", "collection_name"]
    assert "date_filter" not in names  # a date is a condition; a call that sends date_filter still runs
    dated = {"property_name": "reservationDate", "operator": "after", "value": "2025-03-01"}
    assert spec_of({"collection_name": "Reservations", "date_filter": dated}).filters
    item = schema["properties"]["conditions"]["items"]
    assert item["required"] == ["property_name", "operator", "value"]
    assert "between" in item["properties"]["operator"]["enum"]
    assert "maxItems" not in schema["properties"]["conditions"]  # checked by the executor: every door one tool
    assert schema_limit_violations(schema) == []
    assert schema_limit_violations(build_tools(SCHEMA, ToolDesign(operations=COMPOUND)).tools[0]) == []


def test_a_paper_call_is_a_compound_call_with_the_same_filters() -> None:
    raw = {
        "collection_name": "Restaurants",
        "text_property_filter": {"property_name": "cuisine", "operator": "=", "value": "Thai"},
        "integer_property_filter": {"property_name": "averageRating", "operator": ">", "value": 4},
    }
    paper = validate_arguments(parse_arguments(raw), SCHEMA.for_operations(ToolOperations.PAPER))
    assert spec_of(raw).filters == paper.filters and spec_of(raw).any_of == ()


def test_conditions_under_all_are_anded_and_under_any_are_alternatives() -> None:
    two = [cond("cuisine", "=", "Thai"), cond("averageRating", "between", 3, 4.5)]
    anded = spec_of({"collection_name": "Restaurants", "conditions": two})
    assert [(f.prop.name, f.operator, f.value) for f in anded.filters] == [
        ("cuisine", "=", "Thai"),
        ("averageRating", ">=", 3.0),
        ("averageRating", "<=", 4.5),
    ]
    either = spec_of({"collection_name": "Restaurants", "conditions": two, "match": "any"})
    assert either.filters == () and [len(a) for a in either.any_of] == [1, 2]
    assert either.operator_class() == "filter"
    lone = spec_of({"collection_name": "Restaurants", "conditions": two[:1], "match": "any"})
    assert lone.any_of == () and len(lone.filters) == 1  # one alternative is a plain condition


@pytest.mark.parametrize(
    ("text", "first", "last"),
    [
        ("2002", "2002-01-01T00:00:00", "2002-12-31T23:59:59.999"),
        (2002.0, "2002-01-01T00:00:00", "2002-12-31T23:59:59.999"),
        ("2002-02", "2002-02-01T00:00:00", "2002-02-28T23:59:59.999"),
        ("2002-12", "2002-12-01T00:00:00", "2002-12-31T23:59:59.999"),
        ("1990s", "1990-01-01T00:00:00", "1999-12-31T23:59:59.999"),
        ("2002-03-14", "2002-03-14T00:00:00", "2002-03-14T23:59:59.999"),
        ("2002-03-14T10:00:00Z", "2002-03-14T10:00:00", "2002-03-14T10:00:00"),
    ],
)
def test_a_date_is_the_span_a_person_means(text: object, first: str, last: str) -> None:
    start, end = date_span(text, "value")
    utc = timezone.utc
    assert start == datetime.fromisoformat(first).replace(tzinfo=utc)
    assert end == datetime.fromisoformat(last).replace(tzinfo=utc)


def test_date_operators_bound_the_span_on_the_side_they_mean() -> None:
    def bounds(operator: str, value: str, value_to: str | None = None) -> list[tuple[str, str]]:
        raw = {"collection_name": "Reservations", "conditions": [cond("reservationDate", operator, value, value_to)]}
        return [(f.operator, f.value.isoformat()[:10]) for f in spec_of(raw).filters]

    assert bounds("=", "2025") == [(">=", "2025-01-01"), ("<=", "2025-12-31")]
    assert bounds("<", "2025-03") == [("<", "2025-03-01")]  # before March: before it starts
    assert bounds(">", "2025") == [(">", "2025-12-31")]  # after 2025: after it ends
    assert bounds(">=", "2025-03") == [(">=", "2025-03-01")]  # since March
    assert bounds("between", "2025-02", "2025-04") == [(">=", "2025-02-01"), ("<=", "2025-04-30")]


@pytest.mark.parametrize(
    ("condition", "error", "words"),
    [
        (cond("cuisine", "between", "a", "b"), InvalidOperatorError, "use one of: =, !=, LIKE"),
        (cond("averageRating", "between", 3), InvalidArgumentsError, "value_to"),
        (cond("averageRating", ">", 3, 4), InvalidArgumentsError, "value_to"),
        (cond("averageRating", "between", 4, 3), InvalidValueError, "ends"),
        (cond("averageRating", "=", "high"), InvalidValueError, "must be a number"),
        (cond("openNow", "=", "yes"), InvalidValueError, "true or false"),
        (cond("cuisine", "=", True), InvalidValueError, "a string"),
        (cond("cuisne", "=", "Thai"), ExecutorError, "Did you mean 'cuisine'?"),
    ],
)
def test_a_wrong_condition_is_a_typed_fix_it_error(condition: dict[str, Any], error: type, words: str) -> None:
    found = error_of({"collection_name": "Restaurants", "conditions": [condition]})
    assert isinstance(found, error) and words in found.message and found.field.startswith("conditions[0]")


def test_a_wrong_date_is_an_invalid_date() -> None:
    found = error_of({"collection_name": "Reservations", "conditions": [cond("reservationDate", "=", "2025-13")]})
    assert isinstance(found, InvalidDateError) and "months run from 01 to 12" in found.message
    found = error_of({"collection_name": "Reservations", "conditions": [cond("reservationDate", "=", "spring")]})
    assert isinstance(found, InvalidDateError)


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        ({"conditions": [{"property_name": "cuisine", "operator": "=", "value": "Thai", "x": 1}]}, "not a key"),
        ({"conditions": [{"property_name": "cuisine", "value": "Thai"}]}, "is required"),
        ({"conditions": [cond("cuisine", "equals", "Thai")]}, "use one of: =, !="),
        ({"conditions": [cond("cuisine", "=", "Thai")] * (MAX_CONDITIONS + 1)}, f"at most {MAX_CONDITIONS}"),
        ({"conditions": 3}, "must be a list"),
        ({"conditions": [cond("cuisine", "=", "Thai")], "match": "either"}, "all (and) or any (or)"),
    ],
)
def test_a_malformed_conditions_slot_names_the_fix(raw: dict[str, Any], words: str) -> None:
    assert words in error_of({"collection_name": "Restaurants", **raw}).message


def test_conditions_sent_as_a_string_or_one_bare_object_are_read() -> None:
    one = cond("cuisine", "=", "Thai")
    as_text = spec_of(
        {
            "collection_name": "Restaurants",
            "conditions": '[{"property_name": "cuisine", "operator": "=", "value": "Thai"}]',
        }
    )
    bare = spec_of({"collection_name": "Restaurants", "conditions": one})
    assert as_text.filters == bare.filters == spec_of({"collection_name": "Restaurants", "conditions": [one]}).filters


def test_the_reference_executor_runs_or_as_the_union(executor: ReferenceExecutor) -> None:
    def count(raw: dict[str, Any]) -> int:
        result = executor.execute({"collection_name": "Restaurants", **raw})
        assert result.total_count is not None
        return result.total_count

    thai, italian = cond("cuisine", "=", "Thai"), cond("cuisine", "=", "Italian")
    assert count({"conditions": [thai, italian], "match": "any"}) == count({"conditions": [thai]}) + count(
        {"conditions": [italian]}
    )
    assert count({"conditions": [cond("cuisine", "!=", "Thai")]}) == count({}) - count({"conditions": [thai]})


def score(truth: dict[str, Any], predicted: dict[str, Any]) -> Any:
    operations = SCHEMA
    return score_canonical([canonical(truth, operations)], canonical(predicted, operations))


PAPER_LABEL = {
    "collection_name": "Restaurants",
    "text_property_filter": {"property_name": "cuisine", "operator": "=", "value": "Thai"},
    "integer_property_filter": {"property_name": "averageRating", "operator": ">", "value": 4},
    "integer_property_aggregation": {"property_name": "averageRating", "metrics": "MEAN"},
}


def test_conditions_match_as_a_set_and_equal_the_slots_they_restate() -> None:
    restated = {
        "collection_name": "Restaurants",
        "conditions": [cond("averageRating", ">", 4), cond("cuisine", "=", "thai")],
        "integer_property_aggregation": {"property_name": "averageRating", "metrics": "MEAN"},
    }
    both = score(PAPER_LABEL, restated)
    assert both.exact_match and both.ast_score == 1.0 and all(both.components.values())
    reordered = {**restated, "conditions": restated["conditions"][::-1]}
    assert score(restated, reordered).exact_match
    split = {
        **restated,
        "conditions": restated["conditions"][:1],
        "text_property_filter": PAPER_LABEL["text_property_filter"],
    }
    assert score(restated, split).exact_match  # a slot and a condition are one set


def test_a_between_equals_its_two_bounds_and_partial_credit_counts_conditions() -> None:
    between = {"collection_name": "Restaurants", "conditions": [cond("averageRating", "between", 3, 4)]}
    bounds = {
        "collection_name": "Restaurants",
        "conditions": [cond("averageRating", ">=", 3), cond("averageRating", "<=", 4)],
    }
    assert score(between, bounds).exact_match
    three = {"collection_name": "Restaurants", "conditions": [*bounds["conditions"], cond("cuisine", "=", "Thai")]}
    partial = score(three, bounds)
    assert not partial.exact_match and partial.ast_score == pytest.approx(0.4 + 0.15 * 2 / 3 + 0.15 * 3)
    dropped = score(PAPER_LABEL, {**PAPER_LABEL, "text_property_filter": None})
    assert not dropped.exact_match


def test_and_is_not_or() -> None:
    two = [cond("cuisine", "=", "Thai"), cond("cuisine", "=", "Italian")]
    anded = {"collection_name": "Restaurants", "conditions": two}
    assert not score(anded, {**anded, "match": "any"}).exact_match
    assert score({**anded, "match": "any"}, {**anded, "match": "any", "conditions": two[::-1]}).exact_match


def test_paper_calls_score_as_before() -> None:
    """No call with conditions on either side: the per-slot comparison, unchanged."""
    worse = {**PAPER_LABEL, "integer_property_filter": {"property_name": "averageRating", "operator": ">", "value": 3}}
    scored = score(PAPER_LABEL, worse)
    assert not scored.exact_match and scored.ast_score == pytest.approx(0.4 + 0.15 * 3)
    assert scored.components == {"text_filter": True, "integer_filter": False, "integer_aggregation": True}
