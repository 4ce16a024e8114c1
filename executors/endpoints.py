"""Do a client's REST and gRPC endpoints reach the same Weaviate?

weaviate-client v4 sends the schema, ownership reads and references over REST, but objects,
searches and counts over gRPC. With `WEAVIATE_URL` at one server and gRPC at another's port, a load
created collections on the first, sent its objects to the second, and reported them as loaded.

The check reads, and writes nothing where it can: an object that REST lists must be there over
gRPC with the same creation time (independent loads never share one, even of the same seed), and
a collection REST lists must exist over gRPC. Only a REST database with no collection at all gives
nothing to compare; then a probe collection is created over REST, looked for over gRPC, and
deleted again (the gRPC side is only read). Every way of connecting calls `check_same_database`
(`dbgorilla.connection.connect`); the loader checks its targets with `check_collections` before it
writes them.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from weaviate.exceptions import WeaviateBaseError

#: How many REST-listed collections are compared before the check settles for "nothing differs".
MAX_PROBES = 8
#: Seconds between reads of an object REST lists and gRPC does not find yet, and how many reads: a server
#: restarted after a crash lists an object over REST before its by-id lookup over gRPC finds it (seen in
#: tests/integration/test_crash.py, 2026-11-27); two different servers never find it.
RECHECK_SECONDS, RECHECKS = 0.5, 10
#: The probe collection of an empty REST database (created and deleted again within the check).
PROBE_PREFIX = "DbgorillaEndpointProbe"
PROBE_MARKER = "[dbgorilla-live: endpoint-probe]"


class EndpointMismatch(RuntimeError):
    """REST and gRPC reach two different Weaviates; the caller must not write through this client."""

    def __init__(self, rest: str, grpc: str, evidence: str) -> None:
        self.rest, self.grpc, self.evidence = rest, grpc, evidence
        super().__init__(
            f"REST at {rest} and gRPC at {grpc} reach two different Weaviates: {evidence}. Nothing was "
            "written. Point both at one server (WEAVIATE_URL for REST; WEAVIATE_GRPC_URL or "
            "WEAVIATE_GRPC_PORT for gRPC, default 50051 on the REST host)."
        )


@dataclass(frozen=True)
class _Seen:
    """What one protocol reads of a collection: whether it exists, and one object's creation time."""

    exists: bool
    first: str | None = None  # an object id
    created_ms: int | None = None


@dataclass(frozen=True)
class _Verdict:
    """`differs`: what tells the two apart ("" nothing); `proven`: one object matched on both sides."""

    differs: str
    proven: bool = False


def addresses(client: Any) -> tuple[str, str]:
    """The REST URL and gRPC host:port a client was opened with (for messages)."""
    params = getattr(getattr(client, "_connection", None), "_connection_params", None)
    if params is None:
        return "the REST endpoint", "the gRPC endpoint"
    return str(params._http_url), str(params._grpc_target)


def check_same_database(client: Any) -> None:
    """`EndpointMismatch` when the client's REST and gRPC endpoints reach different databases."""
    names = sorted(client.collections.list_all(simple=True))  # REST
    compared = 0
    for name in names:
        if compared >= MAX_PROBES:
            return
        verdict = _compare(client, name, rest_exists=True)
        if verdict is None:
            continue  # multi-tenant, or a read that failed for a reason of its own
        compared += 1
        if verdict.differs:
            raise EndpointMismatch(*addresses(client), verdict.differs)
        if verdict.proven:
            return  # one object with the same id and creation time on both sides: one database
    if not names:
        _probe_empty(client)


def check_collections(client: Any, names: Iterable[str]) -> None:
    """`EndpointMismatch` unless REST and gRPC agree about each of these collections (that it exists
    or not, and its first object): the loader's ownership check reads REST, its writes go over gRPC."""
    for name in names:
        verdict = _compare(client, name, rest_exists=client.collections.exists(name))
        if verdict is not None and verdict.differs:
            raise EndpointMismatch(*addresses(client), verdict.differs)


