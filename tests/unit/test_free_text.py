"""A name the question gives that one text property holds inside its values (`agent.strategies.free_text`):
made-up boats, whose `hull_name` holds the yard's name as a word ("brixham trawler 40")."""

from __future__ import annotations

from agent.strategies.free_text import named_in_text
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
    held = {"hull_name": HULLS, "notes": NOTES}[prop]
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
