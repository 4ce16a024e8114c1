"""`dbgorilla generate`: LLM proposals are checked, problems fed back, only good labels kept."""

from __future__ import annotations

import json
from pathlib import Path

from agent.testing import MockOpenAIServer, Reply, text
from fixtures import Case, get_use_case
from fixtures.authoring.generate import generate_records, parse_reply
from llm import OpenAIChatModel
from tests.conftest import fresh_settings, run_cli, settings_env

GOOD = {
    "query": "Find restaurants, grouped by cuisine.",
    "arguments": {"collection_name": "Restaurants", "groupby_property": "cuisine"},
}
WRONG_OPERATORS = {
    "query": "Find restaurants rated above 4, grouped by cuisine.",
    "arguments": {
        "collection_name": "Restaurants",
        "integer_property_filter": {"property_name": "averageRating", "operator": ">", "value": 4},
        "groupby_property": "cuisine",
    },
}
KEEPS_EVERYTHING = {
    "query": "What is the average rating of restaurants rated above 1?",
    "arguments": {
        "collection_name": "Restaurants",
        "integer_property_aggregation": {"property_name": "averageRating", "metrics": "MEAN"},
        "integer_property_filter": {"property_name": "averageRating", "operator": ">", "value": 1},
    },
}


def test_parse_reply_finds_json_in_prose() -> None:
    proposal = parse_reply("Sure! ```json\n" + json.dumps(GOOD) + "\n```")
    assert proposal.arguments.groupby_property == "cuisine"


def test_problems_are_fed_back_until_a_label_checks_out() -> None:
    script = [text("no json here"), text(json.dumps(WRONG_OPERATORS)), text(json.dumps(GOOD)), text("{}")]
    with MockOpenAIServer(script) as server:
        model = OpenAIChatModel("mock", base_url=server.base_url, api_key="x", max_retries=0, max_tokens=None)
        outcomes = list(generate_records(model, get_use_case("restaurants"), attempts=3, limit=2))
    first, second = outcomes
    assert first.attempts == 3 and isinstance(first.record, Case)
    assert first.record.ground_truth.to_tool_arguments() == GOOD["arguments"]
    assert second.record is None and second.attempts == 3, "an exhausted script fails every attempt"
    feedback = server.requests[2]["messages"][-1]["content"]
    assert "use exactly ['groupby_property']" in feedback
    assert "Data profile of Restaurants (100 objects)" in server.requests[0]["messages"][1]["content"]


def test_a_label_that_does_not_distinguish_is_rejected() -> None:
    script = lambda body, index: text(json.dumps(KEEPS_EVERYTHING))  # noqa: E731
    with MockOpenAIServer(script) as server:
        model = OpenAIChatModel("mock", base_url=server.base_url, api_key="x", max_retries=0, max_tokens=None)
        outcomes = list(generate_records(model, get_use_case("restaurants"), attempts=2, limit=11))
    rated = outcomes[9]  # (no search, integer filter, integer aggregation, no group-by) goes to Restaurants
    assert rated.combination == (False, "integer", "integer", False)
    assert rated.collection == "Restaurants" and rated.record is None
    assert any("keeps 100 of 100" in p for p in rated.problems)


def test_generate_command_writes_accepted_records(tmp_path: Path) -> None:
    output = tmp_path / "generated.jsonl"
    with MockOpenAIServer([text(json.dumps(GOOD))] + [Reply(status=400)] * 10) as server:
        env = settings_env(fresh_settings(tmp_path))
        args = ("generate", "-u", "restaurants", "--base-url", server.base_url, "--model", "m", "--limit", "2")
        result = run_cli(*args, "--attempts", "1", "--output", str(output), env=env)
    assert result.returncode == 0, result.stderr
    lines = output.read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["id"] == "restaurants-001"
    assert "accepted 1, rejected 1" in result.stdout
