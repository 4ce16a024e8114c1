"""`check`: before any query, one enforced decision: does the database hold what the question needs?

A small model never says "the database cannot answer": asked for a salary no collection has, it
averages another number. Here the first turn names the properties the question needs (an enum of
the schema's property names, plus "not in the database") and the statistic it asks for (the tool's
statistics, and common ones it cannot compute: a standard deviation, a variance...). A question
that needs a missing property or a statistic the tool cannot compute is answered "cannot answer",
with the reason, and no query is run; any other goes to the inner strategy unchanged. The turn is
the loop's first request with the check after the question, so the server's cached prompt prefix
serves it, and the loop's first turn reuses it.
"""

from __future__ import annotations

import json
import time
from typing import Any

from agent.answer import Commit, FinalAnswer
from agent.loop import AgentConfig, AgentRun, Executor
from agent.models import CHECK_SCHEMA_NAME, CONFIRM_SCHEMA_NAME, ModelError, ModelReply, Usage
from agent.strategies.decompose import offered_collections
from agent.tooldef import ToolSet
from llm import ChatRequest, ModelRequest, ModelResponse, ResponseFormat

MISSING = "(not in the database)"
#: What the tool computes, as a reader names them ("none": the question lists or groups objects), then
#: common statistics it cannot compute; choosing one of those is a refusal.
SUPPORTED = ("none", "count", "average", "median", "minimum", "maximum", "sum", "most common", "percentage")
UNSUPPORTED = ("standard deviation", "variance", "correlation", "percentile")
STATISTICS = (*SUPPORTED, *UNSUPPORTED)
CHECK_PROMPT = (
    "Before you query: asks_for: what the question asks for, in a few of its own words. properties: every "
    f'property it needs; if it needs something no collection above has, include "{MISSING}". statistic: '
    'the one it asks for, "none" if it asks to list or group objects.'
)
CONFIRM_PROMPT = (
    'The question asks for: "{asks_for}". The properties you chose: {chosen}. Does the database store what '
    "the question asks for in them? stored: false if the question needs something none of them holds."
)
CONFIRM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"stored": {"type": "boolean"}},
    "required": ["stored"],
    "additionalProperties": False,
}


def check_schema(properties: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "asks_for": {"type": "string", "maxLength": 80},
            "properties": {"type": "array", "items": {"enum": [*properties, MISSING]}, "minItems": 1, "maxItems": 4},
            "statistic": {"enum": list(STATISTICS)},
        },
        "required": ["asks_for", "properties", "statistic"],
        "additionalProperties": False,
    }


def refusal(decision: dict[str, Any]) -> str:
    """Why the database cannot answer, by the decision ("" when it can)."""
    if MISSING in (decision.get("properties") or []):
        return "the database has no property holding what the question asks about"
    named = [s for s in UNSUPPORTED if s == decision.get("statistic") or s in str(decision.get("asks_for", "")).lower()]
    if named:
        return f"the query tool cannot compute a {named[0]}"
    if decision.get("stored") is False:
        return f"the database does not store what the question asks for ({decision.get('asks_for', '')})"
    return ""


class Check:
    """One enforced decision on what the question needs; a refusal when the database lacks it."""

    name = "check"

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def run(
        self,
        model: Any,
        executor: Executor,
        tools: ToolSet,
        config: AgentConfig,
        question: str,
        on_call: Any = None,
    ) -> AgentRun:
        schema = getattr(executor, "schema", None)
        if schema is None:
            return self.inner.run(model, executor, tools, config, question, on_call)
        shown = set(offered_collections(tools))
        names = list(dict.fromkeys(p.name for c in schema.collections if c.name in shown for p in c.properties))
        asked = f"{config.question_preamble}{question}" if config.question_preamble else question
        # The loop's own first request (system prompt, tools, question) with the check appended to the
        # question: the server's cached prefix serves both, and the loop's first turn reuses this one's.
        offered = [] if tools.design.structured_output else tools.definitions()

        def ask(messages: list[Any], name: str, schema: dict[str, Any]) -> ModelReply:
            return model.complete(
                ChatRequest(
                    messages=messages,
                    tools=offered,
                    tool_choice="none" if offered else None,
                    response_format=ResponseFormat(name=name, json_schema=schema),
                )
            )

        messages: list[Any] = [ModelRequest.prompt(config.system_prompt, f"{asked}\n\n{CHECK_PROMPT}")]
        started = time.perf_counter()
        usage = Usage()
        try:
            reply = ask(messages, CHECK_SCHEMA_NAME, check_schema(names))
            usage = usage + reply.usage
            decision = json.loads(reply.content or "{}")
            if not refusal(decision):  # confirm the properties chosen hold what the question asks for
                chosen = [p for c in schema.collections if c.name in shown for p in c.properties]
                picked = decision.get("properties") or []
                described = "; ".join(f"{p.name} ({p.description or p.data_type})" for p in chosen if p.name in picked)
                prompt = CONFIRM_PROMPT.format(asks_for=decision.get("asks_for", ""), chosen=described or "none")
                messages += [ModelResponse.of(reply.content or ""), ModelRequest.user(prompt)]
                confirmed = ask(messages, CONFIRM_SCHEMA_NAME, CONFIRM_SCHEMA)
                usage = usage + confirmed.usage
                decision["stored"] = bool(json.loads(confirmed.content or "{}").get("stored", True))
        except (ModelError, ValueError) as error:  # undecided: the inner strategy as is
            run = self.inner.run(model, executor, tools, config, question, on_call)
            run.strategy_notes["check"] = {"fell_back": f"{type(error).__name__}: {error}"}
            return run
        reason = refusal(decision)
        checked_s = time.perf_counter() - started
        if not reason:
            run = self.inner.run(model, executor, tools, config, question, on_call)
            run.usage = run.usage + usage
            run.latency_s += checked_s
            run.strategy_notes["check"] = {"decision": decision, "latency_s": round(checked_s, 3)}
            return run
        answer = FinalAnswer(cannot_answer=reason)
        return AgentRun(
            question=question,
            model=model.name,
            tool_design=tools.design.label(),
            outcome="answered",
            final_answer=f"I cannot answer that from this database: {reason}.",
            usage=usage,
            latency_s=checked_s,
            commit=Commit(answer=answer, content=json.dumps(decision), usage=usage),
            strategy_notes={"check": {"decision": decision, "latency_s": round(checked_s, 3)}},
        )
