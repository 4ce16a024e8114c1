"""What the commands really write validates against the committed JSON Schemas (docs/schemas).

The oracle's eval (one run and two repeats), its results lines, `score` with and without
`--execute`, `ask --json` against a scripted endpoint, `use-cases`, `load` and `audit-dataset`,
all through the real CLI on a live Weaviate.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from agent.models import is_commit_request
from agent.testing import MockOpenAIServer, Reply, call, text
from dbgorilla.schemas import SCHEMA_DIR
from tests.conftest import Stack, run_cli

pytestmark = pytest.mark.integration
IDS = ("--id", "restaurants-502", "--id", "restaurants-503", "--id", "restaurants-508")


def valid(name: str, instance: Any) -> None:
    schema = json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text())
    Draft202012Validator(schema).validate(instance)


def cli_json(stack: Stack, *args: str) -> Any:
    result = run_cli(*args, env=stack.env)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout)


def test_eval_and_score_outputs(restaurants_stack: Stack, tmp_path: Path) -> None:
    run = tmp_path / "run"
    summary = cli_json(restaurants_stack, "eval", "--model", "oracle", *IDS, "--out", str(run), "--json")
    valid("eval", summary)
    valid("score", json.loads((run / "summary.json").read_text()))
    lines = (run / "results.jsonl").read_text().splitlines()
    assert len(lines) == 3
    for line in lines:
        valid("results-record", json.loads(line))
    predictions = str(run / "results.jsonl")
    valid("score", cli_json(restaurants_stack, "score", "--predictions", predictions, "--json"))
    valid("score", cli_json(restaurants_stack, "score", "--predictions", predictions, "--execute", "--json"))

    repeated = tmp_path / "repeated"
    both = cli_json(
        restaurants_stack, "eval", "--model", "oracle", *IDS[:2], "--repeats", "2", "--out", str(repeated), "--json"
    )
    valid("eval", both)
    assert set(both) == {"repeats", "summaries"}
    valid("repeats", json.loads((repeated / "repeats.json").read_text()))


def test_ask_use_cases_load_and_audit_outputs(restaurants_stack: Stack, tmp_path: Path) -> None:
    gold = {
        "collection_name": "MenuItems",
        "integer_property_aggregation": {"property_name": "price", "metrics": "MEAN"},
    }

    def reply(body: dict[str, Any], _index: int) -> Reply:
        if is_commit_request(body.get("response_format")):  # the commit turn (agent.answer)
            return text(json.dumps({"numbers": [14], "names": [], "groups": {}, "cannot_answer": ""}))
        return (
            call("query_database", gold)
            if not any(m["role"] == "tool" for m in body["messages"])
            else text("About 14.")
        )

    with MockOpenAIServer(reply) as mock:
        trace = cli_json(
            restaurants_stack,
            *("ask", "What is the average price of menu items?", "--use-case", "restaurants"),
            *("--model", "mock", "--base-url", mock.base_url, "--json"),
        )
    valid("ask", trace)
    assert trace["outcome"] == "answered"
    valid("use-cases", cli_json(restaurants_stack, "use-cases", "--json"))
    valid("load", cli_json(restaurants_stack, "load", "--use-case", "restaurants", "--json"))

    natural = Path(__file__).resolve().parents[2] / "fixtures" / "data" / "splits" / "natural.jsonl"
    small = tmp_path / "small.jsonl"
    small.write_text("".join(line + "\n" for line in natural.read_text().splitlines() if '"restaurants-50' in line))
    result = run_cli("audit-dataset", str(small), "--json", env=restaurants_stack.env)
    assert result.returncode in (0, 1), result.stderr[-2000:]  # 1: a target missed on 9 questions, still a report
    valid("audit-dataset", json.loads(result.stdout))
