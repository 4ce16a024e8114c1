"""Scoping filters the model cannot remove, tried with calls written to escape them, on live Weaviate.

Two collections: `ScopedNotes` holds notes of "alice" (in scope) and of "bob", "alice bob" and
"Alice" (out of scope: the owner property is field-tokenized, so none of those equals "alice"),
whose prices, flags and titles stand out; `ScopedOther` is out of scope altogether. Every call
runs scoped on Weaviate, and must equal the reference executor scoped over all objects and the
reference executor unscoped over alice's objects alone; searches (no reference embedder here)
must simply never show anything that is not alice's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from weaviate.classes.config import Configure, DataType, Property, Tokenization

from agent import ToolDesign, ToolVariant, build_tools
from executors import (
    ReferenceExecutor,
    Scope,
    ScopeError,
    ScopeFilter,
    UnknownCollectionError,
    WeaviateExecutor,
    compare_results,
)
from executors.index_health import wait_until_indexed
from executors.reference import DataObject

pytestmark = pytest.mark.integration

NOTES, OTHER = "ScopedNotes", "ScopedOther"
SCOPE = Scope(filters={NOTES: [ScopeFilter(property_name="owner", operator="=", value="alice")]})
TOPICS = ["grocery list", "travel plans", "meeting notes", "birthday ideas", "book quotes"]
OUTSIDERS = ["bob", "alice bob", "Alice"]


def note(i: int, owner: str) -> dict[str, Any]:
    inside = owner == "alice"
    return {
        "title": f"{TOPICS[i % len(TOPICS)]} {'' if inside else 'secret bank password'} {i}",
        "owner": owner,
        "price": float(i % 7) if inside else 10_000.0 + i,
        "secret": not inside,
    }


@pytest.fixture(scope="module")
def notes(weaviate_stack: Any) -> Iterator[tuple[Any, list[dict[str, Any]]]]:
    from dbgorilla.connection import connect

    rows = [note(i, "alice") for i in range(20)] + [note(20 + i, OUTSIDERS[i % 3]) for i in range(18)]
    with connect(weaviate_stack.settings) as client:
        for name in (NOTES, OTHER):
            if client.collections.exists(name):
                client.collections.delete(name)
        collection = client.collections.create(
            NOTES,
            vector_config=Configure.Vectors.text2vec_transformers(source_properties=["title"]),
            properties=[
                Property(name="title", data_type=DataType.TEXT),
                Property(name="owner", data_type=DataType.TEXT, tokenization=Tokenization.FIELD),
                Property(name="price", data_type=DataType.NUMBER),
                Property(name="secret", data_type=DataType.BOOL),
            ],
        )
        collection.data.insert_many(rows)
        assert wait_until_indexed(collection).ok
        other = client.collections.create(
            OTHER,
            vector_config=Configure.Vectors.self_provided(),
            properties=[Property(name="owner", data_type=DataType.TEXT, tokenization=Tokenization.FIELD)],
        )
        other.data.insert_many([{"owner": "alice"}, {"owner": "bob"}])
        assert len(collection) == 38 and len(other) == 2
        yield client, rows
        for name in (NOTES, OTHER):
            client.collections.delete(name)


ESCAPES = [
    {},
    {"text_property_filter": {"property_name": "owner", "operator": "=", "value": "bob"}},
    {"text_property_filter": {"property_name": "owner", "operator": "LIKE", "value": "?*"}},
    {"text_property_filter": {"property_name": "owner", "operator": "LIKE", "value": "*"}},
    {"text_property_filter": {"property_name": "owner", "operator": "LIKE", "value": "*b*"}},
    {"text_property_filter": {"property_name": "title", "operator": "LIKE", "value": "*password*"}},
    {"integer_property_filter": {"property_name": "price", "operator": ">", "value": 100}},
    {"integer_property_filter": {"property_name": "price", "operator": ">=", "value": -1}},
    {"boolean_property_filter": {"property_name": "secret", "operator": "=", "value": True}},
    {"boolean_property_filter": {"property_name": "secret", "operator": "!=", "value": False}},
    {"text_property_aggregation": {"property_name": "owner", "metrics": "COUNT"}},
    {"text_property_aggregation": {"property_name": "owner", "metrics": "TOP_OCCURRENCES", "top_occurrences_limit": 9}},
    {"integer_property_aggregation": {"property_name": "price", "metrics": "MAX"}},
    {"integer_property_aggregation": {"property_name": "price", "metrics": "SUM"}},
    {"boolean_property_aggregation": {"property_name": "secret", "metrics": "TOTAL_TRUE"}},
    {"groupby_property": "owner"},
    {"groupby_property": "secret"},
    {"groupby_property": "owner", "integer_property_aggregation": {"property_name": "price", "metrics": "COUNT"}},
    {
        "groupby_property": "owner",
        "text_property_filter": {"property_name": "owner", "operator": "LIKE", "value": "b*"},
        "integer_property_aggregation": {"property_name": "price", "metrics": "MAX"},
    },
]  # fmt: skip


def reference_over(client: Any, rows: list[dict[str, Any]], scope: Scope | None) -> ReferenceExecutor:
    """The reference executor over the live objects in `rows`' owners, with or without the scope."""
    full = ReferenceExecutor.from_weaviate(client, [NOTES])
    owners = {row["owner"] for row in rows}
    objects = [
        DataObject(uuid=str(o.uuid), properties=dict(o.properties))
        for o in client.collections.use(NOTES).iterator()
        if o.properties["owner"] in owners
    ]
    return ReferenceExecutor(full.schema, {NOTES: objects}, scope=scope)


