"""Conversations: a follow-up keeps what the earlier turn found, without asking the model again.

    turns = [session.turn_of(run)]                                   # after "How many Gentoo live on Biscoe?"
    run = session.run("And how many of those are female?", earlier=turns)

A small model rarely rewrites an earlier call faithfully, and asking it to costs a request and the
earlier turn's tokens. So a turn records what a follow-up keeps (`Carried`): the conditions of the call
its answer rests on, plus the group it named when it answered "which X has the most ...". A follow-up
that refers back ("those", "them", "there", "that country", or one that opens with "and") is read with
them: the model reads the question it follows and what that one found, and each call on that collection
gets them as `compound` conditions, on the properties it does not filter itself (a follow-up naming
another value of a property replaces the earlier one), recorded as an amendment
(`ExecutedCall.amended`), so the trace, the scores and every door see the call that ran. A question that
does not refer back starts afresh. Each door keeps its turns its own way (the CLI in its state
directory, `dbgorilla serve` by the messages the client sends back); the session is the one place that
carries them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agent.follows import Follows
from agent.loop import AgentRun, ExecutedCall
from executors import ExecutorError
from executors.spec import FilterSpec, QuerySpec
from executors.vocabulary import AGGREGATION_FIELDS, CONDITIONS_FIELD, GROUPBY_FIELD, MATCH_FIELD, SORT_FIELD, Match

#: Words by which a question refers back to the earlier turn's objects (English; "there" as a place, not
#: "are there").
_BACK = re.compile(
    r"\b(those|these|them|they|their|theirs|ones|the same"
    r"|(?<!is )(?<!are )(?<!was )(?<!were )there(?! (?:is|are|was|were)\b))\b"
    r"|\b(?:of|in|for|from|at|on|among|with|by|within) (?:that|this)\b"
    r"|^\s*(?:and|also|plus|what about|how about|of those|among)\b",
    re.IGNORECASE,
)


#: The slots that say what a call asks (not where): asked again by "and what about X?".
ASKED_SLOTS = (*AGGREGATION_FIELDS, GROUPBY_FIELD, SORT_FIELD)


class Carried(BaseModel):
    """The conditions a follow-up keeps, on one collection (`compound` conditions, joined by and)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    collection: str
    conditions: tuple[dict[str, Any], ...]
    #: What the earlier call asked (its aggregation, group-by and sort slots): "and what about X?" asks
    #: it again of other objects.
    asked: dict[str, Any] = Field(default_factory=dict)

    def said(self) -> str:
        return " and ".join(f"{c['property_name']} {c['operator']} {c['value']}" for c in self.conditions)


def condition_of(spec: FilterSpec) -> dict[str, Any] | None:
    """One checked filter as a `compound` condition (None: one read through a reference)."""
    if spec.via is not None:
        return None
    value = spec.value.isoformat().replace("+00:00", "Z") if isinstance(spec.value, datetime) else spec.value
    return {"property_name": spec.prop.name, "operator": spec.operator, "value": value}


def carried_from(spec: QuerySpec, also: tuple[dict[str, Any], ...] = ()) -> Carried | None:
    """What a follow-up of this call keeps: its filters (alternatives are not carried: an `or` cannot be
    ANDed), plus `also` (the group the answer named), which replaces a filter on its property."""
    names = {c["property_name"] for c in also}
    own = [condition_of(f) for f in spec.filters]
    conditions = [c for c in own if c is not None and c["property_name"] not in names] + list(also)
    asked = {k: v for k, v in spec.arguments.to_tool_arguments().items() if k in ASKED_SLOTS}
    return Carried(collection=spec.collection.name, conditions=tuple(conditions), asked=asked) if conditions else None


def carry(
    arguments: dict[str, Any], carried: Carried, validate: Any, again: bool = False
) -> tuple[dict[str, Any], str]:
    """The call with the carried conditions it lacks: same collection only, on the properties it does not
    filter itself, not under `match: any` (they would join the alternatives); and, for a question that asks
    the earlier one `again` of other objects, what the earlier call asked when this one asks nothing.
    Unchanged, with no reason, otherwise, and when the call does not check (the executor then says why)."""
    if arguments.get("collection_name") != carried.collection or arguments.get(MATCH_FIELD) == Match.ANY.value:
        return arguments, ""
    try:
        own = {f.prop.name for f in validate(arguments).all_filters}
    except ExecutorError:
        return arguments, ""
    why = []
    added = [c for c in carried.conditions if c["property_name"] not in own]
    if added:
        kept = Carried(collection=carried.collection, conditions=tuple(added))
        arguments = {**arguments, CONDITIONS_FIELD: [*(arguments.get(CONDITIONS_FIELD) or []), *added]}
        why.append(f"kept the conversation's earlier conditions ({kept.said()}).")
    if again and carried.asked and not any(arguments.get(slot) for slot in ASKED_SLOTS):
        arguments = {**arguments, **carried.asked}
        why.append(f"asked what the earlier question asked ({', '.join(carried.asked)}).")
    group = arguments.get(GROUPBY_FIELD)
    if group and added and group in _fixed(arguments, validate):
        arguments = {k: v for k, v in arguments.items() if k != GROUPBY_FIELD}
        why.append(f"the group-by on {group} was left out: the conversation fixes it to one value.")
    return arguments, " ".join(why)


