"""The public suite on a live Weaviate: a dataset loads as a collection of the user's own (no marker, and
a user's collection of its name is never replaced), and `eval --dataset public` asks each question through
the agent session and grades the answer a user reads (here with a scripted model; the real local model's
score is a result, in docs/results/)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from weaviate.classes.config import Configure, DataType, Property

from agent import AgentConfig, ModelReply, ToolDesign
from agent.answer import is_commit_request
from agent.testing import FunctionModel, tool_reply
from evaluation.public_run import run_question
from executors import WeaviateExecutor
from executors.ownership import NotOurCollection, marker_of
from fixtures.datasets import read_public
from fixtures.datasets.splits import split_path
from fixtures.public_suite import create_public_collection, ensure_public_collection, get_dataset
from llm.messages import tool_returns
from tests.conftest import run_cli, settings_env

pytestmark = pytest.mark.integration
IRIS = get_dataset("iris")
QUESTIONS = {q.id: q for q in read_public(split_path("public"))}


@pytest.fixture(scope="module")
def client(weaviate_stack: Any) -> Iterator[Any]:
    from dbgorilla.connection import connect

    connected = connect(weaviate_stack.settings)
    ensure_public_collection(connected, IRIS)
    yield connected
    connected.close()


def scripted(call: dict[str, Any]) -> FunctionModel:
    """Makes `call`, then answers in prose and commits whatever it is asked (grounded derives the answer)."""

    def reply(messages: list[Any], _tools: Any) -> ModelReply:
        if is_commit_request(model.calls[-1]["response_format"]):
            return ModelReply(content=json.dumps({"numbers": [], "names": [], "groups": [], "cannot_answer": ""}))
        if not tool_returns(messages):
            return tool_reply("query_database", call)
        return ModelReply(content="Done.")

    model = FunctionModel(reply)
    return model


def test_the_dataset_is_a_collection_of_the_users_own_with_every_row(client: Any) -> None:
    config = client.collections.use(IRIS.collection).config.get()
    assert marker_of(config.description) is None  # not the project's: nothing of ours may drop it
    count = client.collections.use(IRIS.collection).aggregate.over_all(total_count=True).total_count
    assert count == len(IRIS.rows()) == 150
    assert ensure_public_collection(client, IRIS) is False  # already whole: left as it is


def test_a_users_collection_of_the_same_name_is_never_replaced(client: Any) -> None:
    name = "IrisFlowersOfAUser"
    client.collections.create(
        name,
        description="my own irises",
        vector_config=Configure.Vectors.self_provided(),
        properties=[Property(name="species", data_type=DataType.TEXT)],
    )
    try:
        client.collections.use(name).data.insert({"species": "setosa"})
        with pytest.raises(NotOurCollection):
            create_public_collection(client, IRIS, name=name)
        assert client.collections.use(name).aggregate.over_all(total_count=True).total_count == 1
    finally:
        client.collections.delete(name)


def test_a_question_is_asked_through_the_session_and_its_answer_graded(client: Any) -> None:
    question = QUESTIONS["iris-001"]  # the average petal length of setosa flowers
    call = {
        "collection_name": IRIS.collection,
        "text_property_filter": {"property_name": "species", "operator": "=", "value": "setosa"},
        "integer_property_aggregation": {"property_name": "petal_length", "metrics": "MEAN"},
    }
    executor = WeaviateExecutor(client)
    record = run_question(question, executor, scripted(call), "grounded", ToolDesign(), AgentConfig(), None)
    assert record.error is None and record.correct, record.reason
    assert record.final_answer == 'The average petal length of the 50 iris flowers with species = "setosa" is 1.46.'
    # another call's answer is graded wrong: the grade reads the answer, not the question
    wrong = {**call, "integer_property_aggregation": {"property_name": "petal_width", "metrics": "MEAN"}}
    record = run_question(question, executor, scripted(wrong), "grounded", ToolDesign(), AgentConfig(), None)
    assert not record.correct


def test_a_filter_on_a_value_the_data_does_not_hold_is_no_match_not_zero(client: Any) -> None:
    question = QUESTIONS["iris-001"]
    call = {
        "collection_name": IRIS.collection,
        "text_property_filter": {"property_name": "species", "operator": "=", "value": "rosa"},
        "integer_property_aggregation": {"property_name": "petal_length", "metrics": "MEAN"},
    }
    record = run_question(
        question, WeaviateExecutor(client), scripted(call), "grounded", ToolDesign(), AgentConfig(), None
    )
    assert record.refused and not record.correct
    assert record.committed is not None and record.committed["numbers"] == []
    assert 'no objects matched (filter species = "rosa")' in (record.final_answer or "")


def test_eval_names_what_it_cannot_run(weaviate_stack: Any) -> None:
    env = settings_env(weaviate_stack.settings)
    oracle = run_cli("eval", "--dataset", "public", "--model", "oracle", "--id", "iris-001", env=env)
    assert oracle.returncode != 0 and "gold calls" in oracle.stderr + oracle.stdout
    other = run_cli("eval", "--dataset", "natural", "--collections", "IrisFlowers", "--model", "oracle", env=env)
    assert other.returncode != 0 and "--collections" in other.stderr + other.stdout


def test_a_count_of_a_value_held_nowhere_says_so_and_a_count_of_held_values_is_a_count(client: Any) -> None:
    question = QUESTIONS["iris-001"]
    executor = WeaviateExecutor(client)
    count = {"property_name": "petal_length", "metrics": "COUNT"}
    nowhere = {
        "collection_name": IRIS.collection,
        "text_property_filter": {"property_name": "species", "operator": "LIKE", "value": "*rosa*"},
        "integer_property_aggregation": count,
    }
    record = run_question(question, executor, scripted(nowhere), "grounded", ToolDesign(), AgentConfig(), None)
    assert record.refused and record.committed is not None and record.committed["numbers"] == []
    assert f'no {IRIS.collection} object holds "rosa" in any text property' in (record.final_answer or "")
    # the same values held, no object with both: 0 is the count
    held = {
        "collection_name": IRIS.collection,
        "text_property_filter": {"property_name": "species", "operator": "=", "value": "setosa"},
        "integer_property_filter": {"property_name": "petal_length", "operator": ">", "value": 100},
        "integer_property_aggregation": count,
    }
    record = run_question(question, executor, scripted(held), "grounded", ToolDesign(), AgentConfig(), None)
    assert not record.refused and record.committed is not None and record.committed["numbers"] == [0.0]
