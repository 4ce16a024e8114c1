"""`dbgorilla serve` against Weaviate's own Query Agent client (`weaviate-agents`), a live Weaviate and a
scripted OpenAI-compatible model on loopback (the real provider runs; the agent is the `react` loop).

The official `QueryAgent` and `AsyncQueryAgent` talk to the server as they would to the hosted agent:
ask, ask_stream (progress and tokens before the final state), search and its `.next()` paging, a
two-turn conversation, additional filters the model cannot remove, suggest_queries; research mode and
a foreign cluster URL get the client's error path. Every number checked is the live executor's. The
same server's demo page holds a two-turn conversation in a real browser (Debian's headless Chromium).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import weaviate
from weaviate.classes.query import Filter
from weaviate_agents.classes import QueryAgentCollectionConfig
from weaviate_agents.query import AsyncQueryAgent, QueryAgent
from weaviate_agents.query.classes.response import AskModeResponse, ProgressMessage, StreamedTokens

from agent.models import is_commit_request
from agent.testing import MockOpenAIServer, Reply, call, text
from dbgorilla._process import listening_sockets
from dbgorilla.connection import connect
from executors import WeaviateExecutor
from tests.conftest import Stack, door_process
from tests.integration import test_demo_page
from tests.integration.test_demo_page import free_port
from tests.integration.test_loopback import assert_refused_from_outside

pytestmark = pytest.mark.integration
browser = test_demo_page.browser  # headless Chromium, the demo page's fixture

ITALIAN = {"property_name": "cuisine", "operator": "=", "value": "Italian"}
COUNT_ITALIAN = {"collection_name": "Restaurants", "text_property_filter": ITALIAN,
                 "text_property_aggregation": {"property_name": "cuisine", "metrics": "COUNT"}}  # fmt: skip
OPEN_NOW = {"collection_name": "Restaurants",
            "boolean_property_aggregation": {"property_name": "openNow", "metrics": "TOTAL_TRUE"}}  # fmt: skip
LIST_ITALIAN = {"collection_name": "Restaurants", "text_property_filter": ITALIAN}
#: question -> the model's call (then a prose answer and the commit)
CALLS = {
    "How many Italian restaurants are there?": COUNT_ITALIAN,
    "And how many of those are open now?": OPEN_NOW,
    "Which restaurants serve Italian food?": LIST_ITALIAN,
    "How many restaurants are open now?": OPEN_NOW,
}
COMMITTED = {"numbers": [], "names": [], "groups": {}, "cannot_answer": "", "sources": [],
             "is_partial_answer": False, "missing_information": []}  # fmt: skip


def script(body: dict[str, Any], _index: int) -> Reply:
    """Per question: its call, then a prose answer, then the commit (the count of tool results says which)."""
    if is_commit_request(body.get("response_format")):
        return text(json.dumps(COMMITTED))
    # the question is the user turn's first line (a follow-up's turn then quotes the question it follows)
    asked = next(str(m["content"]) for m in body["messages"] if m["role"] == "user").split("\n")[0]
    chosen = next((c for q, c in CALLS.items() if q.rstrip("?") in asked), None)
    returned = sum(1 for m in body["messages"] if m["role"] == "tool")
    if chosen is None:
        return Reply(status=500, error_message=f"unscripted question: {asked[:200]}")
    return call("query_database", chosen) if returned == 0 else text("Here is what the database holds.")


@pytest.fixture(scope="module")
def served(restaurants_stack: Stack) -> Iterator[tuple[str, subprocess.Popen[str], MockOpenAIServer]]:
    """`dbgorilla serve` as a user starts it, its model the scripted endpoint."""
    port = free_port()
    arguments = ["serve", "--port", str(port), "--strategy", "react", "--model", "mock-model", "--base-url"]
    with (
        MockOpenAIServer(script) as mock,
        door_process([*arguments, mock.base_url], restaurants_stack.env, "dbgorilla serve at") as (
            process,
            line,
        ),
    ):
        url = f"http://127.0.0.1:{port}"
        assert url in line, line
        yield url, process, mock


@pytest.fixture(scope="module")
def client(restaurants_stack: Stack) -> Iterator[weaviate.WeaviateClient]:
    with connect(restaurants_stack.settings) as opened:
        yield opened


def live(client: Any, arguments: dict[str, Any]) -> Any:
    return WeaviateExecutor(client).execute(arguments)


def agent_of(client: Any, url: str, collections: list[Any] | None = None) -> QueryAgent:
    return QueryAgent(client, collections=collections or ["Restaurants"], agents_host=url, timeout=120)


def test_ask_answers_as_the_hosted_agent_would(served: Any, client: Any) -> None:
    url, _, _ = served
    response = agent_of(client, url).ask("How many Italian restaurants are there?")
    assert isinstance(response, AskModeResponse)
    (aggregation,) = response.aggregations
    assert aggregation.collection == "Restaurants" and aggregation.aggregation.property_name == "cuisine"
    assert aggregation.filters is not None and aggregation.filters.model_dump()["value"] == "Italian"
    assert response.final_answer and response.usage.model_units >= 2 and response.total_time > 0


def test_ask_stream_sends_progress_and_tokens_before_the_final_state(served: Any, client: Any) -> None:
    url, _, _ = served
    items = list(agent_of(client, url).ask_stream("How many restaurants are open now?"))
    kinds = [type(item).__name__ for item in items]
    assert kinds[0] == "ProgressMessage" and kinds[-1] == "AskModeResponse" and "StreamedTokens" in kinds
    progress = next(i for i in items if isinstance(i, ProgressMessage))
    expected = live(client, OPEN_NOW).aggregations["openNow"]["TOTAL_TRUE"]
    assert json.dumps({"TOTAL_TRUE": expected}) in progress.message  # the executed result, as it ran
    streamed = "".join(i.delta for i in items if isinstance(i, StreamedTokens))
    assert streamed == items[-1].final_answer


def test_search_pages_through_one_result_set(served: Any, client: Any) -> None:
    url, _, _ = served
    first = agent_of(client, url).search("Which restaurants serve Italian food?", limit=2)
    second = first.next(limit=2, offset=2)
    (search,) = first.searches or []
    assert search.filters is not None and search.filters.model_dump()["value"] == "Italian"
    paged = [str(o.uuid) for o in [*first.search_results.objects, *second.search_results.objects]]
    everything = [o.uuid for o in live(client, LIST_ITALIAN).objects]
    assert len(paged) == 4 and len(set(paged)) == 4
    assert paged == everything[:4]
    assert all(o.properties["cuisine"] == "Italian" for o in second.search_results.objects)


def test_a_follow_up_keeps_what_the_first_answer_found(served: Any, client: Any) -> None:
    url, _, mock = served
    agent = agent_of(client, url)
    first = agent.ask("How many Italian restaurants are there?")
    before = len(mock.requests)
    conversation = [
        {"role": "user", "content": "How many Italian restaurants are there?"},
        {"role": "assistant", "content": first.final_answer},
        {"role": "user", "content": "And how many of those are open now?"},
    ]
    items = list(agent.ask_stream(conversation))
    follow_up = items[-1]
    assert isinstance(follow_up, AskModeResponse)
    (aggregation,) = follow_up.aggregations
    assert aggregation.filters is not None and aggregation.filters.model_dump()["value"] == "Italian"
    both = {**OPEN_NOW, "text_property_filter": ITALIAN}
    expected = live(client, both).aggregations["openNow"]["TOTAL_TRUE"]
    assert expected != live(client, OPEN_NOW).aggregations["openNow"]["TOTAL_TRUE"]  # the carry changes the count
    progress = next(i for i in items if isinstance(i, ProgressMessage))
    assert json.dumps({"TOTAL_TRUE": expected}) in progress.message
    assert len(mock.requests) - before == 3  # the call, the prose, the commit: as many as a first question


def test_additional_filters_hold_whatever_the_model_calls(served: Any, client: Any) -> None:
    url, _, _ = served
    thai = QueryAgentCollectionConfig(
        name="Restaurants", additional_filters=Filter.by_property("cuisine").equal("Thai")
    )
    items = list(agent_of(client, url, [thai]).ask_stream("How many restaurants are open now?"))
    progress = next(i for i in items if isinstance(i, ProgressMessage))
    scoped = {**OPEN_NOW, "text_property_filter": {"property_name": "cuisine", "operator": "=", "value": "Thai"}}
    assert json.dumps({"TOTAL_TRUE": live(client, scoped).aggregations["openNow"]["TOTAL_TRUE"]}) in progress.message
    # the model asks for Italian ones: Thai AND Italian is nothing, never the Italian list
    page = agent_of(client, url, [thai]).search("Which restaurants serve Italian food?", limit=5)
    assert page.search_results.objects == []


def test_the_async_client_and_suggest_queries(served: Any, client: Any, restaurants_stack: Stack) -> None:
    url, _, _ = served
    suggested = agent_of(client, url).suggest_queries(num_queries=3)
    assert len(suggested.queries) == 3 and suggested.collection_count == 1
    assert all(q.query.endswith("?") for q in suggested.queries)

    async def ask() -> Any:
        settings = restaurants_stack.settings
        async with weaviate.use_async_with_local(
            host=settings.host, port=settings.ports.weaviate_http, grpc_port=settings.ports.weaviate_grpc
        ) as async_client:
            agent = AsyncQueryAgent(async_client, collections=["Restaurants"], agents_host=url, timeout=120)
            return await agent.ask("How many Italian restaurants are there?")

    assert asyncio.run(ask()).aggregations[0].filters is not None


def test_unserved_features_and_foreign_clusters_are_refused(served: Any, client: Any) -> None:
    url, process, mock = served
    agent = agent_of(client, url)
    with pytest.raises(Exception, match="research mode is not served"):
        list(agent.research_stream("How many Italian restaurants are there?"))
    with pytest.raises(Exception, match="output_format"):
        agent.ask("How many Italian restaurants are there?", output_format={"type": "object"})
    with pytest.raises(Exception, match="the model failed"):  # the script answers an unscripted question with 500
        agent.ask("Which questions does this script not know?")
    before = len(mock.requests)
    for named in ("http://10.1.2.3:8080", "https://example.weaviate.cloud", ""):
        headers = {"X-Weaviate-Cluster-Url": named} if named else {}
        reply = httpx.post(f"{url}/query/ask", headers=headers, json={"query": "How many Italian restaurants are there?",
                                                                      "collections": ["Restaurants"]})  # fmt: skip
        assert reply.status_code in (400, 403) and "error" in reply.json()
    assert len(mock.requests) == before  # nothing ran for them
    port = int(url.rsplit(":", 1)[1])
    listening = [s for s in listening_sockets(process.pid) if s.protocol == "tcp"]
    assert [s.port for s in listening] == [port] and all(s.is_loopback for s in listening)
    assert_refused_from_outside({("tcp", port)})
    assert httpx.post(f"{url}/query/ask", headers={"Host": f"attacker.example:{port}"}, json={}).status_code == 400
    assert process.poll() is None


def test_the_page_holds_a_conversation(served: Any, browser: Any) -> None:
    url, _, _ = served
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(url + "/")
    page.wait_for_selector("#use-case option[value=restaurants]", state="attached")
    page.fill("#strategy", "react")

    def ask(question: str, turns: int) -> None:
        page.fill("#question", question)
        page.click("#ask")
        page.wait_for_function(
            f"document.querySelectorAll('.qa').length === {turns}"
            " && !!document.querySelector('#answer:not([hidden]) .final-answer')"
        )

    ask("How many Italian restaurants are there?", 1)
    ask("And how many of those are open now?", 2)
    first, second = page.locator(".qa").nth(0), page.locator(".qa").nth(1)
    assert first.locator("details.steps").get_attribute("open") is None  # answered: folded
    assert first.locator(".final-answer").inner_text() and "Italian" in first.locator(".run-header").inner_text()
    ran = json.loads(second.locator("pre.arguments").text_content() or "")
    assert (
        ran["conditions"] == [ITALIAN]
        and ran["boolean_property_aggregation"] == OPEN_NOW["boolean_property_aggregation"]
    )
    page.click("#new-conversation")
    assert page.locator(".qa").count() == 0
    ask("And how many of those are open now?", 1)  # nothing to refer to any more
    assert "conditions" not in json.loads(page.locator("#trace pre.arguments").text_content() or "")
    assert "Traceback" not in page.content()
    page.close()
