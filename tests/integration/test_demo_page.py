"""`dbgorilla demo` in a real browser: Debian's headless Chromium driven by Playwright, against the
live Weaviate, the model a scripted OpenAI-compatible endpoint on loopback (the real provider runs).

One page, one server, in this order: a question whose first call is wrong streams its steps (the
typed error, then the correction, its group table and its weaviate-client program, each equal to what
the executor gives on the same data) and its answer with sources that open; bad input (an empty
question, a collection that does not exist, a model endpoint that is down, a second question while
one runs) gets a message on the page and the server keeps serving; it listens on loopback only.
`DBGORILLA_DEMO_SCREENSHOT=docs/images/demo.png` keeps the screenshot the README shows.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agent.models import is_commit_request
from agent.testing import MockOpenAIServer, Reply, call, text
from dbgorilla._process import listening_sockets
from dbgorilla.connection import connect
from evaluation.report.tables import failure_reasons
from executors import ExecutorError, WeaviateExecutor
from tests.conftest import REPO, Stack, door_process
from tests.integration.test_loopback import assert_refused_from_outside
from tests.unit.test_report import alpha_records, write_run

pytestmark = pytest.mark.integration

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip
QUESTION = "Which cuisine has the most restaurants?"
SLOW = "How many restaurants are there, slowly?"
WRONG = {"collection_name": "Restaurants", "groupby_property": "cuisines"}  # no such property
RIGHT = {"collection_name": "Restaurants", "groupby_property": "cuisine"}
COMMITTED = {"numbers": [], "names": ["Italian"], "groups": {}, "cannot_answer": "", "sources": [],
             "is_partial_answer": False, "missing_information": []}  # fmt: skip


def script(body: dict[str, Any], _index: int) -> Reply:
    """The model: per question, its turns in order (the count of tool results so far says which)."""
    if is_commit_request(body.get("response_format")):
        return text(json.dumps(COMMITTED))
    asked = next(m["content"] for m in body["messages"] if m["role"] == "user")
    returned = sum(1 for m in body["messages"] if m["role"] == "tool")
    if SLOW in asked:
        turns = [Reply(content="There are some.", hang_seconds=3.0)]
    else:
        turns = [call("query_database", WRONG), call("query_database", RIGHT), text("Italian leads.")]
    return turns[returned] if returned < len(turns) else Reply(status=500, error_message="script exhausted")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def demo(restaurants_stack: Stack) -> Iterator[tuple[str, subprocess.Popen[str], MockOpenAIServer]]:
    """`dbgorilla demo` as a user starts it, its model the scripted endpoint."""
    port = free_port()
    arguments = ["demo", "--port", str(port), "--use-case", "restaurants", "--model", "mock-model", "--base-url"]
    with (
        MockOpenAIServer(script) as mock,
        door_process([*arguments, mock.base_url], restaurants_stack.env, "dbgorilla demo at") as (
            process,
            line,
        ),
    ):
        url = f"http://127.0.0.1:{port}/"
        assert url in line, line
        yield url, process, mock


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: scripts/bootstrap.sh installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield chromium
        chromium.close()


def live(stack: Stack, arguments: dict[str, Any]) -> Any:
    with connect(stack.settings) as client:
        return WeaviateExecutor(client).execute(arguments)


def live_error(stack: Stack, arguments: dict[str, Any]) -> ExecutorError:
    with connect(stack.settings) as client, pytest.raises(ExecutorError) as raised:
        WeaviateExecutor(client).execute(arguments)
    return raised.value


def ask(page: Any, question: str) -> None:
    page.fill("#question", question)
    page.click("#ask")


def test_the_page_streams_steps_shows_errors_and_keeps_serving(
    restaurants_stack: Stack, demo: tuple[str, subprocess.Popen[str], MockOpenAIServer], browser: Any
) -> None:
    url, process, mock = demo
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(url)
    page.wait_for_selector("#use-case option[value=restaurants]", state="attached")
    page.fill("#strategy", "react")

    ask(page, QUESTION)
    page.wait_for_selector("#answer .final-answer", timeout=60_000)
    timings = page.evaluate("window.demoTimings")
    assert page.locator("details.steps").get_attribute("open") is None  # answered: its steps fold away
    page.click("details.steps > summary")  # and open again
    steps = page.locator("#trace .card.step")
    assert steps.count() == 2
    # step 1: the model's wrong call and the executor's typed error, as the executor gives it
    error = live_error(restaurants_stack, WRONG)
    first = steps.nth(0)
    assert json.loads(first.locator("pre.arguments").inner_text()) == WRONG
    assert f"error: {error.code}" in first.locator(".badge").all_inner_texts()
    assert first.locator(".error").inner_text() == f"{error.code}: {error.message}"
    # step 2: the correction, its groups as the executor counts them, and the program that makes the calls
    result = live(restaurants_stack, RIGHT)
    second = steps.nth(1)
    assert "correction of step 1" in second.locator(".badge").all_inner_texts()
    rows = second.locator("table.groups tbody tr")
    shown = {rows.nth(i).locator("td").nth(0).inner_text(): int(rows.nth(i).locator("td").nth(1).inner_text())
             for i in range(rows.count())}  # fmt: skip
    assert shown == {key: group.count for key, group in list(result.groups.items())[: rows.count()]} and shown
    assert second.locator("pre.code").inner_text().strip() == result.program().strip()
    assert "tokens" in second.locator(".cost").inner_text()
    # the answer, committed, with sources that open as the objects they are
    assert page.inner_text("#answer .final-answer") == "Italian leads."
    assert page.inner_text("#answer .committed") == "committed: Italian"
    links = page.locator("#answer .sources a")
    assert links.count() > 0
    opened = page.request.get(url.rstrip("/") + links.nth(0).get_attribute("href"))
    assert opened.ok and opened.json()["uuid"] == links.nth(0).get_attribute("title")
    assert opened.json()["properties"]["cuisine"] in result.groups
    assert "Traceback" not in page.content()
    screenshot(page)

    # bad input: each a message on the page, the steps of the last answer left as they were
    ask(page, "   ")
    expect_message(page, "Type a question first.")
    page.select_option("#source", "collections")
    page.fill("#collections", "NoSuchCollection")
    ask(page, QUESTION)
    expect_message(page, "no collection named NoSuchCollection")
    page.select_option("#source", "use_case")
    closed = f"http://127.0.0.1:{free_port()}/v1"
    page.fill("#base-url", closed)
    ask(page, QUESTION)
    expect_message(page, f"the model endpoint at {closed} did not answer one token")
    assert "Traceback" not in page.content()
    page.fill("#base-url", mock.base_url)
    ask(page, SLOW)
    page.wait_for_function(f"document.getElementById('run-header').textContent.startsWith({SLOW!r})")
    ask(page, QUESTION)  # while the slow one runs
    expect_message(page, "A question is already running")
    page.wait_for_function("document.querySelector('#answer .final-answer')?.textContent === 'There are some.'")

    ask(page, QUESTION)  # still serving, and now warm: the session and the model are open
    page.wait_for_function(
        "document.querySelectorAll('#trace .card.step').length === 2"
        " && document.querySelector('#answer:not([hidden]) .final-answer')?.textContent === 'Italian leads.'"
    )
    warm = page.evaluate("window.demoTimings")
    assert all(r.startswith(url) for r in requested), [r for r in requested if not r.startswith(url)]
    print(f"ask to first step: cold {timings['firstStep'] - timings['asked']:.0f} ms, "
          f"warm {warm['firstStep'] - warm['asked']:.0f} ms")  # fmt: skip
    page.close()

    # loopback only: one listening socket, on 127.0.0.1; other addresses refuse; another Host is refused
    listening = [s for s in listening_sockets(process.pid) if s.protocol == "tcp"]
    port = int(url.rsplit(":", 1)[1].strip("/"))
    assert [s.port for s in listening] == [port] and all(s.is_loopback for s in listening)
    assert_refused_from_outside({("tcp", port)})
    assert httpx.get(f"{url}api/options", headers={"Host": f"attacker.example:{port}"}).status_code == 400
    assert process.poll() is None


def expect_message(page: Any, text: str) -> None:
    page.wait_for_function(
        "t => { const m = document.getElementById('message'); return !m.hidden && m.textContent.includes(t); }",
        arg=text,
    )


def screenshot(page: Any) -> None:
    """The page after its first answer; kept where DBGORILLA_DEMO_SCREENSHOT says (the README's image)."""
    target = os.environ.get("DBGORILLA_DEMO_SCREENSHOT")
    taken = page.screenshot(full_page=True)
    assert taken.startswith(b"\x89PNG")
    if target:
        path = Path(target) if Path(target).is_absolute() else REPO / target
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(taken)


def test_the_run_page_browses_a_finished_run(
    demo: tuple[str, subprocess.Popen[str], MockOpenAIServer], browser: Any, tmp_path: Path
) -> None:
    """Every question of a run directory, failed ones with the report's reasons, gold beside predicted."""
    url, _, _ = demo
    records = alpha_records()
    run_dir = write_run(tmp_path / "run-a", records)
    failed = {r.id: failure_reasons(r) for r in records if failure_reasons(r)}
    assert failed and len(failed) < len(records)  # the filter has something to tell apart
    page = browser.new_page()
    page.goto(f"{url}run?path={run_dir}")
    page.wait_for_selector(".question")
    assert page.locator(".question").count() == len(records)
    page.select_option("#which", "failed")
    shown = page.locator(".question:not([hidden])")
    assert sorted(shown.nth(i).locator("summary h3 span").first.inner_text() for i in range(shown.count())) == sorted(
        failed
    )
    first = shown.nth(0)
    first.locator("summary").click()
    key = first.locator("summary h3 span").first.inner_text()
    assert first.locator(".badge.reason").all_inner_texts() == failed[key]
    record = next(r for r in records if r.id == key)
    gold, predicted = first.locator(".split").nth(0).locator("pre").all_inner_texts()
    assert json.loads(gold) == record.ground_truth
    assert predicted == "none" if record.first_arguments is None else json.loads(predicted) == record.first_arguments
    page.fill("#path", str(tmp_path / "no-such-run"))
    page.click("#open")
    expect_message(page, "run directory not found")
    page.close()
