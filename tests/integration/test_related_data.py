"""The use cases' cross-references and dates on a live Weaviate: what the generator says is what
Weaviate holds, a second load keeps them, and the paper's properties are untouched."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from weaviate.classes.query import QueryReference

from fixtures import UseCase, drop_use_cases, get_use_case, load_schemas
from fixtures.generator import ObjectGenerator
from fixtures.loader import comparable

pytestmark = pytest.mark.integration
PREFIX = f"Rl{uuid.uuid4().hex[:6]}"
COUNT = 20


@pytest.fixture()
def linked(client: Any) -> Iterator[UseCase]:
    case = get_use_case("restaurants").with_prefix(PREFIX)
    yield case
    drop_use_cases(client, [case])


def links(client: Any, case: UseCase, name: str) -> dict[str, dict[str, list[str]]]:
    spec = case.get_collection(name)
    assert spec is not None
    refs = [QueryReference(link_on=r.name, return_properties=[]) for r in spec.references]
    out: dict[str, dict[str, list[str]]] = {}
    for obj in client.collections.get(name).query.fetch_objects(limit=1000, return_references=refs).objects:
        out[str(obj.uuid)] = {k: [str(o.uuid) for o in v.objects] for k, v in (obj.references or {}).items()}
    return out


def test_references_and_dates_are_loaded_as_generated(client: Any, linked: UseCase) -> None:
    report = load_schemas(client, [linked], COUNT)
    assert report.ok, report
    for spec in linked.collections:
        generated = list(ObjectGenerator(spec, 42, COUNT).stream(COUNT))
        stored = {str(o.uuid): comparable(dict(o.properties)) for o in client.collections.get(spec.name).iterator()}
        assert stored == {str(o.uuid): o.stored_properties() for o in generated}
        if spec.references:
            assert links(client, linked, spec.name) == {
                str(o.uuid): {k: [str(v)] for k, v in o.references.items()} for o in generated
            }
            config = client.collections.get(spec.name).config.get()
            assert [(r.name, r.target_collections) for r in config.references] == [
                (r.name, [r.target]) for r in spec.references
            ]
    again = load_schemas(client, [linked], COUNT)
    assert [c.action for c in again.collections] == ["up-to-date"] * 3
    reservations = linked.collections[2].name
    assert len({tuple(v["restaurant"]) for v in links(client, linked, reservations).values()}) > 5


def test_a_lost_link_is_restored(client: Any, linked: UseCase) -> None:
    assert load_schemas(client, [linked], COUNT).ok
    spec = linked.collections[1]
    first = next(ObjectGenerator(spec, 42, COUNT).stream(1))
    collection = client.collections.get(spec.name)
    collection.data.reference_replace(from_uuid=first.uuid, from_property="restaurant", to=[])
    assert load_schemas(client, [linked], COUNT).ok
    assert links(client, linked, spec.name)[str(first.uuid)] == {"restaurant": [str(first.references["restaurant"])]}


def test_an_index_rebuild_keeps_the_links_and_dates(client: Any, linked: UseCase) -> None:
    from fixtures.index_repair import rebuild_index

    assert load_schemas(client, [linked], COUNT).ok
    spec = linked.collections[2]
    before = links(client, linked, spec.name)
    dates = {str(o.uuid): dict(o.properties) for o in client.collections.get(spec.name).iterator()}
    repair = rebuild_index(client, spec.name)
    assert repair.after.ok and repair.failed == 0
    assert links(client, linked, spec.name) == before
    assert {str(o.uuid): dict(o.properties) for o in client.collections.get(spec.name).iterator()} == dates
