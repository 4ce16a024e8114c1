"""Abstention: the record type and its split, the grade of hand-written answers, and how it is
summarised beside (never inside) the scores of answerable questions."""

from __future__ import annotations

from collections import Counter

import pytest
from pydantic import ValidationError

from agent import OracleModel
from evaluation.records import EvalRecord, Outcome, ProtocolScores, Scores
from evaluation.refusal import grade_abstention, refuses
from evaluation.runner import oracle_for
from evaluation.scorer import Scorer
from evaluation.statistics import passed
from evaluation.summary import summarize
from executors import DatabaseSchema
from fixtures.datasets import AbstentionCase, evidence_issues, file_sha256, load_split, read_dataset, read_meta
from fixtures.datasets.splits import split_path
from llm import ChatRequest, ModelRequest, ToolDefinition

QUESTION = "What is the average calorie count of the menu items?"
SPLIT = read_dataset("abstention").abstentions


@pytest.mark.parametrize(
    "answer",
    [
        "The MenuItems collection has no calories property, so I cannot answer that.",
        "The database does not store calorie counts.",
        "Calorie information is not available in this database.",
        "I can't answer: the collection doesn't have calorie data.",
        "Menu items have no calorie data.",
        "There is no such property.",
        "To answer this, you need to add a `calories` property to the MenuItems collection.",
    ],
)
def test_saying_it_cannot_is_right(answer: str) -> None:
    verdict = grade_abstention(answer, QUESTION)
    assert verdict.correct is True and refuses(answer)


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("The average calorie count is 540.", "answers instead"),
        ("There are no menu items with calories.", "answers instead"),  # claims a count of zero
        ("I cannot be sure, but it is about 540 calories.", "states numbers the question did not (540)"),
        ("The calorie count is not stored; the average price is 12.5.", "(12.5)"),
        ("", "no answer"),
        (None, "no answer"),
    ],
)
def test_answering_guessing_or_saying_nothing_is_wrong(answer: str | None, reason: str) -> None:
    verdict = grade_abstention(answer, QUESTION)
    assert verdict.correct is False and reason in verdict.reason


def test_numbers_from_the_question_may_be_repeated() -> None:
    question = "How many doctors have a patient rating above 4.5?"
    assert grade_abstention("No property records a patient rating, so 4.5 cannot be checked.", question).correct


def test_a_question_needs_the_evidence_for_its_reason() -> None:
    base = {"id": "courses-899", "version": 1, "use_case": "courses", "query": "q", "collection": "Courses"}
    with pytest.raises(ValidationError):
        AbstentionCase(**base, reason="unknown_property")
    with pytest.raises(ValidationError):
        AbstentionCase(**base, reason="unsupported_metric", metric="mean", metric_property="credits")
    existing = AbstentionCase(**base, reason="unknown_property", missing_property="credit")
    assert evidence_issues(existing) == ["courses-899: Courses has a property 'credits'"]
    text = AbstentionCase(**base, reason="unsupported_metric", metric="variance", metric_property="subject")
    assert evidence_issues(text) == ["courses-899: Courses has no number property 'subject'"]


def test_the_split_has_four_questions_per_use_case_with_evidence() -> None:
    assert len(SPLIT) == 20 and len({c.id for c in SPLIT}) == 20
    assert Counter(c.use_case for c in SPLIT) == {name: 4 for name in {c.use_case for c in SPLIT}}
    assert Counter(c.reason for c in SPLIT) == {"unknown_property": 15, "unsupported_metric": 5}
    assert [issue for case in SPLIT for issue in evidence_issues(case)] == []
    assert load_split(split_path("abstention")) == []  # no answerable case hides in it
    meta = read_meta(split_path("abstention"))
    assert meta.records == 20 and meta.sha256 == file_sha256(split_path("abstention"))
    assert read_dataset().abstentions == []


def test_the_oracle_says_why_and_makes_no_call() -> None:
    request = ChatRequest(
        messages=[ModelRequest.user(SPLIT[0].query)],
        tools=[ToolDefinition(name="x", parameters={})],
        tool_choice="required",
    )
    reply = oracle_for(SPLIT[0]).complete(request)
    assert not reply.tool_calls and grade_abstention(reply.content, SPLIT[0].query).correct
    assert isinstance(oracle_for(SPLIT[0]), OracleModel)


def abstain_record(case: AbstentionCase, answer: str | None) -> EvalRecord:
    record = EvalRecord.for_case(case, model="m", tool_design="d", outcome=Outcome.NO_TOOL_CALL, final_answer=answer)
    return Scorer(lambda _record: DatabaseSchema()).score(record)


def test_scoring_reads_the_answer_and_runs_nothing() -> None:
    right = abstain_record(SPLIT[0], "The database does not have tuition fees.")
    wrong = abstain_record(SPLIT[1], "The average salary is 71,000.")
    assert right.expected == "abstain" and right.abstention_reason.startswith("unknown_property: ")
    assert right.scores.abstained is True and wrong.scores.abstained is False
    assert passed(right) and not passed(wrong)
    assert right.ground_truth_result is None and right.ground_truth_error is None


def answerable(case_id: str, answer: str, exact: bool) -> EvalRecord:
    scores = Scores(first=ProtocolScores(exact_match=exact), final=ProtocolScores(exact_match=exact))
    scores.refused = refuses(answer)
    return EvalRecord(
        id=case_id, use_case="courses", query="q", complexity="simple", components=[], ground_truth={},
        model="m", tool_design="d", outcome=Outcome.OK, final_answer=answer, scores=scores,
    )  # fmt: skip


def test_the_summary_keeps_abstention_apart() -> None:
    records = [
        answerable("courses-501", "There are 12.", True),
        answerable("courses-502", "I cannot answer that.", False),
        abstain_record(SPLIT[0], "Tuition fees are not stored."),
        abstain_record(SPLIT[3], "It is 1.2."),
    ]
    summary = summarize(records, executed_scoring=False)
    assert summary["cases"] == 4 and summary["answerable_cases"] == 2
    assert summary["protocols"]["first"]["exact_match"] == 0.5  # over the answerable two only
    abstention = summary["abstention"]
    assert abstention["cases"] == 2 and abstention["accuracy"]["rate"] == 0.5
    assert abstention["by_reason"] == {"unknown_property": 1.0, "unsupported_metric": 0.0}
    assert abstention["false_refusals"] == 1 and abstention["false_refusal_rate"] == 0.5
