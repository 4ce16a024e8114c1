"""`decompose`: small decisions instead of one big call, each in a schema the server enforces.

First the collection (an enum of the collections offered), then the kind of operation (list,
search, aggregate, group), then only the fields that kind needs, with the property names of the
right type as enums (a text filter can only name a text property). The arguments decided become the
first call of the inner strategy's loop; later turns (the answer, any further call) are the inner
strategy's as usual. Each decision is one short reply to a grammar, which a small model gets right
far more often than the whole tool call at once.
"""

from __future__ import annotations

import json
from typing import Any

from agent.loop import AgentConfig, AgentRun, Executor
from agent.models import ModelError, ModelReply, OracleModel, RawToolCall, Usage, oracle_replies, schema_name
from agent.strategies.registry import StrategyInfo
from agent.tooldef import (
    OPERATION_KINDS,
    TOOL_NAME,
    ToolSet,
    ToolVariant,
    operation_kind,
    property_names_by_kind,
    tool_function_name,
    typed_slot,
)
from executors.vocabulary import AGGREGATION_FIELDS, FILTER_FIELDS, GROUPBY_FIELD, SEARCH_FIELD
from llm import ChatRequest, ModelRequest, ResponseFormat

#: The slots each kind may fill besides the filters (which every kind may); for search and group the
#: first is required.
SLOTS: dict[str, tuple[str, ...]] = {
    "list": (),
    "search": (SEARCH_FIELD,),
    "aggregate": (*AGGREGATION_FIELDS, SEARCH_FIELD),
    "group": (GROUPBY_FIELD, *AGGREGATION_FIELDS, SEARCH_FIELD),
}
#: The decisions' schema names: `Decompose_collection`, `Decompose_kind`, `Decompose_arguments`.
DECOMPOSE_SCHEMA_PREFIX = "Decompose_"
STEPS = ("collection", "kind", "arguments")
STEP_PROMPTS = {
    "collection": "Step 1 of 3: which collection answers the question?",
    "kind": "Step 2 of 3: which operation on {collection}? list: show matching objects; search: find objects "
    "by meaning; aggregate: a count, sum, mean, top values or share over the objects; group: a value per group.",
    "arguments": "Step 3 of 3: the {kind} query on {collection}. Fill only what the question asks for: a "
    "filter only if it names a condition, an aggregation only if it asks for a statistic.",
}


def offered_collections(tools: ToolSet) -> list[str]:
    if tools.design.variant is ToolVariant.PER_COLLECTION:
        return list(tools.tool_to_collection.values())
    return list(tools.definitions()[0].parameters["properties"]["collection_name"]["enum"])


def arguments_schema(tools: ToolSet, executor: Any, collection: str, kind: str) -> dict[str, Any]:
    """The tool's parameters narrowed to one collection and one kind, property names as typed enums."""
    properties = tools.definitions()[0].parameters["properties"]
    found = executor.schema.get(collection)
    names = property_names_by_kind([found]) if found else {}
    kept: dict[str, Any] = {}
    for slot in dict.fromkeys((*SLOTS[kind], *FILTER_FIELDS)):
        typed = typed_slot(slot, properties[slot], names) if slot in properties else None
        if typed is not None:
            kept[slot] = typed
    required = [slot for slot in SLOTS[kind][:1] if slot in kept and kind in ("search", "group")]
    return {"type": "object", "properties": kept, "required": required, "additionalProperties": False}


class _FirstCallDecided:
    """The model, except that its first turn is the call the decisions made."""

    def __init__(self, model: Any, name: str, arguments: dict[str, Any], usage: Usage, structured: bool) -> None:
        self.model = model
        self.name = model.name
        self.prefers_named_tool_choice = getattr(model, "prefers_named_tool_choice", False)
        self.pending: tuple[str, dict[str, Any]] | None = (name, arguments)
        self.usage = usage
        self.structured = structured

    def complete(self, request: ChatRequest) -> ModelReply:
        if self.pending is None:
            return self.model.complete(request)
        name, arguments = self.pending
        self.pending = None
        if self.structured:
            payload = {"use_tools": True, "tool_calls": [{"function_name": name, "arguments": arguments}]}
            return ModelReply(content=json.dumps(payload), usage=self.usage)
        call = RawToolCall(id="decomposed-1", name=name, arguments=json.dumps(arguments))
        return ModelReply(tool_calls=[call], usage=self.usage)


class Decompose:
    """Collection, kind, then the kind's fields, each enforced; the result runs as the first call."""

    name = "decompose"

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
        if getattr(executor, "schema", None) is None:
            return self.inner.run(model, executor, tools, config, question, on_call)
        asked = config.user_turn(question)
        system = f"{config.system_prompt}\n\n{tools.description}"
        usage, decisions = Usage(), {}
        try:
            names = offered_collections(tools)
            decisions["collection"] = names[0] if len(names) == 1 else None
            for step in STEPS:
                if decisions.get(step) is not None:
                    continue
                if step == "collection":
                    schema = _one("collection", names)
                elif step == "kind":
                    schema = _one("kind", list(OPERATION_KINDS))
                else:
                    schema = arguments_schema(tools, executor, decisions["collection"], decisions["kind"])
                prompt = STEP_PROMPTS[step].format(**decisions)
                wanted = ResponseFormat(name=f"{DECOMPOSE_SCHEMA_PREFIX}{step}", json_schema=schema)
                messages = [ModelRequest.prompt(system, f"{asked}\n\n{prompt}")]
                reply = model.complete(ChatRequest(messages=messages, response_format=wanted))
                usage = usage + reply.usage
                value = json.loads(reply.content or "{}")
                decisions[step] = value if step == "arguments" else value.get(step)
        except (ModelError, ValueError, KeyError, AttributeError) as error:  # undecided: the inner loop as is
            run = self.inner.run(model, executor, tools, config, question, on_call)
            run.strategy_notes["decompose"] = {"decisions": decisions, "fell_back": f"{type(error).__name__}: {error}"}
            return run
        arguments = {**dict(decisions["arguments"] or {}), "collection_name": decisions["collection"]}
        name = TOOL_NAME
        if tools.design.variant is ToolVariant.PER_COLLECTION:
            name = tool_function_name(arguments.pop("collection_name"))
        decided = _FirstCallDecided(model, name, arguments, usage, tools.design.structured_output)
        run = self.inner.run(decided, executor, tools, config, question, on_call)
        run.strategy_notes["decompose"] = {"decisions": decisions}
        return run


def _one(key: str, choices: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {key: {"type": "string", "enum": choices}},
        "required": [key],
        "additionalProperties": False,
    }


@oracle_replies(*(f"{DECOMPOSE_SCHEMA_PREFIX}{step}" for step in STEPS))
def oracle_decision(oracle: OracleModel, request: ChatRequest) -> dict[str, Any]:
    """The oracle's decision, read off the first gold call."""
    truth = dict(oracle.ground_truth)
    step = str(schema_name(request.response_format)).removeprefix(DECOMPOSE_SCHEMA_PREFIX)
    if step == "collection":
        return {"collection": truth.get("collection_name", "")}
    if step == "kind":
        return {"kind": operation_kind(truth)}
    return {k: v for k, v in truth.items() if k != "collection_name"}


STRATEGY = StrategyInfo(
    "decompose",
    "collection, then operation kind, then only its fields, property names as enforced enums",
    lambda inner, _: Decompose(inner),
    rank=60,
)
