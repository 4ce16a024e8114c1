"""The loader against the session's live Weaviate: exact counts, idempotency, trimming, failures."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from executors import PropertyKind
from executors.ownership import marker_of, unmarked
from fixtures import (
    PAPER_EXAMPLE_PATH,
    BatchOptions,
    UseCase,
    drop_use_cases,
    generate_objects,
    get_use_case,
    load_paper_dataset,
    load_schemas,
)
from fixtures.collections import create_collection
from fixtures.generator import ObjectGenerator
from fixtures.loader import _import, comparable
from tests.conftest import run_cli

pytestmark = pytest.mark.integration
PREFIX = f"Fx{uuid.uuid4().hex[:6]}"


@pytest.fixture()
def use_case(client: Any, request: pytest.FixtureRequest) -> Iterator[UseCase]:
    case = get_use_case("restaurants").with_prefix(f"{PREFIX}{request.node.name[5:12].title().replace('_', '')}")
    yield case
    drop_use_cases(client, [case])


def stored(client: Any, name: str) -> dict[str, dict]:
    return {str(o.uuid): comparable(dict(o.properties)) for o in client.collections.get(name).iterator()}


def expected(case: UseCase, index: int, count: int, seed: int) -> dict[str, dict]:
    return {str(o.uuid): o.stored_properties() for o in generate_objects(case.collections[index], count, seed)}


def test_loading_twice_leaves_counts_exact(client: Any, use_case: UseCase) -> None:
    first = load_schemas(client, [use_case], 30, seed=42)
    assert first.ok, first.failed
    assert [c.action for c in first.collections] == ["created"] * 3
    assert [c.count for c in first.collections] == [30] * 3
    second = load_schemas(client, [use_case], 30, seed=42)
    assert second.ok
    assert [c.action for c in second.collections] == ["up-to-date"] * 3
    assert [c.count for c in second.collections] == [30] * 3
    for index, collection in enumerate(use_case.collections):
        assert stored(client, collection.name) == expected(use_case, index, 30, 42)


def test_collections_load_side_by_side_in_order(client: Any, use_case: UseCase) -> None:
    """Six collections (one defined twice) on six threads: the report keeps the use cases' order,
    the progress callback is never entered by two threads at once, and every object is exact."""
    other = get_use_case("courses").with_prefix(f"{PREFIX}Side")
    twice = use_case.model_copy(update={"name": "again", "collections": use_case.collections[:1]})
    inside, most, calls = [0], [0], []

    def on_progress(name: str, done: int, total: int) -> None:
        inside[0] += 1
        most[0] = max(most[0], inside[0])
        calls.append((name, done, total))
        time.sleep(0.02)
        inside[0] -= 1

    options = BatchOptions(batch_size=4, concurrent_requests=2, collections_at_once=6)
    try:
        report = load_schemas(client, [use_case, other, twice], 20, seed=5, on_progress=on_progress, batch=options)
        assert report.ok, report.failed
        names = [c.name for c in use_case.collections + other.collections] + [use_case.collections[0].name]
        assert [c.collection for c in report.collections] == names
        assert [c.action for c in report.collections] == ["created"] * 6 + ["skipped"]
        assert most[0] == 1
        assert {name for name, done, total in calls if done == total == 20} == set(names)
        for case in (use_case, other):
            for index, collection in enumerate(case.collections):
                assert stored(client, collection.name) == expected(case, index, 20, 5)
    finally:
        drop_use_cases(client, [other])


def test_shrinking_growing_and_reseeding_converge(client: Any, use_case: UseCase) -> None:
    assert load_schemas(client, [use_case], 30, seed=42).ok
    shrunk = load_schemas(client, [use_case], 12, seed=42)
    assert shrunk.ok and [c.trimmed for c in shrunk.collections] == [18] * 3
    assert [c.count for c in shrunk.collections] == [12] * 3
    grown = load_schemas(client, [use_case], 25, seed=7, batch=BatchOptions(batch_size=7, concurrent_requests=1))
    assert grown.ok and [c.action for c in grown.collections] == ["updated"] * 3
    for index, collection in enumerate(use_case.collections):
        assert stored(client, collection.name) == expected(use_case, index, 25, 7)


def test_a_changed_schema_is_recreated(client: Any, use_case: UseCase) -> None:
    assert load_schemas(client, [use_case], 10).ok
    first = use_case.collections[0]
    changed = use_case.model_copy(
        update={"collections": [first.model_copy(update={"description": "Changed."}), *use_case.collections[1:]]}
    )
    report = load_schemas(client, [changed], 10)
    assert [c.action for c in report.collections] == ["recreated", "up-to-date", "up-to-date"]
    assert report.ok and unmarked(client.collections.get(first.name).config.get().description) == "Changed."


def test_collections_are_created_as_documented(client: Any, use_case: UseCase) -> None:
    assert load_schemas(client, [use_case], 5).ok
    spec = use_case.collections[0]
    config = client.collections.get(spec.name).config.get()
    assert config.description == f"{spec.description} [dbgorilla-live: usecase/restaurants]"
    assert marker_of(config.description) == use_case.dataset == "usecase/restaurants"
    assert [(p.name, p.description) for p in config.properties] == [
        (p.name, p.description) for p in [*spec.properties, *spec.dates]
    ]
    text = [p for p in config.properties if p.name in spec.vectorized_properties]
    assert all(str(getattr(p.tokenization, "value", p.tokenization)) == "word" for p in text)
    vectorizer = config.vector_config["default"].vectorizer
    assert sorted(vectorizer.source_properties) == sorted(spec.vectorized_properties)
    objects = client.collections.get(spec.name).query.fetch_objects(include_vector=True, limit=5).objects
    assert all(len(o.vector["default"]) == 384 for o in objects)


def test_failed_objects_are_reported_with_their_index(client: Any, use_case: UseCase) -> None:
    spec = use_case.collections[0]
    create_collection(client, spec, dataset=use_case.dataset)
    rating = next(p for p in spec.properties if p.kind is PropertyKind.NUMBER)
    bad_properties = [
        p.model_copy(update={"kind": PropertyKind.TEXT, "generation": None}) if p.name == rating.name else p
        for p in spec.properties
    ]
    bad = spec.model_copy(update={"properties": bad_properties})
    sent, failed = _import(client, client.collections.get(spec.name), ObjectGenerator(bad), 5, None, BatchOptions())
    assert sent == 5 and len(failed) == 5
    assert sorted(f.index for f in failed) == [0, 1, 2, 3, 4]
    assert all(f.message and f.collection == spec.name for f in failed)


def test_the_load_command(weaviate_stack: Any, client: Any) -> None:
    case = get_use_case("visual_art")
    drop_use_cases(client, [case])
    try:
        args = ("load", "--use-case", "visual_art", "--objects-per-collection", "15", "--seed", "3", "--json")
        for _ in range(2):
            result = run_cli(*args, env=weaviate_stack.env)
            assert result.returncode == 0, result.stderr
            payload = json.loads(result.stdout)
            assert payload["ok"] is True
            assert [c["count"] for c in payload["collections"]] == [15, 15, 15]
        assert payload["collections"][0]["action"] == "up-to-date"
        assert "Artworks" in result.stderr, "a progress bar per collection"
    finally:
        drop_use_cases(client, [case])


def test_the_load_command_imports_a_dbgorilla_file(weaviate_stack: Any, client: Any) -> None:
    schemas = load_paper_dataset(PAPER_EXAMPLE_PATH).use_cases
    drop_use_cases(client, schemas)
    try:
        args = ("load", "--dataset", str(PAPER_EXAMPLE_PATH), "--objects-per-collection", "8", "--json")
        result = run_cli(*args, env=weaviate_stack.env)
        assert result.returncode == 0, result.stderr
        payload = json.loads(result.stdout)
        assert {c["collection"]: c["count"] for c in payload["collections"]} == {
            "Paper_Restaurants": 8,
            "Paper_Menus": 8,
            "Paper_StaffMembers": 8,
        }
        description = client.collections.use("Paper_Menus").config.get().description
        assert marker_of(description) == "paper/paper_example.json"
        assert "6 of 10 labels" in result.stderr
    finally:
        drop_use_cases(client, schemas)
