"""Run `query_database` tool calls against a live Weaviate through weaviate-client v4.

    executor = WeaviateExecutor(client)                     # near_text search with a relevance cut
    result = executor.execute({"collection_name": "Restaurants", "search_query": "pizza"})
    print(result.to_llm_text())

`execute` accepts a JSON string, a dict or a `QueryDatabaseArguments` and either returns a
`QueryResult` or raises an `ExecutorError`; no other exception escapes. The executor is
read-only by construction: it holds the client only through `ReadOnlyWeaviate` (`read_only`), which
reads collection configs and runs the `query`/`aggregate` methods listed in `READ_METHODS`, nothing else.
This module is the orchestration: validate (`_validate`), plan (`_plan`), run the planned calls,
assemble the result (`_assemble`).

Weaviate v1.39 / weaviate-client 4.2x behaviours this module, `_plan` (the calls) and `_assemble`
(the responses -> `QueryResult`) correct or document:

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
  `weaviate_unavailable`, calls consult the liveness probe first and fail at once while it fails;
- text `=` on a property that is not `field`-tokenized matches every value holding its words
  ("Jeopardy!" also "Double Jeopardy!"): a value stored whole excludes the longer ones (`whole_value`;
  the property's values are read once, with a TOP_OCCURRENCES within the scope, and cached).
"""

from __future__ import annotations

import threading
from typing import Any

from executors._assemble import assemble_result, stored_text_values
from executors._plan import QueryPlan, build_plan, stored_values_call
from executors._validate import parse_arguments, validate_arguments
from executors.arguments import QueryDatabaseArguments
from executors.errors import WeaviateUnavailableError
from executors.options import ExecutorOptions
from executors.ownership import CollectionNames
from executors.read_only import ReadOnlyWeaviate, translate_exception, typed_errors
from executors.results import QueryResult
from executors.schema import DatabaseSchema, SchemaCache
from executors.scope import Scope, scoped, visible_schema
from executors.snippet import Snippet
from executors.spec import FilterSpec, QuerySpec
from executors.vocabulary import ToolOperations
from executors.whole_value import StoredValues, distinct_values, whole_values

RawArguments = QueryDatabaseArguments | dict[str, Any] | str


def _options(options: ExecutorOptions | None, overrides: dict[str, Any]) -> ExecutorOptions:
    """`ExecutorOptions` with keyword overrides applied and validated."""
    base = options or ExecutorOptions()
    if not overrides:
        return base
    return ExecutorOptions.model_validate({**base.model_dump(), **overrides})


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
        operations: ToolOperations = ToolOperations.PAPER,
        **overrides: Any,
    ) -> None:
        self._options = _options(options, overrides)
        self._scope = scope
        self._operations = operations
        self._weaviate = ReadOnlyWeaviate(client, names=names)
        self._schema = SchemaCache(self._weaviate.read_schema)
        self._breaker = _Breaker(self._weaviate)
        self._stored_values = StoredValues(self._read_stored_values)

    @property
    def options(self) -> ExecutorOptions:
        return self._options

    def with_options(self, options: ExecutorOptions) -> WeaviateExecutor:
        """A sibling with other limits that shares this one's connection, schema cache, stored values and breaker."""
        sibling = object.__new__(WeaviateExecutor)
        sibling._options, sibling._scope, sibling._operations = options, self._scope, self._operations
        sibling._weaviate, sibling._schema, sibling._breaker = self._weaviate, self._schema, self._breaker
        sibling._stored_values = self._stored_values
        return sibling

    def with_operations(self, operations: ToolOperations) -> WeaviateExecutor:
        """A sibling that offers other operations (`paper` or `related`), sharing the connection."""
        sibling = self.with_options(self._options)
        sibling._operations = operations
        return sibling

    @property
    def operations(self) -> ToolOperations:
        """`paper`: the paper's tool exactly (no dates, references, or related slots); `related`: all."""
        return self._operations

    @property
    def schema(self) -> DatabaseSchema:
        """The cached live schema (read on first use) as its operations see it; with a scope, only
        the collections in it."""
        with typed_errors():
            return visible_schema(self._scope, self._schema.get().for_operations(self._operations))

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
            return scoped(self._scope, validate_arguments(parse_arguments(arguments, self._operations), self.schema))

    def plan(self, arguments: RawArguments) -> QueryPlan:
        """The calls `execute` would make, without making them (a text `=` may read its property's
        stored values first, see `whole_value`)."""
        with typed_errors():
            return self._plan(self.validate(arguments))

    def execute(self, arguments: RawArguments) -> QueryResult:
        """Run one tool call: a `QueryResult`, or an `ExecutorError` and nothing else."""
        with typed_errors():
            spec = self.validate(arguments)
            self._breaker.check()
            try:
                plan = self._plan(spec)
                responses = self._run_calls(spec.collection.name, plan)
            except Exception as exc:
                plan, responses = self._again(spec, exc)
            return assemble_result(plan, responses).with_snippet(self._snippet(plan))

    def _again(self, spec: QuerySpec, exc: Exception) -> tuple[QueryPlan, dict[str, Any]]:
        """A call that failed because Weaviate was unreachable runs once more on a fresh connection when
        Weaviate is live again (it restarted under a long-running door); otherwise the typed error, and
        the breaker trips."""
        error = translate_exception(exc)
        if isinstance(error, WeaviateUnavailableError):
            try:
                if self._weaviate.reconnect():
                    plan = self._plan(spec)
                    return plan, self._run_calls(spec.collection.name, plan)
            except Exception as again:
                error, exc = translate_exception(again), again
            if isinstance(error, WeaviateUnavailableError):
                self._breaker.trip()
        raise error from exc

    def _run_calls(self, collection: str, plan: QueryPlan) -> dict[str, Any]:
        """Each call's response by purpose; a call over the search's hits (the sort's first objects) gets
        their ids (or, where none matched, is not made: its response is None, an aggregate over nothing)."""
        responses: dict[str, Any] = {}
        for call in plan.calls:
            if call.over_hits:
                ids = [str(obj.uuid) for obj in responses[plan.ids_from].objects]
                responses[call.purpose] = self._weaviate.run(collection, call.restricted_to(ids)) if ids else None
            else:
                responses[call.purpose] = self._weaviate.run(collection, call)
        return responses

    def _snippet(self, plan: QueryPlan) -> Snippet:
        """What the result's `program()` renders: this plan, on this connection, under the physical name."""
        level = self._weaviate.consistency_level
        name = self._weaviate.names.physical(plan.spec.collection.name)
        return Snippet(plan, name, self._weaviate.endpoint, level.name if level is not None else None)

    def _plan(self, spec: QuerySpec) -> QueryPlan:
        return build_plan(spec, self._options, whole_values(spec, self._stored_values))

    def _read_stored_values(self, collection: str, prop: str, scope: tuple[FilterSpec, ...]) -> tuple[str, ...] | None:
        """A text property's distinct values in the scope (None: more than `whole_value` takes), for `StoredValues`."""
        response = self._weaviate.run(collection, stored_values_call(prop, scope))
        return distinct_values(stored_text_values(response, prop, escaped=not scope))


__all__ = ["RawArguments", "WeaviateExecutor"]
