"""Recover tool calls that small local models write as JSON text in `content`.

Seen forms: a bare arguments object, `{"name": ..., "arguments": {...}}` (also with
`"parameters"`), a list of those, Qwen's `<tool_call>...</tool_call>` tags, and markdown fences.
"""

from __future__ import annotations

import json
from typing import Any

from agent.models import RawToolCall


def _json_values(text: str) -> list[Any]:
    """Every top-level JSON object or array embedded in `text`, in order."""
    decoder = json.JSONDecoder()
    values, index = [], 0
    while index < len(text):
        starts = [position for position in (text.find("{", index), text.find("[", index)) if position != -1]
        if not starts:
            break
        start = min(starts)
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            index = start + 1
            continue
        values.append(value)
        index = end
    return values


def recover_tool_calls(content: str | None, tool_names: list[str]) -> list[RawToolCall]:
    if not content or "{" not in content:
        return []
    calls: list[RawToolCall] = []
    for value in _json_values(content):
        for item in value if isinstance(value, list) else [value]:
            call = _as_call(item, tool_names)
            if call is not None:
                calls.append(RawToolCall(id=f"recovered-{len(calls) + 1}", name=call[0], arguments=json.dumps(call[1])))
    return calls


def _as_call(item: Any, tool_names: list[str]) -> tuple[str, dict[str, Any]] | None:
    if not isinstance(item, dict):
        return None
    name = item.get("name") or item.get("function_name") or item.get("function")
    arguments = item.get("arguments", item.get("parameters"))
    if isinstance(name, str) and name in tool_names:
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except json.JSONDecodeError:
                return None
        return (name, arguments) if isinstance(arguments, dict) else None
    if "collection_name" in item and "query_database" in tool_names:
        return "query_database", item
    return None
