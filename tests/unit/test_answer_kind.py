"""The kind of thing a question asks for or counts, and whether the offered collections hold it."""

from __future__ import annotations

import pytest

from agent.strategies.answer_kind import unheld_kind
from executors.schema import CollectionSchema, PropertySchema

PLACES = CollectionSchema(
    name="Places",
    searchable=False,
    properties=(
        PropertySchema(name="title", data_type="text"),
        PropertySchema(name="cuisine", data_type="text", description="The kind of food served."),
        PropertySchema(name="price", data_type="number"),
        PropertySchema(name="opened", data_type="date"),
    ),
)


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("What color are the places?", "color"),  # nothing holds a color
        ("Which place in Boston has the most waiters?", "waiters"),  # nothing counts waiters
        ("Which cuisine has the most places?", ""),  # a property and the collection's own name
        ("Which cuisines have the most places?", ""),  # forms of a word meet
        ("Which food is cheapest?", ""),  # a description's word
        ("In what year did the most places open?", ""),  # a date property holds years
        ("Which place has the most Thai dishes?", ""),  # a name the question gives; then the collection's
        ("What share of the places are Thai?", ""),  # words of asking say nothing of a kind
        ("What kind of cuisine is cheapest?", ""),
        ("Which Italian place is cheapest?", ""),  # a capitalized word is a name
        ("What is the average price?", ""),  # no kind named after the opening word
        ("How many places are there?", ""),
    ],
)
def test_the_kind_a_question_asks_for_is_held_or_named(question: str, kind: str) -> None:
    assert unheld_kind(question, [PLACES]) == kind


def test_a_time_word_is_held_only_where_a_property_holds_dates() -> None:
    undated = PLACES.model_copy(update={"properties": PLACES.properties[:3]})
    assert unheld_kind("In what year did the most places open?", [PLACES]) == ""
    assert unheld_kind("In what year did the most places open?", [undated]) == "year"


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("What's the top speed of the cheapest place?", "speed"),  # past "top", a word of asking
        ("What is the average price of the Thai places?", ""),
        ("What's the difference between the highest and lowest price?", ""),  # a comparison, computed
        ("What is the average rating of the places?", "rating"),
        ("What is the name of the cheapest place?", ""),  # any object has a name, whatever holds it
    ],
)
def test_what_is_the_kind_reads_past_words_of_asking(question: str, kind: str) -> None:
    assert unheld_kind(question, [PLACES]) == kind


def test_a_word_of_size_is_held_by_its_measure() -> None:
    rivers = CollectionSchema(name="Rivers", properties=(PropertySchema(name="length_km", data_type="number"),))
    assert unheld_kind("What's the longest of them all?", [rivers]) == ""  # "longest": a length
    assert unheld_kind("What's the deepest of them all?", [rivers]) == "deepest"  # a depth nothing holds


def test_a_unit_written_as_a_property_name_s_initials_is_held() -> None:
    cars = CollectionSchema(name="Cars", properties=(PropertySchema(name="miles_per_gallon", data_type="number"),))
    assert unheld_kind("What was the average mpg for that year?", [cars]) == ""
    assert unheld_kind("What was the average kpl for that year?", [cars]) == "kpl"


def test_the_objects_a_which_names_are_left_to_a_search_where_a_collection_can_search() -> None:
    searchable = PLACES.model_copy(update={"searchable": True})
    assert unheld_kind("Which venues are bars?", [PLACES]) == "venues"
    assert unheld_kind("Which venues are bars?", [searchable]) == "", "bars may be found by meaning"
    assert unheld_kind("Which cuisine has the most waiters?", [searchable]) == "waiters", "a count is no search"


def test_a_word_of_heat_wet_or_wind_is_held_by_its_measure() -> None:
    days = CollectionSchema(
        name="Days",
        searchable=False,
        properties=(
            PropertySchema(name="temp_max", data_type="number", description="The day's high temperature."),
            PropertySchema(name="precipitation", data_type="number"),
            PropertySchema(name="wind", data_type="number"),
        ),
    )
    assert unheld_kind("What's the hottest it got?", [days]) == ""
    assert unheld_kind("What was the wettest month?", [days]) == ""
    assert unheld_kind("What's the hottest it got?", [PLACES]) == "hottest"  # no temperature held
