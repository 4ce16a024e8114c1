"""The model seam: a provider-neutral chat (`llm.messages`) and one translation per provider.

    from llm import ChatRequest, ModelRequest, open_model
    model = open_model("openai", "gpt-4o-mini")                       # or a registered provider
    reply = model.complete(ChatRequest(messages=[ModelRequest.prompt("Be brief.", "Hi?")]))

The agent's loop, its strategies and the benchmark generator speak only `llm.messages`; what goes on
the wire is the provider's business (`llm.providers.openai_compatible` for OpenAI-compatible
endpoints, the local llama.cpp server included).
"""

from llm.messages import (
    PROBE,
    ChatModel,
    ChatRequest,
    ModelError,
    ModelMessage,
    ModelReply,
    ModelRequest,
    ModelResponse,
    ModelTimeout,
    ModelUnavailable,
    NamedTool,
    RawToolCall,
    ResponseFormat,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolChoice,
    ToolDefinition,
    ToolReturnPart,
    Usage,
    UserPromptPart,
)
from llm.providers import Provider, UnknownProvider, open_model, providers, register, split_model_name
from llm.providers.openai_compatible import OpenAIChatModel, SchemaForms

__all__ = [
    "PROBE",
    "ChatModel",
    "ChatRequest",
    "ModelError",
    "ModelMessage",
    "ModelReply",
    "ModelRequest",
    "ModelResponse",
    "ModelTimeout",
    "ModelUnavailable",
    "NamedTool",
    "OpenAIChatModel",
    "Provider",
    "RawToolCall",
    "ResponseFormat",
    "SchemaForms",
    "SystemPromptPart",
    "TextPart",
    "ToolCallPart",
    "ToolChoice",
    "ToolDefinition",
    "ToolReturnPart",
    "UnknownProvider",
    "Usage",
    "UserPromptPart",
    "open_model",
    "providers",
    "register",
    "split_model_name",
]
