"""The url backend against a real server: the path users take to a cluster or Weaviate Cloud."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Stack, fresh_settings, run_cli, settings_env

pytestmark = pytest.mark.integration


def test_url_backend_connects_to_an_existing_weaviate(weaviate_stack: Stack, tmp_path) -> None:  # type: ignore[no-untyped-def]
    env = {**settings_env(fresh_settings(tmp_path)), "WEAVIATE_URL": weaviate_stack.settings.weaviate_http_url}
    env["WEAVIATE_GRPC_PORT"] = str(weaviate_stack.settings.ports.weaviate_grpc)
    up = run_cli("up", "--json", env=env)  # auto picks url because WEAVIATE_URL is set
    assert up.returncode == 0, up.stderr
    assert json.loads(up.stdout)["backend"] == "url"
    smoke = run_cli("smoke", "--json", env=env)
    assert smoke.returncode == 0, smoke.stderr
    queries = json.loads(smoke.stdout)["queries"]
    assert queries["bm25 'sushi'"][0] == "Sakura Bar"
    assert queries["aggregate group_by open_late"] == {"true": 3, "false": 3}
    down = run_cli("down", env=env)
    assert down.returncode == 0 and "not ours to stop" in down.stderr
    assert run_cli("status", env={**env, "WEAVIATE_URL": weaviate_stack.settings.weaviate_http_url}).returncode == 0
