"""The final answer the agent commits to: a typed value beside its prose, with the Query Agent's fields.

After the model answers in prose, one more turn asks it to commit that answer as JSON of
`ANSWER_SCHEMA`, sent as a `response_format` the server enforces (`SchemaForms` sends it the first
way the endpoint takes: OpenAI's `json_schema`, or `json_object` with the schema for
llama-cpp-python), so even a small model writes a value that parses:

    {"numbers": [3.46], "names": [], "groups": [], "cannot_answer": "",
     "sources": ["1a2b3c4d"], "is_partial_answer": false, "missing_information": []}

- `numbers`: each number the question asks for; `names`: each name; `groups`: one value per group
  when it asks per group (`[{"name": "Spring", "value": 31}, ...]` on the wire, a group -> value
  map in `FinalAnswer`); `cannot_answer`: why the database cannot answer
  it (empty when it can);
- `sources`, `is_partial_answer`, `missing_information`: the fields of Weaviate's Query Agent.

One slot per value: an answer that hedges has to commit every alternative as a value, and is then
graded wrong for the extra values (`evaluation.answers.grade_committed`). Why a commit turn after the
prose rather than a `final_answer` tool the model may call: the tools offered (and so the prompt
prefix the server caches) stay the same, the turns before it are exactly those of a run without
the contract (so the prose is graded as before), and the server's grammar makes the JSON valid
whatever the model's size. A reply that does not parse is recorded (`Commit.error`), never guessed.
"""

from __future__ import annotations

import json
import math
import time
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, Field, ValidationError, field_validator

from agent.models import ANSWER_SCHEMA_NAME, ModelError, Usage, is_commit_request
from llm import ChatModel, ChatRequest, ModelMessage, ModelRequest, ResponseFormat, ToolDefinition

__all__ = [
    "ANSWER_SCHEMA",
    "ANSWER_SCHEMA_NAME",
    "COMMIT_PROMPT",
    "Commit",
    "CommitError",
    "FinalAnswer",
    "answer_format",
    "commit_answer",
    "is_commit_request",
    "parse_answer",
]

#: Bounds that keep a small model from listing until it runs out of tokens.
MAX_VALUES = 8
MAX_GROUPS = 40
MAX_SOURCES = 10
MAX_MISSING = 3
#: Characters of a name, and of a reason (`cannot_answer`, `missing_information`): a small model
#: otherwise fills a string until it runs out of tokens (SmolLM2 did, under the grammar).
MAX_NAME = 60
MAX_REASON = 120

#: The commit turn's request, appended as a user message after the model's prose answer.
COMMIT_PROMPT = (
    "Commit the answer you just gave as JSON. numbers: each number the question asks for, one value "
    "each; names: each name it asks for; groups: one name and value per group when it asks per group; "
    'cannot_answer: why the database cannot answer it, else ""; sources: the [id]s of objects your '
    "answer rests on; is_partial_answer and missing_information: whether and what your answer lacks. "
    "Commit one value per thing asked, never alternatives."
)

#: A group's value. On the wire the groups are a list of these, not a map: the grammar a server
#: builds cannot bound a map's keys, and SmolLM2 wrote one key until it ran out of tokens.
_GROUP = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": MAX_NAME}, "value": {"type": "number"}},
    "required": ["name", "value"],
    "additionalProperties": False,
}

ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "numbers": {"type": "array", "items": {"type": "number"}, "maxItems": MAX_VALUES},
        "names": {"type": "array", "items": {"type": "string", "maxLength": MAX_NAME}, "maxItems": MAX_VALUES},
        "groups": {"type": "array", "items": _GROUP, "maxItems": MAX_GROUPS},
        "cannot_answer": {"type": "string", "maxLength": MAX_REASON},
        "sources": {"type": "array", "items": {"type": "string", "pattern": "^[0-9a-f]{8}$"}, "maxItems": MAX_SOURCES},
        "is_partial_answer": {"type": "boolean"},
        "missing_information": {
            "type": "array",
            "items": {"type": "string", "maxLength": MAX_REASON},
            "maxItems": MAX_MISSING,
        },
    },
    "required": [
        "numbers",
        "names",
        "groups",
        "cannot_answer",
        "sources",
        "is_partial_answer",
        "missing_information",
    ],
    "additionalProperties": False,
}


class CommitError(ValueError):
    """A commit reply that is not a `FinalAnswer`."""


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    repeated = sorted({key for key in keys if keys.count(key) > 1})
    if repeated:  # "Spring" committed as 31 and as 32 is two values for one group: a hedge
        raise CommitError(f"commits {', '.join(repeated)} more than once")
    return dict(pairs)


