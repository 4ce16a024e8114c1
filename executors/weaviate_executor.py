"""Run `query_database` tool calls against a live Weaviate through weaviate-client v4.

    executor = WeaviateExecutor(client)                     # near_text search with a relevance cut
    result = executor.execute({"collection_name": "Restaurants", "search_query": "pizza"})
    print(result.to_llm_text())

`execute` accepts a JSON string, a dict or a `QueryDatabaseArguments` and either returns a
`QueryResult` or raises an `ExecutorError`; no other exception escapes. The executor is
read-only by construction: it holds the client only through `ReadOnlyWeaviate`, which reads
collection configs and runs the `query`/`aggregate` methods listed in `READ_METHODS`, nothing else.

Weaviate v1.39 / weaviate-client 4.2x behaviours this module and `_plan` correct or document:

- a lone range or LIKE filter is resolved only up to the query limit before `Sort.by_id()`;
  fetches AND such a filter with itself so the first objects in UUID order are exact;
- TOP_OCCURRENCES without a limit is mis-parsed by the gRPC handler: the limit is always sent;
  the unfiltered scan returns its values JSON-escaped (`\\u0026`): they are unescaped here;
- a float bound on an `int` property is rejected: it is sent as the equivalent integer bound;
- group-by picks arbitrarily among equal-sized groups at its limit: more are fetched, cut here;
- PERCENTAGE_* over no values is NaN: reported as None (like MEAN over no values);
- aggregating "over a search" with `aggregate.near_text/hybrid(object_limit=N)` covers the top N
  hits however far they are (hybrid even fuses N keyword and N vector hits): a search's hits are
  fetched first (within a distance cut) and aggregations run over exactly those ids;
- the client retries an unreachable gRPC server for about a minute per call: after one
  `weaviate_unavailable`, calls consult the liveness probe first and fail at once while it fails.
"""

from __future__ import annotations

import json
import math
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
from weaviate import exceptions as wx
from weaviate.classes.config import ConsistencyLevel

from executors._assemble import (
    Hit,
    attach_samples,
    groups_total,
    notes_for,
    order_groups,
    rank_hits,
    ranked_objects,
    to_object,
)
from executors._metrics import aggregate
from executors._plan import READ_METHODS, PlannedCall, QueryPlan, build_plan, top_occurrences_limit
from executors._validate import parse_arguments, validate_arguments
from executors.arguments import QueryDatabaseArguments
from executors.errors import (
    ExecutorError,
    InternalExecutorError,
    WeaviateCallError,
    WeaviateUnavailableError,
)
from executors.liveness import weaviate_is_live
from executors.options import ExecutorOptions
from executors.ownership import CollectionNames
from executors.results import GroupResult, MetricValue, QueryResult, TopOccurrence, group_key
from executors.schema import DatabaseSchema, SchemaCache, schema_from_configs
from executors.scope import Scope, scoped, visible_schema
from executors.spec import AggregationSpec, QuerySpec
from executors.vocabulary import METRIC_ATTRIBUTES, SCHEMA_METRICS

RawArguments = QueryDatabaseArguments | dict[str, Any] | str

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

    __slots__ = ("__client", "__handles", "consistency_level", "names")  # no public way back to the client

    def __init__(self, client: Any, consistency_level: str | None = None, names: CollectionNames | None = None) -> None:
        self.__client = client
        self.__handles: dict[str, Any] = {}
        #: Logical names (what the model and results say) to the physical ones Weaviate holds.
        self.names = names or CollectionNames()
        #: ONE | QUORUM | ALL for the reads of replicated collections (a cluster); None: Weaviate's
        #: default (QUORUM). `DBGORILLA_CONSISTENCY_LEVEL` sets it for the CLI's runs.
        self.consistency_level = _consistency(consistency_level or os.environ.get("DBGORILLA_CONSISTENCY_LEVEL"))

    def read_schema(self) -> DatabaseSchema:
        return schema_from_configs(self.__client.collections.list_all(simple=False), self.names)

    def is_live(self) -> bool:
        """Weaviate's HTTP liveness probe (milliseconds, no retries, nothing printed)."""
        return weaviate_is_live(self.__client)

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


def _options(options: ExecutorOptions | None, overrides: dict[str, Any]) -> ExecutorOptions:
    """`ExecutorOptions` with keyword overrides applied and validated."""
    base = options or ExecutorOptions()
    if not overrides:
        return base
    return ExecutorOptions.model_validate({**base.model_dump(), **overrides})


@contextmanager
def typed_errors() -> Iterator[None]:
    """Let only `ExecutorError` out of the block."""
    try:
        yield
    except ExecutorError:
        raise
    except Exception as exc:
        raise translate_exception(exc) from exc


