"""The report over runs of a question file of the user's own collections: pass rates by shape with their
intervals, the calls' scores, and a second run paired with the first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from evaluation.public_calls import CallScores
from evaluation.public_run import RESULTS_FILE, PublicRecord
from evaluation.report.public import REPORT_JSON, REPORT_MD, is_public_run, public_report
from fixtures.authoring.own import _a, _mean_of
from fixtures.datasets.public import PublicQuestion


def _record(i: int, shape: str, correct: bool, exact: bool) -> PublicRecord:
    return PublicRecord(
        id=f"stones-{i:03d}",
        dataset="stones",
        kind="single",
        shape=shape,
        query=f"q{i}",
        collections=["Stones"],
        model="m",
        strategy="s",
        correct=correct,
        prompt_tokens=100,
        cached_tokens=40,
        completion_tokens=10,
        latency_s=float(i),
        call_scores=CallScores(exact_match=exact, ast_score=1.0 if exact else 0.5, execution_exact=exact),
    )


def _run(path: Path, records: list[PublicRecord]) -> Path:
    path.mkdir()
    (path / RESULTS_FILE).write_text("".join(r.model_dump_json() + "\n" for r in records))
    (path / "run.json").write_text(json.dumps({"model": "m", "strategy": "s"}))
    return path


def test_two_runs_read_per_shape_with_calls_and_a_paired_test(tmp_path: Path) -> None:
    first = _run(
        tmp_path / "a",
        [_record(1, "count", True, True), _record(2, "count", False, False), _record(3, "mean", True, True)],
    )
    second = _run(
        tmp_path / "b",
        [_record(1, "count", True, True), _record(2, "count", True, True), _record(3, "mean", False, True)],
    )
    assert is_public_run(first) and not is_public_run(tmp_path)
    payload = public_report([first, second], tmp_path / "out")
    a, b = (run["summary"] for run in payload["runs"])
    assert a["by_shape"]["count"]["n"] == 2 and a["by_shape"]["count"]["rate"] == 0.5
    assert b["by_shape"]["mean"]["rate"] == 0.0 and b["calls"]["execution_exact"]["rate"] == 1.0
    assert a["tokens_per_question"]["new_prompt"] == 60.0
    pair = payload["runs"][1]["paired_with_first"]
    assert pair["only_second"] == ["stones-002"] and pair["only_first"] == ["stones-003"]
    text = (tmp_path / "out" / REPORT_MD).read_text()
    assert "| shape count | 0.50 (1/2, " in text and "| shape mean | 1.00 (1/1, " in text
    assert "1 right only here, 1 only there" in text and (tmp_path / "out" / REPORT_JSON).is_file()


def test_a_question_the_data_cannot_answer_has_no_gold_call() -> None:
    line = {"id": "s-001", "dataset": "s", "collections": ["S"], "query": "q", "kind": "unanswerable"}
    assert PublicQuestion.model_validate(line).gold_calls == []
    with pytest.raises(ValidationError, match="no gold call"):
        PublicQuestion.model_validate(line | {"gold_calls": [{"call": {"collection_name": "S"}, "read": "count"}]})


def test_composed_wording_takes_its_article_and_says_mean_of_an_average() -> None:
    assert _a("average rating") == "an average rating" and _a("horsepower") == "a horsepower"
    assert _mean_of("averageRating") == "the mean average rating" and _mean_of("wind") == "the average wind"


def test_a_count_is_the_same_result_whether_listed_or_aggregated_and_another_count_is_not() -> None:
    from evaluation.public_calls import same_result
    from executors import QueryResult

    listed = QueryResult(collection="Stones", operator_class="filter", total_count=12)
    aggregated = QueryResult(
        collection="Stones",
        operator_class="aggregate",
        aggregations={"facets": {"COUNT": 12}},
        total_count=12,
    )
    other = aggregated.model_copy(update={"total_count": 13})
    assert same_result(listed, aggregated, "count") and not same_result(listed, other, "count")
    assert not same_result(listed, aggregated, "answer")  # rows and an aggregation are not the same rows
