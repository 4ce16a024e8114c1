"""The final-answer grader on hand-written answers: right, wrong, wordy, differently written, hedged."""

from __future__ import annotations

import pytest

from agent.answer import CommitError, FinalAnswer, parse_answer
from evaluation.answers import (
    AnswerKey,
    KeyNumber,
    chain_key,
    grade,
    grade_answer,
    grade_committed,
    numbers_in,
    single_call_key,
)
from evaluation.refusal import grade_committed_abstention
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
        (TOP, "Italian, Chinese, Indian, Japanese and Thai are all common.", "list of candidates"),
        (TOP, "Italian is first; Chinese, Indian and Thai follow.", "also names"),
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


SEASONS = AnswerKey(
    groups={"Spring": KeyNumber(value=31), "Fall": KeyNumber(value=27), "Summer": KeyNumber(value=12)},
    other_groups=["Winter"],
)
FORTY_TWO = AnswerKey(numbers=[KeyNumber(value=42)])
HUNDRED_AND_FIVE = AnswerKey(numbers=[KeyNumber(value=105)])


@pytest.mark.parametrize(
    ("key", "answer"),
    [
        (FORTY_TWO, "Forty-two courses match."),
        (FORTY_TWO, "There are forty two of them."),
        (HUNDRED_AND_FIVE, "One hundred and five patients."),
        (AnswerKey(numbers=[KeyNumber(value=2300)]), "Two thousand three hundred."),
        (SEASONS, "31, 27 and 12 for Spring, Fall and Summer."),
        (SEASONS, "Spring, Fall and Summer have 31, 27 and 12 respectively."),
        # a value stated plainly beside a hedge that does not touch it
        (MEAN, "It is 3.46, not 3.9."),
        (MEAN, "The average of the restaurants that are not open is 3.46."),
        (COUNT, "There are 1,234 restaurants with more than 3 reviews."),
        (TOP, "Italian is the most common, not Chinese."),
        (GROUPS, "Italian: 27 (more than any other); Chinese: 11."),
    ],
)
def test_right_answers_written_in_words_or_side_by_side(key: AnswerKey, answer: str) -> None:
    verdict = grade(answer, key, "How many reviews, more than 3?")
    assert verdict.correct, verdict.reason


@pytest.mark.parametrize(
    ("key", "answer", "reason"),
    [
        # hedges between alternatives
        (MEAN, "It is either 3.46 or 4.1 or 2.9.", "among alternatives"),
        (MEAN, "Either 2.9, 3.46 or 4.1.", "among alternatives"),
        (TOP, "Either Italian or Chinese.", "among alternatives"),
        (GROUPS, "Italian: 27 or 28, Chinese: 11", "group 'Italian'"),
        (MEAN, "Possible values: 2.9, 3.46, 4.1, 5.0.", "lists candidates"),
        (MEAN, "The values: 2.9, 3.46, 4.1.", "list of candidates"),
        (COUNT, "1,234, 99.", "list of candidates"),
        # negation of the key
        (MEAN, "It is not 3.46; it is 3.9.", "negated"),
        (TOP, "It is not Italian; it is Chinese.", "negated"),
        (COUNT, "There aren't 1,234, there are 1,300.", "negated"),
        # a guess after admitting failure
        (MEAN, "I could not compute it; maybe 3.46?", "guesses after"),
        (TOP, "I'm not sure, probably Italian.", "guesses after"),
        (MEAN, "3.46?", "as a question"),
        # bounds
        (COUNT, "Fewer than 1,234.", "as a bound"),
        (COUNT, "At least 1234 of them.", "as a bound"),
        (COUNT, "1,234 or more.", "as a bound"),
        (COUNT, "More than 1234.", "as a bound"),
        # ranges
        (MEAN, "Between 3.46 and 3.9.", "end of a range"),
        (MEAN, "From 3.0 to 3.46.", "end of a range"),
        (COUNT, "1,234-1,300 restaurants.", "end of a range"),
        # every number at hand
        (MEAN, "Count 100, mean 3.456, minimum 1.2 and maximum 5.", "hedges: states 3 other numbers"),
        (SEASONS, "31, 27, 12 and 5 for Spring, Fall and Summer.", "group 'Spring'"),
        (SEASONS, "27, 31 and 12 for Spring, Fall and Summer.", "group 'Spring'"),  # the values out of order
        (FORTY_TWO, "Forty-three courses match.", "does not state"),
        (HUNDRED_AND_FIVE, "One hundred and fifteen patients.", "does not state"),
    ],
)
def test_hedged_answers_fail(key: AnswerKey, answer: str, reason: str) -> None:
    verdict = grade(answer, key, "How many?")
    assert verdict.correct is False, answer
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


# --- committed answers: one value per part of the key -------------------------------------------


@pytest.mark.parametrize(
    ("key", "committed"),
    [
        (MEAN, FinalAnswer(numbers=[3.46])),
        (MEAN, FinalAnswer(numbers=[3.5])),
        (MEAN, FinalAnswer(numbers=[3.456])),
        (SHARE, FinalAnswer(numbers=[35.6])),
        (SHARE, FinalAnswer(numbers=[0.356])),
        (COUNT, FinalAnswer(numbers=[1234])),
        (AnswerKey(numbers=[KeyNumber(value=12.4)]), FinalAnswer(numbers=[12])),  # whole numbers from 10 up
        (TOP, FinalAnswer(names=["italian"])),
        (NAME_AND_NUMBER, FinalAnswer(names=["Thai"], numbers=[4.12])),
        (NAME_AND_NUMBER, FinalAnswer(groups={"Thai": 4.12})),  # a name and its number as one pair
        (GROUPS, FinalAnswer(groups={"Chinese": 11, "Italian": 27})),
        (SEASONS, FinalAnswer(groups={"spring": 31, "Fall": 27, "Summer": 12}, sources=["1a2b3c4d"])),
        (AnswerKey(numbers=[KeyNumber(value=27), KeyNumber(value=4.12)]), FinalAnswer(numbers=[4.12, 27])),
    ],
)
def test_right_committed_answers_pass(key: AnswerKey, committed: FinalAnswer) -> None:
    verdict = grade_committed(committed, key)
    assert verdict.correct, verdict.reason