class _Breaker:
    """Fail fast once Weaviate is known to be down.

    weaviate-client retries an unavailable gRPC server with backoff for about a minute per call.
    After one such failure, every later call first asks the (HTTP, millisecond) liveness endpoint
    and fails at once while it says no, so an agent or an eval run is not stalled call after call.
    """

    def __init__(self, weaviate: ReadOnlyWeaviate) -> None:
        self._weaviate = weaviate
        self._tripped = threading.Event()

    def check(self) -> None:
        if not self._tripped.is_set():
            return
        try:
            live = self._weaviate.is_live()
        except Exception:
            live = False
        if not live:
            raise WeaviateUnavailableError(
                "Weaviate is not reachable right now (its liveness check fails). The query was not run; retry later."
            )
        self._tripped.clear()

    def trip(self) -> None:
        self._tripped.set()


class WeaviateExecutor:
    """Validates tool arguments against the live schema and runs them with the typed client API."""

    def __init__(
        self,
        client: Any,
        options: ExecutorOptions | None = None,
        *,
        scope: Scope | None = None,
        names: CollectionNames | None = None,
        **overrides: Any,
    ) -> None:
        self._options = _options(options, overrides)
        self._scope = scope
        self._weaviate = ReadOnlyWeaviate(client, names=names)
        self._schema = SchemaCache(self._weaviate.read_schema)
        self._breaker = _Breaker(self._weaviate)

    @property
    def options(self) -> ExecutorOptions:
        return self._options

    def with_options(self, options: ExecutorOptions) -> WeaviateExecutor:
        """A sibling with other limits that shares this one's connection, schema cache and breaker."""
        sibling = object.__new__(WeaviateExecutor)
        sibling._options, sibling._scope = options, self._scope
        sibling._weaviate, sibling._schema, sibling._breaker = self._weaviate, self._schema, self._breaker
        return sibling

    @property
    def schema(self) -> DatabaseSchema:
        """The cached live schema (read on first use); with a scope, only the collections in it."""
        with typed_errors():
            return visible_schema(self._scope, self._schema.get())

    @property
    def names(self) -> CollectionNames:
        """Where this executor's logical collection names live in Weaviate."""
        return self._weaviate.names

    def collection_size(self, collection: str) -> int | None:
        """How many objects a collection holds (None when it cannot be counted: best effort)."""
        try:
            return self._weaviate.size(collection)
        except Exception:
            return None

    def refresh_schema(self) -> DatabaseSchema:
        """Re-read the schema, e.g. after collections were created or changed."""
        with typed_errors():
            return self._schema.refresh()

    def validate(self, arguments: RawArguments) -> QuerySpec:
        """Parse and check `arguments` against the live schema; raises `ExecutorError`."""
        with typed_errors():
            return scoped(self._scope, validate_arguments(parse_arguments(arguments), self.schema))

    def plan(self, arguments: RawArguments) -> QueryPlan:
        """The calls `execute` would make, without making them."""
        with typed_errors():
            return self._plan(arguments)

    def execute(self, arguments: RawArguments) -> QueryResult:
        """Run one tool call: a `QueryResult`, or an `ExecutorError` and nothing else."""
        with typed_errors():
            plan = self._plan(arguments)
            name = plan.spec.collection.name
            self._breaker.check()
            try:
                responses = self._run_calls(name, plan)
            except Exception as exc:
                error = translate_exception(exc)
                if isinstance(error, WeaviateUnavailableError):
                    self._breaker.trip()
                raise error from exc
            return assemble_result(plan, responses)

    def _run_calls(self, collection: str, plan: QueryPlan) -> dict[str, Any]:
        """Each call's response by purpose; a call over the search's hits gets their ids (or, when
        the search matched nothing, is not made: its response is None, an aggregate over nothing)."""
        responses: dict[str, Any] = {}
        for call in plan.calls:
            if call.over_hits:
                ids = [str(obj.uuid) for obj in responses["hits"].objects]
                responses[call.purpose] = self._weaviate.run(collection, call.restricted_to(ids)) if ids else None
            else:
                responses[call.purpose] = self._weaviate.run(collection, call)
        return responses

    def _plan(self, arguments: RawArguments) -> QueryPlan:
        return build_plan(self.validate(arguments), self._options)


# ----------------------------------------------------------------------------------------------
# Responses -> QueryResult


