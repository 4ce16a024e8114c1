"""The executors' boundary with Weaviate: their only handle on it (`ReadOnlyWeaviate`, reads only)
and how its failures become typed errors (`translate_exception`, `typed_errors`).

Both executors go through here: the live one for every call, the reference one for the schema.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
from weaviate import exceptions as wx
from weaviate.classes.config import ConsistencyLevel

from executors._plan import READ_METHODS, PlannedCall
from executors.errors import (
    ExecutorError,
    InternalExecutorError,
    WeaviateCallError,
    WeaviateUnavailableError,
)
from executors.liveness import weaviate_is_live
from executors.ownership import CollectionNames
from executors.schema import DatabaseSchema, schema_from_configs
from executors.snippet import endpoint_of

_UNAVAILABLE_ERRORS = (
    wx.WeaviateConnectionError,
    wx.WeaviateClosedClientError,
    wx.WeaviateGRPCUnavailableError,
    wx.WeaviateTimeoutError,
    wx.WeaviateStartUpError,
    wx.WeaviateRetryError,
    httpx.TransportError,
    ConnectionError,
    TimeoutError,
)
_UNAVAILABLE_MARKERS = ("UNAVAILABLE", "DEADLINE_EXCEEDED", "Connection refused", "failed to connect", "retries")


class ReadOnlyWeaviate:
    """The executor's only handle on Weaviate: collection configs, `.query` and `.aggregate`.

    Tool arguments can only select a collection name and one of `READ_METHODS`; there is no
    method here that inserts, updates, deletes or changes the schema.
    """

    __slots__ = ("__client", "__handles", "consistency_level", "endpoint", "names")  # no public way back to the client

    def __init__(self, client: Any, consistency_level: str | None = None, names: CollectionNames | None = None) -> None:
        self.__client = client
        self.__handles: dict[str, Any] = {}
        #: Logical names (what the model and results say) to the physical ones Weaviate holds.
        self.names = names or CollectionNames()
        #: ONE | QUORUM | ALL for the reads of replicated collections (a cluster); None: Weaviate's
        #: default (QUORUM). `DBGORILLA_CONSISTENCY_LEVEL` sets it for the CLI's runs.
        self.consistency_level = _consistency(consistency_level or os.environ.get("DBGORILLA_CONSISTENCY_LEVEL"))
        #: Where the client connects, for the programs results show (`executors.snippet`).
        self.endpoint = endpoint_of(client)

    def read_schema(self) -> DatabaseSchema:
        return schema_from_configs(self.__client.collections.list_all(simple=False), self.names)

    def is_live(self) -> bool:
        """Weaviate's HTTP liveness probe (milliseconds, no retries, nothing printed)."""
        return weaviate_is_live(self.__client)

    def reconnect(self) -> bool:
        """A fresh connection when Weaviate is live again (True), after a call failed on the old one: a
        restarted server leaves the client's channel broken for its next call. False while it is down,
        and for a client its owner closed (that is theirs to open again)."""
        try:
            connected = bool(self.__client.is_connected())
        except Exception:  # a client without the method: nothing to reconnect
            return False
        if not connected or not self.is_live():
            return False
        self.__client.close()
        self.__client.connect()
        self.__handles.clear()
        return True

    def size(self, collection: str) -> int | None:
        """How many objects a collection (by logical name) holds."""
        handle = self.__client.collections.use(self.names.physical(collection))
        total = handle.aggregate.over_all(total_count=True).total_count
        return None if total is None else int(total)

    def run(self, collection: str, call: PlannedCall) -> Any:
        if (call.namespace, call.method) not in READ_METHODS:
            raise InternalExecutorError(f"refusing a non-read call {call.namespace}.{call.method}")
        handle = self.__handles.get(collection)
        if handle is None:
            handle = self.__client.collections.use(self.names.physical(collection), skip_argument_validation=True)
            if self.consistency_level is not None:
                handle = handle.with_consistency_level(self.consistency_level)
            self.__handles[collection] = handle
        args, kwargs = call.arguments()
        return getattr(getattr(handle, call.namespace), call.method)(*args, **kwargs)


def _consistency(name: str | None) -> ConsistencyLevel | None:
    """A consistency level by name, refused at once (not on every read) when it is not one."""
    if not name:
        return None
    try:
        return ConsistencyLevel(name.strip().upper())
    except ValueError:
        choices = ", ".join(level.value for level in ConsistencyLevel)
        raise ValueError(f"unknown consistency level {name!r}; choose one of {choices}") from None


def translate_exception(exc: BaseException) -> ExecutorError:
    """Any exception -> the matching `ExecutorError` (Weaviate's own errors keep their message)."""
    if isinstance(exc, ExecutorError):
        return exc
    chain = [exc]
    while chain[-1].__cause__ is not None and len(chain) < 5:
        chain.append(chain[-1].__cause__)
    text = " ".join(str(item) for item in chain)
    if any(isinstance(item, _UNAVAILABLE_ERRORS) for item in chain) or (
        isinstance(exc, wx.WeaviateQueryError) and any(marker in text for marker in _UNAVAILABLE_MARKERS)
    ):
        return WeaviateUnavailableError(
            f"Weaviate is not reachable right now ({_first_line(text)}). The query was not run; retry later."
        )
    if isinstance(exc, wx.WeaviateBaseError):
        detail = getattr(exc, "message", None) or str(exc)
        return WeaviateCallError(f"Weaviate rejected the query: {_first_line(str(detail))}")
    return InternalExecutorError(f"Internal executor error ({type(exc).__name__}: {_first_line(str(exc))}).")


def _first_line(text: str, limit: int = 500) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


@contextmanager
def typed_errors() -> Iterator[None]:
    """Let only `ExecutorError` out of the block."""
    try:
        yield
    except ExecutorError:
        raise
    except Exception as exc:
        raise translate_exception(exc) from exc


__all__ = ["ReadOnlyWeaviate", "translate_exception", "typed_errors"]
