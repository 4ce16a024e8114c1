"""The model seam: a `provider:model` name chooses the provider, today's bare names keep their meaning,
the OpenAI translation writes what the loop always sent, and a new provider is one registration."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from agent import Agent, AgentConfig, build_tools
from agent.tokens import estimate_counter
from dbgorilla.chat import model_provider, resolve_model
from dbgorilla.errors import ConfigError
from dbgorilla.local_models import DEFAULT_MODEL
from executors import ReferenceExecutor
from executors.testing import sample_objects, sample_schema
from llm import (
    ChatRequest,
    ModelReply,
    ModelRequest,
    ModelResponse,
    NamedTool,
    Provider,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
    register,
    split_model_name,
)
from llm.providers import _REGISTERED, UnknownProvider, open_model
from llm.providers.openai_compatible import OpenAIChatModel, openai_messages

NAME = "Offline"
SCHEMA = sample_schema(NAME)
OBJECTS = sample_objects(40, seed=3)
OPEN_LATE = {
    "collection_name": NAME,
    "boolean_property_filter": {"property_name": "open_late", "operator": "=", "value": True},
}


def test_a_provider_prefix_chooses_and_other_colons_are_part_of_the_name() -> None:
    assert split_model_name("openai:gpt-4o-mini") == ("openai", "gpt-4o-mini")
    assert split_model_name("local:qwen2.5-coder-1.5b") == ("local", "qwen2.5-coder-1.5b")
    assert split_model_name("qwen2.5:1.5b") == (None, "qwen2.5:1.5b")  # Ollama's tag, not a provider
    assert split_model_name("oracle") == (None, "oracle")
    with pytest.raises(UnknownProvider, match=r"known: .*openai"):
        open_model("telepathy", "m")


def test_bare_names_keep_their_meaning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert model_provider(None, None) == ("local", DEFAULT_MODEL)
    assert model_provider(DEFAULT_MODEL, None) == ("local", DEFAULT_MODEL)
    assert model_provider("any", "http://127.0.0.1:9/v1") == ("openai", "any")
    assert model_provider("openai:gpt-4o-mini", None) == ("openai", "gpt-4o-mini")
    with pytest.raises(ConfigError, match="unknown local model 'gpt-4o-mini'"):
        model_provider("gpt-4o-mini", None)
    with pytest.raises(ConfigError, match="--base-url needs --model"):
        model_provider(None, "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert model_provider("gpt-4o-mini", None) == ("openai", "gpt-4o-mini")
    with pytest.raises(ConfigError, match="served here"):
        resolve_model("local:" + DEFAULT_MODEL, "http://127.0.0.1:9/v1")


def test_the_openai_translation_writes_what_the_loop_always_sent() -> None:
    """Byte for byte the messages, tools and choices of before the seam (the server's prompt cache
    and the recorded token counts depend on it)."""
    call = ToolCallPart(id="c1", name="query_database", arguments='{"collection_name": "X"}')
    conversation = [
        ModelRequest(parts=[SystemPromptPart(content="sys"), UserPromptPart(content="q?")]),
        ModelResponse.of("", [call]),
        ModelRequest(parts=[ToolReturnPart(tool_call_id="c1", tool_name="query_database", content="rows")]),
        ModelResponse.of("Done."),
        ModelRequest.user("Commit."),
    ]
    assert openai_messages(conversation) == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "q?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "query_database", "arguments": '{"collection_name": "X"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "rows"},
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "Commit."},
    ]
    tools = build_tools(SCHEMA, counter=estimate_counter())
    model = OpenAIChatModel("m", base_url="http://127.0.0.1:9/v1")
    model.seed = 7
    body = model.body(
        ChatRequest(
            messages=conversation[:1],
            tools=tools.definitions(),
            tool_choice=NamedTool(name="query_database"),
            parallel_tool_calls=False,
        )
    )
    assert json.dumps(body["tools"]) == json.dumps(tools.tools)  # the same keys in the same order
    assert body["tool_choice"] == {"type": "function", "function": {"name": "query_database"}}
    assert (body["temperature"], body["max_tokens"], body["seed"], body["parallel_tool_calls"]) == (0.0, 512, 7, False)
    bare = model.body(ChatRequest(messages=conversation[:1], tool_choice="none", temperature=0.7, max_tokens=1))
    assert "tools" not in bare and "tool_choice" not in bare and (bare["temperature"], bare["max_tokens"]) == (0.7, 1)


# --- a new provider: one registration, then the loop, the commit turn and `--model` work with it ------


class BlocksModel:
    """A provider with its own wire (system apart, content blocks, like Anthropic's Messages API): the
    translation below is all a provider writes; the 'endpoint' is a script of replies."""

    prefers_named_tool_choice = False

    def __init__(self, name: str, script: list[dict[str, Any]]) -> None:
        self.name = name
        self.script = script
        self.sent: list[dict[str, Any]] = []

    @staticmethod
    def translate(request: ChatRequest) -> dict[str, Any]:
        system, turns = "", []
        for message in request.messages:
            if isinstance(message, ModelResponse):
                blocks = [
                    {"type": "text", "text": p.content}
                    if isinstance(p, TextPart)
                    else {"type": "tool_use", "id": p.id, "name": p.name, "input": json.loads(p.arguments or "{}")}
                    for p in message.parts
                ]
                turns.append({"role": "assistant", "content": blocks})
                continue
            blocks = []
            for part in message.parts:
                if isinstance(part, SystemPromptPart):
                    system = part.content
                elif isinstance(part, UserPromptPart):
                    blocks.append({"type": "text", "text": part.content})
                elif isinstance(part, ToolReturnPart):
                    blocks.append({"type": "tool_result", "tool_use_id": part.tool_call_id, "content": part.content})
            turns.append({"role": "user", "content": blocks})
        body: dict[str, Any] = {"system": system, "messages": turns}
        body["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in request.tools
        ]
        if request.response_format is not None:
            body["output_schema"] = request.response_format.json_schema
        return body

    def complete(self, request: ChatRequest) -> ModelReply:
        self.sent.append(self.translate(request))
        proving = request.max_tokens == 1  # the one-token request before the first question
        reply = {"text": "OK"} if proving else self.script.pop(0)
        calls = [
            ToolCallPart(id=f"tu_{i}", name=c["name"], arguments=json.dumps(c["input"]))
            for i, c in enumerate(reply.get("tool_use", []))
        ]
        return ModelReply(content=reply.get("text"), tool_calls=calls)


@pytest.fixture
def blocks() -> Iterator[list[BlocksModel]]:
    opened: list[BlocksModel] = []

    def open_blocks(model: str, **_options: Any) -> BlocksModel:
        script = [
            {"tool_use": [{"name": "query_database", "input": OPEN_LATE}]},
            {"text": "Several places are open late."},
            {"text": json.dumps({"numbers": [3], "sources": []})},
        ]
        opened.append(BlocksModel(model, script))
        return opened[-1]

    register(Provider("blocks", "a content-block provider, registered by a test", open_blocks))
    try:
        yield opened
    finally:
        _REGISTERED.pop("blocks", None)


def test_a_provider_registered_in_a_test_runs_through_the_loop(blocks: list[BlocksModel]) -> None:
    model = resolve_model("blocks:claude-ish", None)  # proven with the one-token request, like any endpoint
    assert model.name == "claude-ish" and blocks[0].sent[0]["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Say OK."}]}
    ]
    executor = ReferenceExecutor(SCHEMA, {NAME: OBJECTS})
    run = Agent(model, executor, build_tools(SCHEMA, counter=estimate_counter()), AgentConfig()).run("Open late?")
    assert run.outcome == "answered" and run.final_answer == "Several places are open late."
    [call] = run.calls()
    assert call.ok and call.arguments == OPEN_LATE
    assert run.answer is not None and run.answer.numbers == [3]  # the commit turn, through the same translation
    _probe, first, second, commit = blocks[0].sent
    assert first["system"].startswith("You answer questions about a Weaviate database")
    assert first["tools"][0]["name"] == "query_database" and "output_schema" not in first
    [returned] = second["messages"][-1]["content"]
    assert (
        returned["type"] == "tool_result"
        and returned["tool_use_id"] == "tu_0"
        and "open_late: true" in returned["content"]
    )
    assert "numbers" in commit["output_schema"]["required"]  # the FinalAnswer schema
    assert commit["messages"][-1]["content"][0]["text"].startswith("Commit the answer you just gave as JSON.")
