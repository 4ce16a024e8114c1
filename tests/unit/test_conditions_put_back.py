"""Conditions the question states and the call dropped, put back as the compound tool's `conditions`: a
time span read from the words, and the rules that keep a condition out (a property already filtered,
alternatives, a full list, an amount that only looks like a year)."""

from __future__ import annotations

from typing import Any

import pytest

from agent.strategies.conditions import date_condition, filtered_properties, shown, with_condition
from executors.vocabulary import MAX_CONDITIONS


@pytest.mark.parametrize(
    ("question", "operator", "value", "value_to"),
    [
        ("What was the average price in 2005?", "=", "2005", None),
        ("How many records since 2002?", ">=", "2002", None),
        ("Which close after 2003 was highest?", ">", "2003", None),
        ("How many before 2005?", "<", "2005", None),
        ("How many up to 2005?", "<=", "2005", None),
        ("the mean price between 2002 and 2004", "between", "2002", "2004"),
        ("from Jan 2001 to Dec 2003", "between", "2001-01", "2003-12"),
        ("how many in the 90s", "=", "1990s", None),
        ("the 1980s average", "=", "1980s", None),
        ("the highest price in March 2005?", "=", "2005-03", None),
        ("closing price in sept. 2004", "=", "2004-09", None),
        ("before March 2003", "<", "2003-03", None),
    ],
)
def test_a_time_span_is_read_from_the_words(question: str, operator: str, value: str, value_to: str | None) -> None:
    found = date_condition(question, ["date"])
    expected: dict[str, Any] = {"property_name": "date", "operator": operator, "value": value}
    assert found == (expected if value_to is None else {**expected, "value_to": value_to})


@pytest.mark.parametrize(
    "question",
    [
        "How many cars weigh over 3000?",
        "prices in 2004 and 2005",  # two spans, not a range: left to the model
        "Which price was over 2000 dollars?",
        "How many cost $2010 or more?",
        "the 3 most common",
    ],
)
def test_no_span_or_several_or_an_amount_put_back_nothing(question: str) -> None:
    assert date_condition(question, ["date"]) is None


def test_a_span_needs_exactly_one_date_property() -> None:
    assert date_condition("in 2005", []) is None
    assert date_condition("in 2005", ["opened", "closed"]) is None


CALL = {
    "collection_name": "Wines",
    "text_property_filter": {"property_name": "country", "operator": "=", "value": "France"},
}
VARIETY = {"property_name": "variety", "operator": "=", "value": "Pinot Noir"}


def test_a_condition_is_added_beside_the_slots() -> None:
    added = with_condition(CALL, VARIETY)
    assert added == {**CALL, "conditions": [VARIETY]}
    assert filtered_properties(added) == {"country", "variety"}


def test_a_filtered_property_alternatives_and_a_full_list_take_no_more() -> None:
    assert with_condition(CALL, {**VARIETY, "property_name": "country"}) is None
    either = {**CALL, "conditions": [VARIETY, {**VARIETY, "value": "Merlot"}], "match": "any"}
    assert with_condition(either, {"property_name": "points", "operator": ">", "value": 90}) is None
    full = {
        "collection_name": "Wines",
        "conditions": [{"property_name": f"p{i}", "operator": "=", "value": 1} for i in range(MAX_CONDITIONS)],
    }
    assert with_condition(full, VARIETY) is None


def test_a_condition_is_shown_as_a_person_reads_it() -> None:
    assert shown(VARIETY) == 'variety = "Pinot Noir"'
    assert shown({"property_name": "date", "operator": "between", "value": "2002", "value_to": "2004"}) == (
        "date between 2002 and 2004"
    )
    assert shown({"property_name": "date", "operator": ">=", "value": "1990s"}) == "date >= 1990s"
