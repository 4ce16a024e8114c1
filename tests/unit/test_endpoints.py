"""`executors.endpoints` against a fake client whose REST and gRPC read two databases (or one).

The live case, two real Weaviates, is tests/integration/test_endpoints.py; here every branch of
the comparison, quickly.
"""

from __future__ import annotations

from datetime import datetime, timezone
from types import SimpleNamespace
from typing import Any

import pytest
from weaviate.exceptions import WeaviateBaseError

from executors.endpoints import EndpointMismatch, check_collections, check_same_database

#: collection -> object id -> creation time in ms
Database = dict[str, dict[str, int]]


class Response:
    def __init__(self, status_code: int, body: Any) -> None:
        self.status_code, self.body, self.text = status_code, body, str(body)

    def json(self) -> Any:
        return self.body


class FakeClient:
    """REST reads and writes `rest`; gRPC reads `grpc` (the same dict when both reach one server)."""

    def __init__(self, rest: Database, grpc: Database) -> None:
        self.rest, self.grpc = rest, grpc
        self.created: list[str] = []
        params = SimpleNamespace(_http_url="http://rest:8080", _grpc_target="grpc:50051")
        self._connection = SimpleNamespace(_connection_params=params, get=self._get)
        self.collections = SimpleNamespace(
            list_all=lambda simple: dict.fromkeys(self.rest),
            exists=lambda name: name in self.rest,
            use=self._use,
            create_from_dict=self._create,
            delete=lambda name: self.rest.pop(name, None),
        )

    def _get(self, path: str, params: dict[str, Any]) -> Response:
        objects = self.rest.get(params["class"])
        if objects is None:
            return Response(404, {"error": "not found"})
        first = sorted(objects.items())[:1]
        return Response(200, {"objects": [{"id": i, "creationTimeUnix": ms} for i, ms in first]})

    def _create(self, config: dict[str, Any]) -> None:
        self.created.append(config["class"])
        self.rest[config["class"]] = {}

    def _use(self, name: str) -> Any:
        def objects() -> dict[str, int]:
            if name not in self.grpc:
                raise WeaviateBaseError(f"could not find class {name} in schema")
            return self.grpc[name]

        def fetch_objects(limit: int, return_properties: list[str]) -> Any:
            return SimpleNamespace(objects=[SimpleNamespace(uuid=i) for i in sorted(objects())[:limit]])

        def fetch_object_by_id(object_id: str, return_properties: list[str]) -> Any:
            ms = objects().get(object_id)
            if ms is None:
                return None
            created = datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
            return SimpleNamespace(uuid=object_id, metadata=SimpleNamespace(creation_time=created))

        query = SimpleNamespace(fetch_objects=fetch_objects, fetch_object_by_id=fetch_object_by_id)
        return SimpleNamespace(query=query)


def test_one_database_passes_and_nothing_is_written() -> None:
    db: Database = {"Empty": {}, "Notes": {"id-1": 1_700_000_000_123}}
    client = FakeClient(db, db)
    check_same_database(client)
    assert client.created == [] and db == {"Empty": {}, "Notes": {"id-1": 1_700_000_000_123}}


def test_an_object_rest_lists_that_grpc_does_not_have_is_refused_naming_both_addresses() -> None:
    client = FakeClient({"Notes": {"id-1": 1}}, {"Notes": {"id-2": 1}})
    with pytest.raises(EndpointMismatch) as refused:
        check_same_database(client)
    assert "REST at http://rest:8080 and gRPC at grpc:50051" in str(refused.value)
    assert "object id-1 of Notes, read over REST, is not there over gRPC" in str(refused.value)


def test_the_same_ids_created_at_other_times_are_two_databases() -> None:
    client = FakeClient({"Notes": {"id-1": 1_700_000_000_123}}, {"Notes": {"id-1": 1_700_000_000_999}})
    with pytest.raises(EndpointMismatch, match=r"created at 1700000000123 ms .* at 1700000000999 ms"):
        check_same_database(client)


def test_a_collection_rest_lists_that_grpc_lacks_is_refused() -> None:
    with pytest.raises(EndpointMismatch, match="REST lists the collection Empty, gRPC finds no such collection"):
        check_same_database(FakeClient({"Empty": {}}, {"Other": {"id-1": 1}}))


def test_an_empty_rest_side_is_probed_and_the_probe_deleted() -> None:
    rest: Database = {}
    client = FakeClient(rest, {"Restaurants": {"id-1": 1}})
    with pytest.raises(EndpointMismatch, match=r"created over REST .* is not there over gRPC"):
        check_same_database(client)
    assert len(client.created) == 1 and rest == {}  # the probe was created, then deleted again

    same: Database = {}
    client = FakeClient(same, same)
    check_same_database(client)
    assert len(client.created) == 1 and same == {}


def test_a_load_target_grpc_has_and_rest_does_not_is_refused() -> None:
    client = FakeClient({"Notes": {}}, {"Notes": {}, "Restaurants": {"id-1": 1}})
    check_collections(client, ["Notes"])
    with pytest.raises(EndpointMismatch, match="gRPC finds a collection Restaurants that REST does not list"):
        check_collections(client, ["Notes", "Restaurants"])


def test_an_object_grpc_finds_only_after_a_restart_lags_is_one_database(monkeypatch: pytest.MonkeyPatch) -> None:
    """Right after a crash, REST may list an object before gRPC finds it by id: it is read again."""
    import executors.endpoints as endpoints

    monkeypatch.setattr(endpoints, "RECHECK_SECONDS", 0.0)
    rest: Database = {"Notes": {"id-1": 1}}
    client = FakeClient(rest, {"Notes": {}})
    reads = iter([False, False, True])  # found at the third read by id
    use = client._use

    def lagging(name: str) -> Any:
        used = use(name)
        fetch = used.query.fetch_object_by_id
        by_id = lambda object_id, return_properties: fetch(object_id, return_properties) if next(reads) else None  # noqa: E731
        client.grpc["Notes"] = {"id-1": 1}  # the object is there over gRPC, only its by-id read lags
        return SimpleNamespace(query=SimpleNamespace(fetch_objects=used.query.fetch_objects, fetch_object_by_id=by_id))

    client.collections.use = lagging
    check_same_database(client)


def test_a_failing_grpc_read_by_id_tells_nothing_rather_than_two_databases() -> None:
    client = FakeClient({"Notes": {"id-1": 1}}, {"Notes": {"id-1": 1}})
    use = client._use

    def failing(name: str) -> Any:
        used = use(name)

        def by_id(object_id: str, return_properties: list[str]) -> Any:
            raise WeaviateBaseError("shard not ready")

        return SimpleNamespace(query=SimpleNamespace(fetch_objects=used.query.fetch_objects, fetch_object_by_id=by_id))

    client.collections.use = failing
    check_same_database(client)  # no proof either way: not refused
