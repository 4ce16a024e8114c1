"""`agent.strategies.wording`: the literals a question's words fix, checked against every label."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from agent.strategies.wording import (
    NUMBER_FILTER,
    TEXT_AGGREGATION,
    TEXT_FILTER,
    amend_wording,
    comparisons,
    like_pattern,
    top_count,
)
from fixtures.datasets import load_split, split_path

WRONG_OPERATOR = {">": ">=", ">=": ">", "<": "<=", "<=": "<", "=": ">="}


def _broken(gold: dict[str, Any]) -> dict[str, Any]:
    """The label written as the small model writes it: no limit, the neighbouring operator, a one-sided
    or SQL pattern."""
    broken = dict(gold)
    if isinstance(top := gold.get(TEXT_AGGREGATION), dict) and top.get("metrics") == "TOP_OCCURRENCES":
        broken[TEXT_AGGREGATION] = {k: v for k, v in top.items() if k != "top_occurrences_limit"}
    if isinstance(where := gold.get(NUMBER_FILTER), dict):
        broken[NUMBER_FILTER] = {**where, "operator": WRONG_OPERATOR[where["operator"]]}
    if isinstance(where := gold.get(TEXT_FILTER), dict) and where.get("operator") == "LIKE":
        value = where["value"]
        broken[TEXT_FILTER] = {**where, "value": f"%{value.strip('*')}%" if value.startswith("*") else f"*{value}"}
    return broken


def test_every_label_is_left_as_it_is_and_every_label_written_loosely_is_mended() -> None:
    """The words agree with the label wherever they speak, and the label written loosely comes back."""
    marked: Counter[str] = Counter()
    for split in ("natural", "explicit", "related"):
        for case in load_split(split_path(split)):
            gold = case.ground_truth.model_dump(exclude_none=True)
            assert amend_wording(case.query, gold) == (gold, []), (split, case.id)
            broken = _broken(gold)
            if broken == gold:
                continue
            mended, why = amend_wording(case.query, broken)
            fixable = [
                slot
                for slot in (TEXT_AGGREGATION, NUMBER_FILTER, TEXT_FILTER)
                if broken.get(slot) != gold.get(slot)
                and (
                    (slot == TEXT_AGGREGATION and top_count(case.query) is not None)
                    or (slot == NUMBER_FILTER and float(gold[slot]["value"]) in comparisons(case.query))
                    or slot == TEXT_FILTER
                )
            ]
            for slot in fixable:
                assert mended[slot] == gold[slot], (split, case.id, slot, why)
                marked[slot] += 1
    # the marked questions of the natural and explicit splits (the related split's numbers sit in references)
    assert marked == {TEXT_AGGREGATION: 140, NUMBER_FILTER: 160, TEXT_FILTER: 108}


@pytest.mark.parametrize(
    ("question", "count"),
    [
        ("What is the most common weather?", 1),
        ("What are the 3 most common cuisines?", 3),
        ("Which are the two most frequent moods?", 2),
        ("What are the most common cuisines?", None),  # says no count
        ("What is the average price?", None),
    ],
)
def test_the_count_a_most_common_question_asks_for(question: str, count: int | None) -> None:
    assert top_count(question) == count


def test_comparisons_read_before_and_after_the_number_and_a_number_compared_two_ways_is_left_out() -> None:
    assert comparisons("days with more than 30 mm of rain and temp_max of 25 degrees or more") == {
        30.0: ">",
        25.0: ">=",
    }
    assert comparisons("wines costing $1,200 or less, made before 1990") == {1200.0: "<=", 1990.0: "<"}
    assert comparisons("more than 5 but not at least 5") == {}
    assert comparisons("the 5 wines") == {}


@pytest.mark.parametrize(
    ("question", "value", "pattern"),
    [
        ('Wines whose region starts with "Bo"?', "*Bo", "Bo*"),
        ('Wines whose region ends with "aux"?', "%aux%", "*aux"),
        ("Reviews that mention tannins?", "%tannins", "*tannins*"),
        ("Reviews that mention tannins?", "* tannins", "*tannins*"),
        ('Regions that start with "Bo"?', "*Rh*", "*Rh*"),  # another prefix than the words': the model's
        ("Reviews that mention tannins?", "tannins", "tannins"),  # no wildcard: not a pattern to mend
        ("Reviews with a*b?", "a*b", "a*b"),
    ],
)
def test_like_patterns_take_the_wildcards_the_words_ask_for(question: str, value: str, pattern: str) -> None:
    assert like_pattern(question, value) == pattern


def test_a_call_is_mended_in_a_collection_of_a_users_own_and_told_why() -> None:
    question = "How many days had more than 30 degrees, and what is the most common weather among them?"
    call = {
        "collection_name": "SeattleWeather",
        NUMBER_FILTER: {"property_name": "temp_max", "operator": ">=", "value": 30},
        TEXT_AGGREGATION: {"property_name": "weather", "metrics": "TOP_OCCURRENCES"},
    }
    mended, why = amend_wording(question, call)
    assert mended[NUMBER_FILTER]["operator"] == ">" and mended[TEXT_AGGREGATION]["top_occurrences_limit"] == 1
    assert len(why) == 2 and call[NUMBER_FILTER]["operator"] == ">="  # the written call is not changed
    other = {**call, NUMBER_FILTER: {"property_name": "temp_max", "operator": ">=", "value": 12}}
    assert amend_wording(question, other)[0][NUMBER_FILTER]["operator"] == ">="  # 12 is not the words' number
