"""Agent strategies: how the agent goes from a question to a committed answer, one pluggable axis.

    from agent.strategies import build_strategy
    strategy = build_strategy("examples+grounded", retriever=memory)   # composed by name
    run = strategy.run(model, executor, tools, config, question)       # an AgentRun, strategy recorded

Every strategy answers `run(model, executor, tools, config, question, on_call) -> AgentRun`; the
loop's plumbing (`agent.loop.Agent`), the executor and the scorer are shared. `react` is the loop
as it always was. The others wrap an inner strategy: `examples` puts retrieved solved examples
before the question, `grounded` replaces the commit turn by pointing at values in the results. A
name like "examples+grounded" composes them left to right (outermost first) around `react`.
To add one: a class with `name` and `run` taking `inner`, registered once in `STRATEGIES`; one that
changes a system turn says what it sends first (`openings`, for a server to keep before a question).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from agent.loop import Agent, AgentConfig, AgentRun, ExecutedCall, Executor
from agent.strategies.chain import Chain
from agent.strategies.check import Check
from agent.strategies.decompose import Decompose
from agent.strategies.examples import ExampleRetriever, Examples, SolvedExample, examples_preamble
from agent.strategies.grounded import Grounded
from agent.strategies.openings import openings_of
from agent.strategies.plan import Plan
from agent.strategies.refine import Refine
from agent.strategies.typed import Typed
from agent.strategies.values import StoredCategories, Values
from agent.tooldef import ToolSet
from llm import ChatRequest

OnCall = Callable[[int, ExecutedCall], None] | None
DEFAULT_STRATEGY = "chain+check+values+examples+typed+grounded"


class Strategy(Protocol):
    """One way to answer a question with a model, the executor and the tools."""

    name: str

    def run(
        self, model: Any, executor: Executor, tools: ToolSet, config: AgentConfig, question: str, on_call: OnCall = None
    ) -> AgentRun: ...


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


class UnknownStrategy(ValueError):
    """A strategy name that is not registered (or a composition that needs what was not given)."""


@dataclass(frozen=True)
class StrategyInfo:
    name: str
    summary: str
    #: Builds the strategy around `inner`; `options` carries what some need (a retriever, k).
    build: Callable[[Strategy, dict[str, Any]], Strategy]


def _examples(inner: Strategy, options: dict[str, Any]) -> Strategy:
    retriever = options.get("retriever")
    if retriever is None:
        raise UnknownStrategy(
            "the examples strategy needs a query memory (a retriever of solved examples): pass "
            "retriever=ExampleMemory(client) (fixtures.examples; `memory.ensure_seeded()` seeds it from the natural "
            "split), or choose a strategy without examples, e.g. chain+check+values+typed+grounded"
        )
    k = options.get("k")
    return Examples(inner, retriever, k=None if k is None else int(k))


#: Every strategy, named once. `react` is the base every composition ends in.
STRATEGIES: dict[str, StrategyInfo] = {
    "react": StrategyInfo("react", "ReAct loop over one tool, then a commit turn (the paper's design)", lambda i, _: i),
    "chain": StrategyInfo(
        "chain",
        "a question of several is answered part by part; each next part rewritten to name the value picked",
        lambda inner, options: Chain(inner, options["stored"]),
    ),
    "check": StrategyInfo(
        "check",
        "first decide what the question needs (properties, statistic); refuse when the database lacks it",
        lambda inner, options: Check(inner, options["stored"]),
    ),
    "values": StrategyInfo(
        "values",
        "the stored text values the question's words name, offered after it as candidate filters",
        lambda inner, options: Values(inner, options["stored"]),
    ),
    "examples": StrategyInfo(
        "examples", "the k nearest solved examples (question -> call) before the question", _examples
    ),
    "typed": StrategyInfo(
        "typed",
        "the tool's property names as enforced enums of the properties of each slot's kind",
        lambda inner, _: Typed(inner),
    ),
    "decompose": StrategyInfo(
        "decompose",
        "collection, then operation kind, then only its fields, property names as enforced enums",
        lambda inner, _: Decompose(inner),
    ),
    "plan": StrategyInfo(
        "plan",
        "a plan of dependent calls written at once; the agent fills each placeholder from the results",
        lambda inner, _: Plan(inner),
    ),
    "refine": StrategyInfo(
        "refine",
        "a call whose search query holds conditions (=, <, AND, LIKE) is turned back with where each goes",
        lambda inner, _: Refine(inner),
    ),
    "grounded": StrategyInfo(
        "grounded",
        "commit by pointing at result values; the agent copies them; verify and retry once",
        lambda inner, _: Grounded(inner),
    ),
}


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
    if {"decompose", "plan"} <= set(parts):
        raise UnknownStrategy("decompose and plan both decide the first calls: choose one")
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
    options = {"stored": StoredCategories(), **options}  # one reader of category values per session
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
