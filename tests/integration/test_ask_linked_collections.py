"""`ask` on a user's own linked collections: two collections made with weaviate-client v4 as a user
would (no marker, a reference property, a date property, the server's defaults), and a question that
needs the link, through the real CLI with `--operations related`.

The data tells the right call apart: the books by Canadian authors published after 2000 are neither
all books after 2000 nor all books by Canadian authors, and the paper's tool cannot express it.
"""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import pytest
from weaviate.classes.config import DataType, Property, ReferenceProperty
from weaviate.classes.data import DataObject

from agent.testing import MockOpenAIServer, Reply, call, text
from dbgorilla.connection import connect
from tests.conftest import Stack, run_cli

pytestmark = pytest.mark.integration
SUFFIX = uuid.uuid4().hex[:6]
AUTHORS, BOOKS = f"Authors{SUFFIX}", f"Books{SUFFIX}"
COUNTRIES = ("Canada", "Chile", "Kenya")


@dataclass(frozen=True)
class Library:
    stack: Stack
    authors: dict[str, str]  # uuid -> country
    books: list[dict[str, Any]]  # properties and "author"


@pytest.fixture(scope="module")
def library(weaviate_stack: Stack) -> Iterator[Library]:
    rng = random.Random(7)
    authors = {str(uuid.uuid4()): COUNTRIES[i % 3] for i in range(12)}
    books = [
        {
            "title": f"Book {i}",
            "pages": float(rng.randint(90, 700)),
            "published": datetime(rng.randint(1960, 2024), rng.randint(1, 12), rng.randint(1, 28), tzinfo=timezone.utc),
            "author": rng.choice(list(authors)),
        }
        for i in range(40)
    ]
    with connect(weaviate_stack.settings) as client:
        client.collections.create(
            AUTHORS,
            properties=[
                Property(name="name", data_type=DataType.TEXT),
                Property(name="country", data_type=DataType.TEXT),
            ],
        )
        client.collections.create(
            BOOKS,
            properties=[
                Property(name="title", data_type=DataType.TEXT),
                Property(name="pages", data_type=DataType.NUMBER),
                Property(name="published", data_type=DataType.DATE),
            ],
            references=[ReferenceProperty(name="writtenBy", target_collection=AUTHORS)],
        )
        client.collections.use(AUTHORS).data.insert_many(
            [
                DataObject(properties={"name": f"Author {i}", "country": c}, uuid=u)
                for i, (u, c) in enumerate(authors.items())
            ]
        )
        inserted = client.collections.use(BOOKS).data.insert_many(
            [
                DataObject(
                    properties={k: v for k, v in b.items() if k != "author"}, references={"writtenBy": b["author"]}
                )
                for b in books
            ]
        )
        assert not inserted.errors
    try:
        yield Library(weaviate_stack, authors, books)
    finally:
        with connect(weaviate_stack.settings) as client:
            client.collections.delete([BOOKS, AUTHORS])


LINKED_CALL = {
    "collection_name": BOOKS,
    "reference_filter": {"reference": "writtenBy", "property_name": "country", "operator": "=", "value": "Canada"},
    "date_filter": {"property_name": "published", "operator": "after", "value": "2000-01-01"},
    "integer_property_aggregation": {"property_name": "pages", "metrics": "COUNT"},
}
QUESTION = "How many books by Canadian authors were published after 2000?"


def scripted(arguments: dict[str, Any], answer: str) -> Any:
    """The paper loop's turns (run with --strategy react): the call, then the answer."""

    def reply(body: dict[str, Any], index: int) -> Reply:
        if any(m["role"] == "tool" for m in body["messages"]):
            return text(answer)
        return call("query_database", arguments)

    return reply


def expected_count(library: Library) -> int:
    after = datetime(2000, 1, 1, tzinfo=timezone.utc)
    return sum(library.authors[b["author"]] == "Canada" and b["published"] > after for b in library.books)


def test_ask_answers_a_question_that_needs_the_link(library: Library) -> None:
    count = expected_count(library)
    canadian = sum(library.authors[b["author"]] == "Canada" for b in library.books)
    recent = sum(b["published"] > datetime(2000, 1, 1, tzinfo=timezone.utc) for b in library.books)
    assert 0 < count < min(canadian, recent)  # the link and the date both matter
    with MockOpenAIServer(scripted(LINKED_CALL, f"{count} books.")) as server:
        result = run_cli(
            "ask", QUESTION, "--collections", f"{BOOKS},{AUTHORS}", "--operations", "related", "--strategy", "react",
            "--model", "mock", "--base-url", server.base_url, "--json", env=library.stack.env,
        )  # fmt: skip
        offered = json.dumps(server.requests[0]["tools"])
        shown = next(m["content"] for m in server.requests[1]["messages"] if m["role"] == "tool")
    assert result.returncode == 0, result.stderr
    assert "reference_filter" in offered and "date_filter" in offered and "sort" in offered
    assert f"writtenBy (reference to {AUTHORS})" in offered and "published (date)" in offered
    assert f"Total count: {count}" in shown, shown
    trace = json.loads(result.stdout)
    assert f"{count} books." in json.dumps(trace)
    assert "Filter.by_ref(link_on='writtenBy').by_property('country').equal('Canada')" in json.dumps(trace)


def test_the_paper_tool_cannot_express_it_and_says_so(library: Library) -> None:
    with MockOpenAIServer(scripted(LINKED_CALL, "I cannot tell.")) as server:
        result = run_cli(
            "ask", QUESTION, "--collections", f"{BOOKS},{AUTHORS}", "--model", "mock", "--base-url", server.base_url,
            "--strategy", "react", "--operations", "paper", env=library.stack.env,
        )  # fmt: skip
        offered = json.dumps(server.requests[0]["tools"])
        shown = next(m["content"] for m in server.requests[1]["messages"] if m["role"] == "tool")
    assert result.returncode == 0, result.stderr
    assert "reference_filter" not in offered and "writtenBy" not in offered
    assert "'reference_filter' is not an argument of query_database" in shown


def test_the_users_collections_are_left_as_they_were(library: Library) -> None:
    with connect(library.stack.settings) as client:
        books = client.collections.use(BOOKS)
        assert books.aggregate.over_all(total_count=True).total_count == 40
        config = books.config.get()
        assert [r.name for r in config.references] == ["writtenBy"] and "[dbgorilla-live" not in (
            config.description or ""
        )
