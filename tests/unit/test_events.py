"""A count of what a number property holds is its SUM; a count of the objects stays a count."""

from __future__ import annotations

import pytest

from agent.strategies.events import summed_property, to_summed
from executors.schema import CollectionSchema, PropertySchema


def _collection(name: str, description: str, *props: tuple[str, str]) -> CollectionSchema:
    return CollectionSchema(
        name=name, description=description, properties=tuple(PropertySchema(name=n, data_type=t) for n, t in props)
    )


CRASHES = _collection(
    "TrafficCrashes",
    "Weekly road accidents in one county, by outcome.",
    ("week", "date"),
    ("injured", "int"),
    ("killed", "int"),
    ("county", "text"),
)
SHIPS = _collection("Ships", "Cargo ships with their crew and tonnage.", ("name", "text"), ("crew", "int"))


@pytest.mark.parametrize(
    ("question", "summed"),
    [
        ("How many drivers were injured in 2020?", "injured"),
        ("How many more people were killed in 2021 than in 2020?", "killed"),
        ("How many weeks had more than 5 injured?", None),  # the objects: "weekly"
        ("In how many weeks were more than 5 killed?", None),
        ("How many sunny weeks had injured drivers?", None),  # a word before the objects
        ("How many drivers were there?", None),  # no number property named
        ("How many drivers were injured or killed?", None),  # two: which one is not guessed
        ("How many drivers were there with more than 3 injured?", None),  # a condition on it: objects counted
        ("How many drivers were there with between 2 and 4 killed?", None),
        ("How many more 2-lane weeks are there than 4-lane ones with injured?", None),  # the objects, after a number
        ("How many drivers were injured in the worst and the lowest week?", None),  # another statistic written
    ],
)
def test_a_count_of_what_a_number_holds_is_read_from_the_words(question: str, summed: str | None) -> None:
    assert summed_property(question, CRASHES) == summed


def test_a_count_that_names_the_property_or_the_objects_is_left() -> None:
    assert summed_property("How many crew does the Ever Given have?", SHIPS) is None, "the property is read"
    assert summed_property("How many ships have a crew?", SHIPS) is None, "the objects are counted"


def test_the_call_computes_the_sum_unless_it_conditions_or_groups_that_property() -> None:
    question = "How many drivers were injured in 2020?"
    bare = {"collection_name": "TrafficCrashes"}
    summed, why = to_summed(question, bare, CRASHES)
    assert summed["integer_property_aggregation"] == {"property_name": "injured", "metrics": "SUM"} and why
    counted = {**bare, "text_property_aggregation": {"property_name": "county", "metrics": "COUNT"}}
    assert "text_property_aggregation" not in to_summed(question, counted, CRASHES)[0]
    bounded = {**bare, "integer_property_filter": {"property_name": "injured", "operator": ">", "value": 5}}
    assert to_summed(question, bounded, CRASHES) == (bounded, "")
    maxed = {**bare, "integer_property_aggregation": {"property_name": "injured", "metrics": "MAX"}}
    assert to_summed(question, maxed, CRASHES)[0]["integer_property_aggregation"]["metrics"] == "SUM"
    assert to_summed(question, summed, CRASHES) == (summed, ""), "a SUM already: nothing to say"
    averaged = "How many drivers were injured on average each week?"
    assert to_summed(averaged, maxed, CRASHES) == (maxed, ""), "a statistic the question writes stays the model's"


def test_a_count_opened_by_a_number_property_s_name_reads_what_it_holds() -> None:
    jobs = _collection(
        "MonthlyWork", "Jobs by sector each month.", ("month", "date"), ("mining", "number"), ("farming", "number")
    )
    assert summed_property("How many mining jobs were there in May 2010?", jobs) == "mining"
    assert summed_property("How many farming workers were there in 2011?", jobs) == "farming"
    assert summed_property("How many mining does it have?", jobs) is None, "no noun of what it holds"
    assert summed_property("How many months had over 700 mining jobs?", jobs) is None, "the objects are counted"


def test_a_group_by_on_the_property_naming_the_objects_is_left_out() -> None:
    from agent.strategies.events import groups_of_objects

    wards = _collection("CityWards", "Wards of a city.", ("ward", "text"), ("voters", "int"), ("wardType", "text"))
    call = {"integer_property_aggregation": {"property_name": "voters", "metrics": "MEAN"}, "groupby_property": "ward"}
    kept, why = groups_of_objects(call, wards)
    assert "groupby_property" not in kept and "ward" in why
    by_kind = {**call, "groupby_property": "wardType"}  # groups of kinds of ward: asked for, kept
    assert groups_of_objects(by_kind, wards) == (by_kind, "")
