"""Read-only by construction and typed errors only, checked against a strict fake client.

The fake records every attribute the executor touches and fails on anything outside
`collections.list_all`, `collections.use` and the `query`/`aggregate` read methods, so a path
from tool arguments to a write, delete or schema change would be caught here.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from weaviate import exceptions as wx

from executors import ExecutorError, QueryResult, WeaviateExecutor
from executors._plan import READ_METHODS
from executors.read_only import translate_exception
from executors.schema import schema_from_configs
from executors.testing import tool_arguments_strategy


def _property(name: str, data_type: str, tokenization: str | None = None) -> SimpleNamespace:
    return SimpleNamespace(
        name=name,
        data_type=data_type,
        description=None,
        tokenization=tokenization,
        index_filterable=True,
        index_searchable=data_type == "text",
        index_range_filters=False,
    )


CONFIGS = {
    "Shops": SimpleNamespace(
        name="Shops",
        description="shops",
        properties=[
            _property("name", "text", "word"),
            _property("kind", "text", "field"),
            _property("price", "number"),
            _property("rooms", "int"),
            _property("open", "boolean"),
        ],
        inverted_index_config=SimpleNamespace(
            stopwords=SimpleNamespace(preset="en", additions=None, removals=None), stopword_presets=None
        ),
    )
}


class Strict:
    """Only the listed attributes exist; touching anything else fails the test."""

    def __init__(self, path: str, log: list[str], **allowed: Any) -> None:
        self._path, self._log, self._allowed = path, log, allowed

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        self._log.append(f"{self._path}.{name}")
        if name not in self._allowed:
            raise AssertionError(f"executor touched {self._path}.{name}")
        return self._allowed[name]


class FakeClient(Strict):
    def __init__(self, failure: BaseException | None = None, live: bool = True) -> None:
        self.log: list[str] = []
        self.failure = failure
        self.live = live
        self.calls = 0
        collections = Strict("client.collections", self.log, list_all=self._list_all, use=self._use)
        super().__init__("client", self.log, collections=collections, is_live=lambda: self.live)

    def _list_all(self, simple: bool = True) -> dict[str, Any]:
        assert simple is False
        return CONFIGS

    def _use(self, name: str, skip_argument_validation: bool = False) -> Strict:
        query = {m: self._method("query", m) for n, m in READ_METHODS if n == "query"}
        aggregate = {m: self._method("aggregate", m) for n, m in READ_METHODS if n == "aggregate"}
        return Strict(
            f"collection[{name}]",
            self.log,
            query=Strict("query", self.log, **query),
            aggregate=Strict("aggregate", self.log, **aggregate),
        )

    def _method(self, namespace: str, method: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            if self.failure is not None:
                raise self.failure
            if namespace == "query":
                return SimpleNamespace(objects=[])
            if kwargs.get("group_by") is not None:
                return SimpleNamespace(groups=[])
            return SimpleNamespace(properties={}, total_count=0)

        return call


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=tool_arguments_strategy(schema_from_configs(CONFIGS)))
def test_fuzzed_arguments_only_reach_read_methods(raw: Any) -> None:
    client = FakeClient()
    executor = WeaviateExecutor(client)
    try:
        result = executor.execute(raw)
    except ExecutorError as error:
        assert error.code != "internal_error", error
    else:
        assert isinstance(result, QueryResult)
    allowed = {"client.collections", "client.collections.list_all", "client.collections.use", "query", "aggregate"}
    allowed |= {f"{namespace}.{method}" for namespace, method in READ_METHODS}
    for touched in client.log:
        assert touched in allowed or (touched.startswith("collection[") and touched.endswith((".query", ".aggregate")))


def test_read_only_wrapper_refuses_other_methods() -> None:
    from executors._plan import PlannedCall
    from executors.read_only import ReadOnlyWeaviate

    reader = ReadOnlyWeaviate(FakeClient())
    with pytest.raises(ExecutorError) as caught:
        reader.run("Shops", PlannedCall("data", "delete_many", "objects"))
    assert caught.value.code == "internal_error"
    assert not hasattr(reader, "client") and not hasattr(reader, "_client")


def test_a_consistency_level_is_checked_once_when_the_reader_is_made(monkeypatch: pytest.MonkeyPatch) -> None:
    from weaviate.classes.config import ConsistencyLevel

    from executors.read_only import ReadOnlyWeaviate

    assert ReadOnlyWeaviate(FakeClient(), "quorum").consistency_level is ConsistencyLevel.QUORUM
    assert ReadOnlyWeaviate(FakeClient()).consistency_level is None
    monkeypatch.setenv("DBGORILLA_CONSISTENCY_LEVEL", "ALL")
    assert ReadOnlyWeaviate(FakeClient()).consistency_level is ConsistencyLevel.ALL
    with pytest.raises(ValueError, match="unknown consistency level 'quorom'; choose one of"):
        ReadOnlyWeaviate(FakeClient(), "quorom")


@pytest.mark.parametrize(
    ("failure", "code", "text"),
    [
        (wx.WeaviateQueryError("no filterable index for 'x'", "GRPC search"), "weaviate_error", "no filterable index"),
        (
            wx.WeaviateQueryError("The request to Weaviate failed after 4 retries", "GRPC search"),
            "weaviate_unavailable",
            "not reachable",
        ),
        (
            wx.WeaviateQueryError("<_InactiveRpcError StatusCode.UNAVAILABLE>", "GRPC search"),
            "weaviate_unavailable",
            "retry later",
        ),
        (wx.WeaviateConnectionError("refused"), "weaviate_unavailable", "not reachable"),
        (wx.WeaviateClosedClientError(), "weaviate_unavailable", "not reachable"),
        (wx.WeaviateTimeoutError("slow"), "weaviate_unavailable", "not reachable"),
        (
            wx.UnexpectedStatusCodeError("bad", httpx.Response(422, request=httpx.Request("GET", "http://x"))),
            "weaviate_error",
            "rejected",
        ),
        (httpx.ConnectError("refused"), "weaviate_unavailable", "not reachable"),
        (RuntimeError("boom"), "internal_error", "RuntimeError: boom"),
    ],
)
def test_failures_become_typed_errors(failure: BaseException, code: str, text: str) -> None:
    executor = WeaviateExecutor(FakeClient(failure))
    with pytest.raises(ExecutorError) as caught:
        executor.execute({"collection_name": "Shops", "search_query": "x"})
    assert caught.value.code == code
    assert text in caught.value.message
    assert translate_exception(failure).code == code


def test_schema_read_failure_is_typed() -> None:
    class DownClient:
        class collections:
            @staticmethod
            def list_all(simple: bool = True) -> Any:
                raise wx.WeaviateConnectionError("connection refused")

    executor = WeaviateExecutor(DownClient())
    with pytest.raises(ExecutorError) as caught:
        executor.execute({"collection_name": "Shops"})
    assert caught.value.code == "weaviate_unavailable"


def test_unfiltered_top_occurrences_are_unescaped() -> None:
    """Weaviate's unfiltered text scan returns values JSON-escaped (`\\u0026` for `&`)."""
    from executors._assemble import _unescape

    assert _unescape("a \\u0026 b") == "a & b"
    assert _unescape('say \\"hi\\" \\u003cb\\u003e') == 'say "hi" <b>'
    assert _unescape("back\\\\slash") == "back\\slash"
    assert _unescape("plain") == "plain"
    assert _unescape("broken \\x") == "broken \\x"


