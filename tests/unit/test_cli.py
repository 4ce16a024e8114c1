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
