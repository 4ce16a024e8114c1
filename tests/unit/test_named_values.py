"""Stored values a question names in ways its letters alone do not show (`agent.strategies.naming`,
`wording.placed_year`), on made-up tables of ferry crossings: a day or month the data stores cut short, a yes
or no column named by its word, a word of sex, and a year beside another number condition."""

from __future__ import annotations

import pytest

from agent.strategies.conditions import put_back
from agent.strategies.naming import flagged, named_values, nearest_value, sexed
from agent.strategies.wording import placed_year

DAYS = ["Mon", "Tues", "Wed", "Thurs", "Fri", "Sat", "Sun"]
CROSSINGS = {"weekday": DAYS, "month": ["Jan", "Feb", "Mar", "Sept"], "pets": ["Yes", "No"], "member": ["Y", "N"]}


@pytest.mark.parametrize(
    ("word", "value"),
    [("Sunday", "Sun"), ("thursday", "Thurs"), ("Tuesday", "Tues"), ("September", "Sept"), ("january", "Jan")],
)
def test_a_calendar_word_names_the_value_the_data_cuts_it_to(word: str, value: str) -> None:
    assert nearest_value(word, [*DAYS, "Jan", "Feb", "Mar", "Sept"]) == value


def test_only_calendar_words_name_a_value_they_start_with() -> None:
    assert nearest_value("rainfall", ["rain", "snow"]) is None
    assert nearest_value("Sunday", ["Su", "Mo"]) is None, "two letters are too few to stand for a day"
    assert named_values("How many crossings ran on Saturday?", CROSSINGS) == [("weekday", "Sat")]


@pytest.mark.parametrize(
    ("question", "named"),
    [
        ("How many crossings carried pets?", [("pets", "Yes")]),
        ("How many crossings carried no pets?", [("pets", "No")]),
        ("How many tickets went to non-members?", [("member", "N")]),
        ("How many tickets went to members with pets?", [("pets", "Yes"), ("member", "Y")]),
        ("How many crossings were there?", []),
    ],
)
def test_a_yes_or_no_property_is_named_by_its_word(question: str, named: list[tuple[str, str]]) -> None:
    assert flagged(question, CROSSINGS) == named


def test_a_yes_or_no_property_of_two_words_or_other_values_is_not_read() -> None:
    assert flagged("How many had pets?", {"pets_aboard": ["Yes", "No", "Unknown"]}) == []
    assert flagged("How many were late?", {"late_arrival": ["true", "false"]}) == [], "two words: which one?"
    assert flagged("How many were late?", {"late": ["true", "false"]}) == [("late", "true")]


def test_a_word_of_sex_names_the_stored_female_or_male_and_nothing_else_does() -> None:
    crew = {"sex": ["Female", "Male"], "shift": ["Morning", "Evening"]}
    assert sexed("How many crossings were crewed by women?", crew) == [("sex", "Female")]
    assert sexed("How many boys sailed?", {"gender": ["F", "M"]}) == [("gender", "M")]
    assert sexed("How many men and women sailed?", crew) == [], "both asked: no condition"
    assert sexed("How many mentors sailed?", crew) == []
    assert sexed("How many women sailed?", {"shift": ["Morning", "Evening"]}) == []


def test_a_year_beside_another_number_condition_is_put_back() -> None:
    numbers = ["year", "passengers", "fare"]
    question = "How many routes had fewer than 50 passengers in 2007?"
    assert placed_year(question, numbers) == {"property_name": "year", "operator": "=", "value": 2007}
    call = {
        "collection_name": "Routes",
        "integer_property_filter": {"property_name": "passengers", "operator": "<", "value": 50},
    }
    amended, notes = put_back(question, call, numbers, [])
    assert amended["conditions"] == [{"property_name": "year", "operator": "=", "value": 2007}]
    assert notes == ["the question's condition year = 2007 was put back."]


def test_no_year_is_placed_for_a_range_or_a_year_compared() -> None:
    numbers = ["year", "passengers"]
    assert placed_year("How many routes from 1990 to 2000 had fewer than 50 passengers?", numbers) is None
    assert placed_year("How many routes ran after 2003?", numbers) is None
    assert placed_year("How many routes ran in 2003?", ["launch_year", "service_year"]) is None, "which year?"


def test_no_word_that_only_relates_to_a_category_puts_a_value_back() -> None:
    """Read by meaning, "taught" was `department = Education` and "artworks" `medium = Sculpture`."""
    courses = {"department": ["Education", "Mathematics", "History"], "medium": ["Sculpture", "Photography"]}
    assert named_values("How many years have instructors taught on average?", courses) == []
    assert named_values("How many artworks are on display?", courses) == []


def test_a_yes_or_no_condition_its_word_names_is_kept() -> None:
    from agent.strategies.conditions import unasked

    call = {
        "collection_name": "Crossings",
        "text_property_filter": {"property_name": "weekday", "operator": "=", "value": "Sat"},
        "conditions": [{"property_name": "pets", "operator": "=", "value": "Yes"}],
    }
    assert unasked("How many crossings carried pets on Saturday?", call, CROSSINGS) == (call, "")
    kept, why = unasked("How many crossings ran on Saturday?", call, CROSSINGS)
    assert "conditions" not in kept and why, "no word names pets: the condition is the model's"
