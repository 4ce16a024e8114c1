"""A property named by meaning (`agent.strategies.meaning`), on a made-up collection of boats: the words a
question uses for a property link it where no word is spelled like it, and what no property holds links
nothing."""

from __future__ import annotations

import pytest

from agent.strategies import meaning
from agent.strategies.meaning import meant_property, named, phrase_of
from executors.schema import CollectionSchema, PropertySchema

BOATS = CollectionSchema(
    name="Sailboats",
    properties=tuple(
        PropertySchema(name=name, data_type=kind)
        for name, kind in (
            ("hull_name", "text"),
            ("length_ft", "number"),
            ("top_speed_knots", "number"),
            ("engine_power_hp", "number"),
            ("price_usd", "number"),
            ("home_port", "text"),
            ("launch_year", "int"),
        )
    ),
)

needs_encoder = pytest.mark.skipif(meaning._encoder() is None, reason="the embedding model is not installed")


def test_the_phrase_leaves_out_asking_words_names_and_the_collection() -> None:
    question = "What is the average cost of the Sailboats moored in Brest?"
    assert phrase_of("average cost of sailboats in Brest", question, BOATS) == "cost"


@needs_encoder
@pytest.mark.parametrize(
    ("asks_for", "question", "linked"),
    [
        ("horsepower", "Which sailboat has the most horsepower?", "engine_power_hp"),
        ("how long", "How long is the longest sailboat?", "length_ft"),
        ("how much they cost", "How much do the sailboats cost on average?", "price_usd"),  # "price", unit aside
        ("maximum velocity", "What is the maximum velocity of any sailboat?", None),  # near (0.45), not enough
        ("crew size", "What is the average crew size of the sailboats?", None),
        ("colour of the sails", "Which colour of the sails is most common?", None),
    ],
)
def test_a_property_is_linked_by_meaning_only_when_it_is_the_clear_nearest(
    asks_for: str, question: str, linked: str | None
) -> None:
    assert meant_property(asks_for, question, BOATS) == linked


def test_a_name_is_compared_without_its_unit() -> None:
    assert [named(p) for p in ("price_usd", "weight_in_lbs", "top_speed_knots", "body_mass_g")] == [
        "price",
        "weight",
        "top speed knots",
        "body mass",
    ]


def test_nothing_is_linked_without_the_encoder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(meaning, "_encoder", lambda: None)
    assert meant_property("how much they cost", "How much do the sailboats cost?", BOATS) is None


@needs_encoder
def test_a_stored_value_is_named_by_meaning_only_where_one_word_clearly_means_it() -> None:
    sexes, crews = ["Male", "Female"], ["skipper", "deckhand", "cook"]
    assert meaning.means_value(["women", "sailed"], "Female", sexes)
    assert meaning.means_value(["men"], "Male", sexes)
    assert not meaning.means_value(["men"], "Female", sexes), "the nearest value is another"
    assert not meaning.means_value(["boats", "sailed"], "Female", sexes), "no word is near it"
    assert not meaning.means_value(["women"], "Female", ["Female"]), "one stored value has nothing to be ahead of"
    assert not meaning.means_value(["women"], "cook", crews)


def test_a_condition_named_by_meaning_is_kept_and_one_named_by_nothing_left_out() -> None:
    from agent.strategies.conditions import unasked

    call = {
        "collection_name": "Crew",
        "text_property_filter": {"property_name": "sex", "operator": "=", "value": "Female"},
    }
    kinds = {"sex": ["Male", "Female"]}
    if meaning._encoder() is not None:
        assert unasked("How many women sailed in 2010?", call, kinds) == (call, "")
    assert unasked("How many sailors sailed in 2010?", call, kinds)[0] == {"collection_name": "Crew"}
