"""A search that only restates conditions becomes the filters it names, not nothing."""

from __future__ import annotations

from agent.strategies.restating import stated_values

STORED = {
    "type": ["Homicide", "Death"],
    "neighborhood": ["Koreatown", "Compton", "Watts"],
    "gender": ["Male", "Female"],
}


def test_the_values_a_restating_search_names_are_conditions_the_call_lacks() -> None:
    homicides = {"text_property_filter": {"property_name": "type", "operator": "=", "value": "Homicide"}}
    found = stated_values(",koreatown,homicide", homicides, STORED)
    assert found == [{"property_name": "neighborhood", "operator": "=", "value": "Koreatown"}], (
        "the filtered type is not put back again; the neighborhood is, as stored"
    )
    assert stated_values(", gender: Female", {}, STORED) == [
        {"property_name": "gender", "operator": "=", "value": "Female"}
    ]


def test_two_values_of_one_property_are_not_guessed_as_and_or_or() -> None:
    assert stated_values("Compton Watts", {}, STORED) == []
    assert stated_values("live music", {}, STORED) == []
