"""A name the question gives that one text property holds inside its values (`agent.strategies.free_text`):
made-up boats, whose `hull_name` holds the yard's name as a word ("brixham trawler 40")."""

from __future__ import annotations

from agent.strategies.codes import ticker_for
from agent.strategies.free_text import named_in_text, unheld_names
from executors.schema import CollectionSchema, PropertySchema

BOATS = CollectionSchema(
    name="Boats",
    properties=(
        PropertySchema(name="hull_name", data_type="text"),
        PropertySchema(name="notes", data_type="text"),
        PropertySchema(name="rig", data_type="text"),
        PropertySchema(name="length_ft", data_type="number"),
    ),
)
HULLS = ["brixham trawler 40", "falmouth cutter 22", "brixham sloop 30", "cornish crabber 24"]
NOTES = ["restored in Falmouth", "new sails", "built on the Tamar"]
CATEGORIES = {"rig": ["Sloop", "Cutter", "Ketch"]}


def matches(prop: str, pattern: str) -> bool:
    word = pattern.strip("*")
    held = {"hull_name": HULLS, "notes": NOTES}.get(prop, CATEGORIES["rig"])
    return any(word in value.lower().split() for value in held)


def linked(question: str, filtered: frozenset[str] = frozenset()) -> list[dict[str, str]]:
    return named_in_text(question, BOATS, CATEGORIES, ["hull_name", "notes"], set(filtered), matches)


def test_a_name_one_text_property_holds_inside_its_values_is_a_like_condition() -> None:
    assert linked("What is the longest boat of any Brixham yard?") == [
        {"property_name": "hull_name", "operator": "LIKE", "value": "*brixham*"}
    ]
    assert linked("Count the Cornishes in the data.") == [  # a plural, read singular
        {"property_name": "hull_name", "operator": "LIKE", "value": "*cornish*"}
    ]


def test_nothing_where_the_word_is_ambiguous_filtered_a_category_or_a_time() -> None:
    assert linked("How long are the boats of Falmouth?") == []  # hull names and notes both hold it
    assert linked("What is the longest boat of any Brixham yard?", frozenset({"hull_name"})) == []
    assert linked("How many of the boats are rigged as a Sloop?") == []  # a category's value
    assert linked("How many boats were launched in March?") == []
    assert linked("How many Boats are longer than 30 ft?") == []  # the collection's own name


def test_a_word_the_call_already_filters_on_is_the_model_s() -> None:
    placed = [{"property_name": "notes", "operator": "=", "value": "Brixham"}]
    found = named_in_text(
        "How many boats are from Brixham?", BOATS, CATEGORIES, ["hull_name"], set(), matches, held=placed
    )
    assert found == []


def unheld(question: str, categories: dict[str, list[str]] | None = None) -> list[str]:
    return unheld_names(question, BOATS, CATEGORIES if categories is None else categories, matches)


def test_a_name_the_collection_holds_nowhere_is_unheld() -> None:
    assert unheld("What is the longest boat built by Hallberg's yard?") == ["Hallberg"]
    assert unheld("How long is the Penryn Ketch?") == ["Penryn"]  # the rig is a category; the place is nothing


def test_a_name_held_somewhere_a_code_a_unit_or_a_short_capital_is_no_unheld_name() -> None:
    assert unheld("What is the longest boat of any Brixham yard?") == []  # inside a hull's name
    assert unheld("How long is the longest boat restored in Falmouth?") == []  # inside a note
    assert unheld("How many of the boats are rigged as a Sloop?") == []  # a category's value
    assert unheld("How many boats were launched in March?") == []  # a month
    assert unheld("What is the mean length of the Boats, in LFT?") == []  # three capitals: a unit or a code
    assert unheld("What's the water temperature at launch, in Celsius?") == []
    assert unheld("How long is the average Length Ft?") == []  # the schema's own words
    assert unheld("What did Quorlax's boats cost?", {"yard": ["QRLX", "ZNTH"]}) == []  # a ticker it fits


def test_a_ticker_abbreviates_a_name_reading_a_doubled_letter_once() -> None:
    assert ticker_for("Apple", "AAPL") and ticker_for("Google", "GOOG") and ticker_for("Microsoft", "MSFT")
    assert not ticker_for("Tesla", "AAPL") and not ticker_for("Amazon", "AAPL") and not ticker_for("Apple", "AMZN")


def test_the_collection_s_own_name_and_a_unit_s_mixed_case_are_no_unheld_names() -> None:
    days = CollectionSchema(
        name="SeattleDays",
        properties=(
            PropertySchema(name="rain_mm", data_type="number"),
            PropertySchema(name="weather", data_type="text"),
        ),
    )
    assert unheld_names("What was Seattle's total rainfall in 2015?", days, {}, lambda *_: False) == []
    assert unheld_names("What was Boston's total rainfall in 2015?", days, {}, lambda *_: False) == ["Boston"]
    assert unheld_names("The total rain in 2015, in thousand MWh or kWh?", days, {}, lambda *_: False) == []
