"""`ask --collections` on a real public dataset in a collection of a user's own (1,000 days of
Seattle weather from vega_datasets), on a live Weaviate, through the real CLI.

The data tells a right call from the wrong ones the issue saw: the count of rainy days is not the
10 objects shown, the mean over sunny days is not the mean over all days, and the groups are the
five kinds of weather the data has, not ten invented ones.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from agent.strategies.asked_for import UNSUPPORTED, named_in
from agent.testing import MockOpenAIServer, Reply, call, text
from dbgorilla.connection import connect
from executors import WeaviateExecutor
from fixtures.public_data import (
    COLLECTION,
    ROWS,
    create_weather_collection,
    weather_more_questions,
    weather_questions,
    weather_rows,
)
from tests.conftest import Stack, run_cli

pytestmark = pytest.mark.integration
ROWS_READ = weather_rows()
QUESTIONS = weather_questions(ROWS_READ)


@pytest.fixture(scope="module")
def weather(weaviate_stack: Stack) -> Iterator[Stack]:
    with connect(weaviate_stack.settings) as client:
        assert create_weather_collection(client, ROWS_READ) == ROWS
    yield weaviate_stack
    with connect(weaviate_stack.settings) as client:
        client.collections.delete(COLLECTION)


def test_the_gold_calls_return_what_the_csv_says(weather: Stack) -> None:
    with connect(weather.settings) as client:
        executor = WeaviateExecutor(client)
        count, mean, groups = (executor.execute(q.arguments) for q in QUESTIONS)
        everything = executor.execute(
            {
                "collection_name": COLLECTION,
                "integer_property_aggregation": {"property_name": "temp_max", "metrics": "MEAN"},
            }
        )
    assert count.total_count == QUESTIONS[0].answer and len(count.objects) < count.total_count
    assert mean.aggregations["temp_max"]["MEAN"] == pytest.approx(QUESTIONS[1].answer)
    assert everything.aggregations["temp_max"]["MEAN"] != pytest.approx(
        QUESTIONS[1].answer, abs=0.5
    )  # a dropped filter shows
    assert groups.groups is not None
    assert {key: float(group.count) for key, group in groups.groups.items()} == QUESTIONS[2].answer
    counts = sorted(QUESTIONS[2].answer.values())  # type: ignore[union-attr]
    assert len(set(counts)) == len(counts)  # no two kinds of weather tie


def test_the_further_questions_gold_calls_return_what_the_csv_says(weather: Stack) -> None:
    """Each answerable further question's gold call, run, gives the CSV's answer; the rest name a
    property the table lacks or a statistic the tool lacks, and have no call."""
    more = weather_more_questions(ROWS_READ)
    with connect(weather.settings) as client:
        executor = WeaviateExecutor(client)
        for question in (q for q in more if q.arguments is not None):
            result = executor.execute(question.arguments)
            asked = question.arguments.get("integer_property_aggregation")
            if isinstance(question.answer, dict):
                assert result.groups is not None and asked is not None
                got = {k: g.aggregations[asked["property_name"]][asked["metrics"]] for k, g in result.groups.items()}
                assert got == pytest.approx(question.answer), question.question
            elif asked is not None:
                got = result.aggregations[asked["property_name"]][asked["metrics"]]
                assert got == pytest.approx(question.answer), question.question
            else:
                assert result.total_count == question.answer, question.question
    unanswerable = [q for q in more if q.arguments is None]
    assert len(unanswerable) == 3 and all(q.answer is None for q in unanswerable)
    table = [c for c in executor.schema.collections if c.name == COLLECTION]
    for question in unanswerable:  # a property no column or description names, or a statistic the tool lacks
        assert question.lacks in question.question
        assert question.lacks in UNSUPPORTED or not named_in(question.lacks, table), question.question


def scripted(arguments: dict[str, Any], answer: str) -> Any:
    def reply(body: dict[str, Any], index: int) -> Reply:
        if any(m["role"] == "tool" for m in body["messages"]):
            return text(answer)
        return call("query_database", arguments)

    return reply


def test_ask_streams_the_call_and_answers_from_the_total_not_the_rows_shown(weather: Stack) -> None:
    question = QUESTIONS[0]
    with MockOpenAIServer(scripted(question.arguments, "It rained on 253 days.")) as server:
        result = run_cli(
            "ask", question.question, "--collections", COLLECTION, "--model", "mock", "--base-url", server.base_url,
            "--strategy", "react", env=weather.env,
        )  # fmt: skip
        offered = json.dumps(server.requests[0]["tools"])
        shown = next(m["content"] for m in server.requests[1]["messages"] if m["role"] == "tool")
    assert result.returncode == 0, result.stderr
    assert COLLECTION in offered and "Restaurants" not in offered  # only the collections asked for
    assert "Total count: 253" in shown and "Objects (5 of 253 shown)" in shown
    output = result.stdout
    assert "step 1: query_database" in output  # the call, then the Weaviate calls it became, then its rows
    assert "Filter.by_property('weather').equal('rain')" in output and "253 objects" in output
    assert "It rained on 253 days." in output and "sources:" in output


def test_a_cited_row_is_a_source_and_an_invented_one_is_named(weather: Stack) -> None:
    question = QUESTIONS[0]

    def citing(body: dict[str, Any], index: int) -> Reply:
        tool = [m["content"] for m in body["messages"] if m["role"] == "tool"]
        if not tool:
            return call("query_database", question.arguments)
        first = re.findall(r"\[([0-9a-f]{8})\]", tool[0])[0]
        return text(f"253 days, for example [{first}] and [0badc0de].")

    with MockOpenAIServer(citing) as server:
        result = run_cli(
            "ask", question.question, "--collections", COLLECTION, "--model", "mock", "--base-url", server.base_url,
            "--strategy", "react", env=weather.env,
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    sources = next(line for line in result.stdout.splitlines() if line.startswith("sources:"))
    assert sources.count(COLLECTION) == 1  # the one cited row, not every row the call returned
    assert "cites ids no result contained: 0badc0de" in result.stdout
