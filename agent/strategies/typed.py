"""`typed`: the loop's tool with every property name an enum of the properties of its slot's kind.

The paper's tool takes property names as free strings, and a small model puts a text property into a
number aggregation, or invents a property ("isOpenNow", "yearsOfTeaching"): the call then fails or
answers something else. llama.cpp enforces a tool's JSON schema as a grammar, so here the grammar keeps
the call honest: a text filter can name only a text property, a number aggregation only a number one, a
group-by only a text or boolean one. When `check` has read which collection the question is about, the
enums hold that collection's properties only (over the union of every collection offered, the model
took a property of a sibling collection: "cuisine" in a Reservations filter); otherwise, and for the
`related` operations, whose calls may cross a reference to another collection, every offered one's.
The collections offered, the description and the slots' order stay as they are. Slots a strategy knows
the call needs (`AgentConfig.required_slots`: `chain`'s per-group questions need a group-by) are made
required, and so is the boolean aggregation of a question that asks for a share ("what percentage of
the clinics accept walk-ins", "how many of the exhibitions require booking"): the tool computes a
percentage or a count of trues only there, and the small model wrote a boolean filter instead (4 of
the committed sample's 28 single-step failures, 2026-11-26); and the group-by of a question that asks
per group ("for each movement", "split by whether"), which it dropped. Every question of the natural
and explicit splits that these words mark has the slot in its gold call (60 and 160 of 315), and
every gold group-by is marked.
"""

from __future__ import annotations

import re
from typing import Any

from agent.loop import AgentConfig, AgentRun, Executor
from agent.tooldef import ToolSet, typed_tools
from executors.vocabulary import AGGREGATION_SLOT, GROUPBY_FIELD, PropertyKind, ToolOperations

#: A question that asks what share of the objects are something: a boolean's percentage or its trues.
ASKS_A_SHARE = re.compile(r"\b(?:percentage|percent|proportion|fraction)\b|\bhow many of (?:the|these|those)\b", re.I)


#: A question that asks for its answer per group ("per night" and the like are units, not groups).
ASKS_PER_GROUP = re.compile(
    r"\b(?:for (?:each|every)|grouped by|split by|broken down by|"
    r"per (?!night|day|hour|minute|week|month|year|person|guest|head)\w)",
    re.I,
)


def asked_slots(question: str) -> tuple[str, ...]:
    """The slots the question's words alone say the call needs."""
    slots = [AGGREGATION_SLOT[PropertyKind.BOOLEAN]] if ASKS_A_SHARE.search(question) else []
    return (*slots, GROUPBY_FIELD) if ASKS_PER_GROUP.search(question) else tuple(slots)


class Typed:
    """The inner strategy over the same tool with its property names typed by kind."""

    name = "typed"

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
        if schema is None:  # nothing to type them from: the tool as it is
            return self.inner.run(model, executor, tools, config, question, on_call)
        crosses = tools.design.operations is not ToolOperations.PAPER
        about = "" if crosses else config.checked_collection
        required = (*config.required_slots, *asked_slots(question))
        run: AgentRun = self.inner.run(
            model, executor, typed_tools(tools, schema, about, required), config, question, on_call
        )
        run.strategy_notes["typed"] = {"properties_of": about or "every collection offered"}
        return run
