"""The whole wiring with a real model: llama.cpp server (SmolLM2) → loop → executor → live Weaviate.

Asserts the loop's shape, not the model's accuracy: SmolLM2-135M is fast and often wrong.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from agent import Agent, AgentConfig, OpenAIChatModel, ToolDesign, build_tools
from agent.loop import SYSTEM_PROMPT
from agent.session import AgentSession
from agent.tokens import estimate_counter
from dbgorilla.llm_server.canonical import MIN_BATCH
from dbgorilla.local_models import SMOLLM2, TEST_MODEL, ModelService
from dbgorilla.smoke import create_smoke_collection
from executors import DatabaseSchema, WeaviateExecutor
from llm import ChatRequest, ModelRequest, ModelResponse, NamedTool, ToolReturnPart
from tests.conftest import fresh_settings, run_cli, settings_env

pytestmark = [pytest.mark.model, pytest.mark.integration]
NAME = "AgentEndToEnd"


@pytest.fixture(scope="module")
def smollm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpenAIChatModel]:
    settings = fresh_settings(tmp_path_factory.mktemp("e2e-model"))
    env = settings_env(settings)
    assert run_cli("model", "up", "--model", TEST_MODEL, env=env).returncode == 0
    service = ModelService(settings, SMOLLM2)
    yield OpenAIChatModel(
        TEST_MODEL,
        base_url=service.base_url,
        timeout=120,
        max_retries=0,
        max_tokens=256,
        prefers_named_tool_choice=True,
    )
    run_cli("model", "down", env=env)


def test_small_model_drives_the_loop_through_weaviate(smollm: OpenAIChatModel, client: Any) -> None:
    create_smoke_collection(client, NAME)
    try:
        executor = WeaviateExecutor(client)
        tools = build_tools(DatabaseSchema(collections=(executor.schema.get(NAME),)), counter=estimate_counter())
        run = Agent(smollm, executor, tools, AgentConfig(max_steps=3)).run("Find restaurants that serve sushi.")
    finally:
        client.collections.delete(NAME)
    assert run.steps, "the model was called"
    first = run.steps[0]
    assert first.tool_choice == NamedTool(name="query_database")  # sent as OpenAI's named tool_choice
    assert first.calls, "a named tool_choice always yields a tool call from llama.cpp"
    call = first.calls[0]
    json.loads(call.raw_arguments)  # well-formed JSON, whatever its content
    assert call.ok or call.error.code in {
        "unknown_collection",
        "unknown_property",
        "type_mismatch",
        "invalid_operator",
        "invalid_metric",
        "invalid_value",
        "invalid_arguments",
    }
    if call.ok:
        assert call.weaviate_call and call.weaviate_call[0].startswith("collection.")
    assert len(run.steps) >= 2, "the tool result went back to the model for another turn"
    assert run.steps[1].tool_choice == "auto"
    assert run.outcome in {"answered", "max_steps", "correction_limit"}
    assert run.usage.prompt_tokens > 0 and run.latency_s > 0
    assert isinstance(run.messages[1], ModelResponse) and isinstance(run.messages[2].parts[0], ToolReturnPart)


def test_a_warmed_server_starts_the_first_question_from_its_system_turn(smollm: OpenAIChatModel, client: Any) -> None:
    """`AgentSession.warm` sends the openings; a question after another prompt has taken the KV cache
    loads its system turn from the server's store instead of evaluating it. (The small model's check
    is arbitrary, so the strategy here is `typed`; which openings the default sends: tests/unit/test_openings.py.)"""
    name = f"Warm{uuid.uuid4().hex[:8]}"  # a system turn no state holds yet
    create_smoke_collection(client, name)
    try:
        # SmolLM2's template shows no tools, so the system prompt alone makes a system turn worth keeping
        system = f"{SYSTEM_PROMPT} This is session {name}." + " Answer from the query results only." * 40
        executor = WeaviateExecutor(client)
        config = AgentConfig(system_prompt=system, max_steps=1)
        session = AgentSession.over(executor, [name], ToolDesign(), smollm, "typed", config)
        [warmed] = session.warm()
        smollm.complete(ChatRequest(messages=[ModelRequest.prompt("Something else entirely.", "Hello?")], max_tokens=1))
        run = session.run("How many restaurants serve sushi?")
    finally:
        client.collections.delete(name)
    assert (warmed.cached_tokens or 0) < warmed.prompt_tokens / 2, "the warm request evaluated it"
    # the server evaluates at least MIN_BATCH rows a request (`dbgorilla.llm_server.canonical`)
    loaded = min(warmed.prompt_tokens - 20, run.steps[0].usage.prompt_tokens - MIN_BATCH)
    assert (run.steps[0].usage.cached_tokens or 0) >= loaded, "the system turn was loaded"
