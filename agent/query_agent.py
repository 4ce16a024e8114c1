"""A local stand-in for Weaviate's hosted Query Agent: the same calls and response fields, our loop.

    from agent import OpenAIChatModel
    from agent.query_agent import QueryAgent

    qa = QueryAgent(client, collections=["Restaurants"], model=OpenAIChatModel("m", base_url=URL))
    response = qa.ask("How many Italian restaurants are open now?")
    response.final_answer, response.sources, response.is_partial_answer, response.missing_information
    for message in qa.ask_stream("..."):        # ProgressMessage per call, then the QueryAgentResponse
        ...

Code written against `weaviate.agents.query.QueryAgent` (`ask`, `ask_stream`, the response's
`final_answer`, `searches`, `aggregations`, `sources`, `usage`, `total_time`, `is_partial_answer`,
`missing_information`) runs against a local Weaviate with any OpenAI-compatible model. Sources are
the objects the calls the answer rests on returned (the last step with results), not objects the
model names: a source is always something the agent received. Beyond the hosted agent, `answer`
is the typed answer the model committed (`agent.answer.FinalAnswer`: numbers, names, a group ->
value map, or "cannot answer" with the reason); its sources, partial flag and missing information
are merged into the response's own (a committed source counts only if the agent received it).
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any, Literal

from pydantic import BaseModel, Field

from agent.answer import FinalAnswer
from agent.citations import Citations, check_citations
from agent.conversation import TurnMemory, conversation_of
from agent.loop import AgentConfig, AgentRun, ExecutedCall
from agent.models import Usage
from agent.session import AgentSession
from agent.strategies import DEFAULT_STRATEGY, ExampleRetriever, build_strategy
from agent.tooldef import ToolDesign
from executors import SHORT_ID_CHARS, WeaviateExecutor

#: Sources listed at most (the hosted agent lists the objects its answer used).
MAX_SOURCES = 20
#: A question, or a conversation as the hosted agent's chat messages.
Query = str | list[dict[str, str]]


class Source(BaseModel):
    object_id: str
    collection: str


class ProgressMessage(BaseModel):
    """One finished call, streamed as it happens."""

    output_type: Literal["progress_message"] = "progress_message"
    stage: str
    message: str
    details: dict[str, Any] = Field(default_factory=dict)


class QueryAgentResponse(BaseModel):
    output_type: Literal["final_state"] = "final_state"
    original_query: str
    collection_names: list[str]
    #: The calls that searched or listed objects, and those that aggregated or grouped, as run.
    searches: list[dict[str, Any]] = Field(default_factory=list)
    aggregations: list[dict[str, Any]] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    total_time: float = 0.0
    is_partial_answer: bool = False
    missing_information: list[str] = Field(default_factory=list)
    final_answer: str = ""
    #: Beyond the hosted agent: the typed answer the model committed (None: it committed none that parses).
    answer: FinalAnswer | None = None
    #: The objects the answer cites by id, when it cites any the agent received; otherwise the objects
    #: the answer's calls returned.
    sources: list[Source] = Field(default_factory=list)
    #: Beyond the hosted agent: ids the answer cites that no result contained (an answer should have none).
    unreceived_citations: list[str] = Field(default_factory=list)
    #: Beyond the hosted agent: the whole trace (every model turn, call, Weaviate call and result).
    trace: AgentRun

    def display(self) -> None:
        print(self.final_answer or "(no answer)")
        if self.answer is not None:
            print(f"committed: {self.answer.text()}")
        if self.is_partial_answer:
            print("partial answer; missing: " + "; ".join(self.missing_information))
        for source in self.sources:
            print(f"  source: {source.collection} {source.object_id}")


class QueryAgent:
    """`ask` and `ask_stream` over the collections named (all of them when none are)."""

    def __init__(
        self,
        client: Any,
        collections: list[str] | None = None,
        model: Any = None,
        config: AgentConfig | None = None,
        design: ToolDesign | None = None,
        executor: WeaviateExecutor | None = None,
        strategy: str = DEFAULT_STRATEGY,
        retriever: ExampleRetriever | None = None,
    ) -> None:
        """`strategy` names an agent strategy (`agent.strategies`, e.g. "examples+grounded"); `examples`
        needs `retriever`, e.g. `fixtures.examples.ExampleMemory(client)`."""
        if model is None:
            raise ValueError("QueryAgent needs a chat model, e.g. OpenAIChatModel(name, base_url=...)")
        self.design = design or ToolDesign()
        self.executor = executor or WeaviateExecutor(client)
        self.collections = collections
        self.model = model
        self.config = config or AgentConfig()
        self.strategy = build_strategy(strategy, retriever=retriever).name  # a bad name fails here
        self.retriever = retriever
        self._turns = TurnMemory()

    def _agent(self, query: Query) -> tuple[Callable[..., AgentRun], list[str]]:
        """The question answered by the session over the live schema (read at each question), with the
        conversation before it (`query` as the hosted agent's chat messages), and the collections offered."""
        session = AgentSession.over(
            self.executor, self.collections, self.design, self.model, self.strategy, self.config, self.retriever
        )
        question, pairs = (query, []) if isinstance(query, str) else conversation_of(query)
        earlier = self._turns.turns(pairs)

        def answer(on_call: Any = None) -> AgentRun:
            run = session.run(question, on_call, earlier)
            self._turns.remember(session.turn_of(run, earlier))
            return run

        return answer, session.collection_names

    def ask(self, query: Query) -> QueryAgentResponse:
        """A question, or a conversation as chat messages (`{"role", "content"}`, the last the user's):
        a follow-up keeps what the earlier answers (this agent's) found (`agent.conversation`)."""
        agent, names = self._agent(query)
        return response_of(agent(), names)

    def ask_stream(
        self, query: Query, include_progress: bool = True, include_final_state: bool = True
    ) -> Iterator[ProgressMessage | QueryAgentResponse]:
        """Progress messages as calls finish, then the response (the loop runs in a worker thread)."""
        agent, names = self._agent(query)
        events: queue.Queue[ProgressMessage | AgentRun | BaseException] = queue.Queue()

        def work() -> None:
            try:
                events.put(agent(on_call=lambda step, call: events.put(progress_of(step, call))))
            except BaseException as error:  # handed to the caller's thread, raised there
                events.put(error)

        threading.Thread(target=work, daemon=True).start()
        while True:
            event = events.get()
            if isinstance(event, BaseException):
                raise event
            if isinstance(event, AgentRun):
                if include_final_state:
                    yield response_of(event, names)
                return
            if include_progress:
                yield event


def progress_of(step: int, call: ExecutedCall) -> ProgressMessage:
    if call.error is not None:
        line = f"error ({call.error.code}): {call.error.message}"
    elif call.result is not None:
        line = summary_line(call)
    else:
        line = ""
    return ProgressMessage(
        stage=f"step {step + 1}",
        message=line,
        details={"arguments": call.arguments or call.raw_arguments, "weaviate_calls": call.weaviate_call},
    )


def summary_line(call: ExecutedCall) -> str:
    """One line for a result: its count, its aggregations or its groups."""
    result = call.result
    assert result is not None
    if result.groups is not None:
        more = "+" if result.truncated else ""
        return f"{len(result.groups)}{more} groups by {result.group_by}"
    if result.aggregations:
        return "; ".join(f"{prop}: {json.dumps(metrics, default=str)}" for prop, metrics in result.aggregations.items())
    total = result.total_count if result.total_count is not None else len(result.objects)
    return f"{total} objects in {result.collection} ({len(result.objects)} shown)"


def response_of(run: AgentRun, collection_names: list[str]) -> QueryAgentResponse:
    """The hosted agent's response fields, read off our trace."""
    calls = run.calls()
    ran = [c for c in calls if c.result is not None]
    searches = [_call_record(c) for c in ran if not (c.result and (c.result.aggregations or c.result.groups))]
    aggregations = [_call_record(c) for c in ran if c.result and (c.result.aggregations or c.result.groups)]
    committed = run.answer
    missing = _missing(run) + (committed.missing_information if committed is not None else [])
    cited = _citations(run)
    return QueryAgentResponse(
        original_query=run.question,
        collection_names=collection_names,
        searches=searches,
        aggregations=aggregations,
        usage=run.usage,
        total_time=round(run.latency_s, 3),
        is_partial_answer=bool(missing) or (committed is not None and committed.is_partial_answer),
        missing_information=missing,
        final_answer=run.final_answer or "",
        answer=committed,
        sources=_sources(run, cited),
        unreceived_citations=[c for c in cited.cited if c not in cited.received],
        trace=run,
    )


def _call_record(call: ExecutedCall) -> dict[str, Any]:
    return {"arguments": call.arguments, "weaviate_calls": call.weaviate_call, "summary": summary_line(call)}


def _objects(calls: list[ExecutedCall]) -> dict[str, Source]:
    """Every object the calls returned (listed and group samples), by UUID, in order."""
    found: dict[str, Source] = {}
    for call in calls:
        if call.result is None:
            continue
        samples = [s for g in (call.result.groups or {}).values() for s in g.samples]
        for obj in [*call.result.objects, *samples]:
            found.setdefault(obj.uuid.lower(), Source(object_id=obj.uuid, collection=call.result.collection))
    return found


def _citations(run: AgentRun) -> Citations:
    """The ids the prose cites and the sources the committed answer names, checked against what was received."""
    sources = run.answer.sources if run.answer is not None else []
    text = " ".join([run.final_answer or "", *(f"[{s}]" if len(s) == SHORT_ID_CHARS else s for s in sources)])
    return check_citations(text, set(_objects(run.calls())))


def _sources(run: AgentRun, cited: Citations) -> list[Source]:
    """The cited objects the agent received; without any, the objects of the answer's calls."""
    if cited.received:
        received = _objects(run.calls())
        chosen = [source for uuid, source in received.items() if any(uuid.startswith(c) for c in cited.received)]
        return chosen[:MAX_SOURCES]
    steps = [step for step in run.steps if any(c.result is not None for c in step.calls)]
    return list(_objects(steps[-1].calls).values())[:MAX_SOURCES] if steps else []


def _missing(run: AgentRun) -> list[str]:
    """What the answer lacks, in words: why the loop stopped early, failed calls, groups cut short."""
    missing = []
    if run.outcome != "answered":
        missing.append(f"the agent stopped without a grounded answer ({run.outcome.replace('_', ' ')})")
    answered_from = next((step.calls for step in reversed(run.steps) if step.calls), [])
    for call in answered_from:
        if call.error is not None:
            missing.append(f"a query failed: {call.error.message}")
        elif call.result is not None and call.result.groups is not None and call.result.truncated:
            missing.append(f"only the first {len(call.result.groups)} groups by {call.result.group_by} were read")
    return missing
