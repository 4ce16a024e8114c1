"""The pure parts of benchmarks/cost_growth.py: its percentiles and the table it commits (no timing here)."""

from __future__ import annotations

import os

import pytest

from benchmarks.cost_growth import SizeRow, markdown_table, percentile, rss_mib


def test_percentiles_interpolate_between_ranks() -> None:
    assert percentile([], 50) is None
    assert percentile([7.0], 90) == 7.0
    assert percentile([4.0, 1.0, 3.0, 2.0], 50) == pytest.approx(2.5)
    assert percentile([float(i) for i in range(1, 11)], 90) == pytest.approx(9.1)
    assert percentile([1.0, 2.0, 3.0], 0) == 1.0 and percentile([1.0, 2.0, 3.0], 100) == 3.0


def test_the_table_has_one_row_per_size_and_says_n_a_for_what_was_not_measured() -> None:
    measured = SizeRow(
        size=1000, objects=3000, encoder_per_s=250.0, load_s=40.0, load_per_s=75.0, audit_s=25.0,
        audit={"executed": 62, "queries": 63, "unstable": [{"id": "x"}], "ties": []},
        query_p50_ms=12.34, query_p90_ms=30.0, eval_questions=3, eval_p50_s=60.0, eval_mean_s=70.0,
        memory_mib={"weaviate": {"before": 300.0, "after": 420.0, "peak": 500.0},
                    "embedder": {"before": 290.0, "after": 300.0, "peak": 310.0}},
    )  # fmt: skip
    lines = markdown_table([measured, SizeRow(size=100)]).splitlines()
    assert len(lines) == 4 and lines[0].count("|") == lines[1].count("|") == lines[2].count("|")
    assert "| 1,000 | 3,000 | 40.0 | 75.0 | 250.0 | 30% | 25.0 | 62/63 / 1 / 0 | 12.3 | 30.0 |" in lines[2]
    assert "300 → 420, 500" in lines[2] and "| 300, 310 |" in lines[2]
    assert lines[3].startswith("| 100 | 0 | n/a |")


def test_rss_is_read_for_a_live_process_and_none_for_a_gone_one() -> None:
    mine = rss_mib(os.getpid())
    assert mine is not None and mine > 1
    assert rss_mib(2**22 + 12345) is None
