"""Questions the tool cannot answer, through the real CLI on live Weaviate data: the oracle says so
and passes; a model that answers anyway fails; one that queries first and then says so passes."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from agent.testing import MockOpenAIServer, Reply, call, text
from dbgorilla.connection import connect
from evaluation.records import EvalRecord
from fixtures.datasets import read_dataset
from fixtures.datasets.splits import split_path
from fixtures.loader import load_use_cases
from tests.conftest import Stack, run_cli

pytestmark = pytest.mark.integration
RESTAURANTS = [c for c in read_dataset("abstention").abstentions if c.use_case == "restaurants"]


@pytest.fixture(scope="module")
def loaded(weaviate_stack: Stack) -> Stack:
    with connect(weaviate_stack.settings) as client:
        assert load_use_cases(client).ok
    return weaviate_stack


def eval_json(stack: Stack, out: Path, *args: str) -> tuple[dict[str, Any], str]:
    result = run_cli(
        "eval", "--dataset", "abstention", "--use-case", "restaurants", "--out", str(out), "--json", *args,
        env=stack.env,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout), result.stderr


def records_of(out: Path) -> dict[str, EvalRecord]:
    lines = (out / "results.jsonl").read_text().splitlines()
    return {r.id: r for r in (EvalRecord.model_validate_json(line) for line in lines)}


def test_the_oracle_says_it_cannot_on_every_question(loaded: Stack, tmp_path: Path) -> None:
    summary, progress = eval_json(loaded, tmp_path, "--model", "oracle")
    last = [line for line in progress.splitlines() if line.startswith("eval 4/4 ")]
    assert len(last) == 1 and last[0].endswith("said it cannot 4/4"), progress
    assert summary["cases"] == len(RESTAURANTS) == 4 and summary["answerable_cases"] == 0
    abstention = summary["abstention"]
    assert abstention["accuracy"]["rate"] == 1.0 and abstention["without_a_call"] == 4
    assert abstention["by_reason"] == {"unknown_property": 1.0, "unsupported_metric": 1.0}
    assert summary["pass"]["rate"] == 1.0
    records = records_of(tmp_path)
    assert all(r.expected == "abstain" and r.scores.abstained for r in records.values())
    report = run_cli("report", str(tmp_path), "--out", str(tmp_path / "report"), env=loaded.env)
    assert report.returncode == 0, report.stderr
    board = list(csv.DictReader((tmp_path / "report" / "leaderboard.csv").read_text().splitlines()))
    assert [row["abstained"] for row in board] == ["1.0"], board


def test_answering_anyway_fails_and_saying_so_after_a_call_passes(loaded: Stack, tmp_path: Path) -> None:
    """The model queries the collection on every question; on two it then invents an answer."""
    inventing = {RESTAURANTS[0].query, RESTAURANTS[3].query}

    def script(body: dict[str, Any], index: int) -> Reply:
        question = next(m["content"] for m in body["messages"] if m["role"] == "user")
        case = next(c for c in RESTAURANTS if c.query == question)
        if not any(m["role"] == "tool" for m in body["messages"]):
            return call("query_database", {"collection_name": case.collection})
        if question in inventing:
            return text("Based on the results, it is 412.")
        return text(f"The {case.collection} collection does not store that, so I cannot answer.")

    with MockOpenAIServer(script) as server:
        # the mock answers by the question's own text: no examples before it, and no check (which refuses some
        # of these questions with no call, as it should: "the average calorie count", which nothing holds)
        args = ("--base-url", server.base_url, "--model", "mock-model", "--strategy", "grounded")
        summary, _ = eval_json(loaded, tmp_path, *args)
    assert summary["abstention"]["accuracy"]["rate"] == 0.5 and summary["abstention"]["without_a_call"] == 0
    records = records_of(tmp_path)
    wrong = {r.id for r in records.values() if not r.scores.abstained}
    assert wrong == {RESTAURANTS[0].id, RESTAURANTS[3].id}
    assert all("answers instead" in (records[i].scores.answer_reason or "") for i in wrong)


def test_the_audit_checks_evidence_and_probes(loaded: Stack) -> None:
    result = run_cli("audit-dataset", str(split_path("abstention")), "--json", env=loaded.env)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["ok"] is True and report["questions"] == 20 and report["issues"] == []
    assert report["probes"]["gold"] == 1.0
    assert {k: v for k, v in report["probes"].items() if k != "gold"} == {
        "collection_count": 0.0,
        "hedge": 0.0,
        "nearest_value": 0.0,
        "nothing": 0.0,
    }


def test_the_audit_fails_a_question_whose_property_exists(loaded: Stack, tmp_path: Path) -> None:
    broken = RESTAURANTS[0].model_copy(update={"missing_property": "price"})
    path = tmp_path / "broken.jsonl"
    path.write_text(broken.to_json_line() + "\n")
    result = run_cli("audit-dataset", str(path), "--json", env=loaded.env)
    assert result.returncode == 1
    issues = json.loads(result.stdout)["issues"]
    assert any("has a property 'price'" in issue for issue in issues)
    assert any("a call that needs what the question needs ran" in issue for issue in issues)
