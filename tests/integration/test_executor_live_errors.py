"""Errors raised by a live Weaviate (or its absence) reach the caller as typed `ExecutorError`s,
and the schema used for validation is the live one, cached until `refresh_schema()`."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import weaviate
from weaviate.classes.config import Configure, DataType, Property
from weaviate.classes.init import AdditionalConfig, Timeout

from executors import ExecutorError, WeaviateExecutor
from executors.testing import unique_name

pytestmark = pytest.mark.integration


@pytest.fixture()
def plain(client: Any) -> Iterator[str]:
    """A collection without a vectorizer and with a property that has no filter index."""
    name = unique_name("ExecErr")
    client.collections.create(
        name,
        description="Error cases",
        vector_config=Configure.Vectors.self_provided(),
        properties=[
            Property(name="label", data_type=DataType.TEXT, description="A label"),
            Property(name="secret", data_type=DataType.TEXT, index_filterable=False, index_searchable=False),
            Property(name="score", data_type=DataType.NUMBER, description="A score"),
        ],
    )
    client.collections.use(name).data.insert_many(
        [{"label": "a", "secret": "x", "score": 1.0}, {"label": "b", "secret": "y", "score": 2.0}]
    )
    try:
        yield name
    finally:
        client.collections.delete(name)


def error_of(executor: WeaviateExecutor, raw: Any) -> ExecutorError:
    with pytest.raises(ExecutorError) as caught:
        executor.execute(raw)
    return caught.value


def test_filter_without_index_is_a_weaviate_error(client: Any, plain: str) -> None:
    raw = {"collection_name": plain, "text_property_filter": {"property_name": "secret", "operator": "=", "value": "x"}}
    error = error_of(WeaviateExecutor(client), raw)
    assert error.code == "weaviate_error"
    assert error.message.startswith("Weaviate rejected the query: ")
    assert "secret" in error.message and "index" in error.message.lower()


def test_search_without_vectorizer_is_refused_by_name_before_weaviate_is_asked(client: Any, plain: str) -> None:
    """The live schema says the collection has no vectorizer, so the search is refused as a bad value that
    names the collection and the fix, not passed on for Weaviate's vector error."""
    error = error_of(WeaviateExecutor(client, search_mode="near_text"), {"collection_name": plain, "search_query": "a"})
    assert error.code == "invalid_value" and error.field == "search_query"
    assert f"{plain} has no vectorizer" in error.message and "Leave search_query out" in error.message


def test_live_schema_drives_validation_messages(client: Any, plain: str) -> None:
    raw = {"collection_name": plain, "integer_property_aggregation": {"property_name": "scroe", "metrics": "MEAN"}}
    error = error_of(WeaviateExecutor(client), raw)
    assert error.code == "unknown_property"
    assert "label (text), secret (text), score (number)" in error.message
    assert "Did you mean 'score'?" in error.message


def test_schema_is_cached_until_refreshed(client: Any) -> None:
    executor = WeaviateExecutor(client)
    assert executor.schema is executor.schema
    name = unique_name("ExecLate")
    try:
        client.collections.create(name, vector_config=Configure.Vectors.self_provided())
        client.collections.use(name).config.add_property(Property(name="n", data_type=DataType.INT))
        assert error_of(executor, {"collection_name": name}).code == "unknown_collection"
        refreshed = executor.refresh_schema()
        assert refreshed.get(name) is not None
        assert refreshed.get(name).get_property("n").data_type == "int"  # type: ignore[union-attr]
        result = executor.execute(
            {"collection_name": name, "integer_property_aggregation": {"property_name": "n", "metrics": "TYPE"}}
        )
        assert result.aggregations == {"n": {"TYPE": "int"}}
        assert result.total_count == 0
    finally:
        client.collections.delete(name)


class Forwarder:
    """A TCP forwarder to the live server that can be cut, to take Weaviate 'down' mid-session."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.sockets: list[socket.socket] = [self.listener]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                inbound, _ = self.listener.accept()
            except OSError:
                return
            outbound = socket.create_connection(("127.0.0.1", self.target_port))
            self.sockets += [inbound, outbound]
            for a, b in ((inbound, outbound), (outbound, inbound)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        for s in self.sockets:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()


@pytest.mark.slow
def test_server_going_down_is_weaviate_unavailable(weaviate_stack: Any, plain: str) -> None:
    """weaviate-client retries an UNAVAILABLE gRPC call with backoff for about a minute; after that
    first failure the executor's breaker answers from the liveness probe at once."""
    ports = weaviate_stack.settings.ports
    http, grpc = Forwarder(ports.weaviate_http), Forwarder(ports.weaviate_grpc)
    quick = AdditionalConfig(timeout=Timeout(init=5, query=2, insert=2))
    proxied = weaviate.connect_to_local(port=http.port, grpc_port=grpc.port, additional_config=quick)
    try:
        executor = WeaviateExecutor(proxied)
        assert executor.execute({"collection_name": plain}).total_count == 2
        http.cut()
        grpc.cut()
        reaching = {
            "collection_name": plain,
            "integer_property_filter": {"property_name": "score", "operator": ">", "value": 1},
        }
        error = error_of(executor, reaching)
        assert error.code == "weaviate_unavailable"
        assert "not reachable" in error.message
        started = time.monotonic()
        again = error_of(executor, reaching)
        assert again.code == "weaviate_unavailable" and time.monotonic() - started < 5, "breaker fails fast"
        fresh = WeaviateExecutor(proxied)  # the schema read itself fails
        assert error_of(fresh, {"collection_name": plain}).code == "weaviate_unavailable"
    finally:
        http.cut()
        grpc.cut()
        proxied.close()


def test_closed_client_is_weaviate_unavailable(weaviate_stack: Any, plain: str) -> None:
    from dbgorilla.connection import connect

    own = connect(weaviate_stack.settings)
    executor = WeaviateExecutor(own)
    assert executor.execute({"collection_name": plain}).total_count == 2
    own.close()
    error = error_of(
        executor,
        {"collection_name": plain, "integer_property_filter": {"property_name": "score", "operator": ">", "value": 1}},
    )
    assert error.code == "weaviate_unavailable"
