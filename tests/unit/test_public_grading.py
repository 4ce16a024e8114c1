"""The public and unseen splits' grading: the gold answers score 100%, and the ways to game it score nothing.

Each probe runs over every question of both committed files, through `evaluation.public_run.grade`, the
grader `eval --dataset public` uses."""

from __future__ import annotations

import pytest

from agent.answer import FinalAnswer
from evaluation.public_run import PublicRecord, answer_key, grade, summarize_public
from fixtures.datasets import read_public
from fixtures.datasets.splits import split_path

QUESTIONS = [*read_public(split_path("public")), *read_public(split_path("unseen"))]
ANSWERABLE = [q for q in QUESTIONS if q.kind != "unanswerable"]
UNANSWERABLE = [q for q in QUESTIONS if q.kind == "unanswerable"]


def test_the_gold_answers_score_every_question() -> None:
    for question in ANSWERABLE:
        key = answer_key(question)
        assert grade(question, None, key.committed()).correct, question.id  # committed
        assert grade(question, key.text(), None).correct, question.id  # written
    refusal = FinalAnswer(cannot_answer="the data holds no such property")
    assert all(grade(q, None, refusal).correct for q in UNANSWERABLE)
    assert all(
        grade(q, "The database cannot answer this: it has no such property.", None).correct for q in UNANSWERABLE
    )


def test_refusing_everything_scores_only_the_unanswerable() -> None:
    refusal = FinalAnswer(cannot_answer="cannot")
    assert not any(grade(q, None, refusal).correct for q in ANSWERABLE)


def test_answering_everything_with_the_gold_of_another_question_scores_nothing_unanswerable() -> None:
    some = answer_key(ANSWERABLE[0]).committed()
    assert not any(grade(q, None, some).correct for q in UNANSWERABLE)


def test_listing_every_value_of_the_named_property_is_wrong() -> None:
    named = [q for q in ANSWERABLE if answer_key(q).names and answer_key(q).other_names]
    assert named, "the split asks for names"
    for question in named:
        key = answer_key(question)
        hedge = key.committed().model_copy(update={"names": [*key.names, *key.other_names]})
        assert not grade(question, None, hedge).correct, question.id


@pytest.mark.parametrize("shift", [1, -1])
def test_a_number_off_by_a_few_percent_is_wrong(shift: int) -> None:
    numeric = [q for q in ANSWERABLE if answer_key(q).numbers and all(abs(n.value) > 1 for n in answer_key(q).numbers)]
    for question in numeric:
        key = answer_key(question).committed()
        off = key.model_copy(update={"numbers": [round(n + shift * max(1.0, abs(n) * 0.05), 4) for n in key.numbers]})
        assert not grade(question, None, off).correct, question.id


def test_the_summary_counts_answerable_questions_refused() -> None:
    records = [
        PublicRecord(
            id=q.id,
            dataset=q.dataset,
            kind=q.kind,
            query=q.query,
            collections=q.collections,
            model="m",
            strategy="s",
            correct=q.kind == "unanswerable",
            refused=True,
        )
        for q in QUESTIONS
    ]
    summary = summarize_public(records)
    assert summary["answerable_refused"]["rate"] == 1.0
    assert summary["by_kind"]["unanswerable"]["rate"] == 1.0 and summary["by_kind"]["single"]["rate"] == 0.0
    assert summary["failures"] == {"answerable refused": sum(q.kind != "unanswerable" for q in QUESTIONS)}