def assemble_result(plan: QueryPlan, responses: dict[str, Any]) -> QueryResult:
    spec, options = plan.spec, plan.options
    result = QueryResult(
        collection=spec.collection.name,
        operator_class=spec.operator_class(),
        search_mode=options.search_mode if spec.has_search else None,
        group_by=spec.group_by.name if spec.group_by is not None else None,
        calls=plan.rendered(),
        notes=notes_for(spec, options),
    )
    hits = rank_hits(_hits(spec, responses["hits"])) if "hits" in responses else None
    if "objects" in responses:
        fetched = _hits(spec, responses["objects"])
        result.truncated = len(fetched) > options.fetch_limit
        result.objects = [to_object(spec.collection, hit) for hit in fetched[: options.fetch_limit]]
        count = responses.get("count")
        result.total_count = count.total_count if count is not None else None if result.truncated else len(fetched)
    elif hits is not None and spec.group_by is None and not spec.aggregations:
        result.objects = ranked_objects(spec.collection, hits[: options.search_limit])
        result.truncated = len(hits) > options.search_limit
        result.total_count = None if len(hits) >= options.search_hit_limit else len(hits)
    if "aggregate" in responses:
        response = responses["aggregate"]
        if response is None:  # a search without hits: the metrics of no objects
            result.aggregations = {a.prop.name: aggregate(a, [], options) for a in spec.aggregations}
            result.total_count = 0
        else:
            # Weaviate's unfiltered scan returns TOP_OCCURRENCES values still JSON-escaped.
            escaped = not spec.applied_filters and not spec.has_search
            result.aggregations = {
                a.prop.name: _metric_values(a, response.properties.get(a.prop.name), options, escaped)
                for a in spec.aggregations
            }
            result.total_count = response.total_count
    if "groups" in responses:
        assert spec.group_by is not None
        found = responses["groups"].groups if responses["groups"] is not None else []
        groups = [
            GroupResult(
                value=group_key(group.grouped_by.value),
                count=int(group.total_count or 0),
                aggregations={
                    a.prop.name: _metric_values(a, group.properties.get(a.prop.name), options)
                    for a in spec.aggregations
                },
            )
            for group in found
        ]
        result.groups, result.truncated = order_groups(groups, options.max_groups)
        result.total_count = groups_total(result.groups, result.truncated)
        if not spec.aggregations and options.samples_per_group > 0:
            if hits is not None:
                attach_samples(spec.collection, result.groups, hits, spec.group_by, options.samples_per_group, True)
            elif "group_samples" in responses:
                samples = _lazy_hits(spec, responses["group_samples"])
                attach_samples(spec.collection, result.groups, samples, spec.group_by, options.samples_per_group, False)
    return result


def _hits(spec: QuerySpec, response: Any) -> list[Hit]:
    """Response objects as `Hit`s; without search they come in UUID order (`Sort.by_id()`)."""
    if spec.has_search:
        return [
            Hit(str(obj.uuid), obj.properties or {}, _float(obj.metadata.score), _float(obj.metadata.distance))
            for obj in response.objects
        ]
    return [Hit(str(obj.uuid), obj.properties or {}) for obj in response.objects]


def _lazy_hits(spec: QuerySpec, response: Any) -> Iterator[Hit]:
    """Like `_hits` without search, converting only as far as the caller reads (group samples)."""
    return (Hit(str(obj.uuid), obj.properties or {}) for obj in response.objects)


def _float(value: Any) -> float | None:
    """Floats, with NaN (Weaviate's PERCENTAGE_* over no values) as None."""
    if value is None:
        return None
    number = float(value)
    return None if math.isnan(number) else number


def _metric_values(
    spec: AggregationSpec, aggregate: Any, options: ExecutorOptions, escaped: bool = False
) -> dict[str, MetricValue]:
    values: dict[str, MetricValue] = {}
    for metric in spec.metrics:
        if metric in SCHEMA_METRICS:
            values[metric] = spec.prop.data_type
            continue
        raw = getattr(aggregate, METRIC_ATTRIBUTES[metric], None) if aggregate is not None else None
        if metric == "TOP_OCCURRENCES":
            values[metric] = _top_occurrences(raw or [], top_occurrences_limit(spec, options), escaped)
        elif metric == "COUNT":
            values[metric] = float(raw or 0)
        else:
            values[metric] = _float(raw)
    return values


def _top_occurrences(items: list[Any], limit: int, escaped: bool) -> list[TopOccurrence]:
    pairs = [
        TopOccurrence(value=_unescape(str(item.value)) if escaped else str(item.value), count=int(item.count or 0))
        for item in items
    ]
    return sorted(pairs, key=lambda p: (-p.count, p.value))[:limit]


def _unescape(value: str) -> str:
    """Undo the JSON string escaping (`\\u0026` for `&`, `\\n`...) of Weaviate's unfiltered text scan."""
    if "\\" not in value:
        return value
    try:
        decoded = json.loads(f'"{value}"')
    except ValueError:
        return value
    return decoded if isinstance(decoded, str) else value


__all__ = [
    "RawArguments",
    "ReadOnlyWeaviate",
    "WeaviateExecutor",
    "assemble_result",
    "translate_exception",
    "typed_errors",
]
