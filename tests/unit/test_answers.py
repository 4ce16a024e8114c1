"""The final-answer grader on hand-written answers: right, wrong, wordy, differently written, hedged."""

from __future__ import annotations

import pytest

from evaluation.answers import AnswerKey, KeyNumber, chain_key, grade, numbers_in, single_call_key
from executors import QueryResult
from executors.results import GroupResult, TopOccurrence
from executors.vocabulary import PropertyKind
from fixtures.datasets.chains import AnswerPart

CUISINES = ["Italian", "Chinese", "Indian", "Japanese", "Thai"]
MEAN = AnswerKey(numbers=[KeyNumber(value=3.456)])
SHARE = AnswerKey(numbers=[KeyNumber(value=0.356, fraction=True)])
COUNT = AnswerKey(numbers=[KeyNumber(value=1234)])
TOP = AnswerKey(names=["Italian"], other_names=CUISINES[1:])
NAME_AND_NUMBER = AnswerKey(names=["Thai"], numbers=[KeyNumber(value=4.12)], other_names=CUISINES[:4])
GROUPS = AnswerKey(
    groups={"Italian": KeyNumber(value=27), "Chinese": KeyNumber(value=11)}, other_groups=["Indian", "Thai"]
)


@pytest.mark.parametrize(
    ("key", "answer"),
    [
        (MEAN, "The average is 3.46."),
        (MEAN, "About 3.5 on average, over all 100 restaurants."),
        (MEAN, "3.456"),
        (SHARE, "35.6% of them are open."),
        (SHARE, "About 36 percent."),
        (SHARE, "A share of 0.356."),
        (COUNT, "There are 1,234 of them."),
        (COUNT, "1234.0"),
        (AnswerKey(numbers=[KeyNumber(value=12)]), "Twelve courses match."),
        (AnswerKey(numbers=[KeyNumber(value=0)]), "None of them are online."),
        (TOP, "Italian is the most common cuisine (27 restaurants), followed by Chinese."),
        (NAME_AND_NUMBER, "Thai food has the highest rating; those restaurants average 4.12 stars."),
        (GROUPS, "Italian: 27\nChinese: 11"),
        (GROUPS, "There are 27 Italian... no: Italian has 27 restaurants and Chinese has 11."),
        # the value before the name, as the offline default answered a public dataset's count per group
        (GROUPS, 'There were 27 restaurants of "Italian" and 11 of "Chinese".'),
        (GROUPS, "27 Italian, 11 Chinese"),
    ],
)
def test_right_answers_pass_however_they_are_written(key: AnswerKey, answer: str) -> None:
    verdict = grade(answer, key, "How many?")
    assert verdict.correct, verdict.reason


@pytest.mark.parametrize(
    ("key", "answer", "reason"),
    [
        (MEAN, "", "no answer"),
        (MEAN, "I could not find that.", "does not state"),
        (MEAN, "The average is 3.", "does not state"),  # too coarse for a value below 10
        (MEAN, "The average is 3.6.", "does not state"),
        (SHARE, "36.5%", "does not state"),
        (COUNT, "There are 1,235.", "does not state"),
        (MEAN, "It is 1.2, 2.3, 3.456, 4.5 or 5.1 depending on the filter.", "hedges"),
        (TOP, "Chinese.", "does not name"),
        (TOP, "Italian, Chinese, Indian, Japanese and Thai are all common.", "also names"),
        (TOP, "Chinese is close, but Italian is the most common.", "before the answer"),
        (NAME_AND_NUMBER, "Thai, with an average of 4.2.", "does not state"),
        (GROUPS, "Italian: 11\nChinese: 27", "group 'Italian'"),  # the right values for the wrong groups
        (GROUPS, "Italian: 27", "does not name group 'Chinese'"),
        (GROUPS, "Italian: 27, Chinese: 11, Thai: 6", "does not have"),
        (GROUPS, "11 Italian, 27 Chinese", "group 'Chinese'"),  # values first, on the wrong groups
        # a name-first list with its values shifted reads right only the other way: labelled, so name first
        (GROUPS, "27 restaurants. Italian: 11, Chinese: 4", "group 'Italian'"),
        (GROUPS, "Italian 27 restaurants, 11 Chinese", "group 'Chinese'"),  # mixed orders
    ],
)
def test_wrong_answers_fail_with_a_reason(key: AnswerKey, answer: str, reason: str) -> None:
    verdict = grade(answer, key, "How many?")
    assert verdict.correct is False
    assert reason in verdict.reason


