"""The benchmark as an inspect_ai task, run by inspect itself against a live Weaviate, with inspect's
`mockllm` model answered by a scripted neutral model (no network, no model server).

The solver is the agent session every door runs, so the run has the strategy and the commit turn.
Two questions under the paper's loop (`strategy="react"`): one answered with the gold call and the
right number, one with a call the executor refuses (an unknown property, typed), then a wrong call
and a wrong number. The scorers must tell them apart exactly as `dbgorilla eval` does; epochs
reduce by mean and pass_k; our oracle through mockllm scores 1 on every split under the default
strategy, which the run records.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessageTool, get_model

from agent.answer import is_commit_request
from agent.strategies import DEFAULT_STRATEGY
from agent.testing import tool_reply
from dbgorilla.connection import connect
from evaluation.inspect_benchmark import RUN, Benchmark, benchmark, oracle_outputs, task_for
from executors import WeaviateExecutor
from llm import ChatRequest, ModelReply
from llm.messages import tool_returns, user_text
from llm.providers.inspect_model import scripted_outputs
from tests.conftest import Stack

pytestmark = pytest.mark.integration

RIGHT, WRONG = "restaurants-502", "restaurants-503"  # mean menu price; mean party size per occasion
MEAN_PRICE = {
    "collection_name": "MenuItems",
    "integer_property_aggregation": {"property_name": "price", "metrics": "MEAN"},
}
NO_SUCH_PROPERTY = {
    "collection_name": "Reservations",
    "integer_property_aggregation": {"property_name": "size", "metrics": "MEAN"},
}
UNGROUPED = {
    "collection_name": "Reservations",
    "integer_property_aggregation": {"property_name": "partySize", "metrics": "MEAN"},
}


@pytest.fixture(scope="module")
def client(restaurants_stack: Stack) -> Iterator[Any]:
    with connect(restaurants_stack.settings) as live:
        yield live


class Scripted:
    """The right question: the gold call, then its number. The other: a call the executor refuses,
    a call without the group-by the question asks for, then a number. Each commits its number."""

    name = "scripted"
    prefers_named_tool_choice = False

    def __init__(self, bench: Benchmark, mean_price: float) -> None:
        self.plans: dict[str, list[Any]] = {
            bench.cases[RIGHT].query: [MEAN_PRICE, f"The average price of menu items is {mean_price:.2f}.", mean_price],
            bench.cases[WRONG].query: [NO_SUCH_PROPERTY, UNGROUPED, "The average party size is about 4.", 4],
        }

    def complete(self, request: ChatRequest) -> ModelReply:
        plan = self.plans[user_text(request.messages)[0]]
        if is_commit_request(request.response_format):
            return ModelReply(content=json.dumps({"numbers": [plan[-1]]}))
        step = plan[len(tool_returns(request.messages))]
        return tool_reply("query_database", step) if isinstance(step, dict) else ModelReply(content=step)


def scripted(bench: Benchmark, mean_price: float) -> Any:
    model = Scripted(bench, mean_price)
    return scripted_outputs(lambda: model)


def run(bench: Benchmark, custom_outputs: Any, log_dir: Path, epochs: int = 1) -> EvalLog:
    model = get_model("mockllm/model", custom_outputs=custom_outputs)
    [log] = inspect_eval(task_for(bench, epochs=epochs), model=model, log_dir=str(log_dir), display="none")
    assert log.status == "success", log.error
    return log


def metrics(log: EvalLog) -> dict[str, float]:
    assert log.results is not None
    return {f"{s.name}/{s.reducer or 'mean'}": s.metrics["mean"].value for s in log.results.scores}


def test_two_questions_scored_by_our_scorers(client: Any, tmp_path: Path) -> None:
    bench = benchmark("natural", client, ids=[RIGHT, WRONG], strategy="react")
    mean_price = WeaviateExecutor(client).execute(MEAN_PRICE).aggregations["price"]["MEAN"]
    log = run(bench, scripted(bench, mean_price), tmp_path)
    assert log.samples is not None
    samples = {s.id: s for s in log.samples}
    assert samples[RIGHT].scores["execution_match"].value == "C"
    assert samples[RIGHT].scores["answer_grader"].value == "C"
    assert samples[WRONG].scores["execution_match"].value == "I"
    assert samples[WRONG].scores["answer_grader"].value == "I"
    assert metrics(log) == {"execution_match/mean": 0.5, "answer_grader/mean": 0.5}
    # the tool ran on the live data, and refused the bad call with the executor's typed error
    right_results = [m for m in samples[RIGHT].messages if isinstance(m, ChatMessageTool)]
    assert right_results[0].text.startswith("Collection: MenuItems")
    refused = next(m for m in samples[WRONG].messages if isinstance(m, ChatMessageTool))
    assert refused.text.startswith("Error (unknown_property):") and "partySize" in refused.text
    # the run is the session's: the strategy asked for, and the committed answer
    trace = samples[RIGHT].store[RUN]
    assert trace["strategy"] == "react" and trace["commit"]["answer"]["numbers"] == [pytest.approx(mean_price)]
    assert samples[RIGHT].output.completion == f"The average price of menu items is {mean_price:.2f}."
    # the offered tool is the one the agent offers: its schema's collection enum is the use case's
    tool = samples[RIGHT].events and next(e for e in samples[RIGHT].events if e.event == "model").tools[0]
    assert tool.name == "query_database"
    assert tool.parameters.properties["collection_name"].enum == ["MenuItems", "Reservations", "Restaurants"]
    assert json.loads(samples[RIGHT].target) == MEAN_PRICE


def test_epochs_reduce_by_pass_k(client: Any, tmp_path: Path) -> None:
    bench = benchmark("natural", client, ids=[RIGHT, WRONG], strategy="react")
    mean_price = WeaviateExecutor(client).execute(MEAN_PRICE).aggregations["price"]["MEAN"]
    log = run(bench, scripted(bench, mean_price), tmp_path, epochs=2)
    assert metrics(log) == {
        "execution_match/mean": 0.5,
        "execution_match/pass_k_2": 0.5,
        "answer_grader/mean": 0.5,
        "answer_grader/pass_k_2": 0.5,
    }
    assert log.samples is not None and len(log.samples) == 4


@pytest.mark.parametrize(
    ("split", "ids"),
    [
        ("natural", ["restaurants-501", "restaurants-502", "restaurants-506", "restaurants-509"]),
        ("multistep", ["restaurants-701", "restaurants-702"]),
        ("abstention", ["restaurants-801", "restaurants-802"]),
    ],
)
def test_the_oracle_scores_everything(client: Any, tmp_path: Path, split: str, ids: list[str]) -> None:
    bench = benchmark(split, client, ids=ids)  # the default strategy, as at every other door
    log = run(bench, oracle_outputs(bench), tmp_path)
    assert log.samples is not None and {s.store[RUN]["strategy"] for s in log.samples} == {DEFAULT_STRATEGY}
    assert all(s.store[RUN]["commit"]["answer"] is not None for s in log.samples)
    scores = metrics(log)
    assert scores == (
        {"answer_grader/mean": 1.0}
        if split == "abstention"
        else {
            "execution_match/mean": 1.0,
            "answer_grader/mean": 1.0,
        }
    )
