"""Scores as evaluators: each score is one evaluator over a shared context, and the scorer, the summary
and the report take every score from the registry."""

from __future__ import annotations

from typing import Any

import pytest

from evaluation.evaluators import EVALUATORS, Evaluator, evaluate
from evaluation.formats import RunSummary
from evaluation.records import EvalRecord, ProtocolScores, Scores
from evaluation.report.tables import KIND_COLUMNS, LEADERBOARD_CAPTION, LEADERBOARD_COLUMNS, failure_reasons
from evaluation.summary import SUMMARY_KEYS, in_format_order, summarize
from tests.unit.test_eval_scoring import RIGHT, ROWS, WRONG, call, scorer, trajectory

#: Fields two evaluators write, on disjoint questions: the answer's grade and the abstention's.
SHARED = {"answer_reason", "answer_graded"}
ANSWERS = [None, "dish 0, dish 2 and dish 4", "I cannot answer that: there is no such field.", f"[{ROWS[0]['uuid']}]"]
#: A label with an answer key (a count), beside the listing `RIGHT` (which has none).
COUNT = {
    "collection_name": "Menus",
    "boolean_property_aggregation": {"property_name": "vegan", "metrics": "TOTAL_TRUE"},
}


def records() -> list[EvalRecord]:
    made = []
    for calls in ([call(0, RIGHT)], [call(0, WRONG), call(1, RIGHT)], [call(0, None, ok=False)], []):
        for answer in ANSWERS:
            for expected in ("call", "abstain"):
                made.append(trajectory(*calls).model_copy(update={"final_answer": answer, "expected": expected}))
    for answer in ("3", "4"):
        made.append(trajectory(call(0, COUNT)).model_copy(update={"ground_truth": COUNT, "final_answer": answer}))
    return made


def results_by_evaluator(record: EvalRecord) -> dict[str, dict[str, Any]]:
    ctx = scorer().context(record)
    return {each.name: dict(each.evaluate(ctx)) for each in EVALUATORS if each.scores(record)}


def test_every_score_has_one_evaluator() -> None:
    names = [each.name for each in EVALUATORS]
    assert len(set(names)) == len(names)
    assert {"arguments", "execution", "answer", "abstention", "citations", "trajectory"} <= set(names)
    written: dict[str, set[str]] = {}
    for record in records():
        for name, results in results_by_evaluator(record).items():
            for key, value in results.items():
                fields = {f"{key}.{inner}" for inner in value} if isinstance(value, dict) else {key}
                for field in fields:
                    written.setdefault(field, set()).add(name)
    protocol_fields = {f"{p}.{f}" for p in ("first", "final") for f in ProtocolScores.model_fields}
    assert set(written) == (set(Scores.model_fields) - {"first", "final"}) | protocol_fields
    assert {field for field, by in written.items() if len(by) > 1} == SHARED
    assert written["answer_reason"] == written["answer_graded"] == {"answer", "abstention"}


def test_the_scorer_keeps_the_merged_results() -> None:
    for record in records():
        assert scorer().score(record).scores == Scores.model_validate(evaluate(scorer().context(record)))


def test_the_summary_takes_each_score_from_its_evaluator_in_the_format_order() -> None:
    scored = [scorer().score(r) for r in records()]
    summary = summarize(scored)
    assert list(summary) == [key for key in SUMMARY_KEYS if key in summary]
    RunSummary.model_validate(summary)
    for each in EVALUATORS:
        answerable = [r for r in scored if r.expected == "call"]
        for key, value in {**each.summary(answerable, True), **each.overall(scored)}.items():
            assert summary[key] == value, (each.name, key)
    with pytest.raises(ValueError, match="new_score"):
        in_format_order({**summary, "new_score": 1.0})


def test_the_report_takes_its_columns_caption_and_reasons_from_the_evaluators() -> None:
    keys = [c.key for c in LEADERBOARD_COLUMNS]
    for each in EVALUATORS:
        assert all(c.key in keys for c in each.columns)
        assert all(c in KIND_COLUMNS for c in each.kind_columns)
        assert each.caption in LEADERBOARD_CAPTION
    wrong = scorer().score(trajectory(call(0, WRONG)))
    assert failure_reasons(wrong) == ["arguments differ", "results differ"]
    silent = scorer().score(trajectory().model_copy(update={"expected": "abstain"}))
    assert failure_reasons(silent) == ["did not say it cannot"]


def test_an_evaluator_must_say_what_it_evaluates() -> None:
    class Unfinished(Evaluator):
        name = "unfinished"

    with pytest.raises(TypeError):
        Unfinished()  # type: ignore[abstract]
