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
required.
"""

from __future__ import annotations

from typing import Any

from agent.loop import AgentConfig, AgentRun, Executor
from agent.tooldef import ToolSet, typed_tools
from executors.vocabulary import ToolOperations


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
        run: AgentRun = self.inner.run(
            model, executor, typed_tools(tools, schema, about, config.required_slots), config, question, on_call
        )
        run.strategy_notes["typed"] = {"properties_of": about or "every collection offered"}
        return run
