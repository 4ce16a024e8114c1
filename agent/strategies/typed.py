"""`typed`: the loop's tool with every property name an enum of the properties of its slot's kind.

The paper's tool takes property names as free strings, and a small model puts a text property into a
number aggregation, or invents a property ("isOpenNow", "yearsOfTeaching"): the call then fails or
answers something else. llama.cpp enforces a tool's JSON schema as a grammar, so here the grammar keeps
the call honest: a text filter can name only a text property, a number aggregation only a number one, a
group-by only a text or boolean one. When `check` has read which collection the question is about, the
enums hold that collection's properties only (over the union of every collection offered, the model
took a property of a sibling collection: "cuisine" in a Reservations filter); otherwise, and for the
`related` operations, whose calls may cross a reference to another collection, every offered one's.
Where the enums hold one collection's properties, the collection name is held to that collection too
(`agent.tooldef.typed_tools`). The description and the slots' order stay as they are. Slots a strategy
knows the call needs (`Reading.required_slots`: `chain`'s per-group questions need a group-by) are made
required.

What the question's words alone say the call needs is not made required: llama.cpp's grammar writes
required slots first, and after an aggregation and a group-by the small model ended the call,
dropping its filters and search (3 of the main job's questions lost, 2026-11-26). The agent amends
the written call instead (`agent.strategies.reshape`, recorded with why).
"""

from __future__ import annotations

from typing import Any

from agent.loop import AgentConfig, AgentRun, Executor
from agent.strategies.asked import sort_asked
from agent.strategies.conditions import filtered_properties, own_condition, put_back, shown, without_dates
from agent.strategies.events import groups_of_objects, to_summed
from agent.strategies.openings import openings_of
from agent.strategies.registry import StrategyInfo
from agent.strategies.reshape import (
    amend_to_question,
    groups_of_itself,
    groups_of_one,
    groups_unsorted,
    off_fixed,
    to_counted_first,
    to_distinct,
    to_extreme,
    to_first,
    to_statistic,
)
from agent.strategies.scales import to_stored_unit
from agent.strategies.shares import boolean_beside, share_of_named
from agent.strategies.wording import (
    NUMBER_FILTER,
    number_condition,
    unwritten_numbers,
)
from agent.tooldef import ToolSet, typed_tools
from executors.schema import CollectionSchema
from executors.vocabulary import (
    COMPONENT_FIELDS,
    RELATED_FIELDS,
    SEARCH_FIELD,
    SORT_FIELD,
    PropertyKind,
    ToolOperations,
)
from llm import ChatRequest


def _about(tools: ToolSet, config: AgentConfig) -> str:
    """The collection whose properties the enums hold ("": every one offered, as a `related` call may cross to
    them; the compound tool's conditions are on the collection's own properties)."""
    return "" if tools.design.operations is ToolOperations.RELATED else config.reading.collection


class Typed:
    """The inner strategy over the same tool with its property names typed by kind."""

    name = "typed"

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def offers(self, executor: Executor, tools: ToolSet, config: AgentConfig) -> ToolSet:
        """The tools the model is offered: typed from the live schema (as they are without one)."""
        schema = getattr(executor, "schema", None)
        slots = config.reading.required_slots
        return tools if schema is None else typed_tools(tools, schema, _about(tools, config), slots)

    def openings(self, model: Any, executor: Executor, tools: ToolSet, config: AgentConfig) -> list[ChatRequest]:
        return openings_of(self.inner, model, executor, self.offers(executor, tools, config), config)

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
        if schema is None:  # nothing to type them from: the tool as it is
            return self.inner.run(model, executor, tools, config, question, on_call)
        about = _about(tools, config)
        compound = tools.design.operations is ToolOperations.COMPOUND

        calls: list[str] = []

        def amend(arguments: dict[str, Any]) -> tuple[dict[str, Any], str]:
            found = schema.get(str(arguments.get("collection_name") or ""))
            first = not calls
            calls.append(str(arguments.get("collection_name") or ""))
            return amended_call(question, arguments, found, compound=compound, first=first)

        typed = self.offers(executor, tools, config)
        run: AgentRun = self.inner.run(model, executor, typed, config.amended_by(amend), question, on_call)
        run.strategy_notes["typed"] = {"properties_of": about or "every collection offered"}
        return run


