"""A number written with a scale word ("140 million") given the number its property stores (in thousands)."""

from __future__ import annotations

from agent.strategies.scales import scaled_numbers, stored_unit, to_stored_unit
from executors.schema import CollectionSchema, PropertySchema

FARMS = CollectionSchema(
    name="FarmYears",
    description="A county's farms each year, money in thousands of dollars.",
    properties=(
        PropertySchema(name="year", data_type="int"),
        PropertySchema(name="revenue", data_type="number"),
        PropertySchema(name="workers", data_type="int", description="People employed, in millions."),
        PropertySchema(name="acres", data_type="int", description="Land farmed."),
    ),
)
PLAIN = CollectionSchema(name="Towns", description="Towns and their people.", properties=FARMS.properties[2:])


def test_numbers_with_a_scale_word_are_read_with_what_they_mean() -> None:
    assert scaled_numbers("more than 140 million jobs, under $2.5 billion, 3 thousand acres") == {
        140.0: 140e6,
        2.5: 2.5e9,
        3.0: 3e3,
    }
    assert scaled_numbers("140 jobs in 2009") == {}


def test_a_property_s_unit_is_its_own_description_s_else_its_collection_s() -> None:
    assert stored_unit("revenue", FARMS) == 1e3
    assert stored_unit("workers", FARMS) == 1e6
    assert stored_unit("acres", PLAIN) == 1.0


def test_a_condition_on_the_bare_number_is_given_the_stored_number() -> None:
    question = "In how many years was revenue over 2 million, with between 1 and 3 thousand workers?"
    call = {
        "integer_property_filter": {"property_name": "revenue", "operator": ">", "value": 2},
        "conditions": [{"property_name": "workers", "operator": "between", "value": 1, "value_to": 3}],
    }
    amended, why = to_stored_unit(question, call, FARMS)
    assert amended["integer_property_filter"]["value"] == 2000  # 2 million dollars in thousands
    between = amended["conditions"][0]
    assert between["value"] == 1 and between["value_to"] == 0.003  # 3 thousand people in millions
    assert "2000" in why
    assert to_stored_unit("revenue over 2 in 2010?", call, FARMS) == (call, ""), "no scale word: as written"
    acres = {"integer_property_filter": {"property_name": "acres", "operator": ">", "value": 3}}
    assert (
        to_stored_unit("Towns with over 3 thousand acres?", acres, PLAIN)[0]["integer_property_filter"]["value"] == 3000
    )
