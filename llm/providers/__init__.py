"""Providers, chosen by a `provider:model` name (`openai:gpt-4o-mini`, `local:qwen2.5-coder-1.5b`).

A provider is a name and a function that opens one of its models. Every module in this package
that defines `PROVIDER` is one (found on first use), so adding a provider is one file here, with
its translation of `llm.messages` to its wire; a layer above registers those that need it
(`dbgorilla.chat` registers `local`, which starts the llama.cpp server and shares the OpenAI
translation).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from llm.messages import ChatModel


@dataclass(frozen=True)
class Provider:
    name: str
    summary: str
    #: Opens a model of this provider: `open(model, base_url=..., timeout=..., max_retries=..., ...)`.
    open: Callable[..., ChatModel]


class UnknownProvider(ValueError):
    """A `provider:` no module defines and nobody registered."""


_REGISTERED: dict[str, Provider] = {}
_FOUND = False


def register(provider: Provider) -> Provider:
    """Make `provider` choosable by name (a later registration of the same name replaces it)."""
    _REGISTERED[provider.name] = provider
    return provider


def providers() -> dict[str, Provider]:
    """Every provider: this package's modules, then those registered."""
    global _FOUND
    if not _FOUND:
        for module in pkgutil.iter_modules(__path__):
            found = getattr(importlib.import_module(f"{__name__}.{module.name}"), "PROVIDER", None)
            if isinstance(found, Provider):
                _REGISTERED.setdefault(found.name, found)
        _FOUND = True
    return dict(_REGISTERED)


def split_model_name(name: str) -> tuple[str | None, str]:
    """`"openai:gpt-4o-mini"` -> ("openai", "gpt-4o-mini"); a name with no known provider before a colon
    (`"qwen2.5-coder-1.5b"`, Ollama's `"qwen2.5:1.5b"`) -> (None, name)."""
    prefix, colon, rest = name.partition(":")
    if colon and prefix in providers():
        return prefix, rest
    return None, name


def open_model(provider: str, model: str, **options: Any) -> ChatModel:
    """A model of `provider`; options are the provider's (base_url, timeout, max_retries, ...)."""
    known = providers()
    if provider not in known:
        raise UnknownProvider(f"unknown model provider {provider!r}; known: {', '.join(sorted(known))}")
    return known[provider].open(model, **options)


__all__ = ["Provider", "UnknownProvider", "open_model", "providers", "register", "split_model_name"]
