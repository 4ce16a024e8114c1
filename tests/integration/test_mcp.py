"""`dbgorilla mcp` as a subprocess, driven by the official MCP SDK's client, against a live Weaviate.

Over stdio and over streamable HTTP: the tools are listed with their schemas (the query tool's is the
one a model gets through function calling), a call returns what the executor returns on the same
data, a malformed call comes back as a tool error with the executor's code, a scoped server never
shows what is outside its scope, and `ask` runs our agent against a scripted chat endpoint.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from agent import build_tools
from agent.models import is_commit_request
from agent.testing import MockOpenAIServer, Reply, call, text
from agent.tooldef import DEFAULT_OPERATIONS
from dbgorilla._process import listening_sockets
from dbgorilla.connection import connect
from dbgorilla.schemas import SCHEMA_DIR, open_schema
from executors import WeaviateExecutor
from executors.scope import parse_scope
from tests.conftest import REPO, Stack

pytestmark = pytest.mark.integration

TOOLS = {"ask", "search", "query_database"}
RESTAURANTS = ["MenuItems", "Reservations", "Restaurants"]
LIVE_MUSIC = "a restaurant with live music"
GROUP_BY_CUISINE = {"collection_name": "Restaurants", "groupby_property": "cuisine"}


def stdio(stack: Stack, *args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "dbgorilla", "mcp", *args], env=stack.env, cwd=str(REPO)
    )


def talk(server: Any, body: Callable[[Client], Awaitable[Any]]) -> Any:
    """Open a client session on `server` (stdio parameters or a URL), run `body` in it, return its value."""

    async def main() -> Any:
        async with Client(server, read_timeout_seconds=120) as client:
            return await body(client)

    return anyio.run(main)


def live(stack: Stack, arguments: dict[str, Any], scope: list[str] | None = None) -> dict[str, Any]:
    with connect(stack.settings) as client:
        return WeaviateExecutor(client, scope=parse_scope(scope or [])).execute(arguments).model_dump(mode="json")


def without_calls(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k not in ("calls", "code")}


def test_tools_are_listed_with_their_schemas(restaurants_stack: Stack) -> None:
    tools = talk(stdio(restaurants_stack, "--use-case", "restaurants"), lambda c: c.list_tools())
    by_name = {tool.name: tool for tool in tools.tools}
    assert set(by_name) == TOOLS
    with connect(restaurants_stack.settings) as client:
        schema = WeaviateExecutor(client, operations=DEFAULT_OPERATIONS).schema.only(RESTAURANTS)
    offered = build_tools(schema).tools[0]["function"]  # the default tool, over what it sees
    query = by_name["query_database"]
    assert query.input_schema == offered["parameters"]  # exactly what a model gets through function calling
    assert query.input_schema["properties"]["collection_name"]["enum"] == RESTAURANTS
    assert query.description == offered["description"]
    assert by_name["search"].input_schema["properties"]["collection"]["enum"] == RESTAURANTS
    assert by_name["ask"].input_schema["required"] == ["question"]
    for tool in by_name.values():
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
    assert "trace" not in by_name["ask"].output_schema["properties"]
    for name, tool in by_name.items():  # what the server advertises is the committed docs/schemas file
        committed = json.loads((SCHEMA_DIR / f"mcp-{name.replace('_', '-')}.schema.json").read_text())
        advertised = open_schema(tool.output_schema)
        header = ("$schema", "$id", "title", "description")
        assert {k: v for k, v in committed.items() if k not in header} == {
            k: v for k, v in advertised.items() if k not in header
        }
    assert {"final_answer", "sources", "outcome"} <= set(by_name["ask"].output_schema["properties"])


def test_calls_run_against_the_live_data_and_malformed_ones_get_typed_errors(restaurants_stack: Stack) -> None:
    calls = [
        ("query_database", GROUP_BY_CUISINE),
        ("search", {"query": "cozy Italian bistro with live music", "limit": 5}),
        ("query_database", {"collection_name": "Restaurants", "groupby_property": "chef"}),
        (
            "query_database",
            {
                "collection_name": "Restaurants",
                "integer_property_filter": {"property_name": "averageRating", "operator": "LIKE", "value": 4},
            },
        ),
        ("query_database", {"collection_name": "Courses"}),
        ("query_database", {"search_query": "pizza"}),
        ("search", {"query": "pizza", "limit": 500}),
        ("ask", {}),
    ]

    async def body(client: Client) -> list[Any]:
        results = [await client.call_tool(name, arguments) for name, arguments in calls]
        try:
            await client.call_tool("drop_collection", {"collection_name": "Restaurants"})
        except MCPError as error:
            results.append(error)
        return results

    got = talk(stdio(restaurants_stack, "--use-case", "restaurants"), body)
    grouped, searched, *malformed, unknown_tool = got
    assert not grouped.is_error
    assert without_calls(grouped.structured_content) == without_calls(live(restaurants_stack, GROUP_BY_CUISINE))
    assert grouped.content[0].text.startswith("Collection: Restaurants")
    code = grouped.structured_content["code"]  # the query as code: the calls made, as a whole program
    assert "client.collections.get('Restaurants')" in code and "GroupByAggregate(prop='cuisine'" in code
    assert f"port={restaurants_stack.settings.ports.weaviate_http}," in code and code in grouped.content[0].text
    assert not searched.is_error and 0 < len(searched.structured_content["hits"]) <= 5
    distances = [hit["distance"] for hit in searched.structured_content["hits"]]
    assert distances == sorted(distances) and max(distances) <= 0.65
    assert set(searched.structured_content["matched"]) == set(RESTAURANTS)
    codes = [result.structured_content["error"]["code"] for result in malformed]
    assert all(result.is_error for result in malformed)
    assert codes == [
        "unknown_property",
        "invalid_operator",
        "unknown_collection",
        "invalid_arguments",
        "invalid_arguments",
        "invalid_arguments",
    ]
    assert malformed[0].content[0].text.startswith("Error (unknown_property): ")
    assert "cuisine" in malformed[0].structured_content["error"]["message"]  # says how to fix the call
    assert isinstance(unknown_tool, MCPError) and "drop_collection" in str(unknown_tool)
    # read-only: the collection the unknown tool named is still there, whole
    assert without_calls(live(restaurants_stack, GROUP_BY_CUISINE)) == without_calls(grouped.structured_content)


def test_a_scoped_server_never_leaves_its_scope(restaurants_stack: Stack) -> None:
    scope = ["Restaurants.cuisine=Italian"]
    escapes = [
        GROUP_BY_CUISINE,
        {
            "collection_name": "Restaurants",
            "text_property_filter": {"property_name": "cuisine", "operator": "=", "value": "Japanese"},
        },
        {"collection_name": "Restaurants", "search_query": LIVE_MUSIC},
        {"collection_name": "MenuItems"},
    ]

    async def body(client: Client) -> tuple[Any, list[Any], Any]:
        tools = await client.list_tools()
        results = [await client.call_tool("query_database", arguments) for arguments in escapes]
        found = await client.call_tool("search", {"query": LIVE_MUSIC, "limit": 50})
        return tools, results, found

    unscoped = live(restaurants_stack, {"collection_name": "Restaurants", "search_query": LIVE_MUSIC})
    assert {o["properties"]["cuisine"] for o in unscoped["objects"]} - {"Italian"}  # the search alone would leave
    tools, (grouped, others, music, menu), found = talk(stdio(restaurants_stack, "--scope", *scope), body)
    query = next(tool for tool in tools.tools if tool.name == "query_database")
    assert query.input_schema["properties"]["collection_name"]["enum"] == ["Restaurants"]
    assert list(grouped.structured_content["groups"]) == ["Italian"]
    assert (
        grouped.structured_content["groups"]["Italian"]["count"]
        == live(restaurants_stack, GROUP_BY_CUISINE)["groups"]["Italian"]["count"]
    )
    assert others.structured_content["objects"] == [] and others.structured_content["total_count"] == 0
    assert music.structured_content["objects"]
    assert {o["properties"]["cuisine"] for o in music.structured_content["objects"]} == {"Italian"}
    assert menu.is_error and menu.structured_content["error"]["code"] == "unknown_collection"
    assert found.structured_content["hits"] and {
        h["properties"]["cuisine"] for h in found.structured_content["hits"]
    } == {"Italian"}
    assert set(found.structured_content["matched"]) == {"Restaurants"}


COMMITTED = {
    "numbers": [],
    "names": ["Italian"],
    "groups": {},
    "cannot_answer": "",
    "sources": [],
    "is_partial_answer": False,
    "missing_information": [],
}


def scripted(*replies: Reply) -> Callable[[dict[str, Any], int], Reply]:
    """The replies in order to the agent's turns; its commit turn (`agent.answer`) commits COMMITTED."""
    queue = list(replies)

    def reply(body: dict[str, Any], _index: int) -> Reply:
        if is_commit_request(body.get("response_format")):
            return text(json.dumps(COMMITTED))
        return queue.pop(0) if queue else Reply(status=500, error_message="script exhausted")

    return reply