@pytest.mark.parametrize("escape", ESCAPES, ids=lambda e: json.dumps(e, sort_keys=True)[:70])
def test_no_call_reaches_past_the_scope(notes: tuple[Any, list[dict[str, Any]]], escape: dict[str, Any]) -> None:
    client, rows = notes
    arguments = {"collection_name": NOTES, **escape}
    scoped = WeaviateExecutor(client, scope=SCOPE).execute(arguments)
    as_if_alone = reference_over(client, [r for r in rows if r["owner"] == "alice"], None).execute(arguments)
    assert compare_results(as_if_alone, scoped) == []
    assert compare_results(reference_over(client, rows, SCOPE).execute(arguments), scoped) == []
    shown = scoped.model_dump_json(exclude={"calls"})  # the calls echo the model's own values
    assert "password" not in shown and "bob" not in shown and "Alice" not in shown


@pytest.mark.parametrize(
    "escape",
    [
        {"search_query": "secret bank password"},
        {"search_query": "secret bank password", "groupby_property": "owner"},
        {"search_query": "secret bank password", "integer_property_aggregation": {"property_name": "price", "metrics": "MAX"}},
        {"search_query": "password", "text_property_filter": {"property_name": "owner", "operator": "=", "value": "bob"}},
    ],
)  # fmt: skip
def test_searches_stay_inside_the_scope(notes: tuple[Any, list[dict[str, Any]]], escape: dict[str, Any]) -> None:
    client, _ = notes
    result = WeaviateExecutor(client, scope=SCOPE).execute({"collection_name": NOTES, **escape})
    shown = result.model_dump_json(exclude={"calls"})
    assert "password" not in shown and "bob" not in shown and "Alice" not in shown
    assert set(result.groups or {}) <= {"alice"}
    for values in (result.aggregations or {}).values():
        assert all(v is None or v < 10_000 for v in values.values() if isinstance(v, float))
    unscoped = WeaviateExecutor(client).execute({"collection_name": NOTES, **escape})
    assert compare_results(unscoped, result), "without the scope the same call reaches outsiders' notes"


def test_collections_outside_the_scope_do_not_exist_for_the_model(notes: tuple[Any, list[dict[str, Any]]]) -> None:
    client, _ = notes
    executor = WeaviateExecutor(client, scope=SCOPE)
    assert executor.schema.names() == [NOTES]
    with pytest.raises(UnknownCollectionError, match=f"Available collections: {NOTES}"):
        executor.execute({"collection_name": OTHER})
    per_collection = build_tools(executor.schema, ToolDesign(ToolVariant.PER_COLLECTION))
    unified = build_tools(executor.schema)
    for tools in (per_collection, unified):
        offered = json.dumps(tools.tools)
        assert NOTES in offered and OTHER not in offered


def test_a_scope_that_does_not_fit_the_database_is_a_typed_error(notes: tuple[Any, list[dict[str, Any]]]) -> None:
    client, _ = notes
    bad = [
        Scope(filters={"NoSuchCollection": [ScopeFilter(property_name="owner", operator="=", value="a")]}),
        Scope(filters={NOTES: [ScopeFilter(property_name="nobody", operator="=", value="a")]}),
        Scope(filters={NOTES: [ScopeFilter(property_name="owner", operator=">", value="a")]}),
        Scope(filters={NOTES: [ScopeFilter(property_name="price", operator="=", value="cheap")]}),
    ]
    for scope in bad:
        with pytest.raises(ScopeError):
            WeaviateExecutor(client, scope=scope).execute({"collection_name": NOTES})


def test_ask_takes_a_scope_the_model_cannot_remove(
    weaviate_stack: Any, notes: tuple[Any, list[dict[str, Any]]]
) -> None:
    from agent.testing import MockOpenAIServer, Reply, call, text
    from tests.conftest import run_cli

    def escaping_model(body: dict[str, Any], index: int) -> Reply:
        if any(m["role"] == "tool" for m in body["messages"]):
            return text("done")
        return call("query_database", {"collection_name": NOTES, "groupby_property": "owner"})

    with MockOpenAIServer(escaping_model) as server:
        result = run_cli(
            "ask", "Whose notes are there?", "--model", "mock", "--base-url", server.base_url, "--strategy", "react",
            "--scope", f"{NOTES}.owner=alice", "--json", env=weaviate_stack.env,
        )  # fmt: skip
        offered = json.dumps(server.requests[0]["tools"])
    assert result.returncode == 0, result.stderr
    groups = json.loads(result.stdout)["steps"][0]["calls"][0]["result"]["groups"]
    assert [(key, group["count"]) for key, group in groups.items()] == [("alice", 20)]
    assert NOTES in offered and OTHER not in offered

    wrong = run_cli("ask", "?", "--model", "mock", "--base-url", "http://127.0.0.1:9/v1", "--scope", "Nope.x=1",
                    env=weaviate_stack.env)  # fmt: skip
    assert wrong.returncode == 9 and "the scope names collections the database does not have: Nope" in wrong.stderr
