"""Intervals, repeats and the paired test, against values computed by hand."""

from __future__ import annotations

import pytest

from evaluation.records import EvalRecord, Outcome, ProtocolScores, Scores
from evaluation.statistics import mcnemar_exact, paired_comparison, passed, repeat_summary, wilson


def record(case_id: str, answer: bool | None, execution: bool = False, use_case: str = "courses") -> EvalRecord:
    scores = Scores(answer=answer, final=ProtocolScores(execution_exact=execution))
    return EvalRecord(
        id=case_id, use_case=use_case, query="q", complexity="simple", components=[], ground_truth={},
        model="m", tool_design="d", outcome=Outcome.OK, scores=scores,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("successes", "trials", "low", "high"),
    [(0, 10, 0.0, 0.277533), (5, 10, 0.236590, 0.763410), (10, 10, 0.722467, 1.0), (15, 15, 0.796113, 1.0)],
)
def test_wilson_matches_the_textbook_values(successes: int, trials: int, low: float, high: float) -> None:
    interval = wilson(successes, trials)
    assert interval is not None
    assert interval[0] == pytest.approx(low, abs=1e-5) and interval[1] == pytest.approx(high, abs=1e-5)
    assert wilson(0, 0) is None


def test_mcnemar_exact_is_a_two_sided_binomial_on_the_discordant_pairs() -> None:
    assert mcnemar_exact(0, 6) == pytest.approx(2 / 64)
    assert mcnemar_exact(1, 1) == 1.0
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(2, 10) == pytest.approx(2 * (1 + 12 + 66) / 4096)


def test_a_question_passes_on_its_answer_or_without_a_key_on_execution() -> None:
    assert passed(record("a-001", True)) and not passed(record("a-001", False, execution=True))
    assert passed(record("a-001", None, execution=True)) and not passed(record("a-001", None))


def test_repeats_give_pass_at_1_pass_hat_k_and_the_flaky_questions() -> None:
    runs = [
        [record("a-001", True), record("a-002", True), record("a-003", False)],
        [record("a-001", True), record("a-002", False), record("a-003", False)],
        [record("a-001", True), record("a-002", True), record("a-003", False)],
    ]
    summary = repeat_summary(runs)
    assert summary["pass@1"] == pytest.approx(5 / 9, abs=1e-6)
    assert summary["pass^k"]["rate"] == pytest.approx(1 / 3, abs=1e-6)
    assert summary["flaky"] == ["a-002"]
    assert [run["rate"] for run in summary["runs"]] == pytest.approx([2 / 3, 1 / 3, 2 / 3], abs=1e-6)


def test_the_paired_comparison_counts_only_shared_questions() -> None:
    a = [record(f"a-{i:03d}", True) for i in range(8)] + [record("a-100", True)]
    b = [record(f"a-{i:03d}", i < 1) for i in range(8)]
    paired = paired_comparison(a, b)
    assert paired["shared"] == 8 and paired["only_a_passed"] == 7 and paired["only_b_passed"] == 0
    assert paired["p_value"] == pytest.approx(2 / 128, abs=1e-6) and paired["outside_noise"]
    assert not paired_comparison(a, a)["outside_noise"]


def test_a_vacuous_truth_without_a_key_passes_on_the_exact_call_not_on_rows() -> None:
    vacuous = record("a-001", None, execution=True)
    vacuous.scores.ground_truth_vacuous = "all_objects"
    assert not passed(vacuous)
    vacuous.scores.final.exact_match = True
    assert passed(vacuous)
