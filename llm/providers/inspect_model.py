"""The inspect_ai translation: any model inspect supports, driven by our agent through the neutral seam.

`InspectChatModel(get_model())` answers `complete(ChatRequest)` with inspect's `Model.generate`, so
an inspect task's solver runs the same agent session every other door runs (strategy, commit turn
and all), and inspect still records every model call in its transcript. The agent's loop is
synchronous: it runs in a worker thread (`anyio.to_thread`), and each turn is handed back to
inspect's event loop (`anyio.from_thread`).

`scripted_outputs(model_for)` is the inverse, for inspect's `mockllm`: a neutral `ChatModel` (a
scripted test model, our oracle) answering inspect's requests, so one scripted model can be asked
through every door. inspect_ai is imported on first use: `llm.providers` imports this module.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from llm.messages import (
    ChatModel,
    ChatRequest,
    ModelError,
    ModelMessage,
    ModelReply,
    ModelRequest,
    ModelResponse,
    NamedTool,
    ResponseFormat,
    SystemPromptPart,
    ToolCallPart,
    ToolChoice,
    ToolDefinition,
    ToolReturnPart,
    Usage,
    UserPromptPart,
)

if TYPE_CHECKING:
    from inspect_ai.model import ChatMessage, GenerateConfig, Model, ModelOutput
    from inspect_ai.tool import ToolCall, ToolInfo

#: What `mockllm`'s `custom_outputs` is: inspect's request in, one output out.
OutputFunction = Callable[[list["ChatMessage"], list["ToolInfo"], Any, "GenerateConfig"], Awaitable["ModelOutput"]]


# --- neutral -> inspect -----------------------------------------------------------------------------


def inspect_messages(messages: list[ModelMessage]) -> list[ChatMessage]:
    """One inspect message per prompt and tool return; one assistant message per response."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, ChatMessageUser

    chat: list[ChatMessage] = []
    for message in messages:
        if isinstance(message, ModelResponse):
            calls = [_inspect_call(c) for c in message.tool_calls]
            chat.append(ChatMessageAssistant(content=message.text, tool_calls=calls or None, model=None))
            continue
        for part in message.parts:
            if isinstance(part, SystemPromptPart):
                chat.append(ChatMessageSystem(content=part.content))
            elif isinstance(part, UserPromptPart):
                chat.append(ChatMessageUser(content=part.content))
            else:  # a tool return
                call_id, name = part.tool_call_id, part.tool_name
                chat.append(ChatMessageTool(content=part.content, tool_call_id=call_id, function=name))
    return chat


def _inspect_call(call: ToolCallPart) -> ToolCall:
    from inspect_ai.tool import ToolCall

    try:
        arguments = json.loads(call.arguments) if call.arguments.strip() else {}
    except json.JSONDecodeError as error:
        return ToolCall(id=call.id, function=call.name, arguments={}, parse_error=f"{error.msg}: {call.arguments}")
    if not isinstance(arguments, dict):
        return ToolCall(id=call.id, function=call.name, arguments={}, parse_error=f"not an object: {call.arguments}")
    return ToolCall(id=call.id, function=call.name, arguments=arguments)


def inspect_tools(tools: list[ToolDefinition]) -> list[ToolInfo]:
    from inspect_ai.tool import ToolInfo, ToolParams

    return [
        ToolInfo(name=t.name, description=t.description, parameters=ToolParams.model_validate(t.parameters))
        for t in tools
    ]


def inspect_choice(choice: ToolChoice | None) -> Any:
    from inspect_ai.tool import ToolFunction

    if isinstance(choice, NamedTool):
        return ToolFunction(name=choice.name)
    return "any" if choice == "required" else choice


def inspect_config(request: ChatRequest) -> GenerateConfig:
    from inspect_ai.model import GenerateConfig, ResponseSchema
    from inspect_ai.util import JSONSchema

    schema = None
    if request.response_format is not None:
        wanted = request.response_format.json_schema or {"type": "object"}
        schema = ResponseSchema(
            name=request.response_format.name or "response", json_schema=JSONSchema.model_validate(wanted)
        )
    return GenerateConfig(
        temperature=request.temperature,
        max_tokens=request.max_tokens,
        seed=request.seed,
        stop_seqs=request.stop,
        parallel_tool_calls=request.parallel_tool_calls,
        response_schema=schema,
    )


