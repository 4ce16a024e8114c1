"""The provider-neutral model of a chat: messages as parts, the request, the reply, the errors.

Modelled on pydantic-ai's `ModelMessage`s: a conversation is a list of `ModelRequest`s (what we
send: system prompt, user prompt, tool returns) and `ModelResponse`s (what the model said: text,
tool calls). A `ChatRequest` adds what a turn asks for: the tools offered, the tool choice, a
response format (a JSON schema), sampling settings. Every provider translates these in one place
(`llm.openai_chat` for OpenAI-compatible endpoints, including the local llama.cpp server); the
scripted models (`agent.testing.FunctionModel`, `agent.models.OracleModel`) read them directly.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Annotated, Any, Literal, Protocol, TypeAlias

from pydantic import BaseModel, Field

# --- parts ------------------------------------------------------------------------------------------


class SystemPromptPart(BaseModel):
    part_kind: Literal["system-prompt"] = "system-prompt"
    content: str


class UserPromptPart(BaseModel):
    part_kind: Literal["user-prompt"] = "user-prompt"
    content: str


class ToolReturnPart(BaseModel):
    """What a tool call returned, as the model is shown it (a result, or a typed error's text)."""

    part_kind: Literal["tool-return"] = "tool-return"
    tool_call_id: str
    tool_name: str
    content: str


class TextPart(BaseModel):
    part_kind: Literal["text"] = "text"
    content: str


class ToolCallPart(BaseModel):
    """A call the model made: its id, the tool's name and the arguments as the model wrote them (JSON text)."""

    part_kind: Literal["tool-call"] = "tool-call"
    id: str
    name: str
    arguments: str


RequestPart: TypeAlias = Annotated[SystemPromptPart | UserPromptPart | ToolReturnPart, Field(discriminator="part_kind")]
ResponsePart: TypeAlias = Annotated[TextPart | ToolCallPart, Field(discriminator="part_kind")]


class ModelRequest(BaseModel):
    """One turn we send: system and user prompts, or the returns of the calls the model made."""

    kind: Literal["request"] = "request"
    parts: list[RequestPart]

    @classmethod
    def user(cls, content: str) -> ModelRequest:
        return cls(parts=[UserPromptPart(content=content)])

    @classmethod
    def prompt(cls, system: str, user: str) -> ModelRequest:
        return cls(parts=[SystemPromptPart(content=system), UserPromptPart(content=user)])


class ModelResponse(BaseModel):
    """One turn of the model: its text and the calls it made."""

    kind: Literal["response"] = "response"
    parts: list[ResponsePart]

    @classmethod
    def of(cls, text: str, calls: Sequence[ToolCallPart] = ()) -> ModelResponse:
        return cls(parts=[TextPart(content=text), *calls])

    @property
    def text(self) -> str:
        return "".join(p.content for p in self.parts if isinstance(p, TextPart))

    @property
    def tool_calls(self) -> list[ToolCallPart]:
        return [p for p in self.parts if isinstance(p, ToolCallPart)]


ModelMessage: TypeAlias = Annotated[ModelRequest | ModelResponse, Field(discriminator="kind")]


def all_parts(messages: Sequence[ModelRequest | ModelResponse]) -> Iterator[Any]:
    """Every part of a conversation, in order."""
    for message in messages:
        yield from message.parts


def user_text(messages: Sequence[ModelRequest | ModelResponse]) -> list[str]:
    """The user prompts of a conversation, in order."""
    return [p.content for p in all_parts(messages) if isinstance(p, UserPromptPart)]


def tool_returns(messages: Sequence[ModelRequest | ModelResponse]) -> list[ToolReturnPart]:
    return [p for p in all_parts(messages) if isinstance(p, ToolReturnPart)]


# --- the request ------------------------------------------------------------------------------------


class ToolDefinition(BaseModel):
    """A function tool: its name, description and the JSON schema of its arguments."""

    name: str
    description: str = ""
    parameters: dict[str, Any]


class NamedTool(BaseModel):
    """A tool choice that names the tool to call."""

    name: str


#: "auto": the model decides; "none": no call; "required": some call; `NamedTool`: that tool.
ToolChoice: TypeAlias = Literal["auto", "none", "required"] | NamedTool


class ResponseFormat(BaseModel):
    """Ask for JSON: of `json_schema` (named `name`) when given, else any JSON object."""

    name: str = ""
    json_schema: dict[str, Any] | None = None


class ChatRequest(BaseModel):
    """One turn asked of a model. A setting left None is the model's own (`temperature`, `max_tokens`, `seed`)."""

    messages: list[ModelMessage]
    tools: list[ToolDefinition] = Field(default_factory=list)
    tool_choice: ToolChoice | None = None
    response_format: ResponseFormat | None = None
    parallel_tool_calls: bool | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    #: Text that ends the reply where it first appears, itself left out (OpenAI's `stop`): what comes after it
    #: would cost tokens and decide nothing.
    stop: list[str] | None = None

    @property
    def schema_name(self) -> str | None:
        return self.response_format.name if self.response_format is not None else None


# --- the reply --------------------------------------------------------------------------------------


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: Prompt tokens the endpoint reused from its cache (OpenAI's `prompt_tokens_details.cached_tokens`;
    #: `dbgorilla.llm_server` reports them); None when the endpoint does not say.
    cached_tokens: int | None = None

    def __add__(self, other: Usage) -> Usage:
        cached = None
        if self.cached_tokens is not None or other.cached_tokens is not None:
            cached = (self.cached_tokens or 0) + (other.cached_tokens or 0)
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cached_tokens=cached,
        )

    @property
    def new_prompt_tokens(self) -> int | None:
        """Prompt tokens the endpoint had to evaluate: on a CPU, what a turn's time is made of."""
        return None if self.cached_tokens is None else self.prompt_tokens - self.cached_tokens


#: The name the loop and its traces have always used for a call the model made.
RawToolCall = ToolCallPart


class ModelReply(BaseModel):
    """A model's answer to a `ChatRequest`: its text and calls, the usage, the provider's raw response."""

    content: str | None = None
    tool_calls: list[ToolCallPart] = Field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage = Field(default_factory=Usage)
    raw: dict[str, Any] = Field(default_factory=dict)
    latency_s: float = 0.0


class ModelError(Exception):
    outcome = "model_error"


class ModelTimeout(ModelError):
    outcome = "timeout"


class ModelUnavailable(ModelError):
    """The endpoint could not be reached (after the client's bounded retries)."""


class ChatModel(Protocol):
    """What the loop drives: any provider's model, a scripted one, the oracle."""

    name: str
    #: Local llama.cpp servers only emit well-formed calls when `tool_choice` names the function.
    prefers_named_tool_choice: bool

    def complete(self, request: ChatRequest) -> ModelReply: ...


#: The one-token request that proves an endpoint answers before the first question.
PROBE = ChatRequest(messages=[ModelRequest.user("Say OK.")], max_tokens=1)
