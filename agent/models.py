"""Chat models the loop can drive: any OpenAI-compatible endpoint (the local llama.cpp server is
one, started by the CLI), and the oracle.

All of them answer `complete(...) -> ModelReply`, so the loop never knows which one it talks to.
Failures surface as `ModelError` subclasses with an `outcome` the evaluation records.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

import openai
from pydantic import BaseModel, Field

from agent.tooldef import TOOL_NAME, operation_kind, tool_function_name
from executors import QueryDatabaseArguments

T = TypeVar("T")

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


def is_commit_request(response_format: dict[str, Any] | None) -> bool:
    """Does this `response_format` ask for a committed answer (`agent.answer`)?"""
    spec = (response_format or {}).get("json_schema") or {}
    return isinstance(spec, dict) and spec.get("name") == ANSWER_SCHEMA_NAME


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: Prompt tokens the endpoint reused from its cache (OpenAI's `prompt_tokens_details.cached_tokens`;
    #: `dbgorilla.llm_server` reports them); None when the endpoint does not say.
    cached_tokens: int | None = None

    def __add__(self, other: Usage) -> Usage:
        cached = None
        if self.cached_tokens is not None or other.cached_tokens is not None:
            cached = (self.cached_tokens or 0) + (other.cached_tokens or 0)
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cached_tokens=cached,
        )

    @property
    def new_prompt_tokens(self) -> int | None:
        """Prompt tokens the endpoint had to evaluate: on a CPU, what a turn's time is made of."""
        return None if self.cached_tokens is None else self.prompt_tokens - self.cached_tokens


class RawToolCall(BaseModel):
    id: str
    name: str
    arguments: str


class ModelReply(BaseModel):
    content: str | None = None
    tool_calls: list[RawToolCall] = Field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage = Field(default_factory=Usage)
    raw: dict[str, Any] = Field(default_factory=dict)
    latency_s: float = 0.0


#: The one-token request that proves an endpoint answers before the first question
#: (`dbgorilla.chat.prove_endpoint`, the local server's start); test servers answer it themselves.
PROBE_MESSAGES: list[dict[str, Any]] = [{"role": "user", "content": "Say OK."}]


def is_probe(body: dict[str, Any]) -> bool:
    """True for the body of the proving request (its messages, one token)."""
    return body.get("messages") == PROBE_MESSAGES and body.get("max_tokens") == 1


class ModelError(Exception):
    outcome = "model_error"


class ModelTimeout(ModelError):
    outcome = "timeout"


class ModelUnavailable(ModelError):
    """The endpoint could not be reached (after the client's bounded retries)."""


class ChatModel(Protocol):
    name: str
    #: Local llama.cpp servers only emit well-formed calls when `tool_choice` names the function.
    prefers_named_tool_choice: bool

    def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        tool_choice: str | dict[str, Any] | None,
        response_format: dict[str, Any] | None = None,
        parallel_tool_calls: bool | None = None,
    ) -> ModelReply: ...


#: Ways to ask an endpoint for JSON that fits a schema, in order: OpenAI's `json_schema` (and llama.cpp's
#: llama-server), then `json_object` with the schema (llama-cpp-python's server, which refuses
#: `json_schema` with HTTP 500 but constrains `json_object` to a schema), then none (the prompt alone).
SCHEMA_FORMS: tuple[str, ...] = ("json_schema", "json_object", "none")


def schema_format(form: str, name: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    """The `response_format` that asks for `schema` in the given form (None: not asked for)."""
    if form == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}
    if form == "json_object":
        return {"type": "json_object", "schema": schema}
    return None


