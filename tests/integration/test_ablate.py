"""`dbgorilla ablate` through the real CLI on live data: every design on the same questions, one table.

The oracle must pass under every tool design (the machinery is sound); a scripted model that is
perfect with native tool calls and says nothing useful under structured output must come out
worse, outside the noise, while a design it handles the same stays within it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent.testing import MockOpenAIServer, Reply, call, text
from fixtures.datasets import load_split
from tests.conftest import Stack, restaurant_truths, run_cli

pytestmark = pytest.mark.integration
RESTAURANTS = [r for r in load_split() if r.use_case == "restaurants"]
TRUTH_BY_QUERY = restaurant_truths()


def test_the_oracle_passes_under_every_tool_design(restaurants_stack: Stack, tmp_path: Path) -> None:
    args = ["ablate", "--model", "oracle", "--use-case", "restaurants", "--limit", "0", "--out", str(tmp_path)]
    result = run_cli(*args, env=restaurants_stack.env)
    assert result.returncode == 0, result.stderr
    table = json.loads((tmp_path / "ablation.json").read_text())
    rows = {row["name"]: row for row in table["rows"]}
    assert list(rows) == ["original", "rationale", "parallel", "per-collection", "structured"]
    for name, row in rows.items():
        assert row["questions"] == len(RESTAURANTS), name
        assert row["exact_match"] == 1.0 and row["passed"]["rate"] == 1.0, name
        if name != "original":
            assert row["versus_baseline"]["outside_noise"] is False, name
    assert {row["tool_design"] for row in rows.values()} == {
        "unified",
        "unified+rationale",
        "unified+parallel",
        "per-collection",
        "unified+structured",
    }
    assert "| Structured Generation | 63 | 100.0% |" in (tmp_path / "ablation.md").read_text()
    report = run_cli(
        "report", *(str(tmp_path / name) for name in rows), "--out", str(tmp_path / "report"), env=restaurants_stack.env
    )
    assert report.returncode == 0, report.stderr


def native_only(body: dict[str, Any], index: int) -> Reply:
    """Perfect with native tool calls; under structured output it answers without querying."""
    if body.get("response_format"):
        return text(json.dumps({"use_tools": False, "response": "I could not say."}))
    question = next(m["content"] for m in body["messages"] if m["role"] == "user")
    if any(m["role"] == "tool" for m in body["messages"]):
        return text("Here is what the query returned.")
    return call("query_database", TRUTH_BY_QUERY[question])


def test_a_design_the_model_fails_is_outside_the_noise(restaurants_stack: Stack, tmp_path: Path) -> None:
    with MockOpenAIServer(native_only) as server:
        args = ["ablate", "--model", "mock-model", "--base-url", server.base_url, "--ablation", "parallel"]
        args += ["--ablation", "structured", "--use-case", "restaurants", "--limit", "0", "--out", str(tmp_path)]
        result = run_cli(*args, env=restaurants_stack.env | {"OPENAI_API_KEY": "test"})
    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row for row in json.loads((tmp_path / "ablation.json").read_text())["rows"]}
    assert list(rows) == ["original", "parallel", "structured"]
    original, parallel, structured = rows["original"], rows["parallel"], rows["structured"]
    assert original["exact_match"] == 1.0 and structured["exact_match"] == 0.0
    # the answer text states nothing, so only listings (no answer key) pass, on their rows
    assert 0 < original["passed"]["rate"] < 1
    assert parallel["passed"]["rate"] == original["passed"]["rate"]
    assert parallel["versus_baseline"]["outside_noise"] is False
    assert structured["passed"]["rate"] == 0.0 and structured["versus_baseline"]["outside_noise"] is True
    assert structured["versus_baseline"]["only_a_passed"] == round(original["passed"]["rate"] * len(RESTAURANTS))
    assert "outside the noise" in result.stdout and "within the noise" in result.stdout
