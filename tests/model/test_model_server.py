"""The local OpenAI-compatible server with the small test model, driven by the real openai client."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from dbgorilla.errors import MissingDependency
from dbgorilla.llm_server.canonical import MIN_BATCH
from dbgorilla.local_models import SMOLLM2, TEST_MODEL, LocalModel, ModelService
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
    # written compact (`patch_compact_calls`): no space after a brace, a comma or a colon, ~1 token a key less
    assert calls[0].function.arguments == json.dumps(arguments, separators=(",", ":"), ensure_ascii=False)


def test_openai_s_json_schema_form_is_held_to_the_schema_as_json_object_is(
    server: tuple[ModelService, dict[str, str]],
) -> None:
    """llama-cpp-python's server alone refuses `json_schema` with HTTP 500; ours asks it as `json_object` with
    the schema (`dbgorilla.llm_server.forms`), so both forms are answered, alike, under the schema's grammar."""
    service, _ = server
    client = openai.OpenAI(base_url=service.base_url, api_key="not-needed", timeout=60, max_retries=0)
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["C", "F"]}},
        "required": ["city", "unit"],
    }
    forms = [
        {"type": "json_schema", "json_schema": {"name": "weather", "schema": schema}},
        {"type": "json_object", "schema": schema},
    ]
    replies = []
    for form in forms:
        response = client.chat.completions.create(
            model=TEST_MODEL,
            messages=[{"role": "user", "content": "Which city and unit: Paris in celsius? Answer in JSON."}],
            response_format=form,  # type: ignore[arg-type]
            max_tokens=48,
            temperature=0,
        )
        replies.append(response.choices[0].message.content or "")
    fitted = json.loads(replies[0])
    assert set(fitted) == {"city", "unit"} and fitted["unit"] in ("C", "F")
    assert replies[0] == replies[1]


def test_second_model_up_reuses_the_server(server: tuple[ModelService, dict[str, str]]) -> None:
    service, env = server
    pid = service.record().pid
    result = run_cli("model", "up", "--model", TEST_MODEL, env=env)
    assert result.returncode == 0 and "already running" in result.stderr
    assert "not warmed: Weaviate is not running" in result.stderr, "no Weaviate on these ports: nothing to warm"
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


def _ask(service: ModelService, system: str, question: str, max_tokens: int = 8) -> tuple[str | None, int, int]:
    """The reply, its prompt tokens and the prompt tokens the server reused."""
    client = openai.OpenAI(base_url=service.base_url, api_key="not-needed", timeout=60)
    response = client.chat.completions.create(
        model=TEST_MODEL,
        messages=[{"role": "system", "content": system}, {"role": "user", "content": question}],
        max_tokens=max_tokens,
        temperature=0,
    )
    usage = response.usage
    assert usage is not None and usage.prompt_tokens_details is not None
    return response.choices[0].message.content, usage.prompt_tokens, usage.prompt_tokens_details.cached_tokens or 0


def reusable(held: int, prompt: int) -> int:
    """What a request reuses of `held` shared tokens: a canonical server evaluates at least `MIN_BATCH`."""
    return min(held, prompt - MIN_BATCH)


def test_replies_say_how_many_prompt_tokens_were_reused(server: tuple[ModelService, dict[str, str]]) -> None:
    service, _ = server
    system = f"Session {uuid.uuid4()}. " + "You answer questions about cities and their weather. " * 30
    _, first_prompt, first_cached = _ask(service, system, "Is it sunny in Paris?")
    _, second_prompt, second_cached = _ask(service, system, "Is it raining in Oslo?")
    assert first_cached < 10, "a prompt never seen before has only the template's first tokens in common"
    assert reusable(first_prompt - 20, second_prompt) <= second_cached < second_prompt, (
        "the shared system prompt is reused"
    )


def test_the_prompt_cache_outlives_a_restart(server: tuple[ModelService, dict[str, str]]) -> None:
    service, env = server
    system = f"Session {uuid.uuid4()}. " + "You answer questions about rivers and their length. " * 30
    _, prompt, _ = _ask(service, system, "How long is the Danube?")
    _ask(service, "Something else entirely.", "Hello?")
    loaded = _ask(service, system, "How long is the Danube?")[2]
    assert loaded >= reusable(prompt - 20, prompt), "the state was loaded from the store"
    # Canonical batches (`dbgorilla.llm_server.canonical`): a state read back from disk gives the answer a
    # prompt evaluated from nothing gives.
    answers = []
    for _restart in range(2):
        assert run_cli("model", "down", env=env).returncode == 0
        assert run_cli("model", "up", "--model", TEST_MODEL, env=env, timeout=300).returncode == 0
        answer, _, cached = _ask(service, system, "How long is the Danube?")
        assert cached >= reusable(prompt - 20, prompt), "the state was read back from the disk cache"
        answers.append(answer)
    assert answers[0] and answers[1] == answers[0], "a state read back from disk answers the same after a restart"


