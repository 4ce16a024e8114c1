"""`plan`: for multi-step questions, a plan of dependent calls with placeholders, filled by the agent.

The model writes the whole plan at once, in a schema the server enforces: up to three calls, each
with what to pick from its result (the most or least common group, the group with the highest or
lowest value of a metric, the second most common, or the metric itself). A later call names an
earlier pick as `"{step1}"`. The agent runs the calls in order and fills each placeholder from the
result itself, so the model never retypes a value it has not seen. The results then go back to the
model through the inner strategy's loop, which answers (and may query more) as usual.
"""

from __future__ import annotations

import json
from typing import Any

from agent.loop import AgentConfig, AgentRun, Executor
from agent.models import ModelError, ModelReply, OracleModel, RawToolCall, Usage, oracle_replies
from agent.strategies.registry import StrategyInfo
from agent.tooldef import TOOL_NAME, ToolSet, ToolVariant, tool_function_name
from executors import QueryResult
from llm import ChatRequest, ModelRequest, ResponseFormat

MAX_STEPS = 3
#: The plan's schema name.
PLAN_SCHEMA_NAME = "QueryPlan"
PICKS = ("none", "most_common", "least_common", "second_most_common", "highest", "lowest", "metric")
PLAN_PROMPT = (
    "Plan the queries that answer the question: one call, or up to three when a later one needs a value an "
    'earlier one reveals. For each call say what to pick from its result ("most_common" group, "highest" '
    'group by property and metric, "metric": the aggregated number, or "none"); a later call uses an earlier '
    'pick as the string "{step1}", "{step2}". Never guess a value a result will reveal.'
)


def plan_schema(tools: ToolSet) -> dict[str, Any]:
    """A list of calls of the tool's parameters (any filter value may be a placeholder), each with its pick."""
    call = json.loads(json.dumps(tools.definitions()[0].parameters))
    for slot in call["properties"].values():
        value = slot.get("properties", {}).get("value")
        if value is not None:
            slot["properties"]["value"] = {"type": ["string", "number", "boolean"]}
    step = {
        "type": "object",
        "properties": {
            "call": call,
            "pick": {"type": "string", "enum": list(PICKS)},
            "property": {"type": "string"},
            "metric": {"type": "string"},
        },
        "required": ["call", "pick"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"steps": {"type": "array", "items": step, "minItems": 1, "maxItems": MAX_STEPS}},
        "required": ["steps"],
        "additionalProperties": False,
    }


def pick(step: dict[str, Any], result: QueryResult) -> str | float | None:
    """The value a step's pick names in its result (None: nothing to pick)."""
    kind, prop, metric = step.get("pick", "none"), str(step.get("property") or ""), str(step.get("metric") or "")
    if kind == "metric":
        values = result.aggregations.get(prop) or next(iter(result.aggregations.values()), {})
        value = values.get(metric) if metric in values else next(iter(values.values()), None)
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
    if kind in ("most_common", "least_common", "second_most_common") and result.groups:
        ranked = sorted(result.groups.items(), key=lambda kv: (-kv[1].count, kv[0]))
        if kind == "least_common":
            return ranked[-1][0]
        return ranked[1][0] if kind == "second_most_common" and len(ranked) > 1 else ranked[0][0]
    if kind in ("most_common", "least_common", "second_most_common") and result.aggregations:
        tops = [v for values in result.aggregations.values() for v in values.values() if isinstance(v, list)]
        if tops and tops[0]:
            index = -1 if kind == "least_common" else (1 if kind == "second_most_common" and len(tops[0]) > 1 else 0)
            return str(tops[0][index].value)
    if kind in ("highest", "lowest") and result.groups:
        scored = []
        for key, group in result.groups.items():
            values = group.aggregations.get(prop) or next(iter(group.aggregations.values()), {})
            value = values.get(metric) if metric in values else next(iter(values.values()), None)
            if isinstance(value, int | float) and not isinstance(value, bool):
                scored.append((float(value), key))
        if scored:
            return (max(scored) if kind == "highest" else min(scored))[1]
    return None


