"""One agent behind every door: `QueryAgent`, `dbgorilla ask`, MCP's `ask`, `eval` and inspect run this.

    session = AgentSession.over(executor, ["Restaurants"], ToolDesign(), model)   # DEFAULT_STRATEGY
    run = session.run("How many Italian restaurants are open late?", on_call)   # an AgentRun

A session owns what makes the agent the agent: the tool built from the live schema (narrowed to the
collections offered), the bound on those collections (a call naming another one is refused as
unknown, whatever the tool's enum let through; a `Scope` is the executor's, below it), the strategy
and its query memory, the commit turn (the strategy's, `AgentConfig.commit_answer`) and the trace.
A door adds only its input and output formats, so one question gets one answer at every door.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Protocol

from pydantic import BaseModel

from agent.conversation import Turn, asks_again, carried_into, carry, context_of, followed, keeps_of
from agent.loop import AgentConfig, AgentRun, ExecutedCall
from agent.strategies import DEFAULT_STRATEGY, Composed, ExampleRetriever, build_strategy
from agent.strategies.decompose import offered_collections
from agent.tokens import TokenCounter
from agent.tooldef import ToolDesign, ToolSet, build_tools
from executors import DatabaseSchema, QueryResult, UnknownCollectionError
from executors.vocabulary import ToolOperations
from llm import ChatRequest

OnCall = Callable[[int, ExecutedCall], None] | None


class LiveExecutor(Protocol):
    """What a session runs calls on: `executors.WeaviateExecutor`, or the reference executor in tests."""

    @property
    def schema(self) -> DatabaseSchema: ...

    def with_operations(self, operations: ToolOperations) -> Any: ...

    def validate(self, arguments: Any) -> Any: ...

    def execute(self, arguments: Any) -> QueryResult: ...


def narrowed(schema: DatabaseSchema, collections: list[str] | None) -> DatabaseSchema:
    """The schema of the named collections only (all when None); an unknown name is a typed error."""
    if not collections:
        return schema
    missing = [name for name in collections if schema.get(name) is None]
    if missing:
        raise UnknownCollectionError(
            f"no collection named {', '.join(missing)} in this Weaviate. Available: {', '.join(schema.names())}."
        )
    return schema.only(collections)


@dataclass(frozen=True)
class Offered:
    """An executor bounded to the collections offered: a call naming another one is `unknown_collection`
    (the tool's enum is a hint to the model, not a bound)."""

    executor: LiveExecutor
    names: tuple[str, ...]

    @property
    def schema(self) -> DatabaseSchema:
        """The executor's schema (strategies read the offered collections' properties from it)."""
        return self.executor.schema

    def execute(self, arguments: Any) -> QueryResult:
        named = arguments.get("collection_name") if isinstance(arguments, dict) else None
        named = getattr(arguments, "collection_name", named)
        if isinstance(named, str) and named not in self.names:
            raise UnknownCollectionError(
                f"no collection named {named!r} here. Available: {', '.join(self.names)}.", field="collection_name"
            )
        return self.executor.execute(arguments)


@dataclass(frozen=True)
class AgentSession:
    """The agent: a model answering through the offered tool, by a strategy, ending in a committed answer."""

    executor: LiveExecutor
    tools: ToolSet
    model: Any
    strategy: str = DEFAULT_STRATEGY
    config: AgentConfig = field(default_factory=AgentConfig)
    #: The query memory of the `examples` strategy (None: a strategy that needs none).
    retriever: ExampleRetriever | None = None

    def __post_init__(self) -> None:
        # an unknown strategy, or `examples` without its memory, fails here, at the door, not at the first question
        build_strategy(self.strategy, retriever=self.retriever)

    @classmethod
    def over(
        cls,
        executor: LiveExecutor,
        collections: list[str] | None,
        design: ToolDesign,
        model: Any,
        strategy: str = DEFAULT_STRATEGY,
        config: AgentConfig | None = None,
        retriever: ExampleRetriever | None = None,
        counter: TokenCounter | None = None,
    ) -> AgentSession:
        """A session over the named collections of the live schema (all when None), with the tool
        `design` describes, its executor offering the design's operations."""
        executor = executor.with_operations(design.operations)
        tools = build_tools(narrowed(executor.schema, collections), design, counter)
        return cls(executor, tools, model, strategy, config or AgentConfig(), retriever)

    @property
    def collection_names(self) -> list[str]:
        return offered_collections(self.tools)

    def with_model(self, model: Any) -> AgentSession:
        """The same session answered by another model (the oracle of one question, for instance)."""
        return replace(self, model=model)

    def run(self, question: str, on_call: OnCall = None, earlier: Sequence[Turn] = ()) -> AgentRun:
        """The question answered: every model turn, call and result, the strategy recorded, the answer
        committed. A follow-up of `earlier` keeps the conditions its last turn found (`agent.conversation`),
        recorded in `strategy_notes["carried"]`."""
        previous = followed(question, earlier)
        carried = previous.keeps if previous is not None else None
        strategy, bounded = self._strategy()
        config, again = self.config, asks_again(question)
        if previous is not None:
            config = config.model_copy(update={"follows": context_of(previous, again)})
        if carried is not None and self.tools.design.operations is ToolOperations.COMPOUND:
            kept = partial(carry, carried=carried, validate=self.executor.validate, again=again)
            config = config.model_copy(update={"carry": kept})
        run = strategy.run(self.model, bounded, self.tools, config, question, on_call)
        if carried is not None:
            run.strategy_notes["carried"] = carried.model_dump()
        return run

    def turn_of(self, run: AgentRun, earlier: Sequence[Turn] = ()) -> Turn:
        """The answered question as a conversation's turn: what a follow-up of it keeps."""
        carried = carried_into(run.question, earlier)
        keeps = keeps_of(run, self.executor.validate) if run.outcome == "answered" else carried
        return Turn(question=run.question, answer=run.final_answer or "", keeps=keeps)

    def openings(self) -> list[ChatRequest]:
        """The first request of each prompt prefix this session's questions start with: the check's
        listing, and the tool turn of each collection the check may name."""
        strategy, bounded = self._strategy()
        return strategy.openings(self.model, bounded, self.tools, self.config)

    def warm(self) -> list[Warmed]:
        """Each opening sent once, for one token: a server that keeps prompt prefixes
        (`dbgorilla.llm_server`) then starts every question from its system turn already evaluated,
        and the first question of a demo is as fast as the later ones. A model error is raised."""
        return [warm_one(self.model, request) for request in self.openings()]

    def ran(self, run: AgentRun) -> list[tuple[ExecutedCall, Any]]:
        """Each call of `run` that returned a result, with the executor's checked form of it (`QuerySpec`),
        for a door that shows calls its own way."""
        calls = [c for c in run.calls() if c.result is not None and c.arguments is not None]
        return [(call, self.executor.validate(call.arguments)) for call in calls]

    def _strategy(self) -> tuple[Composed, Offered]:
        if self.model is None:
            raise ValueError("an agent session needs a chat model, e.g. OpenAIChatModel(name, base_url=...)")
        return build_strategy(self.strategy, retriever=self.retriever), Offered(
            self.executor, tuple(self.collection_names)
        )


class Warmed(BaseModel):
    """One opening sent to warm a server: its prompt tokens, those the server already held, and the time."""

    prompt_tokens: int
    cached_tokens: int | None = None
    seconds: float


def warm_one(model: Any, opening: ChatRequest) -> Warmed:
    """One opening sent for one token (a server keeping prompt prefixes stores its state); a model error is raised."""
    started = time.perf_counter()
    usage = model.complete(opening.model_copy(update={"max_tokens": 1})).usage
    seconds = time.perf_counter() - started
    return Warmed(prompt_tokens=usage.prompt_tokens, cached_tokens=usage.cached_tokens, seconds=seconds)
