"""A session's openings are the requests its questions really start with, so warming a server with them
(`AgentSession.warm`) leaves exactly the system turns the questions need already evaluated."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent import AgentConfig, build_tools
from agent.session import AgentSession
from agent.strategies import DEFAULT_STRATEGY, SolvedExample
from agent.strategies.check_turns import CHECK_SCHEMA_NAME, LISTED, VERDICT_SCHEMA_NAME
from agent.strategies.examples import EXAMPLES_START
from agent.testing import tool_reply
from agent.tokens import estimate_counter
from executors import DatabaseSchema, ReferenceExecutor
from executors.testing import sample_objects, sample_schema
from llm import ChatRequest, ModelError, ModelReply, ModelUnavailable, SystemPromptPart, Usage, UserPromptPart
from llm.messages import all_parts

NAME = "Offline"


def schema() -> DatabaseSchema:
    """Two collections whose properties are named differently, so each typed tool is its own prefix."""
    [first], [other] = sample_schema(NAME).collections, sample_schema("Other").collections
    renamed = tuple(p.model_copy(update={"name": f"other{p.name.title()}"}) for p in other.properties)
    return DatabaseSchema(collections=(first, other.model_copy(update={"properties": renamed})))


class Shelf:
    def nearest(self, question: str, k: int) -> list[SolvedExample]:
        return [SolvedExample(question="How many things?", arguments={"collection_name": "Things"})][:k]


class Recording:
    """Answers the check naming `about`, then records the first tool turn and stops the run there."""

    name = "recording"
    prefers_named_tool_choice = True

    def __init__(self, about: str = NAME, asks_for: str = "the seats") -> None:
        self.about, self.asks_for = about, asks_for
        self.requests: list[ChatRequest] = []

    def complete(self, request: ChatRequest) -> ModelReply:
        self.requests.append(request)
        wanted = request.response_format.name if request.response_format is not None else None
        if wanted == CHECK_SCHEMA_NAME:
            decision = {"collection": self.about, "asks_for": self.asks_for, "statistic": "average"}
            return ModelReply(content=json.dumps(decision), usage=Usage(prompt_tokens=300, cached_tokens=10))
        if wanted == VERDICT_SCHEMA_NAME:
            return ModelReply(content=json.dumps({"verdict": LISTED}))
        if request.tools and request.max_tokens == 1:
            return tool_reply("query_database", {"collection_name": self.about})
        raise ModelError("the first tool turn is all this test needs")


def session(model: Any) -> AgentSession:
    data = ReferenceExecutor(schema(), {NAME: sample_objects(20, seed=1), "Other": []})
    tools = build_tools(schema(), counter=estimate_counter())
    return AgentSession(data, tools, model, DEFAULT_STRATEGY, AgentConfig(), Shelf())


def _system(request: ChatRequest) -> str:
    return next(str(p.content) for p in all_parts(request.messages) if isinstance(p, SystemPromptPart))


def _user(request: ChatRequest) -> str:
    return next(str(p.content) for p in all_parts(request.messages) if isinstance(p, UserPromptPart))


def test_the_default_strategy_opens_with_the_checks_listing_then_a_verdict_and_a_tool_turn_per_collection() -> None:
    openings = session(Recording()).openings()
    assert [o.response_format.name if o.response_format else "tools" for o in openings] == [
        CHECK_SCHEMA_NAME,
        VERDICT_SCHEMA_NAME,
        "tools",
        VERDICT_SCHEMA_NAME,
        "tools",
    ]
    [first], [second] = (o.tools for o in openings if o.tools)
    numbers = [
        t.parameters["properties"]["integer_property_aggregation"]["properties"]["property_name"]["enum"]
        for t in (first, second)
    ]
    assert numbers == [["price", "seats"], ["otherPrice", "otherSeats"]], "each collection's own typed tool"


@pytest.mark.parametrize("about", [NAME, "Other"])
def test_each_opening_is_the_prefix_a_question_about_that_collection_sends(about: str) -> None:
    model = Recording(about)
    openings = session(model).openings()
    run = session(model).run("What is the average number of seats?")
    assert run.outcome == "model_error", "the run stopped at its first tool turn, as the model said"
    check, tool_turn = model.requests[0], next(r for r in model.requests if r.tools)
    opening = openings[2 + 2 * [NAME, "Other"].index(about)]
    assert (_system(tool_turn), tool_turn.tools, tool_turn.tool_choice) == (
        _system(opening),
        opening.tools,
        opening.tool_choice,
    ), "the system turn and the tools a server keeps are the ones the question sends"
    assert _user(opening) == EXAMPLES_START and _user(tool_turn).startswith(EXAMPLES_START + "How many things?"), (
        "the user turn's start every question shares (the examples' header) is in the opening too"
    )
    listing = _user(openings[0])
    assert _system(check) == _system(openings[0])
    assert _user(check).startswith(listing[: listing.index("Question:") + len("Question:")])
    assert check.response_format == openings[0].response_format


@pytest.mark.parametrize("about", [NAME, "Other"])
def test_a_verdict_starts_with_the_opening_of_the_collection_it_is_about(about: str) -> None:
    """The verdict's prompt, up to the question, is its collection's opening: a warm server loads it."""
    model = Recording(about, asks_for="cozy seats")  # named by the database, not by properties alone
    openings = session(model).openings()
    session(model).run("How full is it?")
    verdicts = [r for r in model.requests if r.response_format and r.response_format.name == VERDICT_SCHEMA_NAME]
    assert len(verdicts) == 1, "the verdict was asked"
    opening = openings[1 + 2 * [NAME, "Other"].index(about)]
    assert (_system(verdicts[0]), verdicts[0].response_format) == (_system(opening), opening.response_format)
    shared = _user(opening)[: _user(opening).index("Question:") + len("Question:")]
    assert _user(verdicts[0]).startswith(shared) and f"Collection {about}:" in shared


def test_warm_sends_each_opening_once_for_one_token() -> None:
    model = Recording()
    warmed = session(model).warm()
    assert len(warmed) == len(model.requests) == 5
    assert {r.max_tokens for r in model.requests} == {1}
    assert warmed[0].prompt_tokens == 300 and warmed[0].cached_tokens == 10 and warmed[0].seconds >= 0


def test_a_model_error_while_warming_is_the_local_server_failing_named_with_exit_11() -> None:
    from dbgorilla.cli.doors import warm
    from dbgorilla.errors import ExitCode
    from dbgorilla.exit_codes import exit_code_of
    from dbgorilla.local_models import ModelServerFailed

    class Dead:
        name, prefers_named_tool_choice = "dead", True

        def complete(self, request: ChatRequest) -> ModelReply:
            raise ModelUnavailable("endpoint unreachable at http://127.0.0.1:9")

    with pytest.raises(ModelServerFailed, match="while warming its prompt prefixes: endpoint unreachable") as caught:
        warm(session(Dead()))
    assert exit_code_of(caught.value) == ExitCode.INFRASTRUCTURE


def test_the_demo_page_asks_with_every_door_s_default_strategy_when_it_names_none() -> None:
    from dataclasses import fields
    from pathlib import Path

    from agent.strategies import strategy_names
    from dbgorilla.demo.app import Choice

    [session_default] = [f.default for f in fields(AgentSession) if f.name == "strategy"]
    assert Choice().strategy == session_default == DEFAULT_STRATEGY
    page = (Path(__file__).parents[2] / "dbgorilla" / "demo" / "static" / "demo.js").read_text()
    assert not [name for name in strategy_names() if f'"{name}' in page], "the page writes no strategy of its own"