def fill(node: Any, picked: dict[str, str | float]) -> Any:
    """`node` with every `"{stepN}"` replaced by step N's pick."""
    if isinstance(node, dict):
        return {key: fill(value, picked) for key, value in node.items()}
    if isinstance(node, list):
        return [fill(value, picked) for value in node]
    if isinstance(node, str) and node.startswith("{") and node.endswith("}") and node[1:-1] in picked:
        return picked[node[1:-1]]
    return node


class _Recorder:
    """The executor, keeping each result so the next call's placeholders can be filled from it."""

    def __init__(self, executor: Executor) -> None:
        self.executor = executor
        self.results: list[QueryResult | None] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.executor, name)

    def execute(self, arguments: Any) -> QueryResult:
        try:
            result = self.executor.execute(arguments)
        except Exception:
            self.results.append(None)
            raise
        self.results.append(result)
        return result


class _PlannedCalls:
    """The model, except that its first turns are the plan's calls, each filled from the results so far."""

    def __init__(self, model: Any, steps: list[dict[str, Any]], recorder: _Recorder, tools: ToolSet, usage: Usage):
        self.model, self.steps, self.recorder, self.tools, self.usage = model, steps, recorder, tools, usage
        self.name = model.name
        self.prefers_named_tool_choice = getattr(model, "prefers_named_tool_choice", False)
        self.filled: list[dict[str, Any]] = []
        self.picked: dict[str, str | float] = {}

    def complete(self, request: ChatRequest) -> ModelReply:
        index = len(self.filled)
        if index and index <= len(self.recorder.results):  # pick from the call just made
            result = self.recorder.results[index - 1]
            value = pick(self.steps[index - 1], result) if result is not None else None
            if value is not None:
                self.picked[f"step{index}"] = value
        if index >= len(self.steps) or request.response_format is not None:
            return self.model.complete(request)
        arguments = fill(dict(self.steps[index].get("call") or {}), self.picked)
        self.filled.append(arguments)
        name = TOOL_NAME
        if self.tools.design.variant is ToolVariant.PER_COLLECTION:
            arguments = dict(arguments)
            name = tool_function_name(str(arguments.pop("collection_name", "")))
        usage, self.usage = self.usage, Usage()  # the plan's tokens are counted on the first call
        call = RawToolCall(id=f"plan-{index + 1}", name=name, arguments=json.dumps(arguments))
        return ModelReply(tool_calls=[call], usage=usage)


class Plan:
    """Write the plan once (enforced), then run it through the inner loop with the values filled in."""

    name = "plan"

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
        if tools.design.structured_output:  # the plan replays native calls only
            return self.inner.run(model, executor, tools, config, question, on_call)
        asked = config.user_turn(question)
        messages = [ModelRequest.prompt(f"{config.system_prompt}\n\n{tools.description}", f"{asked}\n\n{PLAN_PROMPT}")]
        wanted = ResponseFormat(name=PLAN_SCHEMA_NAME, json_schema=plan_schema(tools))
        try:
            reply = model.complete(ChatRequest(messages=messages, response_format=wanted))
            steps = list(json.loads(reply.content or "{}")["steps"])[:MAX_STEPS]
        except (ModelError, ValueError, KeyError, TypeError) as error:
            run = self.inner.run(model, executor, tools, config, question, on_call)
            run.strategy_notes["plan"] = {"fell_back": f"{type(error).__name__}: {error}"}
            return run
        recorder = _Recorder(executor)
        planned = _PlannedCalls(model, steps, recorder, tools, reply.usage)
        steps_needed = max(config.max_steps, len(steps) + 1)
        run = self.inner.run(
            planned, recorder, tools, config.model_copy(update={"max_steps": steps_needed}), question, on_call
        )
        run.strategy_notes["plan"] = {"steps": steps, "filled": planned.filled, "picked": planned.picked}
        return run


@oracle_replies(PLAN_SCHEMA_NAME)
def oracle_plan(oracle: OracleModel, request: ChatRequest) -> dict[str, Any]:
    """The oracle's plan is the resolved gold chain, nothing to fill."""
    chain = [oracle.ground_truth, *oracle.later_calls] if oracle.ground_truth else []
    return {"steps": [{"call": c, "pick": "none"} for c in chain]}


STRATEGY = StrategyInfo(
    "plan",
    "a plan of dependent calls written at once; the agent fills each placeholder from the results",
    lambda inner, _: Plan(inner),
    rank=70,
    excludes=("decompose",),
)
