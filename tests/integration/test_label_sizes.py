"""Labels that hold at 1,000 objects per collection (issue 38): the audit of the restaurants questions
reports no tie and exits 0, and the oracle still scores 1.000 on every question scored there.

At that size 17 of the 63 restaurants questions of the natural split had an object within 0.001 of
the 0.65 cut; each search question now runs at its own cut on the loaded data
(`evaluation.search_cut`). One use case, in a namespace of its own, dropped afterwards.

restaurants-545's TOP_OCCURRENCES ties at 1,000 at every cut (three occasions occur 3 times each
among the confirmed reservations), a tie of the question, not of the cut: it is unstable at this
size (`evaluation.search_cut`), listed apart, not scored and not held against the audit. The test
pins it, so a new tie or a new unstable question fails here.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dbgorilla.connection import connect
from evaluation.audit import audit_dataset
from evaluation.audit.report import SizeMismatch
from fixtures.loader import drop_use_cases, load_use_cases
from fixtures.use_cases import get_use_cases
from tests.conftest import run_cli

pytestmark = [pytest.mark.integration, pytest.mark.slow]
SIZE = 1000
#: Questions whose own TOP_OCCURRENCES tie at this size (no cut avoids it): unstable here, not scored.
KNOWN_UNSTABLE = ["restaurants-545"]
NAMESPACE = "Size1k"
USE_CASE = "restaurants"


@pytest.fixture(scope="module")
def loaded(weaviate_stack: Any) -> Iterator[Any]:
    """The restaurants use case at 1,000 objects per collection in its own namespace, dropped after."""
    with connect(weaviate_stack.settings) as client:
        started = time.perf_counter()
        report = load_use_cases(client, [USE_CASE], SIZE, namespace=NAMESPACE)
        assert report.ok, report.model_dump_json()[:500]
        print(f"loaded {USE_CASE} at {SIZE} per collection in {time.perf_counter() - started:.0f}s")
        try:
            yield weaviate_stack
        finally:
            drop_use_cases(client, [u for u in get_use_cases() if u.name == USE_CASE], namespace=NAMESPACE)


def test_the_audit_at_1000_objects_has_no_tie_and_exits_0(loaded: Any) -> None:
    args = ("audit-dataset", "--use-case", USE_CASE, "--namespace", NAMESPACE)
    result = run_cli(*args, "--objects-per-collection", str(SIZE), "--json", env=loaded.env)
    report = json.loads(result.stdout)
    assert report["use_cases"] == [USE_CASE] and report["queries"] == 63
    assert report["executed"] == 63 - len(KNOWN_UNSTABLE)  # the unstable one is not audited further
    assert set(report["objects_per_collection"].values()) == {SIZE}
    assert [u["id"] for u in report["unstable"]] == KNOWN_UNSTABLE
    assert "TOP_OCCURRENCES ties at the limit" in report["unstable"][0]["detail"]
    assert report["ties"] == []  # neither of TOP_OCCURRENCES nor at a search cut
    assert report["execution_errors"] == 0 and report["non_vacuous_rate"] >= 0.95
    assert report["mutation_sensitivity"] >= 0.90 and report["by_component"]["search"]["sensitivity"] == 1.0
    assert report["failed_targets"] == [] and result.returncode == 0, report["failed_targets"]
    # the cut had to move for some questions at this size (the 17 ties of issue 38), and only a little
    assert report["search_cuts"], "no cut moved: the test no longer exercises the size it is about"
    assert all(abs(cut - 0.65) <= 0.05 for cut in report["search_cuts"].values())


def test_the_oracle_scores_everything_at_1000_objects(loaded: Any, tmp_path: Path) -> None:
    args = ("eval", "--model", "oracle", "--use-case", USE_CASE, "--namespace", NAMESPACE, "--limit", "0", "--json")
    result = run_cli(*args, "--out", str(tmp_path), env=loaded.env)
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(result.stdout)
    final = summary["protocols"]["final"]
    assert final["execution_match_exact"] == 1.0 and summary["ground_truth_errors"] == 0
    assert summary["cases"] == 63 and summary["unstable"] == KNOWN_UNSTABLE
    # the unstable question is neither passed nor failed: out of the pass rate, counted beside it
    assert summary["pass"]["rate"] == 1.0 and summary["pass"]["n"] == 62 and summary["pass"]["unstable"] == 1
    assert summary["moved_search_cuts"] > 0
    records = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    moved = [r for r in records if r["search_cut"] and r["search_cut"]["value"] != r["search_cut"]["default"]]
    assert len(moved) == summary["moved_search_cuts"]  # each record says the cut it was scored at


def test_an_audit_of_another_size_than_loaded_is_refused(loaded: Any) -> None:
    with connect(loaded.settings) as client, pytest.raises(SizeMismatch, match="asked to audit 100 objects"):
        audit_dataset(client, use_cases=[USE_CASE], namespace=NAMESPACE, objects_per_collection=100)