def reply_of(output: ModelOutput, latency_s: float = 0.0) -> ModelReply:
    """inspect's output as the seam's reply; an output carrying an error is a `ModelError`."""
    if output.error:
        raise ModelError(f"{output.model}: {output.error}")
    message = output.message
    calls = _neutral_calls(message.tool_calls)
    usage = output.usage
    return ModelReply(
        content=message.text,
        tool_calls=calls,
        finish_reason=output.stop_reason,
        usage=Usage(
            prompt_tokens=usage.input_tokens if usage else 0,
            completion_tokens=usage.output_tokens if usage else 0,
            cached_tokens=usage.input_tokens_cache_read if usage else None,
        ),
        raw=message.model_dump(mode="json", exclude_none=True),
        latency_s=output.time or latency_s,
    )


class InspectChatModel:
    """An inspect `Model` as a `ChatModel`; `complete` must run in a worker thread of inspect's event loop."""

    prefers_named_tool_choice = False

    def __init__(self, model: Model) -> None:
        self.model = model
        self.name = str(model)

    def complete(self, request: ChatRequest) -> ModelReply:
        import anyio.from_thread

        generate = partial(
            self.model.generate,
            inspect_messages(request.messages),
            tools=inspect_tools(request.tools),
            tool_choice=inspect_choice(request.tool_choice) if request.tools else None,
            config=inspect_config(request),
        )
        try:
            output = anyio.from_thread.run(generate)
        except ModelError:
            raise
        except Exception as error:  # inspect has retried what it retries: a failed turn, typed
            raise ModelError(f"{self.name}: {type(error).__name__}: {error}") from error
        return reply_of(output)


# --- inspect -> neutral (mockllm answered by a neutral model) ----------------------------------------


def neutral_request(messages: list[ChatMessage], tools: list[ToolInfo], choice: Any, config: Any) -> ChatRequest:
    """inspect's request as the seam's: what a scripted model or the oracle reads."""
    neutral: list[ModelMessage] = []
    for m in messages:
        if m.role == "assistant":
            neutral.append(ModelResponse.of(m.text, _neutral_calls(m.tool_calls)))
            continue
        if m.role == "tool":
            part: Any = ToolReturnPart(tool_call_id=m.tool_call_id or "", tool_name=m.function or "", content=m.text)
        else:
            part = SystemPromptPart(content=m.text) if m.role == "system" else UserPromptPart(content=m.text)
        if neutral and isinstance(neutral[-1], ModelRequest):
            neutral[-1].parts.append(part)
        else:
            neutral.append(ModelRequest(parts=[part]))
    schema = getattr(config, "response_schema", None)
    return ChatRequest(
        messages=neutral,
        tools=[ToolDefinition(name=t.name, description=t.description, parameters=_dumped(t.parameters)) for t in tools],
        tool_choice=_neutral_choice(choice),
        response_format=None
        if schema is None
        else ResponseFormat(name=schema.name, json_schema=_dumped(schema.json_schema)),
    )


def _neutral_calls(calls: list[ToolCall] | None) -> list[ToolCallPart]:
    return [ToolCallPart(id=c.id, name=c.function, arguments=json.dumps(c.arguments)) for c in calls or []]


def _dumped(schema: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = schema.model_dump(exclude_none=True)
    return dumped


def _neutral_choice(choice: Any) -> ToolChoice | None:
    name = getattr(choice, "name", None)
    if isinstance(name, str):
        return NamedTool(name=name)
    return "required" if choice == "any" else choice


def output_of(reply: ModelReply, model: str) -> ModelOutput:
    """A neutral reply as inspect's output, its usage set (mockllm would otherwise count tokens with
    tiktoken, which downloads its encoding on first use)."""
    from inspect_ai.model import ChatCompletionChoice, ChatMessageAssistant, ModelOutput, ModelUsage

    calls = [_inspect_call(c) for c in reply.tool_calls]
    message = ChatMessageAssistant(content=reply.content or "", tool_calls=calls or None, model=model)
    usage = reply.usage
    return ModelOutput(
        model=model,
        choices=[ChatCompletionChoice(message=message, stop_reason="tool_calls" if calls else "stop")],
        usage=ModelUsage(
            input_tokens=usage.prompt_tokens,
            output_tokens=usage.completion_tokens,
            total_tokens=usage.prompt_tokens + usage.completion_tokens,
        ),
    )


def scripted_outputs(model_for: Callable[[], ChatModel]) -> OutputFunction:
    """For `get_model("mockllm/model", custom_outputs=...)`: every turn answered by `model_for()`, which
    runs in the sample's context (so it may read inspect's per-sample `store()`), off the event loop."""
    import anyio.to_thread

    async def output(messages: list[ChatMessage], tools: list[ToolInfo], choice: Any, config: Any) -> ModelOutput:
        request = neutral_request(messages, tools, choice, config)
        model = await anyio.to_thread.run_sync(model_for)
        reply = await anyio.to_thread.run_sync(model.complete, request)
        return output_of(reply, model.name)

    return output