def _fixed(arguments: dict[str, Any], validate: Any) -> set[str]:
    """The properties a call's filters hold to one value (`=`; none when the call does not check)."""
    try:
        return {f.prop.name for f in validate(arguments).filters if f.operator == "=" and f.via is None}
    except ExecutorError:
        return set()


def asks_again(question: str) -> bool:
    """True for a question that asks the earlier one again of other objects ("and what about X?")."""
    return bool(_AGAIN.search(question))


class Turn(BaseModel):
    """One answered question of a conversation, and what a follow-up of it keeps."""

    question: str
    answer: str
    keeps: Carried | None = None


def refers_back(question: str) -> bool:
    """True when the question reads as a follow-up of the one before."""
    return bool(_BACK.search(question))


def followed(question: str, earlier: Sequence[Turn]) -> Turn | None:
    """The turn the question follows up: the last one, when the question refers back."""
    return earlier[-1] if earlier and refers_back(question) else None


def carried_into(question: str, earlier: Sequence[Turn]) -> Carried | None:
    """What the question keeps of the conversation: the last turn's conditions when it refers back."""
    turn = followed(question, earlier)
    return turn.keeps if turn is not None else None


#: A follow-up that asks the earlier question again of other objects: "And what about Japanese ones?".
_AGAIN = re.compile(r"^\s*(?:and\s+)?(?:what|how)\s+about\b", re.IGNORECASE)


def form_question(question: str, follows: Follows | None) -> str:
    """The words that say what form the answer takes (a count, a name, a value): the question's own, and
    for one that only asks the earlier question again of other objects, the earlier question."""
    return follows.question if follows is not None and follows.again else question


def context_of(turn: Turn, again: bool = False) -> Follows:
    """What the model reads after a follow-up: the question it follows and the objects that one's answer
    rested on (a follow-up's own words name neither the earlier statistic nor the earlier values); `again`:
    the follow-up asks that question again of other objects (`asks_again`)."""
    if turn.keeps is None:
        return Follows(question=turn.question, again=again)
    return Follows(question=turn.question, collection=turn.keeps.collection, where=turn.keeps.said(), again=again)


def answered_on(run: AgentRun) -> ExecutedCall | None:
    """The call the answer rests on: the last one that returned a result."""
    return next((c for c in reversed(run.calls()) if c.result is not None and c.arguments is not None), None)


def keeps_of(run: AgentRun, validate: Any) -> Carried | None:
    """What a follow-up of `run` keeps: the conditions its answer's call ran with (the carried ones
    included) and the one value the answer named of a grouped or most-common property."""
    call = answered_on(run)
    if call is None or call.result is None:
        return None
    result = call.result
    shown = {t.value for metrics in result.aggregations.values() for t in _top(metrics)} | set(result.groups or {})
    named = {*run.answer.names, *run.answer.groups} & shown if run.answer is not None else set()
    return keeps_from(validate(call.arguments), named)


def _top(metrics: Any) -> list[Any]:
    top = metrics.get("TOP_OCCURRENCES") if isinstance(metrics, dict) else None
    return top if isinstance(top, list) else []


def keeps_from(spec: QuerySpec, named: Iterable[str]) -> Carried | None:
    """What a follow-up of a checked call keeps, its answer having named `named`: the call's conditions,
    and, when the answer named one value of the property it grouped by or took the most common values
    of ("which cuisine has the most restaurants?"), that value."""
    names = set(named)
    tops = [a.prop.name for a in spec.aggregations if "TOP_OCCURRENCES" in a.metrics]
    picked = spec.group_by.name if spec.group_by is not None else next(iter(tops), None)
    if picked is None or len(names) != 1:
        return carried_from(spec)
    return carried_from(spec, ({"property_name": picked, "operator": "=", "value": names.pop()},))


def conversation_of(messages: Sequence[dict[str, str]]) -> tuple[str, list[tuple[str, str]]]:
    """Chat messages (`{"role", "content"}`, the hosted agent's `ChatMessage`) as the last question and the
    earlier (question, answer) pairs; a `ValueError` when they do not end with a user's question."""
    if not messages or messages[-1].get("role") != "user" or not str(messages[-1].get("content", "")).strip():
        raise ValueError("a conversation ends with the user's question")
    pairs: list[tuple[str, str]] = []
    question: str | None = None
    for message in messages[:-1]:
        role, content = message.get("role"), str(message.get("content", ""))
        if role == "user":
            question = content
        elif role == "assistant" and question is not None:
            pairs.append((question, content))
            question = None
        else:
            raise ValueError(f"a message's role is user or assistant, not {role!r}")
    return str(messages[-1]["content"]).strip(), pairs


class TurnMemory:
    """The turns a door answered, by (question, answer): a client that sends the conversation back as
    text (the hosted agent's messages) gets its earlier turns' conditions, not a fresh guess."""

    def __init__(self, size: int = 256) -> None:
        self._turns: dict[tuple[str, str], Turn] = {}
        self._size = size

    def remember(self, turn: Turn) -> None:
        self._turns[(turn.question.strip(), turn.answer.strip())] = turn
        while len(self._turns) > self._size:
            self._turns.pop(next(iter(self._turns)))

    def turns(self, pairs: Sequence[tuple[str, str]]) -> list[Turn]:
        """The earlier turns of a conversation; one this door did not answer keeps nothing."""
        known = self._turns.get
        return [known((q.strip(), a.strip())) or Turn(question=q, answer=a) for q, a in pairs]
