"""The agent's own models and names: the oracle, and the schema names its turns carry.

Chat models come from the seam (`llm`): any provider's model answers `complete(ChatRequest) ->
ModelReply`, so the loop never knows which one it talks to. Failures surface as `ModelError`
subclasses with an `outcome` the evaluation records. The oracle reads the neutral messages directly.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from agent.tooldef import TOOL_NAME, operation_kind, tool_function_name
from executors import QueryDatabaseArguments
from llm import (
    ChatModel,
    ChatRequest,
    ModelError,
    ModelReply,
    ModelRequest,
    ModelResponse,
    ModelTimeout,
    ModelUnavailable,
    OpenAIChatModel,
    RawToolCall,
    ResponseFormat,
    ToolDefinition,
    ToolReturnPart,
    Usage,
    UserPromptPart,
)
from llm.messages import all_parts

__all__ = [
    "ANSWER_SCHEMA_NAME",
    "CHECK_SCHEMA_NAME",
    "DECOMPOSE_SCHEMA_PREFIX",
    "FOLLOW_UP_MARK",
    "FOLLOW_UP_SCHEMA_NAME",
    "GROUNDED_SCHEMA_NAME",
    "ORACLE",
    "PLAN_SCHEMA_NAME",
    "RESULT_OF",
    "VALUE_SCHEMA_NAME",
    "VERDICT_SCHEMA_NAME",
    "ChatModel",
    "ModelError",
    "ModelReply",
    "ModelTimeout",
    "ModelUnavailable",
    "OpenAIChatModel",
    "OracleModel",
    "RawToolCall",
    "Usage",
    "is_commit_request",
    "schema_name",
]

ORACLE = "oracle"
#: How the loop opens a step's results under structured output (`agent.loop`).
RESULT_OF = "Result of call "
#: The name the commit turn's `response_format` carries (`agent.answer`); the oracle answers it by it.
ANSWER_SCHEMA_NAME = "FinalAnswer"
#: The name of the `grounded` strategy's commit schema (`agent.strategies.grounded`): ids of values, not values.
GROUNDED_SCHEMA_NAME = "GroundedAnswer"
#: The `decompose` strategy's decisions: `Decompose_collection`, `Decompose_kind`, `Decompose_arguments`.
DECOMPOSE_SCHEMA_PREFIX = "Decompose_"
#: The `plan` strategy's plan of dependent calls (`agent.strategies.plan`).
PLAN_SCHEMA_NAME = "QueryPlan"
#: The `check` strategy's decision on what a question needs (`agent.strategies.check`).
CHECK_SCHEMA_NAME = "QuestionCheck"
#: Its verdict on one collection's properties (`agent.strategies.check`).
VERDICT_SCHEMA_NAME = "CheckVerdict"
#: The `values` strategy's choice among the stored codes a name the model wrote fits (`agent.strategies.values`).
VALUE_SCHEMA_NAME = "StoredValue"
#: The `chain` strategy's rewrite of a follow-up question, and where its prompt puts the follow-up.
FOLLOW_UP_SCHEMA_NAME = "FollowUpQuestion"
FOLLOW_UP_MARK = "Follow-up question: "


def schema_name(response_format: ResponseFormat | dict[str, Any] | None) -> str | None:
    """The schema's name: of a neutral `ResponseFormat`, or of an OpenAI request body's `response_format`
    (what a test server receives)."""
    if isinstance(response_format, ResponseFormat):
        return response_format.name or None
    spec = (response_format or {}).get("json_schema") or {}
    return spec.get("name") if isinstance(spec, dict) else None


def is_commit_request(response_format: ResponseFormat | dict[str, Any] | None) -> bool:
    """Does this response format ask for a committed answer (`agent.answer`)?"""
    return schema_name(response_format) == ANSWER_SCHEMA_NAME


class OracleModel:
    """Replays known-correct arguments through the same loop: proves the pipeline, sets the ceiling.

    Told a multi-step question's resolved gold chain, it makes one call per step; told the
    answer, it says it (otherwise it answers with the last result as the tool returned it). Asked
    to commit its answer (`agent.answer`), it commits the value it was told (`committed`, the
    fields of a `FinalAnswer`), citing the objects the last result showed."""

    name = ORACLE
    prefers_named_tool_choice = False

    def __init__(
        self,
        ground_truth: QueryDatabaseArguments | dict[str, Any],
        later_calls: list[dict[str, Any]] | None = None,
        answer: str | None = None,
        committed: dict[str, Any] | None = None,
    ) -> None:
        if isinstance(ground_truth, QueryDatabaseArguments):
            ground_truth = ground_truth.to_tool_arguments()
        self.ground_truth = ground_truth
        self.later_calls = list(later_calls or [])
        self.answer = answer
        self.committed = dict(committed or {})

    @classmethod
    def for_case(cls, case: Any) -> OracleModel:
        """One oracle per benchmark case (anything with a `ground_truth`)."""
        return cls(case.ground_truth)

    @classmethod
    def abstaining(cls, answer: str) -> OracleModel:
        """The oracle of a question the tool cannot answer: no call, it says why (and commits that)."""
        return cls({}, answer=answer, committed={"cannot_answer": answer})

    def knowing(
        self, calls: list[dict[str, Any]], answer: str | None, committed: dict[str, Any] | None = None
    ) -> OracleModel:
        """This oracle, told the whole gold chain (its first call is the ground truth), the answer and
        the value to commit."""
        return OracleModel(calls[0] if calls else self.ground_truth, calls[1:], answer, committed)

    def complete(self, request: ChatRequest) -> ModelReply:
        messages, tools, response_format = request.messages, request.tools, request.response_format
        # Native calls get tool returns back; structured output gets a user prompt per step.
        results = [
            p.content
            for p in all_parts(messages)
            if isinstance(p, ToolReturnPart) or (isinstance(p, UserPromptPart) and p.content.startswith(RESULT_OF))
        ]
        name = schema_name(response_format)
        if str(name).startswith(DECOMPOSE_SCHEMA_PREFIX):
            return ModelReply(content=json.dumps(self._decide(str(name))))
        if name == PLAN_SCHEMA_NAME:  # the resolved gold chain, nothing to fill
            chain = [self.ground_truth, *self.later_calls] if self.ground_truth else []
            return ModelReply(content=json.dumps({"steps": [{"call": c, "pick": "none"} for c in chain]}))
        if name == GROUNDED_SCHEMA_NAME:
            return ModelReply(content=json.dumps(_point_at(self.committed, messages)))
        if name == FOLLOW_UP_SCHEMA_NAME:  # the follow-up as asked: the chain then puts the answer after it
            asked = [p.content for p in all_parts(messages) if isinstance(p, UserPromptPart)]
            return ModelReply(content=json.dumps({"question": asked[-1].split(FOLLOW_UP_MARK)[-1] if asked else ""}))
        if name == VALUE_SCHEMA_NAME and response_format is not None:  # gold values are stored: none is meant
            choices = response_format.json_schema["properties"]["value"]["enum"]
            return ModelReply(content=json.dumps({"value": choices[0]}))
        if name in (CHECK_SCHEMA_NAME, VERDICT_SCHEMA_NAME) and response_format is not None:
            return ModelReply(content=json.dumps(self._check(response_format.json_schema)))
        if is_commit_request(response_format):
            shown = _SHOWN_ID.findall(results[-1]) if results else []
            committed = {"sources": list(dict.fromkeys(shown)), **self.committed}
            return ModelReply(content=json.dumps(committed))
        chain = [self.ground_truth, *self.later_calls] if self.ground_truth else []
        if len(results) >= len(chain) or not (tools or response_format):
            answer = self.answer
            if answer is None:
                answer = f"Answer from the query results: {results[-1] if results else ''}"
            if response_format is not None:
                return ModelReply(content=json.dumps({"use_tools": False, "response": answer}))
            return ModelReply(content=answer)
        name, arguments = _oracle_call(chain[len(results)], tools)
        if response_format is not None:
            payload = {"use_tools": True, "tool_calls": [{"function_name": name, "arguments": arguments}]}
            return ModelReply(content=json.dumps(payload))
        return ModelReply(
            tool_calls=[RawToolCall(id=f"oracle-{len(results) + 1}", name=name, arguments=json.dumps(arguments))]
        )

    def _check(self, schema: dict[str, Any]) -> dict[str, Any]:
        """A `check` step: the gold collection, then answerable when there is a gold call (the verdict's
        second choice), else not (its first)."""
        fields = schema["properties"]
        if "verdict" in fields:
            return {"verdict": fields["verdict"]["enum"][1 if self.ground_truth else 0]}
        offered = fields["collection"]["enum"]
        wanted = self.ground_truth.get("collection_name")
        return {"collection": wanted if wanted in offered else offered[0], "asks_for": "", "statistic": "none"}

    def _decide(self, schema: str) -> dict[str, Any]:
        """A `decompose` decision, read off the first gold call."""
        truth = dict(self.ground_truth)
        step = schema.removeprefix(DECOMPOSE_SCHEMA_PREFIX)
        if step == "collection":
            return {"collection": truth.get("collection_name", "")}
        if step == "kind":
            return {"kind": operation_kind(truth)}
        return {k: v for k, v in truth.items() if k != "collection_name"}


#: An object's id as a result shows it to the model (`1. [1a2b3c4d] {...}`).
_SHOWN_ID = re.compile(r"^\s*\d+\. \[([0-9a-f]{8})\]", re.MULTILINE)


#: A value as the grounded commit turn lists it: `c1.price.mean = 23.5`.
_FACT_LINE = re.compile(r"^(c\d+\.\S+) = (.*)$", re.MULTILINE)


def _point_at(committed: dict[str, Any], messages: list[ModelRequest | ModelResponse]) -> dict[str, Any]:
    """The oracle's grounded commit: for each value it knows, the id of a listed value equal to it
    (within the precision an answer key commits to)."""
    texts = [str(getattr(p, "content", "")) for p in all_parts(messages)]
    prompt = next((text for text in reversed(texts) if _FACT_LINE.search(text)), "")
    facts = _FACT_LINE.findall(prompt)

    def close(text: str, target: float) -> bool:
        try:
            return math.isclose(float(text), target, rel_tol=1e-4, abs_tol=5.1e-5)
        except ValueError:
            return False

    numbers, differences = [], []
    for n in committed.get("numbers", []):
        found = next((i for i, t in facts if close(t, n)), "")
        pair = (
            None
            if found
            else next(((a, b) for a, x in facts for b, y in facts if close(str(_float(x) - _float(y)), n)), None)
        )
        if found:
            numbers.append(found)
        elif pair is not None:  # a derived number: the difference of two listed values
            differences.append({"of": pair[0], "minus": pair[1]})
    names = [i for name in committed.get("names", []) for i in [next((i for i, t in facts if t == name), "")] if i]
    wanted = committed.get("groups") or {}
    groups = ""
    for fact_id, text in facts:
        pairs = dict(_GROUP_PAIR.findall(text)) if text.startswith("per group") else {}
        shared = [k for k in pairs if k in wanted]
        if wanted and len(shared) == min(len(pairs), len(wanted)) and all(close(pairs[k], wanted[k]) for k in shared):
            groups = fact_id
            break
    return {
        "numbers": numbers,
        "names": names,
        "groups": groups,
        "differences": differences,
        "cannot_answer": str(committed.get("cannot_answer", "")),
    }


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return math.nan


#: One group of a per-group value as the grounded turn lists it: `Spring: 31`.
_GROUP_PAIR = re.compile(r"(?:\{|, )([^:{}]+): ([-+0-9.eE]+)")


def _oracle_call(ground_truth: dict[str, Any], tools: list[ToolDefinition]) -> tuple[str, dict[str, Any]]:
    """The call of the tool offered; under structured output no tools are sent, and the unified tool is named."""
    if not tools:
        return TOOL_NAME, dict(ground_truth)
    names = [tool.name for tool in tools]
    arguments = dict(ground_truth)
    rationale_needed = "rationale" in tools[0].parameters.get("properties", {})
    if rationale_needed:
        arguments["rationale"] = "ground truth"
    if TOOL_NAME in names:
        return TOOL_NAME, arguments
    collection = arguments.pop("collection_name")
    return tool_function_name(collection), arguments
