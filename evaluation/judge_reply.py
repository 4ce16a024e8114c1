"""The judge's reply: its JSON schema, asking an endpoint for it, and reading it back strictly.

Endpoints differ in how they take a schema (OpenAI's `json_schema`, llama-cpp-python's
`json_object` with a schema, or none), and small models wrap JSON in prose or fences; a reply that
still does not rank every shown label exactly once is a `ReplyError`, never a guess.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Protocol

from llm import ChatModel, ChatRequest, ModelRequest, ResponseFormat, SystemPromptPart, UserPromptPart


class Judge(Protocol):
    """Send these messages (and the reply's JSON schema, for endpoints that constrain output), get text back."""

    def __call__(self, messages: list[dict[str, str]], schema: dict[str, Any] | None) -> str: ...


class ReplyError(ValueError):
    """A judge reply that is not the JSON asked for; recorded as the question's parse error."""


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


def _json_object(text: str) -> dict[str, Any]:
    """The reply's JSON object: the whole reply, a ```json fence inside it, or its outermost braces."""
    candidates = [text.strip(), *_FENCE.findall(text)]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    raise ReplyError("the reply holds no JSON object")


def parse_reply(text: str, labels: Sequence[str]) -> tuple[dict[str, int], str | None]:
    """label -> rank and the explanation; every label exactly once, ranks integers from 1 to len(labels)."""
    payload = _json_object(text)
    ranking = payload.get("ranking")
    if isinstance(ranking, dict):  # {"A": 1, "B": 2}: the same information, accepted
        ranking = [{"label": key, "rank": value} for key, value in ranking.items()]
    if not isinstance(ranking, list):
        raise ReplyError("the reply has no `ranking` list")
    ranks: dict[str, int] = {}
    for entry in ranking:
        if not isinstance(entry, dict):
            raise ReplyError(f"a ranking entry is not an object: {entry!r}")
        label, rank = entry.get("label"), entry.get("rank")
        if label not in labels:
            raise ReplyError(f"unknown label {label!r} (shown: {', '.join(labels)})")
        if label in ranks:
            raise ReplyError(f"label {label} is ranked twice")
        if isinstance(rank, bool) or not isinstance(rank, int) or not 1 <= rank <= len(labels):
            raise ReplyError(f"label {label}: rank {rank!r} is not an integer from 1 to {len(labels)}")
        ranks[label] = rank
    missing = [label for label in labels if label not in ranks]
    if missing:
        raise ReplyError(f"labels not ranked: {', '.join(missing)}")
    explanation = payload.get("explanation")
    return ranks, explanation if isinstance(explanation, str) else None


def reply_schema(labels: Sequence[str]) -> dict[str, Any]:
    """The reply's JSON schema: the endpoint may constrain decoding to it; `parse_reply` checks it anyway."""
    entry = {
        "type": "object",
        "properties": {
            "label": {"type": "string", "enum": list(labels)},
            "rank": {"type": "integer", "minimum": 1, "maximum": len(labels)},
        },
        "required": ["label", "rank"],
        "additionalProperties": False,
    }
    ranking = {"type": "array", "items": entry, "minItems": len(labels), "maxItems": len(labels)}
    return {
        "type": "object",
        "properties": {"explanation": {"type": "string"}, "ranking": ranking},
        "required": ["explanation", "ranking"],
        "additionalProperties": False,
    }


class ChatJudge:
    """A `Judge` over any chat model. The reply's schema goes as the request's response format; an
    OpenAI-compatible model sends it the first way the endpoint accepts (`SchemaForms`) and keeps to it."""

    def __init__(self, model: ChatModel) -> None:
        self.model = model

    @property
    def response_format(self) -> str | None:
        """The way the reply's JSON was asked for in the end (None: never answered, or not a form the model keeps)."""
        forms = getattr(self.model, "schema_forms", None)
        return getattr(forms, "used", None)

    def __call__(self, messages: list[dict[str, str]], schema: dict[str, Any] | None) -> str:
        wanted = None if schema is None else ResponseFormat(name="Ranking", json_schema=schema)
        prompt = ModelRequest(parts=[_part(m) for m in messages])
        reply = self.model.complete(ChatRequest(messages=[prompt], response_format=wanted))
        return reply.content or ""


def _part(message: dict[str, str]) -> SystemPromptPart | UserPromptPart:
    """A judge prompt's message (system or user, as `JudgeLine.messages` records it) as a request part."""
    if message["role"] == "system":
        return SystemPromptPart(content=message["content"])
    return UserPromptPart(content=message["content"])
