"""The Query-Agent-shaped API with no server: `FunctionModel` scripts the model, `ReferenceExecutor` answers."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from agent import AgentConfig, ModelReply
from agent.query_agent import ProgressMessage, QueryAgent, QueryAgentResponse
from agent.testing import FunctionModel, tool_reply
from executors import ReferenceExecutor, UnknownCollectionError
from executors.testing import sample_objects, sample_schema
from llm import ModelMessage, ToolDefinition
from llm.messages import tool_returns

NAME = "Places"
OBJECTS = sample_objects(40, seed=3)
OPEN_LATE = {
    "collection_name": NAME,
    "boolean_property_filter": {"property_name": "open_late", "operator": "=", "value": True},
}
GROUPED = {"collection_name": NAME, "groupby_property": "cuisine"}


class _NoExamples:
    """A query memory with nothing in it: the default strategy shows solved examples when there are any."""

    def nearest(self, question: str, k: int) -> list[Any]:
        return []


NO_EXAMPLES = _NoExamples()


def agent(*calls: dict[str, Any], answer: str = "Here they are.", **config: Any) -> QueryAgent:
    """A model that makes `calls` one per turn, then answers."""

    def reply(messages: list[ModelMessage], tools: list[ToolDefinition] | None) -> ModelReply:
        done = len(tool_returns(messages))
        return tool_reply("query_database", calls[done]) if done < len(calls) else ModelReply(content=answer)

    executor = ReferenceExecutor(sample_schema(NAME), {NAME: OBJECTS})
    return QueryAgent(
        None, [NAME], FunctionModel(reply), AgentConfig(**config), executor=executor, retriever=NO_EXAMPLES
    )  # type: ignore[arg-type]


def test_ask_returns_the_answer_its_sources_and_the_calls_it_made() -> None:
    response = agent(OPEN_LATE).ask("Which places are open late?")
    late = {o.uuid for o in OBJECTS if o.properties.get("open_late") is True}
    assert response.final_answer == "Here they are." and not response.is_partial_answer
    assert response.sources and {s.object_id for s in response.sources} <= late
    assert all(s.collection == NAME for s in response.sources)
    assert len(response.searches) == 1 and response.aggregations == []
    assert response.collection_names == [NAME] and response.trace.outcome == "answered"


def test_ask_stream_yields_one_progress_message_per_call_then_the_response() -> None:
    messages = list(agent(OPEN_LATE, GROUPED).ask_stream("Open late, and by cuisine?"))
    assert [type(m) for m in messages] == [ProgressMessage, ProgressMessage, QueryAgentResponse]
    assert messages[0].stage == "step 1" and "objects in Places" in messages[0].message
    assert "groups by cuisine" in messages[1].message and messages[1].details["weaviate_calls"]
    final = messages[-1]
    assert isinstance(final, QueryAgentResponse) and len(final.aggregations) == 1
    only_progress = list(agent(OPEN_LATE).ask_stream("?", include_final_state=False))
    assert [type(m) for m in only_progress] == [ProgressMessage]


def test_an_answer_that_ran_out_of_steps_or_rests_on_an_error_is_partial_and_says_why() -> None:
    stopped = agent(OPEN_LATE, OPEN_LATE, OPEN_LATE, max_steps=2).ask("?")
    assert stopped.is_partial_answer and "max steps" in stopped.missing_information[0]
    failed = agent({"collection_name": NAME, "groupby_property": "nope"}).ask("?")
    assert failed.is_partial_answer and "a query failed" in failed.missing_information[-1]


def test_unknown_collections_are_a_typed_error() -> None:
    executor = ReferenceExecutor(sample_schema(NAME), {NAME: OBJECTS})
    model = FunctionModel(lambda _m, _t: ModelReply(content="x"))
    with pytest.raises(UnknownCollectionError, match="Nope"):
        QueryAgent(None, ["Nope"], model, executor=executor, retriever=NO_EXAMPLES).ask("?")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="chat model"):
        QueryAgent(None, [NAME], None, executor=executor)  # type: ignore[arg-type]


def citing_agent(invented: str = "") -> QueryAgent:
    """A model that lists places open late, then cites the first two ids the tool text showed it."""

    def reply(messages: list[ModelMessage], tools: list[ToolDefinition] | None) -> ModelReply:
        shown = [m.content for m in tool_returns(messages)]
        if not shown:
            return tool_reply("query_database", OPEN_LATE)
        ids = re.findall(r"\[([0-9a-f]{8})\]", shown[0])
        return ModelReply(content=f"Two of them: [{ids[0]}] and [{ids[1]}]{invented}.")

    executor = ReferenceExecutor(sample_schema(NAME), {NAME: OBJECTS})
    return QueryAgent(None, [NAME], FunctionModel(reply), executor=executor, retriever=NO_EXAMPLES)  # type: ignore[arg-type]


def test_sources_are_the_objects_the_answer_cites() -> None:
    response = citing_agent().ask("Name two places open late.")
    late = {o.uuid for o in OBJECTS if o.properties.get("open_late") is True}
    assert len(response.sources) == 2 and {s.object_id for s in response.sources} <= late
    assert response.unreceived_citations == []


def test_a_cited_id_no_result_contained_is_reported() -> None:
    response = citing_agent(" and [0badc0de]").ask("Name two places open late.")
    assert response.unreceived_citations == ["0badc0de"]
    assert len(response.sources) == 2


def test_the_committed_answer_is_in_the_response_with_its_sources_and_missing_information() -> None:
    late = sorted(o.uuid for o in OBJECTS if o.properties.get("open_late") is True)

    def reply(messages: list[ModelMessage], tools: list[ToolDefinition] | None) -> ModelReply:
        if "Commit the answer" in str(getattr(messages[-1].parts[-1], "content", "")):
            committed = {
                "numbers": [len(late)],
                "sources": [late[1][:8], "deadbeef"],  # one received, one never seen
                "is_partial_answer": True,
                "missing_information": ["opening hours by day"],
            }
            return ModelReply(content=json.dumps(committed))
        if not tool_returns(messages):
            return tool_reply("query_database", OPEN_LATE)
        return ModelReply(content="Several places.")

    executor = ReferenceExecutor(sample_schema(NAME), {NAME: OBJECTS})
    agent = QueryAgent(None, [NAME], FunctionModel(reply), executor=executor, strategy="react")  # type: ignore[arg-type]
    response = agent.ask("How many open late?")  # the react commit turn, which carries sources and flags
    assert response.answer is not None and response.answer.numbers == [len(late)]
    assert [s.object_id for s in response.sources] == [late[1]]  # a committed source counts only if received
    assert response.unreceived_citations == ["deadbeef"]
    assert response.is_partial_answer and response.missing_information == ["opening hours by day"]
