"""The CLI's surface: help, usage errors and the meaning of its exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dbgorilla.errors import ExitCode
from tests.conftest import fresh_settings, run_cli, settings_env


@pytest.fixture()
def env(tmp_path: Path) -> dict[str, str]:
    return settings_env(fresh_settings(tmp_path))


def test_help_lists_the_subcommands(env: dict[str, str]) -> None:
    result = run_cli("--help", env=env)
    assert result.returncode == 0
    for command in ("up", "down", "status", "model", "setup", "smoke"):
        assert command in result.stdout


def test_unknown_command_is_a_usage_error(env: dict[str, str]) -> None:
    assert run_cli("frobnicate", env=env).returncode == ExitCode.USAGE


def test_status_of_nothing_is_not_running(env: dict[str, str]) -> None:
    result = run_cli("status", "--json", env=env)
    assert result.returncode == ExitCode.NOT_RUNNING
    payload = json.loads(result.stdout)
    assert payload["ready"] is False and payload["weaviate"]["state"] == "stopped"


def test_unknown_backend_is_a_config_error(env: dict[str, str]) -> None:
    result = run_cli("up", "--backend", "cloud9", env=env)
    assert result.returncode == ExitCode.CONFIG
    assert "unknown backend" in result.stderr


def test_url_backend_needs_weaviate_url(env: dict[str, str]) -> None:
    result = run_cli("up", "--backend", "url", env=env)
    assert result.returncode == ExitCode.CONFIG
    assert "WEAVIATE_URL" in result.stderr


def test_url_backend_reports_an_unreachable_server(env: dict[str, str]) -> None:
    env = {**env, "WEAVIATE_URL": "http://127.0.0.1:9"}
    result = run_cli("up", "--backend", "url", env=env)
    assert result.returncode == ExitCode.TIMEOUT
    assert "not ready" in result.stderr


def test_model_down_when_nothing_runs(env: dict[str, str]) -> None:
    assert run_cli("model", "status", env=env).returncode == ExitCode.NOT_RUNNING
    assert run_cli("model", "up", "--model", "gpt-17", env=env).returncode == ExitCode.CONFIG
    bad = run_cli("model", "up", "--strategy", "nope", env=env)
    assert bad.returncode == ExitCode.CONFIG and "unknown strategy nope" in bad.stderr
    assert run_cli("model", "status", env=env).returncode == ExitCode.NOT_RUNNING, "nothing was started"


def test_eval_against_a_closed_port_fails_as_infrastructure_before_any_case(
    env: dict[str, str], tmp_path: Path
) -> None:
    """No endpoint there: exit 11 with the endpoint named, not a report of zeros with exit 0."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    out = tmp_path / "run"
    result = run_cli(
        "eval", "--model", "any", "--base-url", f"http://127.0.0.1:{closed}/v1", "--max-retries", "0",
        "--out", str(out), env=env, timeout=120,
    )  # fmt: skip
    assert result.returncode == ExitCode.INFRASTRUCTURE, result.stderr
    assert f"127.0.0.1:{closed}" in result.stderr and "did not answer one token" in result.stderr
    assert "Traceback" not in result.stderr
    results = out / "results.jsonl"
    assert not results.exists() or results.read_text() == ""