def _compare(client: Any, name: str, rest_exists: bool) -> _Verdict | None:
    """What REST and gRPC read of one collection, compared (None: this collection cannot tell)."""
    grpc = _grpc_seen(client, name)
    if grpc is None:
        return None
    if not rest_exists:
        return _Verdict(f"gRPC finds a collection {name} that REST does not list" if grpc.exists else "")
    if not grpc.exists:
        return _Verdict(f"REST lists the collection {name}, gRPC finds no such collection")
    rest = _rest_seen(client, name)
    if rest is None:
        return None
    if rest.first is None:
        if grpc.first is not None and _rest_seen(client, name) == rest:  # read again: not a write in between
            return _Verdict(f"{name} is empty over REST, gRPC finds object {grpc.first} in it")
        return _Verdict("")
    over_grpc = _grpc_object(client, name, rest.first)
    for _ in range(RECHECKS):
        if over_grpc is None or over_grpc.exists:
            break
        time.sleep(RECHECK_SECONDS)
        over_grpc = _grpc_object(client, name, rest.first)
    if over_grpc is None:
        return None  # the gRPC read failed for a reason of its own: this collection cannot tell
    if not over_grpc.exists:
        return _Verdict(f"object {rest.first} of {name}, read over REST, is not there over gRPC")
    if over_grpc.created_ms != rest.created_ms:
        return _Verdict(
            f"object {rest.first} of {name} was created at {rest.created_ms} ms as read over REST, "
            f"at {over_grpc.created_ms} ms as read over gRPC"
        )
    return _Verdict("", proven=True)


def _rest_seen(client: Any, name: str) -> _Seen | None:
    """The first object of a collection over REST (`GET /v1/objects`): its id and creation time."""
    try:
        listed = rest_json(client, "/objects", params={"class": name, "limit": 1})
    except (WeaviateBaseError, ValueError):
        return None
    objects = listed.get("objects") or []
    if not objects:
        return _Seen(exists=True)
    return _Seen(exists=True, first=str(objects[0]["id"]), created_ms=int(objects[0]["creationTimeUnix"]))


def rest_json(client: Any, path: str, params: dict[str, Any] | None = None, body: Any = None) -> Any:
    """A REST call on the client's own HTTP endpoint and credentials (GET, or POST `body`), its JSON.

    Why the client's connection (an internal of weaviate-client 4.x): it is the endpoint and the
    authentication its REST calls use, and its GraphQL wrapper warns on every use (deprecated).
    `ValueError` on an answer other than 2xx."""
    connection = client._connection
    response = connection.get(path, params=params) if body is None else connection.post(path, weaviate_object=body)
    if not 200 <= response.status_code < 300:
        raise ValueError(f"{path}: HTTP {response.status_code} {response.text[:200]}")
    return response.json()


def _grpc_seen(client: Any, name: str) -> _Seen | None:
    """The first object of a collection over gRPC; exists=False when gRPC knows no such collection."""
    try:
        found = client.collections.use(name).query.fetch_objects(limit=1, return_properties=[])
    except WeaviateBaseError as error:
        return _Seen(exists=False) if _not_found(error) else None
    return _Seen(exists=True, first=str(found.objects[0].uuid) if found.objects else None)


def _grpc_object(client: Any, name: str, object_id: str) -> _Seen | None:
    """One object by id over gRPC, with its creation time; exists=False when gRPC does not find it,
    None when the read failed."""
    try:
        found = client.collections.use(name).query.fetch_object_by_id(object_id, return_properties=[])
    except WeaviateBaseError:
        return None
    if found is None:
        return _Seen(exists=False)
    created = found.metadata.creation_time
    return _Seen(exists=True, first=str(found.uuid), created_ms=_ms(created) if created else None)


def _ms(moment: datetime) -> int:
    return round(moment.timestamp() * 1000)


def _not_found(error: WeaviateBaseError) -> bool:
    """Weaviate's gRPC answer for a collection it does not have."""
    text = str(error).lower()
    return "could not find class" in text or ("class" in text and "not found" in text)


def _probe_empty(client: Any) -> None:
    """REST has no collection to compare: create one over REST, look for it over gRPC, delete it.

    A server that refuses the probe (a read-only key) is let through: it cannot be written either."""
    name = f"{PROBE_PREFIX}{uuid.uuid4().hex[:12]}"
    try:
        client.collections.create_from_dict(
            {
                "class": name,
                "description": f"created and deleted by a connection check {PROBE_MARKER}",
                "vectorizer": "none",
                "properties": [],
            }
        )
    except WeaviateBaseError:
        return
    try:
        grpc = _grpc_seen(client, name)
    finally:
        with contextlib.suppress(WeaviateBaseError):
            client.collections.delete(name)
    if grpc is not None and not grpc.exists:
        raise EndpointMismatch(
            *addresses(client),
            f"a collection created over REST ({name}, deleted again) is not there over gRPC",
        )
