"""Trajectory labels, read off hand-made records: how a question got to its verdict."""

from __future__ import annotations

from typing import Any

import pytest

from evaluation.evaluators.trajectory import redundant_calls, trajectory, trajectory_summary
from evaluation.records import EvalRecord, Outcome, PredictedCall, Scores
from evaluation.summary import summarize

LISTING = {"collection_name": "Courses"}
COUNT = {"collection_name": "Courses", "integer_property_aggregation": {"property_name": "credits", "metrics": "COUNT"}}


def call(arguments: dict[str, Any] | None, ok: bool = True) -> PredictedCall:
    return PredictedCall(tool_name="query_database", raw_arguments="{}", arguments=arguments, ok=ok,
                         error_code=None if ok else "unknown_property")  # fmt: skip


def record(calls: list[PredictedCall], answer: str | None, right: bool, outcome: Outcome = Outcome.OK) -> EvalRecord:
    return EvalRecord(
        id="courses-501", use_case="courses", query="q", complexity="simple", components=[], ground_truth={},
        model="m", tool_design="d", outcome=outcome, predicted_calls=calls, final_answer=answer,
        scores=Scores(answer=right),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("calls", "answer", "right", "label"),
    [
        ([call(COUNT)], "There are 100.", True, "right at once"),
        ([call(None, ok=False), call(COUNT)], "There are 100.", True, "right after failed calls"),
        ([call(COUNT)], "There are 7.", False, "wrong"),
        ([call(None, ok=False), call(LISTING)], "There are 7.", False, "wrong after failed calls"),
        ([call(None, ok=False), call(None, ok=False)], "I could not query it.", False, "every call failed"),
        ([], "There are 7.", False, "no call"),
        ([call(COUNT), call(LISTING)], None, False, "no answer"),  # ran out of steps
    ],
)
def test_each_path_has_its_label(calls: list[PredictedCall], answer: str | None, right: bool, label: str) -> None:
    assert trajectory(record(calls, answer, right)) == label


def test_a_failed_model_is_no_answer_and_an_abstention_without_a_call_is_right() -> None:
    assert trajectory(record([], None, False, Outcome.MODEL_ERROR)) == "no answer"
    abstained = record([], "The database cannot answer this.", False).model_copy(
        update={"expected": "abstain", "scores": Scores(abstained=True)}
    )
    assert trajectory(abstained) == "right without a call"


def test_repeated_calls_are_counted_and_summarised() -> None:
    looping = record([call(COUNT), call(COUNT), call(LISTING), call(COUNT)], "There are 100.", True)
    assert redundant_calls(looping) == 2
    summary = trajectory_summary([looping, record([call(None, ok=False), call(COUNT)], "100", True)])
    assert summary["counts"] == {"right at once": 1, "right after failed calls": 1}
    assert summary["failed_calls_per_question"] == 0.5 and summary["redundant_calls_per_question"] == 1.0
    assert summarize([looping], executed_scoring=False)["trajectories"]["counts"] == {"right at once": 1}
