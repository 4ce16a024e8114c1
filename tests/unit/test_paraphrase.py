"""The check that keeps a model's rewording of a composed question only where it still asks the same thing,
read off the wording alone: kept for a faithful rewording, dropped, with the reason, for each kind of change
it can see."""

from __future__ import annotations

import pytest

from evaluation.paraphrase import changed, paraphrase

OTHERS = ["hue", "facets", "lustre", "isCursed", "unearthedOn"]
TWO = [
    {
        "collection_name": "Stones",
        "text_property_filter": {"property_name": "hue", "operator": "=", "value": "teal"},
        "integer_property_filter": {"property_name": "facets", "operator": ">", "value": 12.5},
    }
]
TWO_TEMPLATE = "How many stones with hue teal have a facets above 12.5?"
MEAN = [
    {
        "collection_name": "Stones",
        "text_property_filter": {"property_name": "hue", "operator": "=", "value": "ochre"},
        "integer_property_aggregation": {"property_name": "averageLustre", "metrics": "MEAN"},
    }
]
MEAN_TEMPLATE = "What is the mean average lustre of the stones with hue ochre?"


@pytest.mark.parametrize(
    "reworded",
    [
        "How many teal stones have more than 12.5 facets?",
        "Count of teal stones with over 12.5 facets?",
        "What number of stones in teal have facets greater than 12.5?",
    ],
)
def test_a_faithful_rewording_is_kept(reworded: str) -> None:
    assert changed(TWO_TEMPLATE, reworded, TWO, OTHERS) == ""


@pytest.mark.parametrize(
    ("reworded", "why"),
    [
        ("How many stones have more than 12.5 facets?", "drops the value 'teal'"),
        ("How many teal stones have more than 13 facets?", "other numbers"),
        ("How many teal stones have fewer than 12.5 facets?", "no longer asks above"),
        ("How many teal stones have more than 12.5 facets and are cursed?", "adds a condition on isCursed"),
        ("How many teal stones do not have more than 12.5 facets?", "adds negation"),
        ("How many teal stones have more than 12.5 facets? And how many are ochre?", "not one question"),
        ("Teal stones with more than 12.5 facets.", "not one question"),
        (TWO_TEMPLATE.upper(), "the template again"),
    ],
)
def test_a_changed_question_is_dropped_with_its_reason(reworded: str, why: str) -> None:
    assert changed(TWO_TEMPLATE, reworded, TWO, OTHERS) == why


def test_a_property_named_average_asks_no_mean_but_may_carry_one() -> None:
    assert changed(MEAN_TEMPLATE, "What is the average lustre of ochre stones?", MEAN, OTHERS) == ""
    assert changed(MEAN_TEMPLATE, "What is the highest lustre of ochre stones?", MEAN, OTHERS) == "no longer asks mean"
    assert changed(MEAN_TEMPLATE, "How shiny are ochre stones?", MEAN, OTHERS) == "names no word of averageLustre"


def test_the_model_s_reply_is_kept_only_where_the_check_keeps_it() -> None:
    faithful = paraphrase(TWO_TEMPLATE, TWO, lambda _prompt: ' "How many teal stones have over 12.5 facets?" ')
    assert faithful == ("How many teal stones have over 12.5 facets?", "")

    def failing(_prompt: str) -> str:
        raise TimeoutError("no reply")

    assert paraphrase(TWO_TEMPLATE, TWO, failing) == (None, "the model failed: TimeoutError: no reply")
    unanswerable = "What is the average weight of the stones?"
    kept = paraphrase(unanswerable, [], lambda _p: "How heavy are the stones on average?", lacking=["weight"])
    assert kept == (None, "drops the measure 'weight'")


def test_reasons_are_counted_by_kind_without_what_they_name() -> None:
    from evaluation.paraphrase import reason_kind

    assert reason_kind("drops the value 'Thai'") == "drops the value"
    assert reason_kind("names no word of averageRating") == "names no word"
    assert reason_kind("adds a condition on openNow") == "adds a condition"
    assert reason_kind("no longer asks above") == "no longer asks above"
