"""The OpenAI chat-completions translation: any OpenAI-compatible endpoint, the local llama.cpp server too.

`to_openai(request)` is the one place a neutral `ChatRequest` becomes the wire's messages, tools,
tool choice and response format; `OpenAIChatModel` sends it with the `openai` client and reads the
reply back into a `ModelReply`. A JSON-schema response format is sent the first way the endpoint
takes it (`SchemaForms`), so structured output works against llama-cpp-python's server as against OpenAI.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any, TypeVar

import openai

from llm.messages import (
    ChatModel,
    ChatRequest,
    ModelError,
    ModelReply,
    ModelRequest,
    ModelResponse,
    ModelTimeout,
    ModelUnavailable,
    NamedTool,
    SystemPromptPart,
    ToolCallPart,
    ToolChoice,
    ToolDefinition,
    ToolReturnPart,
    Usage,
    UserPromptPart,
)
from llm.providers import Provider

T = TypeVar("T")

#: The proving request's messages on the wire (`llm.messages.PROBE`); test servers answer it themselves.
PROBE_MESSAGES: list[dict[str, Any]] = [{"role": "user", "content": "Say OK."}]


def is_probe(body: dict[str, Any]) -> bool:
    """True for the body of the proving request (its messages, one token)."""
    return body.get("messages") == PROBE_MESSAGES and body.get("max_tokens") == 1


# --- neutral -> OpenAI ------------------------------------------------------------------------------


def openai_messages(messages: list[ModelRequest | ModelResponse]) -> list[dict[str, Any]]:
    """One message per prompt and tool return; one assistant message per response."""
    wire: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, ModelResponse):
            assistant: dict[str, Any] = {"role": "assistant", "content": message.text}  # llama.cpp rejects None
            calls = message.tool_calls
            if calls:
                assistant["tool_calls"] = [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                    for c in calls
                ]
            wire.append(assistant)
            continue
        for part in message.parts:
            if isinstance(part, SystemPromptPart):
                wire.append({"role": "system", "content": part.content})
            elif isinstance(part, UserPromptPart):
                wire.append({"role": "user", "content": part.content})
            elif isinstance(part, ToolReturnPart):
                wire.append({"role": "tool", "tool_call_id": part.tool_call_id, "content": part.content})
    return wire


def openai_tools(tools: list[ToolDefinition]) -> list[dict[str, Any]]:
    return [
        {"type": "function", "function": {"name": t.name, "parameters": t.parameters, "description": t.description}}
        for t in tools
    ]


def openai_tool_choice(choice: ToolChoice) -> str | dict[str, Any]:
    if isinstance(choice, NamedTool):
        return {"type": "function", "function": {"name": choice.name}}
    return choice


#: Ways to ask an endpoint for JSON that fits a schema, in order: OpenAI's `json_schema` (and llama.cpp's
#: llama-server), then `json_object` with the schema (llama-cpp-python's server, which refuses
#: `json_schema` with HTTP 500 but constrains `json_object` to a schema; `dbgorilla.llm_server` takes both), then
#: none (the prompt alone).
SCHEMA_FORMS: tuple[str, ...] = ("json_schema", "json_object", "none")


def schema_format(form: str, name: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    """The `response_format` that asks for `schema` in the given form (None: not asked for)."""
    if form == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}
    if form == "json_object":
        return {"type": "json_object", "schema": schema}
    return None


class SchemaForms:
    """Sends a schema the first way an endpoint accepts and keeps to that way once it has worked.

    An error status may mean the form was refused (OpenAI says 400, llama-cpp-python 500 with a
    validation error), so the next form is tried; a timeout or no connection has no status and is
    raised. A form is dropped only once a later one has worked, so one bad moment drops nothing."""

    def __init__(self) -> None:
        self.forms = list(SCHEMA_FORMS)
        #: The form that worked last (None: no request with a schema has been answered yet).
        self.used: str | None = None

    def send(self, ask: Callable[[dict[str, Any] | None], T], name: str, schema: dict[str, Any]) -> T:
        forms = list(self.forms)  # a snapshot: requests in flight on other threads may narrow the list
        index = 0
        while True:
            form = forms[index]
            try:
                result = ask(schema_format(form, name, schema))
            except ModelError as error:
                if index + 1 < len(forms) and getattr(error.__cause__, "status_code", None) is not None:
                    index += 1
                    continue
                raise
            rank = SCHEMA_FORMS.index(form)
            self.forms = [f for f in self.forms if SCHEMA_FORMS.index(f) >= rank] or [form]  # idempotent
            self.used = form
            return result


# --- the model --------------------------------------------------------------------------------------


class OpenAIChatModel:
    """Any OpenAI-compatible chat-completions endpoint.

    The openai client retries 408/409/429/5xx and connection errors with exponential backoff,
    at most `max_retries` times, and every request is bounded by `timeout` seconds. `max_tokens`
    None sends no bound (the endpoint's own).
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 3,
        temperature: float = 0.0,
        max_tokens: int | None = 512,
        prefers_named_tool_choice: bool = False,
    ) -> None:
        self.name = model
        self.base_url = base_url
        self.prefers_named_tool_choice = prefers_named_tool_choice
        self.temperature = temperature
        self.max_tokens = max_tokens
        #: Sent as the request's `seed` when set (llama.cpp and OpenAI-compatible endpoints take one).
        self.seed: int | None = None
        self.schema_forms = SchemaForms()
        self._client = openai.OpenAI(
            base_url=base_url,
            api_key=api_key or os.environ.get("OPENAI_API_KEY") or "not-needed",
            timeout=timeout,
            max_retries=max_retries,
        )

    def body(self, request: ChatRequest) -> dict[str, Any]:
        """The request on the wire, without its response format."""
        body: dict[str, Any] = {
            "model": self.name,
            "messages": openai_messages(request.messages),
            "temperature": self.temperature if request.temperature is None else request.temperature,
        }
        max_tokens = self.max_tokens if request.max_tokens is None else request.max_tokens
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        seed = self.seed if request.seed is None else request.seed
        if seed is not None:
            body["seed"] = seed
        if request.stop:
            body["stop"] = request.stop
        if request.tools:
            body["tools"] = openai_tools(request.tools)
            if request.tool_choice is not None:
                body["tool_choice"] = openai_tool_choice(request.tool_choice)
            if request.parallel_tool_calls is not None:
                body["parallel_tool_calls"] = request.parallel_tool_calls
        return body

    def complete(self, request: ChatRequest) -> ModelReply:
        body = self.body(request)
        wanted = request.response_format
        if wanted is None:
            return self._create(body)
        if wanted.json_schema is None:
            return self._create({**body, "response_format": {"type": "json_object"}})

        def ask(form: dict[str, Any] | None) -> ModelReply:
            return self._create(body if form is None else {**body, "response_format": form})

        return self.schema_forms.send(ask, wanted.name, wanted.json_schema)

    def _create(self, body: dict[str, Any]) -> ModelReply:
        """Send one body; the reply read back, failures as `ModelError`s."""
        started = time.perf_counter()
        try:
            response = self._client.chat.completions.create(**body)
        except openai.APITimeoutError as error:
            raise ModelTimeout(f"{self.name}: no answer within the timeout ({error})") from error
        except openai.APIConnectionError as error:
            raise ModelUnavailable(f"{self.name}: endpoint unreachable at {self.base_url}: {error}") from error
        except openai.APIStatusError as error:
            raise ModelError(f"{self.name}: HTTP {error.status_code}: {str(error)[:300]}") from error
        except openai.OpenAIError as error:
            raise ModelError(f"{self.name}: {error}") from error
        latency = time.perf_counter() - started
        if not response.choices:
            raise ModelError(f"{self.name}: the response has no choices")
        message = response.choices[0].message
        calls = [
            ToolCallPart(id=call.id or f"call_{i}", name=call.function.name, arguments=call.function.arguments or "")
            for i, call in enumerate(message.tool_calls or [])
            if getattr(call, "function", None) is not None
        ]
        details = getattr(response.usage, "prompt_tokens_details", None)
        usage = Usage(
            prompt_tokens=getattr(response.usage, "prompt_tokens", 0) or 0,
            completion_tokens=getattr(response.usage, "completion_tokens", 0) or 0,
            cached_tokens=getattr(details, "cached_tokens", None),
        )
        return ModelReply(
            content=message.content,
            tool_calls=calls,
            finish_reason=response.choices[0].finish_reason,
            usage=usage,
            raw=response.model_dump(mode="json"),
            latency_s=latency,
        )


def _open(model: str, base_url: str | None = None, **options: Any) -> ChatModel:
    return OpenAIChatModel(model, base_url=base_url, **options)


PROVIDER = Provider("openai", "OpenAI, or any OpenAI-compatible endpoint (--base-url; key: OPENAI_API_KEY)", _open)