def test_breaker_fails_fast_while_weaviate_stays_down() -> None:
    """After one unavailable error, calls ask the liveness probe first instead of retrying for a minute."""
    client = FakeClient(wx.WeaviateConnectionError("refused"), live=False)
    executor = WeaviateExecutor(client)
    raw = {"collection_name": "Shops", "search_query": "x"}
    with pytest.raises(ExecutorError):
        executor.execute(raw)
    assert client.calls == 1
    with pytest.raises(ExecutorError) as caught:
        executor.execute(raw)
    assert caught.value.code == "weaviate_unavailable" and "liveness" in caught.value.message
    assert client.calls == 1, "no query while the liveness probe fails"
    client.live, client.failure = True, None
    assert executor.execute(raw).objects == []
    assert client.calls == 2
    assert "client.is_live" in client.log


def test_with_options_shares_connection_and_schema_cache() -> None:
    from executors import ExecutorOptions

    client = FakeClient()
    executor = WeaviateExecutor(client)
    sibling = executor.with_options(ExecutorOptions(fetch_limit=3))
    assert sibling.options.fetch_limit == 3 and executor.options.fetch_limit == 10
    assert sibling.schema is executor.schema
    assert "limit=4" in sibling.plan({"collection_name": "Shops"}).rendered()[0]
    assert client.log.count("client.collections.list_all") == 1