def test_ask_runs_the_agent_against_a_chat_endpoint(restaurants_stack: Stack) -> None:
    question = "Which cuisine has the most restaurants?"
    with MockOpenAIServer(scripted(call("query_database", GROUP_BY_CUISINE), text("Italian leads."))) as mock:
        # the paper's loop, as scripted here; the default strategy at this door: tests/integration/test_doors.py
        args = (
            "--use-case",
            "restaurants",
            "--model",
            "mock-model",
            "--base-url",
            mock.base_url,
            "--strategy",
            "react",
        )
        answered = talk(stdio(restaurants_stack, *args), lambda c: c.call_tool("ask", {"question": question}))
        sent_tools = [r["tools"] for r in mock.requests if "tools" in r]
    assert not answered.is_error, answered.content
    result = answered.structured_content
    assert result["final_answer"] == "Italian leads."
    assert result["outcome"] == "answered" and result["original_query"] == question
    assert result["collection_names"] == RESTAURANTS and not result["is_partial_answer"]
    assert result["aggregations"][0]["arguments"] == GROUP_BY_CUISINE
    assert result["sources"] and {s["collection"] for s in result["sources"]} == {"Restaurants"}
    assert result["answer"]["names"] == ["Italian"]  # the typed answer the agent committed, served as is
    assert [t["function"]["name"] for t in sent_tools[0]] == ["query_database"]
    assert sent_tools[0][0]["function"]["parameters"]["properties"]["collection_name"]["enum"] == RESTAURANTS

    overloaded = Reply(status=400, error_message="model overloaded")  # every turn, the default strategy's own too
    with MockOpenAIServer(lambda _body, _index: overloaded) as mock:
        args = ("--use-case", "restaurants", "--model", "mock-model", "--base-url", mock.base_url)
        failed = talk(stdio(restaurants_stack, *args), lambda c: c.call_tool("ask", {"question": question}))
    assert failed.is_error and failed.structured_content["error"]["code"] == "model_error"
    assert "model overloaded" in failed.structured_content["error"]["message"]

    closed = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens: the endpoint's one-token proof fails
    args = ("--use-case", "restaurants", "--model", "mock-model", "--base-url", closed)
    unproved = talk(stdio(restaurants_stack, *args), lambda c: c.call_tool("ask", {"question": question}))
    assert unproved.is_error and unproved.structured_content["error"]["code"] == "model_unavailable"
    assert "did not answer one token" in unproved.structured_content["error"]["message"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_streamable_http_on_loopback(restaurants_stack: Stack) -> None:
    port = free_port()
    command = [sys.executable, "-m", "dbgorilla", "mcp", "--transport", "http", "--port", str(port)]
    process = subprocess.Popen(
        [*command, "--collections", "Restaurants"],
        env=restaurants_stack.env,
        cwd=REPO,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        deadline = time.monotonic() + 60
        line = ""
        while "MCP server at" not in line and time.monotonic() < deadline and process.poll() is None:
            line = process.stderr.readline()
        url = f"http://127.0.0.1:{port}/mcp"
        assert url in line, line

        async def body(client: Client) -> tuple[Any, Any, Any]:
            tools = await client.list_tools()
            grouped = await client.call_tool("query_database", GROUP_BY_CUISINE)
            elsewhere = await client.call_tool("query_database", {"collection_name": "MenuItems"})
            return tools, grouped, elsewhere

        tools, grouped, elsewhere = talk(url, body)
        assert {tool.name for tool in tools.tools} == TOOLS
        assert without_calls(grouped.structured_content) == without_calls(live(restaurants_stack, GROUP_BY_CUISINE))
        # --collections bounds the tool, not just its enum: another collection of the same Weaviate is refused
        assert elsewhere.is_error and elsewhere.structured_content["error"]["code"] == "unknown_collection"
        listening = [s for s in listening_sockets(process.pid) if s.protocol == "tcp"]
        assert [s.port for s in listening] == [port] and all(s.is_loopback for s in listening)
        taken = subprocess.run([*command], env=restaurants_stack.env, cwd=REPO, capture_output=True, text=True)
        assert taken.returncode == 5 and "taken" in taken.stderr
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_ask_carries_a_conversation(restaurants_stack: Stack) -> None:
    """A follow-up with the conversation_id the first ask returned keeps the cuisine its answer named."""
    mean = {
        "collection_name": "Restaurants",
        "integer_property_aggregation": {"property_name": "averageRating", "metrics": "MEAN"},
    }
    replies = (
        call("query_database", GROUP_BY_CUISINE),
        text("Italian leads."),
        call("query_database", mean),
        text("4."),
    )
    with MockOpenAIServer(scripted(*replies)) as mock:
        args = (
            "--use-case",
            "restaurants",
            "--model",
            "mock-model",
            "--base-url",
            mock.base_url,
            "--strategy",
            "react",
        )

        async def body(client: Client) -> Any:
            first = await client.call_tool("ask", {"question": "Which cuisine has the most restaurants?"})
            conversation = first.structured_content["conversation_id"]
            follow_up = await client.call_tool(
                "ask", {"question": "What is the average rating of those restaurants?", "conversation_id": conversation}
            )
            unknown = await client.call_tool("ask", {"question": "And those?", "conversation_id": "nope"})
            return first, follow_up, unknown

        first, follow_up, unknown = talk(stdio(restaurants_stack, *args), body)
    assert not first.is_error and not follow_up.is_error, follow_up.content
    ran = follow_up.structured_content["aggregations"][0]["arguments"]
    assert ran["conditions"] == [{"property_name": "cuisine", "operator": "=", "value": "Italian"}]
    italian = live(
        restaurants_stack,
        {**mean, "text_property_filter": {"property_name": "cuisine", "operator": "=", "value": "Italian"}},
    )
    summary = follow_up.structured_content["aggregations"][0]["summary"]
    stated = float(re.search(r'"MEAN": (-?[\d.e+-]+)', summary).group(1))  # type: ignore[union-attr]
    # the Italian mean, as it ran (Weaviate's float sum may differ in its last digit between two runs)
    assert stated == pytest.approx(italian["aggregations"]["averageRating"]["MEAN"], rel=1e-9)
    assert follow_up.structured_content["conversation_id"] == first.structured_content["conversation_id"]
    assert (
        italian["aggregations"]["averageRating"]["MEAN"]
        != live(restaurants_stack, mean)["aggregations"]["averageRating"]["MEAN"]
    )
    assert unknown.is_error and unknown.structured_content["error"]["code"] == "unknown_conversation"
