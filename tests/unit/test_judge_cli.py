"""`dbgorilla judge` end to end: hand-made run directories, the real CLI in a subprocess, and a real
HTTP OpenAI-compatible mock judge (one malformed reply, and an endpoint that refuses `json_schema`
as llama-cpp-python's server does). No Weaviate needed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agent.testing import MockOpenAIServer, Reply
from dbgorilla.errors import ExitCode
from evaluation.judge import JudgeLine
from evaluation.records import EvalRecord, Outcome, PredictedCall
from tests.conftest import fresh_settings, run_cli, settings_env

#: Each run's prediction, recognisable in the prompt by its search query.
RUNS = {
    "run-good": ("Courses", "relational databases", True),
    "run-mid": ("Courses", "data", True),
    "run-bad": ("Instructors", "databases", False),
}
RANK_BY_SEARCH = {"relational databases": 1, "data": 2, "databases": 3}
QUESTIONS = ["courses-1", "courses-2", "courses-3", "courses-4"]
MALFORMED = "courses-3"


def write_run(directory: Path, name: str) -> None:
    collection, search, ok = RUNS[name]
    directory.mkdir(parents=True)
    lines = []
    for question in QUESTIONS:
        arguments = {"collection_name": collection, "search_query": search}
        call = PredictedCall(
            tool_name="query_database", raw_arguments=json.dumps(arguments), arguments=arguments, ok=ok,
            error_code=None if ok else "unknown_property", error_message=None if ok else "no such property",
        )  # fmt: skip
        record = EvalRecord(
            id=question, use_case="courses", query=f"Which courses teach databases? ({question})",
            complexity="simple", components=["search"], ground_truth={"collection_name": "Courses"},
            model=f"{name}-model", tool_design="unified", predicted_calls=[call], final_answer=f"Found {search}.",
            outcome=Outcome.OK,
        )  # fmt: skip
        lines.append(record.model_dump_json())
    (directory / "results.jsonl").write_text("\n".join(lines) + "\n")
    (directory / "run.json").write_text(json.dumps({"model": f"{name}-model"}))


def scripted_judge(body: dict[str, Any], index: int) -> Reply:
    """Refuse `json_schema` (HTTP 422); rank by the search query each label shows; garble one question."""
    if body.get("response_format", {}).get("type") == "json_schema":
        return Reply(status=422, error_message="response_format.type: Input should be 'text' or 'json_object'")
    prompt = body["messages"][1]["content"]
    if f"({MALFORMED})" in prompt:
        return Reply(content="The first one is best, I think.")
    shown = re.findall(r"Prediction (\w+)\n- call 1, (?:ran|failed \([^)]*\)): (\{.*\})", prompt)
    ranking = [{"label": label, "rank": RANK_BY_SEARCH[json.loads(call)["search_query"]]} for label, call in shown]
    reply = {"explanation": "The most specific search wins.", "ranking": ranking}
    return Reply(content=f"```json\n{json.dumps(reply)}\n```")


@pytest.fixture()
def env(tmp_path: Path) -> dict[str, str]:
    return settings_env(fresh_settings(tmp_path / "state"))


def test_judge_scores_three_runs_and_records_the_malformed_reply(tmp_path: Path, env: dict[str, str]) -> None:
    dirs = [tmp_path / name for name in RUNS]
    for directory in dirs:
        write_run(directory, directory.name)
    out = tmp_path / "judged"
    with MockOpenAIServer(scripted_judge, model="mock-judge") as server:
        result = run_cli(
            "judge", *map(str, dirs), "--model", "mock-judge", "--base-url", server.base_url,
            "--out", str(out), "--seed", "5", env=env, timeout=120,
        )  # fmt: skip
    assert result.returncode == 0, result.stderr

    summary = json.loads((out / "judge.json").read_text())
    scores = {run["run"]: run for run in summary["runs"]}
    assert [run["run"] for run in summary["runs"]] == ["run-good", "run-mid", "run-bad"]
    assert scores["run-good"]["weighted_score"] == 300 and scores["run-good"]["ranked_first_share"] == 1.0
    assert scores["run-mid"]["weighted_score"] == 210 and scores["run-mid"]["mean_score"] == 70.0
    assert scores["run-bad"]["weighted_score"] == 150 and scores["run-bad"]["ranked_first"] == 0
    assert all(run["judged"] == 3 and run["errors"] == 1 for run in summary["runs"])
    assert (summary["questions"], summary["judged"], summary["parse_errors"]) == (4, 3, 1)
    assert summary["judge_model"] == "mock-judge" and summary["seed"] == 5
    assert summary["response_format"] == "json_object"

    lines = [JudgeLine.model_validate_json(line) for line in (out / "judge.jsonl").read_text().splitlines()]
    assert [line.id for line in lines] == QUESTIONS
    garbled = lines[QUESTIONS.index(MALFORMED)]
    assert garbled.error_kind == "parse" and garbled.reply == "The first one is best, I think."
    assert garbled.ranks is None and "no JSON object" in (garbled.error or "") and garbled.messages
    assert all(line.ranks and line.explanation for line in lines if line.id != MALFORMED)

    # json_schema was refused once, then json_object asked for every time; no run or model name sent.
    kinds = [request.get("response_format", {}).get("type") for request in server.requests]
    assert kinds == ["json_schema", *["json_object"] * 4]
    sent = json.dumps(server.requests)
    assert not any(name in sent for name in (*RUNS, "-model"))
    assert all(request["temperature"] == 0 and request["seed"] == 5 for request in server.requests)
    assert "run-good" in result.stdout and "300" in result.stdout and "100.0%" in result.stdout
    bias = f"ranked 1st in {summary['first_label_ranked_first']} of 3 questions (1.0 by chance)"
    assert bias in result.stderr and summary["first_label_expected"] == 1.0


def test_fewer_than_two_runs_is_a_usage_error(tmp_path: Path, env: dict[str, str]) -> None:
    write_run(tmp_path / "run-good", "run-good")
    result = run_cli(
        "judge", str(tmp_path / "run-good"), "--model", "m", "--base-url", "http://127.0.0.1:9/v1", env=env
    )
    assert result.returncode == ExitCode.USAGE
    assert "at least two runs" in result.stderr


def test_a_missing_run_directory_is_a_config_error(tmp_path: Path, env: dict[str, str]) -> None:
    write_run(tmp_path / "run-good", "run-good")
    result = run_cli("judge", str(tmp_path / "run-good"), str(tmp_path / "nope"), "--base-url", "http://x/v1", env=env)
    assert result.returncode == ExitCode.CONFIG
    assert "run directory not found" in result.stderr


def test_an_id_not_every_run_answered_fails_before_any_model_starts(tmp_path: Path, env: dict[str, str]) -> None:
    for name in ("run-good", "run-bad"):
        write_run(tmp_path / name, name)
    dirs = [str(tmp_path / "run-good"), str(tmp_path / "run-bad")]
    result = run_cli("judge", *dirs, "--id", "courses-99", env=env)  # no --model: the local server would start
    assert result.returncode == ExitCode.CONFIG
    assert "not answered by every run: courses-99" in result.stderr
