"""What the page is sent, as JSON: one event per model turn, per executed call, and the answer.

The events are read off the same trace every other door shows (`agent.loop.ExecutedCall`, the
`QueryAgentResponse` of `agent.query_agent.response_of`), so the page says what `ask` prints.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from agent.loop import AgentRun, ExecutedCall
from agent.models import is_commit_request
from agent.query_agent import response_of
from executors import QueryResult
from llm import ChatRequest, ModelReply

Event = dict[str, Any]
#: Rows of a result table sent to the page (the count says how many there were).
MAX_ROWS = 20
#: Characters of one shown value (a description may be a paragraph).
MAX_VALUE = 120


def turn_kind(request: ChatRequest, reply: ModelReply) -> str:
    """What a model turn was for: a tool call, the strategy's structured decision, the commit, or prose."""
    if request.response_format is not None:
        return "commit" if is_commit_request(request.response_format) else "decision"
    return "call" if reply.tool_calls else "answer"


def turn_event(request: ChatRequest, reply: ModelReply) -> Event:
    """One model turn: what it was for, its time and tokens, and what it said (its calls come as `call` events)."""
    return {
        "type": "turn",
        "kind": turn_kind(request, reply),
        "latency_s": round(reply.latency_s, 3),
        "prompt_tokens": reply.usage.prompt_tokens,
        "completion_tokens": reply.usage.completion_tokens,
        "content": _short(reply.content or "", 600),
        "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in reply.tool_calls],
    }


def call_event(step: int, call: ExecutedCall, turn: Event | None) -> Event:
    """One executed call: the arguments, the Weaviate calls, the result table or typed error, the program."""
    result = call.result
    return {
        "type": "call",
        "step": step + 1,
        "tool": call.tool_name,
        "arguments": call.arguments if call.arguments is not None else call.raw_arguments,
        "recovered_from_text": call.recovered_from_text,
        "repeat_of": call.repeat_of,
        "weaviate_calls": call.weaviate_call,
        "error": call.error.model_dump() if call.error is not None else None,
        "result": table_of(result) if result is not None else None,
        "program": result.program() if result is not None else None,
        "latency_s": round(call.latency_s, 3),
        "model": _turn_cost(turn),
    }


def _turn_cost(turn: Event | None) -> dict[str, Any] | None:
    """The model turn that made the call: its time and tokens, shown with the step."""
    if turn is None:
        return None
    return {k: turn[k] for k in ("latency_s", "prompt_tokens", "completion_tokens")}


def table_of(result: QueryResult) -> Event:
    """A result as a table the page renders as it is: groups, aggregates or objects."""
    base = {
        "collection": result.collection,
        "operator_class": result.operator_class,
        "truncated": result.truncated,
        "notes": result.notes,
    }
    if result.groups is not None:
        metrics = sorted({f"{p}.{m}" for g in result.groups.values() for p, ms in g.aggregations.items() for m in ms})
        rows = [
            [key, group.count, *(_metric(group.aggregations, name) for name in metrics), len(group.samples)]
            for key, group in list(result.groups.items())[:MAX_ROWS]
        ]
        columns = [result.group_by or "group", "count", *metrics, "samples"]
        ids = [[s.uuid for s in g.samples] for g in list(result.groups.values())[:MAX_ROWS]]
        return {**base, "kind": "groups", "columns": columns, "rows": rows, "row_ids": ids, "total": len(result.groups)}
    if result.aggregations:
        pairs = [(p, m, v) for p, metrics in result.aggregations.items() for m, v in metrics.items()]
        rows = [[prop, metric, _value(value)] for prop, metric, value in pairs]
        columns = ["property", "metric", "value"]
        total = result.total_count
        return {**base, "kind": "aggregation", "columns": columns, "rows": rows, "row_ids": [], "total": total}
    properties = list(dict.fromkeys(p for o in result.objects for p in o.properties))
    extra = ["distance"] if any(o.distance is not None for o in result.objects) else []
    rows = [
        [obj.rank or index + 1, *(_short(_value(obj.properties.get(p)), MAX_VALUE) for p in properties)]
        + ([obj.distance] if extra else [])
        for index, obj in enumerate(result.objects[:MAX_ROWS])
    ]
    total = result.total_count if result.total_count is not None else len(result.objects)
    columns = ["rank", *properties, *extra]
    ids = [[o.uuid] for o in result.objects[:MAX_ROWS]]
    return {**base, "kind": "objects", "columns": columns, "rows": rows, "row_ids": ids, "total": total}


def answer_event(run: AgentRun, collection_names: list[str]) -> Event:
    """The answer as the Query Agent's response gives it: text, the committed value, sources, partial, cost."""
    response = response_of(run, collection_names)
    return {
        "type": "answer",
        "final_answer": response.final_answer,
        "committed": response.answer.text() if response.answer is not None else None,
        "commit_error": run.commit.error if run.commit is not None and response.answer is None else None,
        "sources": [s.model_dump() for s in response.sources],
        "unreceived_citations": response.unreceived_citations,
        "is_partial_answer": response.is_partial_answer,
        "missing_information": response.missing_information,
        "outcome": run.outcome,
        "error": run.error,
        "steps": len(run.steps),
        "corrections": run.corrections,
        "prompt_tokens": run.usage.prompt_tokens,
        "completion_tokens": run.usage.completion_tokens,
        "total_time": response.total_time,
    }


def error_event(kind: str, message: str) -> Event:
    """A failure the page shows as one readable line (never a stack trace)."""
    return {"type": "error", "kind": kind, "message": message}


def sse(event: Event) -> str:
    """One server-sent event."""
    return f"event: {event['type']}\ndata: {json.dumps(event, default=str)}\n\n"


class ObservedModel:
    """A chat model that reports each turn as it returns (time, tokens, what it was for), then behaves as the model."""

    def __init__(self, inner: Any, emit: Callable[[Event], None]) -> None:
        self.inner = inner
        self.emit = emit
        self.last_turn: Event | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def complete(self, request: ChatRequest) -> ModelReply:
        reply = self.inner.complete(request)
        self.last_turn = turn_event(request, reply)
        self.emit(self.last_turn)
        return reply


def _metric(aggregations: dict[str, dict[str, Any]], name: str) -> Any:
    prop, metric = name.split(".", 1)
    return _value(aggregations.get(prop, {}).get(metric))


def _value(value: Any) -> Any:
    """A value as the table shows it: top occurrences as "value (count)", lists joined."""
    if isinstance(value, list):
        return ", ".join(f"{v.value} ({v.count})" if hasattr(v, "count") else str(v) for v in value)
    return value


def _short(value: Any, limit: int) -> Any:
    return value[: limit - 1] + "…" if isinstance(value, str) and len(value) > limit else value
