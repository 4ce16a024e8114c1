"""One question through all five doors gets one answer: `QueryAgent`, `dbgorilla ask`, MCP's `ask`,
the eval runner and an inspect task all run the same agent session (`agent.session.AgentSession`).

Each door is asked the same question of the restaurants use case, by the oracle (told the gold call
and the answer key, as `eval --model oracle` tells it) and by a scripted model that decides, calls
and commits on its own. Every door must record the same calls, the same strategy (the default,
`chain+check+values+examples+typed+grounded`: MCP and inspect used to run the bare loop), the same committed answer and text,
and offer the model the same tool. The CLI doors run in-process with only their model replaced.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model
from typer.testing import CliRunner

from agent import AgentConfig, AgentRun, ModelReply, ToolDesign
from agent.models import is_commit_request, schema_name
from agent.query_agent import QueryAgent
from agent.strategies import DEFAULT_STRATEGY
from agent.strategies.check_turns import CHECK_SCHEMA_NAME, VERDICT_SCHEMA_NAME
from agent.testing import tool_reply
from dbgorilla.cli import app
from dbgorilla.connection import connect
from dbgorilla.doors import mcp_server
from evaluation import runner
from evaluation.inspect_benchmark import RUN, benchmark, task_for
from evaluation.strategies import use_strategy
from executors import WeaviateExecutor
from fixtures.datasets import Case, read_dataset
from fixtures.examples import ExampleMemory
from fixtures.use_cases import get_use_case
from llm import ChatModel, ChatRequest, ToolDefinition
from llm.messages import tool_returns
from llm.providers.inspect_model import scripted_outputs
from tests.conftest import Stack

pytestmark = pytest.mark.integration

CASE_ID = "restaurants-502"  # the mean price of a menu item
COLLECTIONS = [c.name for c in get_use_case("restaurants").collections]


@pytest.fixture(scope="module")
def client(restaurants_stack: Stack) -> Iterator[Any]:
    with connect(restaurants_stack.settings) as live:
        yield live


@pytest.fixture(scope="module")
def case() -> Case:
    return next(c for c in read_dataset("natural").cases if c.id == CASE_ID)


class Scripted:
    """A model that answers for itself: the check's collection and verdict, the gold call, the number."""

    name = "scripted"
    prefers_named_tool_choice = False

    def __init__(self, call: dict[str, Any], number: float) -> None:
        self.call, self.number = call, number
        self.offered: list[list[ToolDefinition]] = []

    def complete(self, request: ChatRequest) -> ModelReply:
        name = schema_name(request.response_format)
        if name == CHECK_SCHEMA_NAME:
            decided = {"collection": self.call["collection_name"], "asks_for": "a mean", "statistic": "none"}
            return ModelReply(content=json.dumps(decided))
        if name == VERDICT_SCHEMA_NAME and request.response_format is not None:
            enum = request.response_format.json_schema["properties"]["verdict"]["enum"]  # type: ignore[index]
            return ModelReply(content=json.dumps({"verdict": enum[1]}))  # the listed properties hold it
        if is_commit_request(request.response_format):
            return ModelReply(content=json.dumps({"numbers": [self.number]}))
        self.offered.append(request.tools)
        if not tool_returns(request.messages):
            return tool_reply("query_database", self.call)
        return ModelReply(content=f"The mean price is {self.number:.2f}.")


def rounded(value: Any) -> Any:
    """`value` with every float to 12 significant digits: the summation order of a server-side mean
    is not fixed once other writes have reshaped the index, so the last bits may differ."""
    if isinstance(value, float):
        return float(f"{value:.12g}")
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [rounded(v) for v in value]
    return value


def recorded(run: AgentRun) -> dict[str, Any]:
    """What every door must agree on, read off a trace."""
    answer = run.answer.model_dump(mode="json") if run.answer is not None else None
    calls = [c.arguments for c in run.calls()]
    return {"calls": calls, "strategy": run.strategy, "answer": answer, "text": run.final_answer}


def query_agent_door(client: Any, model: ChatModel, case: Case, _: Any) -> dict[str, Any]:
    memory = ExampleMemory(client)  # the query memory the default strategy reads, as every other door's
    memory.ensure_seeded()
    return recorded(QueryAgent(client, collections=COLLECTIONS, model=model, retriever=memory).ask(case.query).trace)