def test_numbers_of_the_question_do_not_count_as_hedging() -> None:
    question = "What is the average rating of the 3 most popular cuisines in 2024 and 2025?"
    assert grade("It is 3.46 (for 3 cuisines, 2024 and 2025).", MEAN, question).correct


def test_uuids_are_not_numbers() -> None:
    assert numbers_in("see 0f8fad5b-d9cb-469f-a165-70867728950e") == []


def test_a_question_without_a_key_is_unscored_not_right() -> None:
    verdict = grade("anything", AnswerKey(unscored="a listing: its answer is the objects"), "")
    assert verdict.correct is None and "listing" in verdict.reason


def _kind(prop: str) -> PropertyKind | None:
    return {"cuisine": PropertyKind.TEXT, "averageRating": PropertyKind.NUMBER, "openNow": PropertyKind.BOOLEAN}[prop]


def test_keys_read_off_one_result() -> None:
    values = lambda _prop: CUISINES  # noqa: E731
    top = QueryResult(
        collection="Restaurants",
        operator_class="aggregate",
        aggregations={"cuisine": {"TOP_OCCURRENCES": [TopOccurrence(value="Italian", count=27)]}},
    )
    key = single_call_key(top, _kind, values)
    assert key.names == ["Italian"] and key.other_names == CUISINES[1:]
    share = QueryResult(
        collection="Restaurants", operator_class="aggregate", aggregations={"openNow": {"PERCENTAGE_TRUE": 0.25}}
    )
    assert single_call_key(share, _kind, values).numbers == [KeyNumber(value=0.25, fraction=True)]
    groups = QueryResult(
        collection="Restaurants",
        operator_class="group",
        group_by="cuisine",
        groups={"Italian": GroupResult(value="Italian", count=27), "Thai": GroupResult(value="Thai", count=6)},
    )
    assert single_call_key(groups, _kind, values).groups == {
        "Italian": KeyNumber(value=27),
        "Thai": KeyNumber(value=6),
    }
    by_flag = groups.model_copy(update={"group_by": "openNow"})
    assert "not text" in (single_call_key(by_flag, _kind, values).unscored or "")
    truncated = groups.model_copy(update={"truncated": True})
    assert "more groups" in (single_call_key(truncated, _kind, values).unscored or "")
    listing = QueryResult(collection="Restaurants", operator_class="fetch")
    assert "listing" in (single_call_key(listing, _kind, values).unscored or "")


def test_chain_keys_name_the_larger_and_the_difference() -> None:
    parts = [
        AnswerPart(kind="larger", refs=["a", "a_mean", "b", "b_mean"], collection="Restaurants", property="cuisine"),
        AnswerPart(kind="difference", refs=["a_mean", "b_mean"]),
    ]
    values: dict[str, str | float] = {"a": "Italian", "a_mean": 4.02, "b": "Chinese", "b_mean": 3.87}
    key = chain_key(parts, values, lambda _c, _p: CUISINES)
    assert key.names == ["Italian"] and key.numbers[0].value == pytest.approx(0.15)
    assert grade("Italian, higher by 0.15.", key).correct
    assert not grade("Chinese, higher by 0.15.", key).correct
    assert "picked no" in (chain_key(parts, {"a": "Italian"}, lambda _c, _p: []).unscored or "")
