"""`dbgorilla judge` with a real local model (SmolLM2) as the judge, through llama-cpp-python's server.

Asserts the wiring, not the judge's taste: SmolLM2-135M ranks poorly, but each question must end
ranked or with its error recorded, and the endpoint must be asked in the form it accepts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dbgorilla.errors import ExitCode
from dbgorilla.local_models import TEST_MODEL
from evaluation.judge import JudgeLine
from tests.conftest import fresh_settings, run_cli, settings_env
from tests.unit.test_judge_cli import write_run

pytestmark = pytest.mark.model


def test_a_local_model_judges_two_questions(tmp_path: Path) -> None:
    env = settings_env(fresh_settings(tmp_path / "state"))
    dirs = [tmp_path / "run-good", tmp_path / "run-bad"]
    for directory in dirs:
        write_run(directory, directory.name)
    out = tmp_path / "judged"
    try:
        result = run_cli(
            "judge", *map(str, dirs), "--model", TEST_MODEL, "--limit", "2", "--out", str(out), env=env, timeout=300
        )
    finally:
        run_cli("model", "down", env=env)
    assert result.returncode in (ExitCode.OK, ExitCode.FAILURE), result.stderr  # FAILURE: none of the two parsed
    lines = [JudgeLine.model_validate_json(line) for line in (out / "judge.jsonl").read_text().splitlines()]
    assert len(lines) == 2
    for line in lines:
        assert line.reply is not None, line.error  # the endpoint answered (in the form it takes)
        assert (line.ranks is not None) != (line.error_kind == "parse")
    summary = json.loads((out / "judge.json").read_text())
    assert summary["response_format"] == "json_schema"  # our server takes OpenAI's form (`llm_server.forms`)
    assert summary["judged"] + summary["parse_errors"] == 2 and summary["endpoint_errors"] == 0
