"""The local OpenAI-compatible server with the small test model, driven by the real openai client."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from dbgorilla.errors import MissingDependency
from dbgorilla.model_server import SMOLLM2, TEST_MODEL, LocalModel, ModelService
from tests.conftest import fresh_settings, run_cli, settings_env

pytestmark = pytest.mark.model

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["C", "F"]}},
            "required": ["city", "unit"],
        },
    },
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ModelService, dict[str, str]]]:
    settings = fresh_settings(tmp_path_factory.mktemp("model"))
    env = settings_env(settings)
    result = run_cli("model", "up", "--model", TEST_MODEL, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    yield ModelService(settings, SMOLLM2), env
    run_cli("model", "down", env=env)


def test_named_tool_choice_returns_a_well_formed_call(server: tuple[ModelService, dict[str, str]]) -> None:
    service, _ = server
    client = openai.OpenAI(base_url=service.base_url, api_key="not-needed", timeout=60)
    response = client.chat.completions.create(
        model=TEST_MODEL,
        messages=[{"role": "user", "content": "What is the weather in Paris in celsius?"}],
        tools=[WEATHER_TOOL],
        tool_choice={"type": "function", "function": {"name": "get_weather"}},
        max_tokens=64,
        temperature=0,
    )
    calls = response.choices[0].message.tool_calls
    assert calls and calls[0].function.name == "get_weather"
    arguments = json.loads(calls[0].function.arguments)
    assert isinstance(arguments["city"], str) and arguments["unit"] in ("C", "F")


def test_second_model_up_reuses_the_server(server: tuple[ModelService, dict[str, str]]) -> None:
    service, env = server
    pid = service.record().pid
    result = run_cli("model", "up", "--model", TEST_MODEL, env=env)
    assert result.returncode == 0 and "already running" in result.stderr
    assert service.record().pid == pid
    status = run_cli("model", "status", "--json", env=env)
    assert status.returncode == 0 and json.loads(status.stdout)["model"] == TEST_MODEL


def test_a_joined_model_with_the_wrong_hash_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DBGORILLA_CACHE", str(tmp_path))
    tampered = LocalModel(
        name="tampered",
        description="two copies of SmolLM2 posing as one model",
        parts=SMOLLM2.parts * 2,
        sha256="0" * 64,
        size_bytes=2 * SMOLLM2.size_bytes,
    )
    with pytest.raises(MissingDependency, match="expected 0000"):
        tampered.gguf_path(echo=lambda _: None)
    assert not list(tmp_path.rglob("*.gguf")), "an unverified file must never be left for use"
