"""`onestep`: one model turn per question; the first call's result is the answer, with no correction turn.

The loop gives the model up to `max_steps` turns: a call the executor refuses is sent back with why, and
the model writes it again. That is where a refused call is mended, and also where a slow machine spends
its seconds. `eval --max-steps 1` measures it on a benchmark; as a strategy it is offered at every door at
once (`ask`, `serve`, MCP, the demo, inspect), for a user who prefers a fast answer or an honest "could not"
to a second try. Composed like any other part: `chain+check+values+examples+typed+grounded+onestep`.
"""

from __future__ import annotations

from typing import Any

from agent.loop import AgentConfig, AgentRun, Executor
from agent.strategies.openings import openings_of
from agent.strategies.registry import OnCall, StrategyInfo
from agent.tooldef import ToolSet
from llm import ChatRequest


class OneStep:
    """The inner strategy with one model turn per question (each part of a chained question gets its own)."""

    name = "onestep"

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def openings(self, model: Any, executor: Executor, tools: ToolSet, config: AgentConfig) -> list[ChatRequest]:
        return openings_of(self.inner, model, executor, tools, config)

    def run(
        self, model: Any, executor: Executor, tools: ToolSet, config: AgentConfig, question: str, on_call: OnCall = None
    ) -> AgentRun:
        run: AgentRun = self.inner.run(
            model, executor, tools, config.model_copy(update={"max_steps": 1}), question, on_call
        )
        run.strategy_notes["onestep"] = {"max_steps": 1}
        return run


STRATEGY = StrategyInfo(
    "onestep",
    "one model turn per question: the first call's result answers, with no correction turn",
    lambda inner, _: OneStep(inner),
    rank=95,
)
