"""Every write verified (issue 38), against two real Weaviates.

REST at one Weaviate and gRPC at another are refused before anything is written to either; a load
whose writes do not all arrive reads its counts and links back over REST and fails, naming the
collection. The two servers are this module's own (binary, no embedder of their own: they share
the session stack's), so what each holds is known.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from typer.testing import CliRunner
from weaviate.classes.query import MetadataQuery
from weaviate.collections.classes.config import Configure, DataType, Property
from weaviate.collections.data import _DataCollection

from dbgorilla.cli import app
from dbgorilla.config import Settings
from dbgorilla.connection import EndpointsDiffer, connect
from dbgorilla.errors import ExitCode
from dbgorilla.services import WeaviateService
from fixtures._load_verify import rest_count
from fixtures.generator import object_uuid
from fixtures.loader import load_use_cases
from tests.conftest import Stack, fresh_settings, run_cli, settings_env

pytestmark = pytest.mark.integration
OBJECTS = 5
RESTAURANTS = ["Restaurants", "MenuItems", "Reservations"]


@dataclasses.dataclass(frozen=True)
class Pair:
    a: Settings
    b: Settings

    def crossed(self) -> dict[str, str]:
        """A command's environment with REST at A and gRPC at B's port, as in the issue."""
        return settings_env(self.a) | {
            "WEAVIATE_URL": self.a.weaviate_http_url,
            "WEAVIATE_GRPC_PORT": str(self.b.ports.weaviate_grpc),
        }


@pytest.fixture(scope="module")
def pair(weaviate_stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    """Two fresh Weaviates; B holds the restaurants use case (a developer's `dbgorilla up`)."""
    services = []
    for label in "ab":
        settings = fresh_settings(tmp_path_factory.mktemp(f"endpoints-{label}"))
        ports = dataclasses.replace(settings.ports, embedder=weaviate_stack.settings.ports.embedder)
        services.append(WeaviateService(dataclasses.replace(settings, ports=ports)))
    try:
        with ThreadPoolExecutor(2) as pool:  # side by side: each start waits for its server
            for started in [pool.submit(service.start, lambda _: None) for service in services]:
                started.result()
        with connect(services[1].settings) as client:
            assert load_use_cases(client, ["restaurants"], OBJECTS).ok
        yield Pair(services[0].settings, services[1].settings)
    finally:
        for service in services:
            service.stop(echo=lambda _: None)


def snapshot(settings: Settings) -> dict[str, tuple[str, int, list[str]]]:
    """Each collection's description, count and object ids with their last update, read through a
    client whose endpoints are one server."""
    with connect(settings) as client:
        found = {}
        for name, config in client.collections.list_all(simple=True).items():
            objects = client.collections.use(name).iterator(
                return_properties=[], return_metadata=MetadataQuery(last_update_time=True)
            )
            stamps = sorted(f"{o.uuid} {o.metadata.last_update_time}" for o in objects)
            found[name] = (config.description or "", rest_count(client, name), stamps)
        return found


def ids(found: dict[str, tuple[str, int, list[str]]]) -> dict[str, list[str]]:
    return {name: [stamp.split()[0] for stamp in stamps] for name, (_, _, stamps) in found.items()}


def assert_refused(result: Any, pair: Pair) -> None:
    message = " ".join(result.stderr.split())
    assert result.returncode == ExitCode.CONFIG, result.stderr
    assert "two different Weaviates" in message
    assert pair.a.weaviate_http_url in message
    assert f"127.0.0.1:{pair.b.ports.weaviate_grpc}" in message


def connect_crossed(pair: Pair, monkeypatch: pytest.MonkeyPatch) -> str:
    """What `connect` (every command's way in) says with REST at A and gRPC at B."""
    for name, value in pair.crossed().items():
        monkeypatch.setenv(name, value)
    with pytest.raises(EndpointsDiffer) as refused:
        connect(pair.a)
    monkeypatch.delenv("WEAVIATE_URL")
    return str(refused.value)


def test_rest_and_grpc_at_two_weaviates_are_refused_and_nothing_is_written(
    pair: Pair, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = (snapshot(pair.a), snapshot(pair.b))
    assert before[0] == {} and sorted(before[1]) == sorted(RESTAURANTS)

    # A empty, B loaded: the case. Nothing over REST to compare, so a probe decides.
    assert_refused(
        run_cli("load", "--use-case", "restaurants", "--objects-per-collection", str(OBJECTS), env=pair.crossed()), pair
    )
    assert "a collection created over REST" in connect_crossed(pair, monkeypatch)
    assert (snapshot(pair.a), snapshot(pair.b)) == before

    # A with the very same objects (same seed, same ids), loaded at another time: told apart
    # without writing anything, by when each object was created.
    with connect(pair.a) as client:
        assert load_use_cases(client, ["restaurants"], OBJECTS).ok
    before = (snapshot(pair.a), snapshot(pair.b))
    assert ids(before[0]) == ids(before[1])  # the same objects, but written at other times
    refused = run_cli("load", "--use-case", "restaurants", "--objects-per-collection", str(OBJECTS), env=pair.crossed())
    assert_refused(refused, pair)
    assert re.search(r"object \S+ of \w+ was created at \d+ ms", " ".join(refused.stderr.split())), refused.stderr
    assert (snapshot(pair.a), snapshot(pair.b)) == before


def test_a_collection_rest_lists_that_grpc_lacks_is_refused(pair: Pair, monkeypatch: pytest.MonkeyPatch) -> None:
    with connect(pair.a) as client:
        client.collections.create(
            "EndpointNotes",
            vector_config=Configure.Vectors.self_provided(),
            properties=[Property(name="text", data_type=DataType.TEXT)],
        )
    try:
        before = (snapshot(pair.a), snapshot(pair.b))
        refused = connect_crossed(pair, monkeypatch)
        assert "REST lists the collection EndpointNotes, gRPC finds no such collection" in refused
        assert (snapshot(pair.a), snapshot(pair.b)) == before
    finally:
        with connect(pair.a) as client:
            client.collections.delete("EndpointNotes")


def test_a_load_whose_writes_do_not_all_arrive_fails_naming_the_collection(
    pair: Pair, monkeypatch: pytest.MonkeyPatch
) -> None:
    """insert_many answers "no errors" but one object of MenuItems never arrives, as when the
    objects went to another server: the read-back over REST tells, and `load` exits 1."""
    original = _DataCollection.insert_many
    lost = str(object_uuid("MenuItems", 2))

    def lossy(self: Any, objects: list[Any]) -> Any:
        if self.name == "Lossy_MenuItems":
            objects = [o for o in objects if str(o.uuid) != lost]
        return original(self, objects)

    monkeypatch.setattr(_DataCollection, "insert_many", lossy)
    for name, value in settings_env(pair.a).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("WEAVIATE_URL", raising=False)
    result = CliRunner().invoke(
        app, ["load", "--use-case", "restaurants", "--objects-per-collection", str(OBJECTS), "--namespace", "Lossy"]
    )
    stderr = " ".join(result.stderr.split())
    assert result.exit_code == ExitCode.FAILURE, result.output
    assert (
        f"Lossy_MenuItems holds {OBJECTS - 1} objects as read back from {pair.a.weaviate_http_url}, "
        f"{OBJECTS} expected ({OBJECTS} written without error)" in stderr
    )
    differing = re.findall(r"read back differs (\w+)", stderr)
    assert differing == ["Lossy_MenuItems"], stderr
    assert f"failed Lossy_MenuItems[2] {lost}: reference restaurant not added" in stderr  # and its link


def test_a_link_that_does_not_arrive_fails_naming_the_collection(pair: Pair, monkeypatch: pytest.MonkeyPatch) -> None:
    """reference_add_many answers "no errors" but drops one link of Reservations."""
    original = _DataCollection.reference_add_many

    def lossy(self: Any, refs: list[Any]) -> Any:
        return original(self, refs[1:] if self.name == "Unlinked_Reservations" else refs)

    monkeypatch.setattr(_DataCollection, "reference_add_many", lossy)
    with connect(pair.a) as client:
        report = load_use_cases(client, ["restaurants"], OBJECTS, namespace="Unlinked")
    differing = {c.collection: c.difference for c in report.collections if c.difference}
    assert not report.ok
    assert list(differing) == ["Unlinked_Reservations"], differing
    assert differing["Unlinked_Reservations"].startswith(
        f"Unlinked_Reservations: {OBJECTS - 1} of {OBJECTS} links added read back"
    )
