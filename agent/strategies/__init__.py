"""Agent strategies: how the agent goes from a question to a committed answer, one pluggable axis.

    from agent.strategies import build_strategy
    strategy = build_strategy("examples+grounded", retriever=memory)   # composed by name
    run = strategy.run(model, executor, tools, config, question)       # an AgentRun, strategy recorded

Every strategy answers `run(model, executor, tools, config, question, on_call) -> AgentRun`; the
loop's plumbing (`agent.loop.Agent`), the executor and the scorer are shared. `react` is the loop
as it always was. The others wrap an inner strategy: `examples` puts retrieved solved examples
before the question, `grounded` replaces the commit turn by pointing at values in the results. A
name like "examples+grounded" composes them left to right (outermost first) around `react`.
To add one: a module here with a class that has `name` and `run` taking `inner`, and a `STRATEGY` saying
how it is built and where it wraps (`agent.strategies.registry`): nothing else is edited. One that changes
a system turn says what it sends first (`openings`, for a server to keep before a question).
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from typing import Any

from agent.loop import Agent, AgentConfig, AgentRun, Executor
from agent.strategies.chain import Chain
from agent.strategies.check import Check
from agent.strategies.decompose import Decompose
from agent.strategies.examples import ExampleRetriever, Examples, SolvedExample, examples_preamble
from agent.strategies.grounded import Grounded
from agent.strategies.openings import openings_of
from agent.strategies.plan import Plan
from agent.strategies.refine import Refine
from agent.strategies.registry import OnCall, Strategy, StrategyInfo, UnknownStrategy
from agent.strategies.typed import Typed
from agent.strategies.values import StoredCategories, Values
from agent.tooldef import ToolSet
from llm import ChatRequest

DEFAULT_STRATEGY = "chain+check+values+examples+typed+grounded"


@dataclass
class React:
    """Today's loop, unchanged: ReAct over one tool, then the commit turn."""

    name: str = "react"

    def run(
        self, model: Any, executor: Executor, tools: ToolSet, config: AgentConfig, question: str, on_call: OnCall = None
    ) -> AgentRun:
        return Agent(model, executor, tools, config).run(question, on_call=on_call)

    def openings(self, model: Any, executor: Executor, tools: ToolSet, config: AgentConfig) -> list[ChatRequest]:
        return [Agent(model, executor, tools, config).opening()]


REACT = StrategyInfo(
    "react", "ReAct loop over one tool, then a commit turn (the paper's design)", lambda i, _: i, rank=0
)


def registered() -> dict[str, StrategyInfo]:
    """Every strategy, by name, in composition order (outermost first after `react`, the base every composition
    ends in): each module of this package that defines `STRATEGY` (`agent.strategies.registry`)."""
    found = [REACT]
    for module in pkgutil.iter_modules(__path__):
        info = getattr(importlib.import_module(f"{__name__}.{module.name}"), "STRATEGY", None)
        if isinstance(info, StrategyInfo):
            found.append(info)
    for field in ("name", "rank"):  # a clash would drop a strategy or leave the composition order to chance
        seen = [getattr(info, field) for info in found]
        if clash := sorted({value for value in seen if seen.count(value) > 1}, key=str):
            raise UnknownStrategy(f"two strategies share the {field} {clash[0]!r}: each needs its own")
    return {info.name: info for info in sorted(found, key=lambda info: info.rank)}


#: Every strategy, named once (in its own module).
STRATEGIES: dict[str, StrategyInfo] = registered()


def strategy_names() -> list[str]:
    return list(STRATEGIES)


def parse_strategy(name: str) -> list[str]:
    """The registered parts of "a+b" (react implied at the core); `UnknownStrategy` names a bad one."""
    parts = [part.strip() for part in (name or DEFAULT_STRATEGY).split("+") if part.strip()]
    unknown = [part for part in parts if part not in STRATEGIES]
    if unknown or not parts:
        raise UnknownStrategy(
            f"unknown strategy {', '.join(unknown) or repr(name)}; choose from {', '.join(STRATEGIES)}, "
            "composed with + (e.g. examples+grounded)"
        )
    if len(set(parts)) != len(parts):
        raise UnknownStrategy(f"strategy {name!r} names a part twice")
    for part in parts:
        clash = [other for other in STRATEGIES[part].excludes if other in parts]
        if clash:
            raise UnknownStrategy(f"{part} and {clash[0]} both decide the same turns: choose one")
    return parts


def canonical(name: str) -> str:
    """The recorded name: parts in registry order, react dropped when composed ("grounded+examples" ->
    "examples+grounded")."""
    parts = parse_strategy(name)
    wrapped = [part for part in STRATEGIES if part in parts and part != "react"]
    return "+".join(wrapped) or "react"


def needs_retriever(name: str) -> bool:
    return "examples" in parse_strategy(name)


@dataclass
class Composed:
    """A strategy built from parts; it records its canonical name on every run."""

    name: str
    strategy: Strategy

    def run(
        self, model: Any, executor: Executor, tools: ToolSet, config: AgentConfig, question: str, on_call: OnCall = None
    ) -> AgentRun:
        run = self.strategy.run(model, executor, tools, config, question, on_call)
        run.strategy = self.name
        return run

    def openings(self, model: Any, executor: Executor, tools: ToolSet, config: AgentConfig) -> list[ChatRequest]:
        """The first request of each prefix this strategy sends (`agent.strategies.openings`)."""
        return openings_of(self.strategy, model, executor, tools, config)


def build_strategy(name: str = DEFAULT_STRATEGY, **options: Any) -> Composed:
    """The strategy named ("react", "examples", "examples+grounded", …); options: retriever, k, and the
    reader of stored category values its parts share (`stored`, a new one by default)."""
    label = canonical(name)
    strategy: Strategy = React()
    # one reader of category values its parts share; a session builds the strategy per question, so each
    # question reads the values as the data holds them then
    options = {"stored": StoredCategories(), **options}
    for part in reversed(label.split("+")):
        strategy = STRATEGIES[part].build(strategy, options)
    return Composed(label, strategy)


__all__ = [
    "DEFAULT_STRATEGY",
    "STRATEGIES",
    "Chain",
    "Check",
    "Composed",
    "Decompose",
    "ExampleRetriever",
    "Examples",
    "Grounded",
    "Plan",
    "React",
    "Refine",
    "SolvedExample",
    "Strategy",
    "StrategyInfo",
    "Typed",
    "UnknownStrategy",
    "Values",
    "build_strategy",
    "canonical",
    "examples_preamble",
    "needs_retriever",
    "parse_strategy",
    "strategy_names",
]
