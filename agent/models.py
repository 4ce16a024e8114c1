"""The agent's own models and names: the oracle, and the schema names its turns carry.

Chat models come from the seam (`llm`): any provider's model answers `complete(ChatRequest) ->
ModelReply`, so the loop never knows which one it talks to. Failures surface as `ModelError`
subclasses with an `outcome` the evaluation records. The oracle reads the neutral messages directly.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from agent.tooldef import TOOL_NAME, tool_function_name
from executors import QueryDatabaseArguments
from llm import (
    ChatModel,
    ChatRequest,
    ModelError,
    ModelReply,
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
    "ORACLE",
    "ORACLE_REPLIES",
    "RESULT_OF",
    "TOOL_TURN_SCHEMA_NAME",
    "ChatModel",
    "ModelError",
    "ModelReply",
    "ModelTimeout",
    "ModelUnavailable",
    "OpenAIChatModel",
    "OracleModel",
    "OracleReply",
    "RawToolCall",
    "Usage",
    "is_commit_request",
    "oracle_replies",
    "schema_name",
]

ORACLE = "oracle"
#: How the loop opens a step's results under structured output (`agent.loop`).
RESULT_OF = "Result of call "
#: The name the commit turn's `response_format` carries (`agent.answer`); the oracle answers it by it.
ANSWER_SCHEMA_NAME = "FinalAnswer"


#: The loop's own structured turn (`agent.loop`): a reply or a tool call, which the oracle answers with its calls.
TOOL_TURN_SCHEMA_NAME = "ResponseOrToolCall"
#: What the oracle replies to a structured turn of a strategy, by the turn's schema name: (the oracle, the
#: request) -> the reply's JSON object. The module that defines a turn registers its reply beside its schema
#: (`oracle_replies`), so a new structured turn touches one file; a turn with none is an error, never a call.
OracleReply = Callable[["OracleModel", ChatRequest], dict[str, Any]]
ORACLE_REPLIES: dict[str, OracleReply] = {}


def oracle_replies(*names: str) -> Callable[[OracleReply], OracleReply]:
    """Register the decorated function as the oracle's reply to the structured turns named `names`."""

    def register(reply: OracleReply) -> OracleReply:
        for name in names:
            ORACLE_REPLIES[name] = reply
        return reply

    return register


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
        reply = ORACLE_REPLIES.get(name or "")
        if reply is not None:
            return ModelReply(content=json.dumps(reply(self, request)))
        if name and name not in (TOOL_TURN_SCHEMA_NAME, ANSWER_SCHEMA_NAME):
            raise ModelError(f"the oracle has no reply to the structured turn {name!r} (see oracle_replies)")
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


#: An object's id as a result shows it to the model (`1. [1a2b3c4d] {...}`).
_SHOWN_ID = re.compile(r"^\s*\d+\. \[([0-9a-f]{8})\]", re.MULTILINE)


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