def resorted(question: str, arguments: dict[str, Any], numbers: list[str]) -> tuple[dict[str, Any], str]:
    """The call's sort by the number a "which ... the most X" question ranks by, where it sorts by another
    property: "Which month had the most disease deaths?" was sorted by the date (2026-12-03)."""
    sort, asked = arguments.get(SORT_FIELD), sort_asked(question, numbers)
    if not isinstance(sort, dict) or asked is None or sort.get("property_name") == asked[0]:
        return arguments, ""
    prop, order = asked
    resort = {**sort, "property_name": prop, "order": order}
    return {
        **arguments,
        SORT_FIELD: resort,
    }, f"the question ranks by {prop}: sorted by it, not {sort.get('property_name')}."


def amended_call(
    question: str, arguments: dict[str, Any], found: CollectionSchema | None, *, compound: bool, first: bool
) -> tuple[dict[str, Any], str]:
    """The written call amended to what the question asks, in order, and why ("" if unchanged): `first` is a
    run's first call (a later one may hold a number an earlier result gave)."""
    kinds = (PropertyKind.TEXT, PropertyKind.BOOLEAN)
    groupable = [p.name for p in found.properties if p.kind in kinds] if found is not None else []
    # a later call may hold a number an earlier result gave
    arguments, unwritten = unwritten_numbers(without_dates(question), arguments) if first else (arguments, "")
    amended, why = amend_to_question(question, arguments, groupable)
    booleans = [p.name for p in found.properties if p.kind is PropertyKind.BOOLEAN] if found is not None else []
    amended, share = share_of_named(question, amended, booleans)
    why = " ".join(w for w in (unwritten, why, share) if w)
    amended, firsts = to_first(question, amended)
    amended, unsorted = groups_unsorted(amended)
    amended, of_one = groups_of_one(question, amended)
    amended, of_itself = groups_of_itself(amended)
    unsorted = " ".join(w for w in (unsorted, of_one, of_itself) if w)
    kinds_known = [p.name for p in found.properties if p.kind is not None] if found is not None else []
    amended, distinct = to_distinct(question, amended, kinds_known)
    why = " ".join(w for w in (why, firsts, unsorted, distinct) if w)
    numbers = [p.name for p in found.properties if p.kind is PropertyKind.NUMBER] if found is not None else []
    amended, note = to_extreme(question, amended, numbers)
    amended, computed = to_statistic(question, amended, numbers)
    amended, counted = to_counted_first(question, amended, numbers)
    amended, resort = resorted(question, amended, numbers)
    counted = " ".join(w for w in (counted, resort) if w)
    amended, summed = to_summed(question, amended, found) if found is not None else (amended, "")
    computed = " ".join(w for w in (computed, counted, summed) if w)
    # after the statistic is settled: a boolean tallied beside the extreme `to_extreme` added stays otherwise
    amended, beside = boolean_beside(question, amended)
    why = " ".join(w for w in (why, note, computed, "; ".join(beside) + "." if beside else "") if w)
    if compound and found is not None:  # every condition the question states, as a condition
        amended, own = own_condition(amended, found)
        amended, notes = put_back(question, amended, numbers, [p.name for p in found.dates()])
        why = " ".join(w for w in (why, own, *notes) if w)
    elif not amended.get(NUMBER_FILTER) and not any(amended.get(slot) for slot in RELATED_FIELDS):
        # the question states a number condition and the call dropped it: it is put back (a condition
        # may be on the linked objects)
        restored = number_condition(question, numbers)
        if restored is not None and restored["property_name"] not in filtered_properties(amended):
            amended = {**amended, NUMBER_FILTER: restored}
            why = (why + " " if why else "") + f"the question's condition {shown(restored)} was put back."
    amended, off = off_fixed(question, amended, numbers)
    amended, units = to_stored_unit(question, amended, found) if found is not None else (amended, "")
    amended, itself = groups_of_objects(amended, found) if found is not None else (amended, "")
    why = " ".join(w for w in (why, off, units, itself) if w)
    unsearchable = found is not None and not found.searchable and bool(amended.get(SEARCH_FIELD))
    if unsearchable and any(amended.get(slot) for slot in COMPONENT_FIELDS if slot != SEARCH_FIELD):
        # no vectorizer, no search: the call's conditions answer without it (a search alone is left
        # to fail, so the model reads why)
        amended = {k: v for k, v in amended.items() if k != SEARCH_FIELD}
        why = (why + " " if why else "") + f"{found.name} has no vectorizer: the search was left out."
    return amended, why


STRATEGY = StrategyInfo(
    "typed",
    "the tool's property names as enforced enums of the properties of each slot's kind",
    lambda inner, _: Typed(inner),
    rank=50,
)
