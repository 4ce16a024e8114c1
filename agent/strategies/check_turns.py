"""The check's two structured turns (`agent.strategies.check`): their prompts and schemas, how a reply is read,
and what the oracle replies to each.

The first turn names the collection a question is about and, in a few words, what it asks for; the verdict says
whether that collection's properties hold it. Each reply is read from as little as decides it: the first turn
is stopped where its statistic begins (`ABOUT_STOP`), the verdict after its first word (`VERDICT_TOKENS`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from agent.models import OracleModel, oracle_replies
from agent.strategies.asked_for import ASKS_FOR_HINT, STATISTICS
from executors.schema import CollectionSchema
from llm import ChatRequest, ModelRequest, ResponseFormat, Usage

#: The first decision's schema name, and the verdict's.
CHECK_SCHEMA_NAME = "QuestionCheck"
VERDICT_SCHEMA_NAME = "CheckVerdict"
#: The verdict's two choices; the refusal is the first (a small model does not just take the first).
NOT_LISTED = "no: it needs a property that is not listed"
LISTED = "yes: the listed properties hold it"
VERDICTS = (NOT_LISTED, LISTED)
CHECK_SYSTEM = "You check whether a database can answer a question before it is queried."
#: The prompt and the schema still name the statistic, but the reply is stopped where it begins (`ABOUT_STOP`):
#: the model's words for what is asked come first and are as they were. Without the field in the schema, the
#: model could no longer end them with `",` (one token) and wrote on: "count" became "count of enrollments by
#: students older than 30", and 12 of the abstention sample's 20 decisions read other words (2026-12-02).
ABOUT_PROMPT = (
    "The database has these collections and properties:\n{listing}\n\nQuestion: {question}\n\n"
    f"collection: the one the question is about. asks_for: {ASKS_FOR_HINT}. statistic: the "
    'one it asks for, "none" if it asks to list or group objects.'
)
#: Where the first turn's reply is stopped: the statistic's key, after every field the check reads from the model.
ABOUT_STOP = '"stat'
#: A prompt of its own, the one collection's properties with what each holds. As a continuation of the
#: first turn (its prefix cached, ~1 s less a verdict), it refused fewer unanswerable questions: 15 of
#: 20 told the property names, 12 told nothing new, against 18 here (2026-11-26, docs/results).
VERDICT_PROMPT = (
    "Collection {listing}\n\nQuestion: {question}\n\nCan the question be answered from these properties alone?"
)
#: Completion tokens the verdict may take. Its first word ("no", "yes") decides it, about 7 tokens in
#: (`{"verdict": "yes`); the grammar then forces the rest of the chosen text, ~12 tokens that decide
#: nothing, at ~50 ms each on 2 cores. A reply cut before its first word is asked again, uncut. Cut at 7 (the
#: word's place as the tokenizer writes it alone), 5 of the main job's 8 verdicts were asked again (2026-12-02).
VERDICT_TOKENS = 10
VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"verdict": {"enum": list(VERDICTS)}},
    "required": ["verdict"],
    "additionalProperties": False,
}


def about_schema(collections: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "collection": {"enum": collections},
            "asks_for": {"type": "string", "maxLength": 80},
            "statistic": {"enum": list(STATISTICS)},
        },
        "required": ["collection", "asks_for", "statistic"],
        "additionalProperties": False,
    }


def listing(collections: list[CollectionSchema]) -> str:
    """Each collection with its properties and what each holds (its description, else its type)."""
    return "\n".join(
        f"{c.name}: " + "; ".join(f"{p.name} ({p.description or p.data_type})" for p in c.properties)
        for c in collections
    )


def about_request(shown: list[CollectionSchema], asked: str) -> ChatRequest:
    """The first turn: its prompt and schema, the reply stopped where its statistic begins (`ABOUT_STOP`)."""
    prompt = ABOUT_PROMPT.format(listing=listing(shown), question=asked)
    about = turn_request(prompt, CHECK_SCHEMA_NAME, about_schema([c.name for c in shown]))
    return about.model_copy(update={"stop": [ABOUT_STOP]})


def turn_request(prompt: str, name: str, wanted: dict[str, Any]) -> ChatRequest:
    return ChatRequest(
        messages=[ModelRequest.prompt(CHECK_SYSTEM, prompt)],
        response_format=ResponseFormat(name=name, json_schema=wanted),
    )


def about_decided(content: str) -> dict[str, Any]:
    """The first turn's fields, from its whole reply or one stopped after `asks_for` (`{"collection": "X",
    "asks_for": "...", `); ValueError where it was cut inside a field."""
    try:
        return _decided(content)
    except json.JSONDecodeError:
        return _decided(content.rstrip().rstrip(",") + "}")


def _decided(content: str) -> dict[str, Any]:
    """A check reply's JSON object (ValueError: not JSON, or not an object)."""
    decided = json.loads(content or "{}")
    if not isinstance(decided, dict):
        raise ValueError("the check reply is not a JSON object")
    return decided


def chosen(content: str, key: str, choices: tuple[str, ...]) -> str | None:
    """The value of `key` in a JSON reply, or, in one cut short, the one choice its first characters
    begin; None when the reply has not reached a choice."""
    try:
        return _decided(content).get(key)
    except json.JSONDecodeError:
        cut = re.search(rf'"{re.escape(key)}"\s*:\s*"([^"]+)', content)
        begun = [choice for choice in choices if cut and choice.startswith(cut.group(1))]
        return begun[0] if len(begun) == 1 else None


def verdict_prompt(collection: CollectionSchema, asked: str) -> str:
    """The verdict's prompt: the collection's properties and the question. Tried (2026-12-03): told what the
    objects are too (the description's opening words, "RiotDeaths (People who died during ...)"), it let
    "How many people died on April 30, 1992?" through, and answered two it had refused ("How many destinations
    have a direct flight from London?" with 0 destinations of the United Kingdom; a share of dry days, wrong),
    so it was taken out: docs/results/2026-12-03-fresh-tables.md."""
    return VERDICT_PROMPT.format(listing=listing([collection]), question=asked)


def ask_verdict(model: Any, prompt: str) -> tuple[Any, Usage]:
    """The verdict, read from its first word (`VERDICT_TOKENS`)."""
    request = turn_request(prompt, VERDICT_SCHEMA_NAME, VERDICT_SCHEMA)
    reply = model.complete(request.model_copy(update={"max_tokens": VERDICT_TOKENS}))
    verdict, usage = chosen(reply.content or "", "verdict", VERDICTS), reply.usage
    if verdict is None:  # cut before its first word (whitespace, another model): asked again, uncut
        reply = model.complete(request)
        verdict, usage = chosen(reply.content or "", "verdict", VERDICTS), usage + reply.usage
    if verdict is None:
        raise ValueError(f"the verdict reply names no verdict: {(reply.content or '')[:80]!r}")
    return verdict, usage


@oracle_replies(CHECK_SCHEMA_NAME, VERDICT_SCHEMA_NAME)
def oracle_check(oracle: OracleModel, request: ChatRequest) -> dict[str, Any]:
    """The oracle's check: the gold collection, then answerable when there is a gold call (the verdict's
    second choice), else not (its first)."""
    fields = request.response_format.json_schema["properties"] if request.response_format else {}
    if "verdict" in fields:
        return {"verdict": fields["verdict"]["enum"][1 if oracle.ground_truth else 0]}
    offered = fields["collection"]["enum"]
    wanted = oracle.ground_truth.get("collection_name")
    return {"collection": wanted if wanted in offered else offered[0], "asks_for": "", "statistic": "none"}
