"""`typed`: the loop's tool with every property name an enum of the properties of its slot's kind.

The paper's tool takes property names as free strings, and a small model puts a text property into a
number aggregation, or a property of another collection into a filter: the call then fails or answers
something else. llama.cpp enforces a tool's JSON schema as a grammar, so here the grammar keeps the call
honest: a text filter can name only a text property, a number aggregation only a number one, a group-by
only a text or boolean one (the offered collections' properties, the same as the tool's description
lists). Only the parameters change: the collections offered, the description and the slots' order stay,
so each use case still has one tool and one cached prompt prefix, and a question over two collections
(a multi-step chain, a reference) can still reach both.
"""

from __future__ import annotations

from typing import Any

from agent.loop import AgentConfig, AgentRun, Executor
from agent.tooldef import ToolSet, typed_tools


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
        run: AgentRun = self.inner.run(model, executor, typed_tools(tools, schema), config, question, on_call)
        run.strategy_notes["typed"] = {"property_names": "enums by kind"}
        return run
