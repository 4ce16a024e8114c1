"""The loop against a live Weaviate and a scripted OpenAI-compatible HTTP server (real `openai` client)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from agent import Agent, AgentConfig, OpenAIChatModel, OracleModel, ToolDesign, ToolVariant, build_tools
from agent.models import is_commit_request
from agent.testing import MockOpenAIServer, Reply, call, text
from agent.tokens import estimate_counter
from dbgorilla.smoke import SMOKE_OBJECTS, create_smoke_collection
from executors import DatabaseSchema, WeaviateExecutor

pytestmark = pytest.mark.integration
NAME = "AgentLoopCheck"
BY_NAME = {o["name"]: o for o in SMOKE_OBJECTS}


@pytest.fixture(scope="module")
def executor(weaviate_stack: Any) -> Iterator[WeaviateExecutor]:
    from dbgorilla.connection import connect

    with connect(weaviate_stack.settings) as client:
        create_smoke_collection(client, NAME)
        yield WeaviateExecutor(client)
        client.collections.delete(NAME)


def tools_for(executor: WeaviateExecutor, design: ToolDesign | None = None) -> Any:
    collection = executor.refresh_schema().get(NAME)
    assert collection is not None
    return build_tools(DatabaseSchema(collections=(collection,)), design or ToolDesign(), estimate_counter())


def agent_for(server: MockOpenAIServer, executor: WeaviateExecutor, **kwargs: Any) -> Agent:
    model = OpenAIChatModel(
        server.model, base_url=server.base_url, timeout=kwargs.pop("timeout", 10), max_retries=kwargs.pop("retries", 0)
    )
    return Agent(model, executor, kwargs.pop("tools", None) or tools_for(executor), AgentConfig(**kwargs))


def names_in(result: Any) -> set[str]:
    return {o.properties["name"] for o in result.objects}


def tool_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "tool"]


def test_single_call_then_answer(executor: WeaviateExecutor) -> None:
    arguments = {
        "collection_name": NAME,
        "boolean_property_filter": {"property_name": "open_late", "operator": "=", "value": True},
    }
    with MockOpenAIServer([call("query_database", arguments), text("Three places open late.")]) as server:
        run = agent_for(server, executor).run("Which restaurants are open late?")
    assert run.outcome == "answered" and run.final_answer == "Three places open late."
    [executed] = run.calls()
    assert executed.ok and executed.arguments == arguments
    assert names_in(executed.result) == {n for n, o in BY_NAME.items() if o["open_late"]}
    assert any("Filter.by_property('open_late')" in c for c in executed.weaviate_call)
    second = server.requests[1]
    assert (
        second["messages"][-2]["content"] == ""
        and second["messages"][-2]["tool_calls"][0]["id"] == executed.tool_call_id
    )
    assert "Taco Loco" in tool_messages(second)[0]["content"]
    assert run.usage.prompt_tokens > 0 and len(run.steps) == 2


def test_the_model_commits_its_answer_over_http(executor: WeaviateExecutor) -> None:
    """The commit turn: the same tools (so the server's cached prefix holds), tool_choice none, and the
    answer's schema as response_format; a server that refuses json_schema gets it as json_object."""
    arguments = {"collection_name": NAME, "search_query": "tacos"}
    committed = {"numbers": [], "names": ["Taco Loco"], "groups": {}, "cannot_answer": "", "sources": [],
                 "is_partial_answer": False, "missing_information": []}  # fmt: skip
    replies = iter([call("query_database", arguments), text("Taco Loco."), text(json.dumps(committed))])

    def refuses_json_schema(body: dict[str, Any], index: int) -> Reply:
        if (body.get("response_format") or {}).get("type") == "json_schema":
            return Reply(status=500, error_message="response_format.type: Input should be 'text' or 'json_object'")
        return next(replies)

    with MockOpenAIServer(refuses_json_schema) as server:
        run = agent_for(server, executor).run("Where are the tacos?")
    assert run.final_answer == "Taco Loco." and run.answer is not None and run.answer.names == ["Taco Loco"]
    refused, commit = server.requests[2:]
    assert (
        commit["response_format"]["type"] == "json_object"
        and "cannot_answer" in commit["response_format"]["schema"]["properties"]
    )
    assert commit["tools"] == server.requests[0]["tools"] and commit["tool_choice"] == "none"
    assert commit["messages"][:-1] == [*server.requests[1]["messages"], {"role": "assistant", "content": "Taco Loco."}]
    assert refused["response_format"]["type"] == "json_schema" and len(server.requests) == 4
    assert run.commit is not None and run.commit.usage.prompt_tokens > 0


def test_multi_step_chain_uses_an_earlier_result(executor: WeaviateExecutor) -> None:
    def script(body: dict[str, Any], index: int) -> Reply:
        if index == 0:
            return call(
                "query_database",
                {
                    "collection_name": NAME,
                    "integer_property_aggregation": {"property_name": "rating", "metrics": "MAX"},
                },
            )
        if index == 1:
            best = float(re.findall(r"\d+\.\d+", tool_messages(body)[-1]["content"])[-1])
            return call(
                "query_database",
                {
                    "collection_name": NAME,
                    "integer_property_filter": {"property_name": "rating", "operator": ">=", "value": best},
                },
            )
        return text("The best-rated place is Sakura Bar.")

    with MockOpenAIServer(script) as server:
        run = agent_for(server, executor).run("Which restaurant has the top rating?")
    first, second = run.calls()
    assert first.result.aggregations["rating"]["MAX"] == max(o["rating"] for o in SMOKE_OBJECTS)
    assert names_in(second.result) == {"Sakura Bar"}
    assert run.outcome == "answered" and len(run.steps) == 3


def test_parallel_calls_each_get_their_tool_message(executor: WeaviateExecutor) -> None:
    both = Reply(
        tool_calls=[
            ("query_database", {"collection_name": NAME, "search_query": "sushi"}),
            (
                "query_database",
                {
                    "collection_name": NAME,
                    "boolean_property_aggregation": {"property_name": "open_late", "metrics": "TOTAL_TRUE"},
                },
            ),
        ]
    )
    design = ToolDesign(parallel_calls=True)
    with MockOpenAIServer([both, text("ok")]) as server:
        run = agent_for(server, executor, tools=tools_for(executor, design)).run("Sushi, and how many open late?")
    assert server.requests[0]["parallel_tool_calls"] is True
    first, second = run.calls()
    assert first.ok and second.ok and second.result.aggregations["open_late"]["TOTAL_TRUE"] == 3
    ids = [m["tool_call_id"] for m in tool_messages(server.requests[1])]
    assert ids == [first.tool_call_id, second.tool_call_id]


def test_malformed_json_arguments_go_back_as_a_typed_error(executor: WeaviateExecutor) -> None:
    with MockOpenAIServer([call("query_database", '{"collection_name": "AgentLoopCheck", '), text("sorry")]) as server:
        run = agent_for(server, executor).run("anything")
    [executed] = run.calls()
    assert executed.error is not None and executed.error.code == "invalid_arguments"
    assert "not valid JSON" in tool_messages(server.requests[1])[0]["content"]


def test_unknown_tool_name_is_reported_to_the_model(executor: WeaviateExecutor) -> None:
    with MockOpenAIServer([call("drop_database", {"collection_name": NAME}), text("ok")]) as server:
        run = agent_for(server, executor).run("drop it")
    [executed] = run.calls()
    assert executed.error.code == "unknown_tool"
    assert "Available: query_database" in tool_messages(server.requests[1])[0]["content"]
    assert executor.refresh_schema().get(NAME) is not None


def test_invalid_property_then_the_models_correction(executor: WeaviateExecutor) -> None:
    wrong = {
        "collection_name": NAME,
        "integer_property_filter": {"property_name": "stars", "operator": ">", "value": 4.4},
    }
    right = {**wrong, "integer_property_filter": {"property_name": "rating", "operator": ">", "value": 4.4}}
    with MockOpenAIServer([call("query_database", wrong), call("query_database", right), text("done")]) as server:
        run = agent_for(server, executor).run("Places rated above 4.4?")
    failed, fixed = run.calls()
    assert failed.error.code == "unknown_property"
    feedback = tool_messages(server.requests[1])[0]["content"]
    assert "stars" in feedback and "rating (number)" in feedback
    assert fixed.ok and names_in(fixed.result) == {n for n, o in BY_NAME.items() if o["rating"] > 4.4}
    assert run.corrections == 1 and run.outcome == "answered"


def test_corrections_are_bounded(executor: WeaviateExecutor) -> None:
    wrong = {"collection_name": "Nope"}
    with MockOpenAIServer([call("query_database", wrong)] * 10) as server:
        run = agent_for(server, executor, max_steps=10, max_corrections=2).run("loop forever")
    assert run.outcome == "correction_limit" and run.corrections == 3
    assert len(server.requests) == 4 and len(run.calls()) == 3


def test_a_call_written_as_text_is_recovered(executor: WeaviateExecutor) -> None:
    payload = {"name": "query_database", "arguments": {"collection_name": NAME, "search_query": "sushi and sashimi"}}
    reply = text(f"Sure!\n<tool_call>\n{json.dumps(payload)}\n</tool_call>")
    with MockOpenAIServer([reply, text("Sakura Bar.")]) as server:
        run = agent_for(server, executor).run("Where can I eat raw fish?")
    [executed] = run.calls()
    assert executed.recovered_from_text and run.recovered_text_calls == 1
    assert executed.ok and executed.result.objects[0].properties["name"] == "Sakura Bar"
    assert run.final_answer == "Sakura Bar."


def test_429_is_retried_then_succeeds(executor: WeaviateExecutor) -> None:
    script = [
        Reply(status=429, error_message="slow down"),
        call("query_database", {"collection_name": NAME}),
        text("ok"),
    ]
    with MockOpenAIServer(script) as server:
        run = agent_for(server, executor, retries=2, commit_answer=False).run("list them")
    assert run.outcome == "answered" and len(server.requests) == 3
    assert run.calls()[0].ok and len(run.calls()[0].result.objects) == len(SMOKE_OBJECTS)


def test_a_server_that_never_answers_is_bounded_by_the_timeout(executor: WeaviateExecutor) -> None:
    with MockOpenAIServer([Reply(hang_seconds=30)]) as server:
        started = time.monotonic()
        run = agent_for(server, executor, timeout=1, retries=0).run("hello?")
        elapsed = time.monotonic() - started
    assert run.outcome == "timeout" and "timeout" in run.error
    assert elapsed < 10 and run.calls() == []


def test_no_tool_call_is_its_own_outcome(executor: WeaviateExecutor) -> None:
    with MockOpenAIServer([text("I know this without looking.")]) as server:
        run = agent_for(server, executor).run("Which places open late?")
    assert run.outcome == "no_tool_call" and run.final_answer == "I know this without looking."


def test_local_models_get_a_named_tool_choice_first(executor: WeaviateExecutor) -> None:
    with MockOpenAIServer([call("query_database", {"collection_name": NAME}), text("ok")]) as server:
        agent = agent_for(server, executor)
        agent.model.prefers_named_tool_choice = True
        agent.run("list")
    assert server.requests[0]["tool_choice"] == {"type": "function", "function": {"name": "query_database"}}
    assert server.requests[1]["tool_choice"] == "auto"


def test_per_collection_tools_with_rationale(executor: WeaviateExecutor) -> None:
    design = ToolDesign(variant=ToolVariant.PER_COLLECTION, rationale=True)
    arguments = {"rationale": "the user wants sushi", "search_query": "sushi"}
    with MockOpenAIServer([call(f"query_{NAME}", arguments), text("ok")]) as server:
        run = agent_for(server, executor, tools=tools_for(executor, design)).run("sushi?")
    [tool] = server.requests[0]["tools"]
    assert tool["function"]["name"] == f"query_{NAME}"
    assert "collection_name" not in tool["function"]["parameters"]["properties"]
    assert tool["function"]["parameters"]["required"] == ["rationale"]
    [executed] = run.calls()
    assert executed.rationale == "the user wants sushi"
    assert executed.arguments == {"collection_name": NAME, "search_query": "sushi"} and executed.ok


def test_structured_output_mode(executor: WeaviateExecutor) -> None:
    first = json.dumps(
        {
            "use_tools": True,
            "tool_calls": [
                {"function_name": "query_database", "arguments": {"collection_name": NAME, "search_query": "tacos"}}
            ],
        }
    )
    final = json.dumps({"use_tools": False, "response": "Taco Loco."})
    with MockOpenAIServer([text(first), text(final)]) as server:
        run = agent_for(server, executor, tools=tools_for(executor, ToolDesign(structured_output=True))).run("tacos?")
    assert "tools" not in server.requests[0]
    assert server.requests[0]["response_format"]["json_schema"]["name"] == "ResponseOrToolCall"
    assert run.calls()[0].result.objects[0].properties["name"] == "Taco Loco"
    assert run.final_answer == "Taco Loco." and server.requests[1]["messages"][-1]["role"] == "user"


def test_structured_output_falls_back_to_json_object_where_json_schema_is_refused(executor: WeaviateExecutor) -> None:
    """llama-cpp-python's server refuses `json_schema` with HTTP 500 (every structured question of an
    ablation once failed so); the model sends the schema as `json_object` instead, and keeps to it."""
    first = json.dumps(
        {
            "use_tools": True,
            "tool_calls": [
                {"function_name": "query_database", "arguments": {"collection_name": NAME, "search_query": "tacos"}}
            ],
        }
    )
    replies = iter([text(first), text(json.dumps({"use_tools": False, "response": "Taco Loco."}))])

    def refuses_json_schema(body: dict[str, Any], index: int) -> Reply:
        if body["response_format"]["type"] == "json_schema":
            return Reply(status=500, error_message="response_format.type: Input should be 'text' or 'json_object'")
        return next(replies)

    with MockOpenAIServer(refuses_json_schema) as server:
        design = ToolDesign(structured_output=True)
        agent = agent_for(server, executor, tools=tools_for(executor, design), commit_answer=False)
        run = agent.run("tacos?")
    kinds = [request["response_format"]["type"] for request in server.requests]
    assert kinds == ["json_schema", "json_object", "json_object"]
    assert server.requests[1]["response_format"]["schema"]["title"] == "ResponseOrToolCall"
    assert run.outcome == "answered" and run.final_answer == "Taco Loco."
    assert run.calls()[0].result.objects[0].properties["name"] == "Taco Loco"
    assert agent.model.schema_forms.used == "json_object"  # type: ignore[attr-defined]


def test_oracle_replays_the_ground_truth_through_the_loop(executor: WeaviateExecutor) -> None:
    truth = {
        "collection_name": NAME,
        "text_property_filter": {"property_name": "name", "operator": "LIKE", "value": "*o*"},
        "integer_property_aggregation": {"property_name": "rating", "metrics": "MEAN"},
        "groupby_property": "open_late",
    }
    run = Agent(OracleModel(truth), executor, tools_for(executor)).run(
        "mean rating of names with an o, by late opening"
    )
    [executed] = run.calls()
    assert executed.arguments == truth
    assert executed.result.comparable() == executor.execute(truth).comparable()
    assert run.outcome == "answered"


def bar_script(arguments: dict[str, Any]) -> Any:
    """The call, then the answer, then its commitment, read off the conversation (a request without
    tools, such as a check that the endpoint answers, gets a word)."""

    def script(body: dict[str, Any], index: int) -> Reply:
        if "tools" not in body:
            return text("ok")
        if is_commit_request(body.get("response_format")):
            return text(json.dumps({"names": ["Sakura Bar"]}))
        return text("Sakura Bar is the one.") if tool_messages(body) else call("query_database", arguments)

    return script


def test_ask_command_shows_the_trace_and_never_prints_the_key(executor: WeaviateExecutor, weaviate_stack: Any) -> None:
    from tests.conftest import run_cli

    secret = "sk-test-0123456789abcdef"
    arguments = {
        "collection_name": NAME,
        "text_property_filter": {"property_name": "name", "operator": "LIKE", "value": "*Bar*"},
    }

    with MockOpenAIServer(bar_script(arguments)) as server:
        env = {**weaviate_stack.env, "OPENAI_API_KEY": secret}
        react = ("--strategy", "react")  # the paper's loop and its commit turn, which this mock answers
        readable = run_cli(
            "ask", "Which places are bars?", "--base-url", server.base_url, "--model", "mock", *react, env=env
        )
        traced = run_cli(
            "ask", "Which places are bars?", "--base-url", server.base_url, "--model", "mock", *react, "--json", env=env
        )
    assert readable.returncode == 0, readable.stderr
    assert "weaviate:" in readable.stdout and "Sakura Bar is the one." in readable.stdout
    assert "Filter.by_property('name').like('*Bar*')" in readable.stdout
    assert "committed: Sakura Bar" in readable.stdout
    trace = json.loads(traced.stdout)
    assert trace["outcome"] == "answered" and trace["steps"][0]["calls"][0]["arguments"] == arguments
    assert trace["commit"]["answer"]["names"] == ["Sakura Bar"]
    for output in (readable.stdout, readable.stderr, traced.stdout, traced.stderr):
        assert secret not in output


def test_ask_on_collections_of_your_own_streams_calls_then_the_answer_and_its_sources(
    executor: WeaviateExecutor, weaviate_stack: Any
) -> None:
    from tests.conftest import run_cli

    arguments = {
        "collection_name": NAME,
        "text_property_filter": {"property_name": "name", "operator": "LIKE", "value": "*Bar*"},
    }
    bars = {r.uuid for r in executor.execute(arguments).objects}

    def script(body: dict[str, Any], index: int) -> Reply:
        if "tools" in body:
            # only the collection asked for is offered: the tool answers for it, with no collection slot to fill
            assert [list(t["function"]["parameters"]["properties"]) for t in body["tools"]]
            assert not any("collection_name" in t["function"]["parameters"]["properties"] for t in body["tools"])
            assert NAME in body["tools"][0]["function"]["description"]
        return bar_script(arguments)(body, index)

    with MockOpenAIServer(script) as server:
        shown = run_cli(
            "ask", "Which places are bars?", "--collections", NAME, "--base-url", server.base_url, "--model", "mock",
            env=weaviate_stack.env,
        )  # fmt: skip
        unknown = run_cli(
            "ask", "?", "--collections", f"{NAME},Nope", "--base-url", server.base_url, "--model", "mock",
            env=weaviate_stack.env,
        )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    text_out = shown.stdout
    assert (
        text_out.index("step 1: query_database") < text_out.index("Sakura Bar is the one.") < text_out.index("sources:")
    )
    assert any(uuid in text_out for uuid in bars)
    assert unknown.returncode == 9 and "Nope" in unknown.stderr and NAME in unknown.stderr


def test_reused_prompt_tokens_are_summed_when_the_endpoint_reports_them(executor: WeaviateExecutor) -> None:
    arguments = {"collection_name": NAME}
    first, answer = call("query_database", arguments), text("Five places.")
    first.cached_tokens, answer.cached_tokens = 40, 95
    with MockOpenAIServer([first, answer]) as server:
        run = agent_for(server, executor).run("How many places are there?")
    assert [s.usage.cached_tokens for s in run.steps] == [40, 95]
    prompt = sum(s.usage.prompt_tokens for s in run.steps)
    assert prompt > 135 and run.usage.prompt_tokens == prompt and run.usage.cached_tokens == 135
    assert run.usage.new_prompt_tokens == prompt - 135


def test_reused_prompt_tokens_are_unknown_when_the_endpoint_is_silent(executor: WeaviateExecutor) -> None:
    with MockOpenAIServer([call("query_database", {"collection_name": NAME}), text("Five.")]) as server:
        run = agent_for(server, executor).run("How many places are there?")
    assert run.usage.cached_tokens is None and run.usage.new_prompt_tokens is None
