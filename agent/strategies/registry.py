"""What a strategy is, and how one is registered: the module that defines it says so in one `STRATEGY`.

Every module of `agent.strategies` that defines `STRATEGY = StrategyInfo(...)` is a strategy, found on
first use (`agent.strategies.registered`), as `llm.providers` finds its providers. So adding a strategy,
or an option of one, touches its own module plus its tests and docs; where it sits in a composition is its
`rank` (outermost first), and a part it cannot be composed with is in its `excludes`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from agent.loop import AgentConfig, AgentRun, ExecutedCall, Executor
from agent.tooldef import ToolSet

OnCall = Callable[[int, ExecutedCall], None] | None


class Strategy(Protocol):
    """One way to answer a question with a model, the executor and the tools."""

    name: str

    def run(
        self, model: Any, executor: Executor, tools: ToolSet, config: AgentConfig, question: str, on_call: OnCall = None
    ) -> AgentRun: ...


class UnknownStrategy(ValueError):
    """A strategy name that is not registered (or a composition that needs what was not given)."""


@dataclass(frozen=True)
class StrategyInfo:
    name: str
    summary: str
    #: Builds the strategy around `inner`; `options` carries what some need (a retriever, k, `stored`).
    build: Callable[[Strategy, dict[str, Any]], Strategy]
    #: Where it wraps in a composition, outermost first: "grounded+chain" is built as chain(grounded(react)).
    rank: int
    #: Parts it cannot be composed with (both decide the same thing).
    excludes: tuple[str, ...] = ()