def ask_door(client: Any, model: ChatModel, case: Case, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setattr("dbgorilla.cli.ask.resolve_model", lambda *_a, **_k: model)
    result = CliRunner().invoke(app, ["ask", case.query, "--use-case", "restaurants", "--json"])
    assert result.exit_code == 0, result.output
    return recorded(AgentRun.model_validate_json(result.stdout))


def mcp_door(client: Any, model: ChatModel, case: Case, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """`dbgorilla mcp` as started, its `ask` called once where it would serve stdio."""
    served: list[mcp_server.Served] = []
    answers: list[Any] = []
    monkeypatch.setattr("dbgorilla.cli.mcp_serve.resolve_model", lambda *_a, **_k: model)
    monkeypatch.setattr(mcp_server, "build_server", lambda s: served.append(s))
    monkeypatch.setattr(mcp_server, "serve_stdio", lambda _: answers.append(_ask(served[0], case.query)))
    result = CliRunner().invoke(app, ["mcp", "--use-case", "restaurants"])
    assert result.exit_code == 0, result.output
    [answer] = answers
    assert not answer.is_error, answer.content
    data = answer.structured_content
    calls = [c["arguments"] for c in data["searches"] + data["aggregations"]]
    return {"calls": calls, "strategy": data["strategy"], "answer": data["answer"], "text": data["final_answer"]}


def _ask(served: mcp_server.Served, question: str) -> Any:
    return mcp_server.call(served, "ask", {"question": question})


def eval_door(client: Any, model: ChatModel, case: Case, _: Any) -> dict[str, Any]:
    """The runner's case, as `dbgorilla eval` runs it (the oracle is told its case by the runner)."""
    executor = WeaviateExecutor(client).with_operations(ToolDesign().operations)  # as `run_context` aligns it
    context = runner.RunContext(
        client=client,
        executor=executor,
        scoring=runner.scoring_executor(client, executor),
        tools_for=runner.tools_by_use_case(executor.schema, {"restaurants": COLLECTIONS}, ToolDesign()),
        model_for=lambda c: runner.oracle_for(c) if model.name == "oracle" else model,
        model_name=model.name,
        config=AgentConfig(),
        design=ToolDesign(),
    )
    record = runner.run_case(case, use_strategy(context, client, DEFAULT_STRATEGY))  # its memory, as eval wires it
    calls = [c.arguments for c in record.predicted_calls]
    answer = record.commit.answer.model_dump(mode="json") if record.commit and record.commit.answer else None
    return {"calls": calls, "strategy": record.strategy, "answer": answer, "text": record.final_answer}


def inspect_door(client: Any, model: ChatModel, case: Case, tmp_path: Path) -> dict[str, Any]:
    bench = benchmark("natural", client, ids=[case.id])
    mock = get_model("mockllm/model", custom_outputs=scripted_outputs(lambda: model))
    [log] = inspect_eval(task_for(bench), model=mock, log_dir=str(tmp_path), display="none")
    assert log.status == "success" and log.samples, log.error
    return recorded(AgentRun.model_validate(log.samples[0].store[RUN]))


@pytest.mark.parametrize("kind", ["oracle", "scripted"])
def test_one_question_one_answer_at_every_door(
    client: Any, case: Case, kind: str, monkeypatch: pytest.MonkeyPatch, restaurants_stack: Stack, tmp_path: Path
) -> None:
    for name, value in restaurants_stack.env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("WEAVIATE_URL", raising=False)
    truths = runner.live_scorer(client, runner.scoring_executor(client)).truths
    gold = case.ground_truth.to_tool_arguments()
    number = WeaviateExecutor(client).execute(gold).aggregations["price"]["MEAN"]
    models: list[Any] = []

    def model() -> Any:
        models.append(runner.informed_oracle(case, truths) if kind == "oracle" else Scripted(gold, number))
        return models[-1]

    doors: dict[str, Callable[..., dict[str, Any]]] = {
        "QueryAgent": query_agent_door,
        "ask": ask_door,
        "mcp": mcp_door,
        "eval": eval_door,
    }
    seen = {name: door(client, model(), case, monkeypatch) for name, door in doors.items()}
    seen["inspect"] = inspect_door(client, model(), case, tmp_path)

    first = seen["QueryAgent"]
    assert first["calls"] == [gold] and first["strategy"] == DEFAULT_STRATEGY
    assert first["answer"]["numbers"] == [pytest.approx(number)] and first["text"]
    for name, found in seen.items():  # Weaviate's mean may differ in its last bits between two queries
        assert rounded(found) == rounded(first), f"{name} answered otherwise than QueryAgent"
    if kind == "scripted":  # and the model was offered the same tool at every door
        offered = [m.offered[0] for m in models]
        assert len(offered) == 5 and all(tools == offered[0] for tools in offered)
