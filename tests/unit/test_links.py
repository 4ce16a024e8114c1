"""`fixtures.links.link_collections` when the load could not write some objects: references from or to
them are not sent, each missing link is a named failure in the report, and nothing raises."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from weaviate.classes.data import DataReference
from weaviate.exceptions import UnexpectedStatusCodeError

from fixtures.generator import ObjectGenerator, object_uuid
from fixtures.links import link_collections
from fixtures.load_report import Action, CollectionReport, FailedObject
from fixtures.use_cases import get_use_case

USE_CASE = get_use_case("visual_art")
COUNT = 20
SEED = 42


@dataclass
class FakeData:
    """What `collection.data` receives; `refuse` makes Weaviate refuse a reference to that target."""

    added: list[DataReference] = field(default_factory=list)
    replaced: list[tuple[str, str, str]] = field(default_factory=list)
    refuse: set[str] = field(default_factory=set)

    def reference_add_many(self, refs: list[DataReference]) -> Any:
        errors = {}
        for i, ref in enumerate(refs):
            if str(ref.to_uuid) in self.refuse:
                errors[i] = SimpleNamespace(message=f"no object with id {ref.to_uuid} found", reference=ref)
            else:
                self.added.append(ref)
        return SimpleNamespace(errors=errors, has_errors=bool(errors))

    def reference_replace(self, from_uuid: Any, from_property: str, to: Any) -> None:
        if str(to) in self.refuse:
            response = httpx.Response(422, json={"error": [{"message": f"no object with id {to} found"}]})
            raise UnexpectedStatusCodeError("Reference was not replaced.", response)
        self.replaced.append((str(from_uuid), from_property, str(to)))


class FakeCollection:
    def __init__(self, spec: Any) -> None:
        refs = [SimpleNamespace(name=r.name, target_collections=[r.target]) for r in spec.references]
        self.config = SimpleNamespace(get=lambda: SimpleNamespace(references=refs), add_reference=lambda ref: None)
        self.data = FakeData()
        # no object links anywhere yet: the sample says "link them"
        self.query = SimpleNamespace(fetch_object_by_id=lambda uuid, return_references=None: None)


class FakeClient:
    def __init__(self) -> None:
        self.by_name = {spec.name: FakeCollection(spec) for spec in USE_CASE.collections}
        self.collections = SimpleNamespace(get=self.by_name.__getitem__)


def reports(action: Action, unwritten: dict[str, list[int]]) -> dict[str, CollectionReport]:
    out = {}
    for spec in USE_CASE.collections:
        failed = [
            FailedObject(collection=spec.name, index=i, uuid=str(object_uuid(spec.name, i)), message="vectorizer down")
            for i in unwritten.get(spec.name, [])
        ]
        out[spec.name] = CollectionReport(
            use_case=USE_CASE.name, collection=spec.name, expected=COUNT, action=action, failed=failed
        )
    return out


def artist_of(index: int) -> str:
    spec = next(c for c in USE_CASE.collections if c.name == "Artworks")
    return str(ObjectGenerator(spec, SEED, COUNT).object(index).references["artist"])


@pytest.mark.parametrize("action", ["created", "updated"])
def test_references_from_or_to_unwritten_objects_are_named_failures_not_a_crash(action: Action) -> None:
    client = FakeClient()
    artists = [i for i in range(COUNT) if str(object_uuid("Artists", i)) == artist_of(3)]
    loaded = reports(action, {"Artworks": [0, 1], "Artists": artists})
    link_collections(client, USE_CASE, loaded, COUNT, SEED, sample=[0, 5])

    data = client.by_name["Artworks"].data
    sent = [str(r.from_uuid) for r in data.added] + [src for src, _, _ in data.replaced]
    unwritten_artworks = {str(object_uuid("Artworks", i)) for i in (0, 1)}
    assert not unwritten_artworks & set(sent), "no reference is sent from an object that was not written"
    unwritten_artist = str(object_uuid("Artists", artists[0]))
    targets = [str(r.to_uuid) for r in data.added] + [to for _, _, to in data.replaced]
    assert unwritten_artist not in targets, "no reference is sent to an object that was not written"
    assert len(sent) == COUNT - 2 - sum(artist_of(i) == unwritten_artist for i in range(2, COUNT))

    artworks = loaded["Artworks"]
    unlinked = [f for f in artworks.failed if f.message.startswith("reference artist not added")]
    assert {f.index for f in unlinked} == {i for i in range(2, COUNT) if artist_of(i) == unwritten_artist}
    assert all(f"Artists {unwritten_artist} was not written" in f.message for f in unlinked)
    assert not artworks.ok
    # Exhibitions link to Artworks: the two artworks not written are not linked to either
    exhibitions = client.by_name["Exhibitions"].data
    to_artworks = {str(r.to_uuid) for r in exhibitions.added} | {to for _, _, to in exhibitions.replaced}
    assert not unwritten_artworks & to_artworks


@pytest.mark.parametrize("action", ["created", "updated"])
def test_a_reference_weaviate_refuses_is_a_named_failure_of_its_source(action: Action) -> None:
    """An object missing though the load did not report it (say, lost in an earlier load)."""
    client = FakeClient()
    gone = artist_of(4)
    client.by_name["Artworks"].data.refuse.add(gone)
    loaded = reports(action, {})
    link_collections(client, USE_CASE, loaded, COUNT, SEED, sample=[0, 5])

    refused = [f for f in loaded["Artworks"].failed if f.message.startswith("reference artist not added")]
    assert {f.index for f in refused} == {i for i in range(COUNT) if artist_of(i) == gone}
    assert all(gone in f.message for f in refused)
    assert not loaded["Artworks"].ok and not loaded["Exhibitions"].failed
