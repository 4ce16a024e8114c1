"""The ablation table and the report's question-kind slice, from hand-made records."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent import ToolDesign
from agent.tooldef import ToolVariant
from evaluation.ablation import BASELINE, ablation_names, ablation_table, design_of, markdown_table
from evaluation.records import EvalRecord, Outcome, ProtocolScores, Scores
from evaluation.report import build_report
from evaluation.report.tables import kind_table
from evaluation.runner import RESULTS_FILE
from fixtures.datasets.chains import ChainStep

TRUTH = {"collection_name": "Menus", "integer_property_aggregation": {"property_name": "price", "metrics": "MEAN"}}


def record(
    qid: str, answer_right: bool, *, design: str = "unified", chain: int = 0, abstain: bool = False, calls: int = 1
) -> EvalRecord:
    first = ProtocolScores(calls=1, exact_match=answer_right, routing=True)
    scores = Scores(first=first, final=first, answer=answer_right, calls_made=calls)
    if abstain:
        scores = Scores(abstained=answer_right, calls_made=0)
    steps = [ChainStep(call=TRUTH) for _ in range(chain)]
    return EvalRecord(
        id=qid,
        use_case="restaurants",
        query=f"question {qid}",
        complexity="abstain" if abstain else "simple",
        components=[],
        ground_truth=TRUTH,
        expected="abstain" if abstain else "call",
        chain=steps,
        model="m",
        tool_design=design,
        outcome=Outcome.OK,
        scores=scores,
    )


def test_each_ablation_changes_one_thing() -> None:
    base = ToolDesign()
    assert design_of(BASELINE, base) == base
    changed = {name: design_of(name, base) for name in ablation_names()[1:]}
    assert changed["rationale"].rationale and changed["parallel"].parallel_calls
    assert changed["per-collection"].variant is ToolVariant.PER_COLLECTION and changed["structured"].structured_output
    for design in changed.values():
        differing = [
            f
            for f in ("variant", "rationale", "parallel_calls", "structured_output")
            if getattr(design, f) != getattr(base, f)
        ]
        assert len(differing) == 1
    with pytest.raises(KeyError):
        design_of("temperature", base)


def test_the_table_pairs_every_ablation_with_the_baseline() -> None:
    ids = [f"q{i}" for i in range(20)]
    baseline = [record(q, True) for q in ids]
    # the same score with the baseline, but on other questions: equal rates, still compared pairwise
    shuffled = [record(q, i >= 2) for i, q in enumerate(ids)]
    worse = [record(q, i < 8, design="structured") for i, q in enumerate(ids)]
    rows = ablation_table({"structured": worse, BASELINE: baseline, "rationale": shuffled})
    assert [row.name for row in rows] == [BASELINE, "rationale", "structured"]
    assert rows[0].versus_baseline is None and rows[0].passed["rate"] == 1.0
    rationale, structured = rows[1].versus_baseline, rows[2].versus_baseline
    assert rationale is not None and structured is not None
    assert (rationale["only_a_passed"], rationale["only_b_passed"], rationale["outside_noise"]) == (2, 0, False)
    assert (structured["only_a_passed"], structured["outside_noise"]) == (12, True)
    assert rows[2].exact_match == 0.4 and rows[2].answer_accuracy == 0.4
    text = markdown_table(rows, "m")
    assert (
        "| Structured Generation | 20 | 40.0% |" in text and "outside the noise" in text and "within the noise" in text
    )


def test_a_design_the_endpoint_refuses_says_so_beside_its_verdict() -> None:
    """Every structured question once ended in HTTP 500 (llama-cpp-python refused json_schema) and the
    row read only "within the noise": model errors are counted and named in the verdict."""
    ids = [f"q{i}" for i in range(6)]
    refused = [record(q, False, design="structured").model_copy(update={"outcome": Outcome.MODEL_ERROR}) for q in ids]
    timed_out = record("q0", False, design="rationale").model_copy(update={"outcome": Outcome.TIMEOUT})
    rationale = [timed_out, *(record(q, True, design="rationale") for q in ids[1:])]
    runs = {BASELINE: [record(q, i < 2) for i, q in enumerate(ids)], "structured": refused, "rationale": rationale}
    rows = {row.name: row for row in ablation_table(runs)}
    assert (rows[BASELINE].model_errors, rows["rationale"].model_errors, rows["structured"].model_errors) == (0, 1, 6)
    text = markdown_table(list(rows.values()), "m")
    assert "within the noise; 6 of 6 ended in a model error |" in text and "; 1 of 6 ended" in text
    assert "baseline |" in text and "baseline;" not in text


def test_unanswerable_questions_stay_out_of_the_ablation_rows() -> None:
    rows = ablation_table({BASELINE: [record("q1", True), record("a1", False, abstain=True)]})
    assert rows[0].questions == 1 and rows[0].passed["rate"] == 1.0


def write_run(directory: Path, records: list[EvalRecord]) -> Path:
    directory.mkdir(parents=True)
    (directory / RESULTS_FILE).write_text("".join(r.model_dump_json() + "\n" for r in records))
    return directory


def test_the_report_slices_single_step_multi_step_and_unanswerable(tmp_path: Path) -> None:
    records = [
        record("s1", True),
        record("s2", True),
        record("m1", False, chain=2, calls=1),
        record("m2", True, chain=3, calls=3),
        record("a1", True, abstain=True),
    ]
    records[3].scores.citations, records[3].scores.citations_received, records[3].scores.citation_precision = 2, 1, 0.5
    report = build_report([write_run(tmp_path / "run", records)], tmp_path / "report")
    rows = {row["kind"]: row for row in report.table("kinds").rows}
    assert rows["single-step"]["pass_rate"] == 1.0 and rows["single-step"]["cases"] == 2
    assert rows["multi-step"]["pass_rate"] == 0.5 and rows["multi-step"]["calls"] == 2.0
    assert rows["multi-step"]["citing"] == 1 and rows["multi-step"]["citation_precision"] == 0.5
    assert rows["unanswerable"]["pass_rate"] == 1.0 and rows["unanswerable"]["answer_accuracy"] is None
    assert (tmp_path / "report" / "kinds.md").read_text().count("multi-step") == 1
    assert "By question kind" in (tmp_path / "report" / "index.html").read_text()
    assert kind_table([]).rows == []


def test_a_repeats_directory_reports_pass_at_1_pass_k_and_flaky_questions(tmp_path: Path) -> None:
    root = tmp_path / "qwen"
    write_run(root / "repeat-1", [record("q1", True), record("q2", True), record("q3", False)])
    write_run(root / "repeat-2", [record("q1", True), record("q2", False), record("q3", False)])
    write_run(root / "repeat-10", [record("q1", True), record("q2", True), record("q3", False)])
    other = write_run(tmp_path / "smol", [record("q1", False), record("q2", False), record("q3", False)])
    report = build_report([root, other], tmp_path / "report")
    assert sorted(run.name for run in report.runs) == ["qwen/repeat-1", "qwen/repeat-10", "qwen/repeat-2", "smol"]
    (row,) = report.table("repeats").rows
    assert (row["runs"], row["repeats"], row["questions"]) == ("qwen", 3, 3)
    assert row["pass_at_1"] == pytest.approx(5 / 9, abs=1e-6) and row["pass_k"] == pytest.approx(1 / 3, abs=1e-6)
    assert row["flaky"] == 1 and row["flaky_ids"] == "q2"
    assert row["pass_k_interval"] == "[6.1%, 79.2%]"  # Wilson of 1/3 by hand
    assert "Repeated runs" in (tmp_path / "report" / "index.html").read_text()