class SchemaForms:
    """Sends a schema the first way an endpoint accepts and keeps to that way once it has worked.

    An error status may mean the form was refused (OpenAI says 400, llama-cpp-python 500 with a
    validation error), so the next form is tried; a timeout or no connection has no status and is
    raised. A form is dropped only once a later one has worked, so one bad moment drops nothing."""

    def __init__(self) -> None:
        self.forms = list(SCHEMA_FORMS)
        #: The form that worked last (None: no request with a schema has been answered yet).
        self.used: str | None = None

    def send(self, ask: Callable[[dict[str, Any] | None], T], name: str, schema: dict[str, Any]) -> T:
        forms = list(self.forms)  # a snapshot: requests in flight on other threads may narrow the list
        index = 0
        while True:
            form = forms[index]
            try:
                result = ask(schema_format(form, name, schema))
            except ModelError as error:
                if index + 1 < len(forms) and getattr(error.__cause__, "status_code", None) is not None:
                    index += 1
                    continue
                raise
            rank = SCHEMA_FORMS.index(form)
            self.forms = [f for f in self.forms if SCHEMA_FORMS.index(f) >= rank] or [form]  # idempotent
            self.used = form
            return result


class OpenAIChatModel:
    """Any OpenAI-compatible chat-completions endpoint.

    A `json_schema` response_format is sent the first way the endpoint takes (`SchemaForms`), so
    structured output works against llama-cpp-python's server as against OpenAI.

    The openai client retries 408/409/429/5xx and connection errors with exponential backoff,
    at most `max_retries` times, and every request is bounded by `timeout` seconds.
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 3,
        temperature: float = 0.0,
        max_tokens: int = 512,
        prefers_named_tool_choice: bool = False,
    ) -> None:
        self.name = model
        self.base_url = base_url
        self.prefers_named_tool_choice = prefers_named_tool_choice
        self.temperature = temperature
        self.max_tokens = max_tokens
        #: Sent as the request's `seed` when set (llama.cpp and OpenAI-compatible endpoints take one).
        self.seed: int | None = None
        self.schema_forms = SchemaForms()
        self._client = openai.OpenAI(
            base_url=base_url,
            api_key=api_key or os.environ.get("OPENAI_API_KEY") or "not-needed",
            timeout=timeout,
            max_retries=max_retries,
        )

    def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        tool_choice: str | dict[str, Any] | None,
        response_format: dict[str, Any] | None = None,
        parallel_tool_calls: bool | None = None,
    ) -> ModelReply:
        if response_format is not None and response_format.get("type") == "json_schema":
            spec = response_format["json_schema"]
            return self.schema_forms.send(
                lambda form: self._complete(messages, tools, tool_choice, form, parallel_tool_calls),
                spec["name"],
                spec["schema"],
            )
        return self._complete(messages, tools, tool_choice, response_format, parallel_tool_calls)

    def _complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        tool_choice: str | dict[str, Any] | None,
        response_format: dict[str, Any] | None,
        parallel_tool_calls: bool | None,
    ) -> ModelReply:
        request: dict[str, Any] = {
            "model": self.name,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if self.seed is not None:
            request["seed"] = self.seed
        if tools:
            request["tools"] = tools
            if tool_choice is not None:
                request["tool_choice"] = tool_choice
            if parallel_tool_calls is not None:
                request["parallel_tool_calls"] = parallel_tool_calls
        if response_format is not None:
            request["response_format"] = response_format
        started = time.perf_counter()
        try:
            response = self._client.chat.completions.create(**request)
        except openai.APITimeoutError as error:
            raise ModelTimeout(f"{self.name}: no answer within the timeout ({error})") from error
        except openai.APIConnectionError as error:
            raise ModelUnavailable(f"{self.name}: endpoint unreachable at {self.base_url}: {error}") from error
        except openai.APIStatusError as error:
            raise ModelError(f"{self.name}: HTTP {error.status_code}: {str(error)[:300]}") from error
        except openai.OpenAIError as error:
            raise ModelError(f"{self.name}: {error}") from error
        latency = time.perf_counter() - started
        if not response.choices:
            raise ModelError(f"{self.name}: the response has no choices")
        message = response.choices[0].message
        calls = [
            RawToolCall(id=call.id or f"call_{index}", name=call.function.name, arguments=call.function.arguments or "")
            for index, call in enumerate(message.tool_calls or [])
            if getattr(call, "function", None) is not None
        ]
        details = getattr(response.usage, "prompt_tokens_details", None)
        usage = Usage(
            prompt_tokens=getattr(response.usage, "prompt_tokens", 0) or 0,
            completion_tokens=getattr(response.usage, "completion_tokens", 0) or 0,
            cached_tokens=getattr(details, "cached_tokens", None),
        )
        return ModelReply(
            content=message.content,
            tool_calls=calls,
            finish_reason=response.choices[0].finish_reason,
            usage=usage,
            raw=response.model_dump(mode="json"),
            latency_s=latency,
        )


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

    def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        tool_choice: str | dict[str, Any] | None,
        response_format: dict[str, Any] | None = None,
        parallel_tool_calls: bool | None = None,
    ) -> ModelReply:
        # Native calls get "tool" messages back; structured output gets a user message per step.
        results = [m for m in messages if m.get("role") == "tool" or str(m.get("content", "")).startswith(RESULT_OF)]
        if str(_schema_name(response_format)).startswith(DECOMPOSE_SCHEMA_PREFIX):
            return ModelReply(content=json.dumps(self._decide(str(_schema_name(response_format)))))
        if _schema_name(response_format) == PLAN_SCHEMA_NAME:  # the resolved gold chain, nothing to fill
            chain = [self.ground_truth, *self.later_calls] if self.ground_truth else []
            return ModelReply(content=json.dumps({"steps": [{"call": c, "pick": "none"} for c in chain]}))
        if _schema_name(response_format) == GROUNDED_SCHEMA_NAME:
            return ModelReply(content=json.dumps(_point_at(self.committed, messages)))
        if is_commit_request(response_format):
            shown = _SHOWN_ID.findall(str(results[-1]["content"])) if results else []
            committed = {"sources": list(dict.fromkeys(shown)), **self.committed}
            return ModelReply(content=json.dumps(committed))
        chain = [self.ground_truth, *self.later_calls] if self.ground_truth else []
        if len(results) >= len(chain) or not (tools or response_format):
            answer = self.answer
            if answer is None:
                answer = f"Answer from the query results: {results[-1]['content'] if results else ''}"
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

    def _decide(self, schema_name: str) -> dict[str, Any]:
        """A `decompose` decision, read off the first gold call."""
        truth = dict(self.ground_truth)
        step = schema_name.removeprefix(DECOMPOSE_SCHEMA_PREFIX)
        if step == "collection":
            return {"collection": truth.get("collection_name", "")}
        if step == "kind":
            return {"kind": operation_kind(truth)}
        return {k: v for k, v in truth.items() if k != "collection_name"}


#: An object's id as a result shows it to the model (`1. [1a2b3c4d] {...}`).
_SHOWN_ID = re.compile(r"^\s*\d+\. \[([0-9a-f]{8})\]", re.MULTILINE)


def _schema_name(response_format: dict[str, Any] | None) -> str | None:
    spec = (response_format or {}).get("json_schema") or {}
    return spec.get("name") if isinstance(spec, dict) else None


#: A value as the grounded commit turn lists it: `c1.price.mean = 23.5`.
_FACT_LINE = re.compile(r"^(c\d+\.\S+) = (.*)$", re.MULTILINE)


def _point_at(committed: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The oracle's grounded commit: for each value it knows, the id of a listed value equal to it
    (within the precision an answer key commits to)."""
    prompt = next((str(m.get("content")) for m in reversed(messages) if _FACT_LINE.search(str(m.get("content")))), "")
    facts = _FACT_LINE.findall(prompt)

    def close(text: str, target: float) -> bool:
        try:
            return math.isclose(float(text), target, rel_tol=1e-4, abs_tol=1e-9)
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


def _oracle_call(ground_truth: dict[str, Any], tools: list[dict[str, Any]] | None) -> tuple[str, dict[str, Any]]:
    """The call of the tool offered; under structured output no tools are sent, and the unified tool is named."""
    if not tools:
        return TOOL_NAME, dict(ground_truth)
    names = [tool["function"]["name"] for tool in tools]
    arguments = dict(ground_truth)
    rationale_needed = "rationale" in tools[0]["function"]["parameters"].get("properties", {})
    if rationale_needed:
        arguments["rationale"] = "ground truth"
    if TOOL_NAME in names:
        return TOOL_NAME, arguments
    collection = arguments.pop("collection_name")
    return tool_function_name(collection), arguments