def test_the_store_keeps_the_system_turn_and_each_question_loads_it(
    server: tuple[ModelService, dict[str, str]],
) -> None:
    """One state per system turn (its tools), none per question: a question's own words never push the
    tools out of the store, and another question on the same system turn, after another prompt, loads it."""
    service, _ = server
    folder = service.prompt_cache_dir
    system = f"Session {uuid.uuid4()}. " + "You answer questions about mountains and their height. " * 30
    before = set(folder.glob("*.tokens"))
    _, prompt, _ = _ask(service, system, "How high is Mont Blanc?")
    stored = set(folder.glob("*.tokens")) - before
    assert len(stored) == 1
    kept = json.loads(next(iter(stored)).read_text())
    assert prompt - 30 < len(kept) < prompt - 5, "the system turn, without the question"
    _ask(service, "Something else entirely.", "Hello?")
    _, second, cached = _ask(service, system, "And how high is the Matterhorn, on the Swiss and Italian border?")
    assert reusable(len(kept), second) <= cached < second, "the system turn was loaded, the new question evaluated"
    assert set(folder.glob("*.tokens")) - before == stored, "a second question adds no state"


def test_a_one_token_request_keeps_a_short_prefix_that_a_question_does_not(
    server: tuple[ModelService, dict[str, str]],
) -> None:
    """A warming (one token) keeps its whole short prompt, as the check's verdict on one collection
    opens; a question that short keeps nothing; the next question on that prefix loads it."""
    service, _ = server
    folder = service.prompt_cache_dir
    system = f"Session {uuid.uuid4()}. You check a database."
    listing = "Collection Rivers: name (its name); length (in km); countries (it flows through). " * 3
    before = set(folder.glob("*.tokens"))
    _ask(service, system, listing + "\n\nQuestion: How long is the Rhine?")
    assert set(folder.glob("*.tokens")) == before, "a short question's prompt is not kept"
    _ask(service, system, listing + "\n\nQuestion: ", max_tokens=1)
    stored = set(folder.glob("*.tokens")) - before
    assert len(stored) == 1, "the warming's prompt is kept"
    kept = json.loads(next(iter(stored)).read_text())
    _ask(service, "Something else entirely.", "Hello?")
    _, prompt, cached = _ask(service, system, listing + "\n\nQuestion: How long is the Nile?")
    assert reusable(len(kept) - 8, prompt) <= cached < prompt, "the kept prefix was loaded, the question evaluated"


def test_a_warming_keeps_its_user_turns_fixed_start_with_its_system_turn(
    server: tuple[ModelService, dict[str, str]],
) -> None:
    """A warming on a system turn worth a state of its own is kept whole: the start every question's user
    turn shares (the solved examples' header) is loaded with the tools, not evaluated again."""
    service, _ = server
    folder = service.prompt_cache_dir
    system = f"Session {uuid.uuid4()}. " + "You answer questions about lakes and their depth. " * 30
    header = "Solved examples from other databases, each a question and the arguments of its query:\nQ: "
    before = set(folder.glob("*.tokens"))
    _, warming, _ = _ask(service, system, header, max_tokens=1)
    stored = set(folder.glob("*.tokens")) - before
    assert len(stored) == 1, "one state"
    kept = json.loads(next(iter(stored)).read_text())
    assert len(kept) >= warming - 1, "the whole warming, its user turn too, not its system turn alone"
    _ask(service, "Something else entirely.", "Hello?")
    _, prompt, cached = _ask(service, system, header + "How deep is Lake Baikal?")
    assert reusable(len(kept) - 12, prompt) <= cached < prompt, "the system turn and the header were loaded"
    assert set(folder.glob("*.tokens")) - before == stored, "the question adds no state"


def test_a_model_server_killed_during_eval_stops_the_run_as_infrastructure(tmp_path: Path) -> None:
    """The server answers the start-up token, then dies: eval stops after a few cases with exit 11
    and says what to do; the cases it recorded are marked for --resume, and nothing reads 0%."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from dbgorilla.errors import ExitCode

    settings = fresh_settings(tmp_path / "state")
    env = settings_env(settings)
    out = tmp_path / "run"
    command = [sys.executable, "-m", "dbgorilla", "eval", "--model", TEST_MODEL, "--dataset", "abstention",
               "--limit", "0", "--out", str(out), "--no-warm"]  # fmt: skip
    # Cold (--no-warm): the server is killed mid-run, not while warming.
    # Weaviate is needed for the questions; the session's stack is not used here, so start one.
    assert run_cli("up", "--backend", "binary", env=env, timeout=600).returncode == 0
    try:
        process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        results = out / "results.jsonl"
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and process.poll() is None:
            if results.exists() and results.read_text().count("\n") >= 1:
                break
            time.sleep(0.2)
        assert process.poll() is None, "eval ended before the server could be killed"
        record = ModelService(settings, SMOLLM2).record()
        assert record is not None
        os.kill(record.pid, signal.SIGKILL)
        _, stderr = process.communicate(timeout=600)
        assert process.returncode == ExitCode.INFRASTRUCTURE, stderr
        assert "failed on the infrastructure" in stderr and "--resume" in stderr
        summary = json.loads((out / "summary.json").read_text())
        assert summary["infrastructure_failures"] >= 3
        assert summary["cases"] < 20, "the run must stop, not go through every question"
    finally:
        run_cli("model", "down", env=env)
        run_cli("down", env=env)
