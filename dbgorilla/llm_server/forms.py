"""OpenAI's `json_schema` response format, taken by llama-cpp-python's server as the form it knows.

The server's request model accepts `response_format` of type `text` or `json_object` (with a `schema`, which
it turns into a grammar) and refuses `json_schema` with HTTP 500. A client that asks OpenAI's way first
(`llm.providers.openai_compatible.SchemaForms`) then paid two failed requests and the openai client's retry
back-off before it fell back, once per process: on every `dbgorilla ask`, and a traceback in the server's log
each time. `JsonSchemaForm` rewrites such a request before the server reads it, so both forms reach the same
grammar and the first one works.
"""

from __future__ import annotations

import json
from typing import Any

#: The one route whose requests carry a response format.
COMPLETIONS_PATH = "/v1/chat/completions"


def as_json_object(body: bytes) -> bytes:
    """A completion request asking for OpenAI's `json_schema` form, asked as `json_object` with the schema,
    which the server holds to the same grammar; any other body as sent."""
    try:
        payload = json.loads(body)
    except ValueError:
        return body
    wanted = payload.get("response_format") if isinstance(payload, dict) else None
    if not isinstance(wanted, dict) or wanted.get("type") != "json_schema":
        return body
    schema = (wanted.get("json_schema") or {}).get("schema")
    if not isinstance(schema, dict):
        return body
    return json.dumps({**payload, "response_format": {"type": "json_object", "schema": schema}}).encode()


class JsonSchemaForm:
    """ASGI middleware: each completion request's body through `as_json_object` before the server reads it."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "http" or scope.get("path") != COMPLETIONS_PATH:
            await self.app(scope, receive, send)
            return
        chunks, message = [], {"more_body": True}
        while message.get("more_body", False):
            message = await receive()
            if message["type"] != "http.request":  # the client left: the server sees it as sent
                await self.app(scope, _replay([message], receive), send)
                return
            chunks.append(message.get("body", b""))
        body = as_json_object(b"".join(chunks))
        await self.app(scope, _replay([{"type": "http.request", "body": body, "more_body": False}], receive), send)


def _replay(messages: list[dict[str, Any]], receive: Any) -> Any:
    """A `receive` that gives `messages` first, then what the client sends next (its disconnect)."""
    pending = list(messages)

    async def replayed() -> dict[str, Any]:
        return pending.pop(0) if pending else await receive()

    return replayed