@pytest.mark.parametrize(
    ("key", "committed", "reason"),
    [
        (MEAN, FinalAnswer(), "commits 0 numbers for 1"),
        (MEAN, FinalAnswer(numbers=[3]), "commits 3, not 3.456"),  # too coarse below 10
        (MEAN, FinalAnswer(numbers=[3.46, 4.1, 2.9]), "commits 3 numbers for 1"),  # a hedge needs more slots
        (COUNT, FinalAnswer(numbers=[1235]), "commits 1235, not 1234"),
        (SHARE, FinalAnswer(numbers=[36.5]), "not 0.356"),
        (TOP, FinalAnswer(names=["Italian", "Chinese"]), "commits 2 names for 1"),
        (TOP, FinalAnswer(names=["Chinese"]), "commits names [Chinese], not [Italian]"),
        (NAME_AND_NUMBER, FinalAnswer(names=["Thai"]), "commits 0 numbers"),
        (GROUPS, FinalAnswer(groups={"Italian": 11, "Chinese": 27}), "group 'Italian': commits 11, not 27"),
        (GROUPS, FinalAnswer(groups={"Italian": 27}), "does not commit group 'Chinese'"),
        (GROUPS, FinalAnswer(groups={"Italian": 27, "Chinese": 11, "Thai": 6}), "does not have: Thai"),
        (GROUPS, FinalAnswer(groups={"Italian": 27, "italian ": 28, "Chinese": 11}), "a group twice"),
        (MEAN, FinalAnswer(cannot_answer="no rating is stored"), "cannot answer"),
        (MEAN, FinalAnswer(numbers=[3.46], cannot_answer="not sure"), "cannot answer"),
    ],
)
def test_wrong_committed_answers_fail(key: AnswerKey, committed: FinalAnswer, reason: str) -> None:
    verdict = grade_committed(committed, key)
    assert verdict.correct is False
    assert reason in verdict.reason


def test_the_committed_part_is_graded_before_the_text() -> None:
    hedged_text = "Either 3.46 or 4.1."
    assert grade_answer(hedged_text, FinalAnswer(numbers=[3.46]), MEAN).correct
    assert not grade_answer("It is 3.46.", FinalAnswer(numbers=[4.1]), MEAN).correct
    assert not grade_answer(hedged_text, None, MEAN).correct  # no committed part: the text grader
    assert grade_answer("It is 3.46.", None, MEAN).correct


def test_the_key_commits_itself() -> None:
    for key in (MEAN, SHARE, COUNT, TOP, NAME_AND_NUMBER, GROUPS, SEASONS):
        assert grade_committed(key.committed(), key).correct


def test_cannot_answer_is_the_committed_abstention() -> None:
    assert grade_committed_abstention(FinalAnswer(cannot_answer="no calorie property")).correct
    assert not grade_committed_abstention(FinalAnswer(numbers=[40])).correct
    assert not grade_committed_abstention(FinalAnswer(cannot_answer="unsure", numbers=[40])).correct
    assert not grade_committed_abstention(FinalAnswer()).correct


def test_a_commit_reply_parses_or_says_why_not() -> None:
    answer = parse_answer('```json\n{"numbers": [3.46], "sources": ["1a2b3c4d"], "is_partial_answer": false}\n```')
    assert answer.numbers == [3.46] and answer.sources == ["1a2b3c4d"] and answer.names == []
    assert parse_answer('{"names": ["two\nlines"]}').names == ["two\nlines"]  # as llama-cpp-python's grammar allows
    wire = parse_answer('{"groups": [{"name": "Spring", "value": 31}, {"name": "Fall", "value": 27}]}')
    assert wire.groups == {"Spring": 31, "Fall": 27}  # the wire's list of pairs is the map
    for reply, reason in [
        ("", "empty"),
        ("3.46", "not a JSON object"),
        ("The answer is 3.46.", "not JSON"),
        ('{"numbers": ["many"]}', "numbers.0"),
        ('{"groups": {"Spring": 31, "Spring": 32}}', "Spring more than once"),  # a hedge written as JSON
        ('{"groups": [{"name": "Spring", "value": 31}, {"name": "Spring", "value": 32}]}', "Spring more than once"),
        ('{"numbers": [NaN]}', "finite"),
    ]:
        with pytest.raises(CommitError, match=reason):
            parse_answer(reply)


def test_an_answers_text_writes_numbers_fixed_point_to_twelve_digits() -> None:
    """The text is read back by people and by the grader's number reader: never 1.2e+12 (read as 1.2 and 12)."""
    answer = FinalAnswer(numbers=[1234567890123.5, 3.3e-7, 23.555812345678901, 5.0])
    assert answer.text() == "1234567890120; 0.00000033; 23.5558123457; 5"
    assert "e" not in answer.text()