class FinalAnswer(BaseModel):
    """A committed answer: the typed value (numbers, names, a group -> value map, or "cannot answer"
    with the reason) and the Query Agent's sources, partial-answer flag and missing information."""

    numbers: list[float] = Field(default_factory=list)
    names: list[str] = Field(default_factory=list)
    groups: dict[str, float] = Field(default_factory=dict)
    #: Per group, the names it holds (its most common values), as the agent reads them from one call's result;
    #: never on the wire (`ANSWER_SCHEMA`): a model commits one value per group.
    group_names: dict[str, list[str]] = Field(default_factory=dict)
    #: Why the database cannot answer the question; empty when the answer is a value.
    cannot_answer: str = ""
    #: Ids of the objects the answer rests on (the short ids the tool shows, or UUIDs).
    sources: list[str] = Field(default_factory=list)
    is_partial_answer: bool = False
    missing_information: list[str] = Field(default_factory=list)

    @field_validator("groups", mode="before")
    @classmethod
    def _pairs(cls, groups: Any) -> Any:
        """The wire's `[{"name", "value"}, ...]` as the map; a group committed twice is a hedge."""
        if not isinstance(groups, list):
            return groups
        pairs = [(g.get("name"), g.get("value")) if isinstance(g, dict) else (None, None) for g in groups]
        return _no_duplicate_keys([(str(name), value) for name, value in pairs])

    @field_validator("numbers")
    @classmethod
    def _finite(cls, numbers: list[float]) -> list[float]:
        if not all(math.isfinite(n) for n in numbers):
            raise ValueError("numbers must be finite")
        return numbers

    @property
    def refuses(self) -> bool:
        """It commits that the database cannot answer the question."""
        return bool(self.cannot_answer.strip())

    @property
    def valued(self) -> bool:
        """It commits a value: a number, a name, a group's value or a group's names."""
        return bool(self.numbers or self.names or self.groups or self.group_names)

    @property
    def empty(self) -> bool:
        """It commits no value and no refusal."""
        return not (self.valued or self.refuses)

    def text(self) -> str:
        """The committed value in one line ("3.46", "Italian; 27", "Spring: 31, Fall: 27", "cannot answer: ...")."""
        if self.refuses:
            return f"cannot answer: {self.cannot_answer.strip()}"
        parts = [", ".join(self.names)] if self.names else []
        parts += [_number(n) for n in self.numbers]
        if self.groups:
            parts.append(", ".join(f"{name}: {_number(value)}" for name, value in self.groups.items()))
        parts += [f"{group}: {', '.join(names)}" for group, names in self.group_names.items()]
        return "; ".join(parts) or "(no value)"


def _number(value: float) -> str:
    """12 significant digits: a server-side mean's last bits vary with its summation order."""
    if value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    short = f"{value:.12g}"  # fixed-point as a reader (and the grader) reads numbers, never 1.2e+12
    return short if "e" not in short else format(Decimal(short), "f")


def answer_format() -> ResponseFormat:
    """The commit turn's response format (an OpenAI-compatible endpoint gets it the way it takes it)."""
    return ResponseFormat(name=ANSWER_SCHEMA_NAME, json_schema=ANSWER_SCHEMA)


def parse_answer(content: str | None) -> FinalAnswer:
    """The committed answer in a reply (a JSON object, alone or in a ```json fence); `CommitError` if none."""
    text = (content or "").strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    if not text:
        raise CommitError("the commit reply is empty")
    try:
        # strict=False: llama-cpp-python's grammar lets a raw newline into a string
        data = json.loads(text, object_pairs_hook=_no_duplicate_keys, strict=False)
    except json.JSONDecodeError as error:
        raise CommitError(f"the commit reply is not JSON ({error.msg} at {error.pos})") from None
    if not isinstance(data, dict):
        raise CommitError("the commit reply is not a JSON object")
    try:
        return FinalAnswer.model_validate(data)
    except ValidationError as error:
        problem = error.errors()[0]
        where = ".".join(str(part) for part in problem["loc"])
        raise CommitError(f"the commit reply does not fit the schema: {where}: {problem['msg']}") from None


class Commit(BaseModel):
    """The commit turn: the answer committed (or why there is none), as sent and received."""

    answer: FinalAnswer | None = None
    content: str | None = None
    error: str | None = None
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0


def commit_answer(
    model: ChatModel, messages: list[ModelMessage], tools: list[ToolDefinition] | None, prompt: str = COMMIT_PROMPT
) -> Commit:
    """One more turn: the conversation so far (ending with the model's prose answer), then the request
    to commit it as JSON of the schema. The tools are sent as before, so the server's cached prompt
    prefix still applies, with `tool_choice` "none": the reply is the JSON, not a call."""
    asked = ChatRequest(
        messages=[*messages, ModelRequest.user(prompt)],
        tools=tools or [],
        tool_choice="none" if tools else None,
        response_format=answer_format(),
    )
    started = time.perf_counter()
    try:
        reply = model.complete(asked)
    except ModelError as error:
        return Commit(error=f"{type(error).__name__}: {error}", latency_s=time.perf_counter() - started)
    commit = Commit(content=reply.content, usage=reply.usage, latency_s=reply.latency_s)
    try:
        commit.answer = parse_answer(reply.content)
    except CommitError as error:
        commit.error = str(error)
    return commit
