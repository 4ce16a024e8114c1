"""The query as code, without a server: every plan's program runs as written against a stand-in
client, opens the executor's connection and physical collection, and makes exactly the planned calls
(the hits' ids where a call runs over them); it imports what it uses and nothing else."""

from __future__ import annotations

import ast
import contextlib
import io
from types import SimpleNamespace
from typing import Any

import pytest
import weaviate

from executors import ExecutorOptions, QueryResult, SearchMode, parse_arguments, validate_arguments
from executors._plan import QueryPlan, build_plan
from executors.snippet import PURPOSES, Endpoint, Snippet, endpoint_of
from executors.vocabulary import ToolOperations
from fixtures.use_cases import database_schema_of, get_use_case
from tests.unit.test_executor_plan import COMBINATIONS, HIT_IDS, arguments, canonical, plan_for

LOCAL = Endpoint("127.0.0.1", 28080, False, "127.0.0.1", 28081, False)


class Recorder:
    """Stands in for the client a program opens: records each call and answers with `hits` objects."""

    def __init__(self, hit_ids: list[str]) -> None:
        self.hit_ids, self.made, self.opened, self.closed = hit_ids, [], [], False
        self.collections = self

    def get(self, name: str) -> Any:
        self.opened.append(name)
        return SimpleNamespace(query=_Namespace(self, "query"), aggregate=_Namespace(self, "aggregate"))

    def answer(self, namespace: str, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        self.made.append((namespace, method, args, kwargs))
        if namespace == "query":
            objects = [
                SimpleNamespace(
                    uuid=uuid,
                    properties={"rooms": 3, "name": "x"},
                    metadata=SimpleNamespace(distance=0.1, score=1.0),
                    references=None,
                )
                for uuid in self.hit_ids
            ]
            return SimpleNamespace(objects=objects)
        group = SimpleNamespace(grouped_by=SimpleNamespace(value=3), total_count=2, properties={})
        return SimpleNamespace(total_count=2, properties={}, groups=[group])

    def close(self) -> None:
        self.closed = True


class _Namespace:
    def __init__(self, recorder: Recorder, namespace: str) -> None:
        self._recorder, self._namespace = recorder, namespace

    def __getattr__(self, method: str) -> Any:
        return lambda *args, **kwargs: self._recorder.answer(self._namespace, method, args, kwargs)


def run_program(
    program: str, monkeypatch: pytest.MonkeyPatch, hit_ids: list[str]
) -> tuple[Recorder, dict[str, Any], dict[str, Any], str]:
    recorder, connected = Recorder(hit_ids), {}

    def connect_to_local(**kwargs: Any) -> Recorder:
        connected.update(kwargs)
        return recorder

    monkeypatch.setattr(weaviate, "connect_to_local", connect_to_local)
    namespace: dict[str, Any] = {"__name__": "__main__"}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(program, "<snippet>", "exec"), namespace)
    return recorder, connected, namespace, printed.getvalue()


def expected_calls(plan: QueryPlan, hit_ids: list[str]) -> list[Any]:
    calls = [c.restricted_to(hit_ids) if c.over_hits else c for c in plan.calls if hit_ids or not c.over_hits]
    return [(c.namespace, c.method, *(canonical(part) for part in c.arguments())) for c in calls]


def imports_are_used(program: str) -> bool:
    tree = ast.parse(program)
    imported = {
        (alias.asname or alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    return bool(imported) and imported <= used


@pytest.mark.parametrize(("search", "filter_", "aggregation", "group"), COMBINATIONS)
@pytest.mark.parametrize("mode", list(SearchMode))
@pytest.mark.parametrize("hits", [HIT_IDS, []], ids=["hits", "no-hits"])
def test_every_combination_runs_as_the_calls_it_shows(
    search: bool,
    filter_: str | None,
    aggregation: str | None,
    group: bool,
    mode: SearchMode,
    hits: list[str],
    monkeypatch,
) -> None:
    plan = plan_for(arguments(search, filter_, aggregation, group), search_mode=mode)
    program = Snippet(plan, "Bench_Shops", LOCAL).program()
    recorder, connected, namespace, printed = run_program(program, monkeypatch, hits)
    assert connected == {"host": "127.0.0.1", "port": 28080, "grpc_port": 28081}
    assert recorder.opened == ["Bench_Shops"] and recorder.closed
    made = [(ns, method, canonical(list(args)), canonical(kwargs)) for ns, method, args, kwargs in recorder.made]
    assert made == [(ns, method, list(args), kwargs) for ns, method, args, kwargs in expected_calls(plan, hits)]
    assert {c.purpose for c in plan.calls} <= set(namespace) & set(PURPOSES)
    assert printed.strip() and imports_are_used(program)


RELATED_CALLS = [
    {
        "collection_name": "Reservations",
        "reference_filter": {"reference": "restaurant", "property_name": "cuisine", "operator": "=", "value": "Thai"},
        "date_filter": {
            "property_name": "reservationDate",
            "operator": "between",
            "value": "2025-03-01",
            "value_to": "2025-05-31",
        },
    },
    {
        "collection_name": "Reservations",
        "sort": {"property_name": "reservationDate", "order": "descending", "limit": 3},
    },
    {  # "the average party of the 3 latest reservations": the aggregate runs over the sort's first 3
        "collection_name": "Reservations",
        "integer_property_aggregation": {"property_name": "partySize", "metrics": "MEAN"},
        "sort": {"property_name": "reservationDate", "order": "descending", "limit": 3},
    },
    {
        "collection_name": "Reservations",
        "search_query": "anniversary dinner",
        "reference_filter": {"reference": "restaurant", "property_name": "openNow", "operator": "=", "value": True},
    },
]


@pytest.mark.parametrize("raw", RELATED_CALLS)
def test_references_dates_and_sort_run_as_shown(raw: dict[str, Any], monkeypatch) -> None:
    schema = database_schema_of([get_use_case("restaurants")])
    spec = validate_arguments(parse_arguments(raw, ToolOperations.RELATED), schema)
    plan = build_plan(spec, ExecutorOptions())
    program = Snippet(plan, "Reservations", LOCAL, consistency_level="ONE").program()
    assert "from datetime import datetime" in program or "date_filter" not in raw
    assert ".with_consistency_level(ConsistencyLevel.ONE)" in program
    recorder, _, _, _ = run_program(
        program.replace(".with_consistency_level(ConsistencyLevel.ONE)", ""), monkeypatch, HIT_IDS
    )
    made = [(ns, method, canonical(list(args)), canonical(kwargs)) for ns, method, args, kwargs in recorder.made]
    assert made == [(ns, method, list(args), kwargs) for ns, method, args, kwargs in expected_calls(plan, HIT_IDS)]
    assert imports_are_used(program)


def test_long_values_are_shown_whole() -> None:
    query = "a quiet place for " + "a long dinner " * 40
    program = Snippet(plan_for({"collection_name": "Shops", "search_query": query}), "Shops", LOCAL).program()
    assert repr(query) in program and "..." not in program


def test_the_connection_is_the_clients() -> None:
    from weaviate.connect.base import ConnectionParams

    params = ConnectionParams.from_params(
        http_host="db.example",
        http_port=443,
        http_secure=True,
        grpc_host="grpc.example",
        grpc_port=443,
        grpc_secure=True,
    )
    client = weaviate.WeaviateClient(connection_params=params, skip_init_checks=True)
    endpoint = endpoint_of(client)
    assert endpoint == Endpoint("db.example", 443, True, "grpc.example", 443, True)
    program = Snippet(plan_for({"collection_name": "Shops"}), "Shops", endpoint).program()
    assert "weaviate.connect_to_custom(" in program and 'os.environ["WEAVIATE_API_KEY"]' in program
    assert imports_are_used(program)
    compile(program, "<snippet>", "exec")
    assert endpoint_of(object()) is None and endpoint_of(SimpleNamespace(_connection=None)) is None
    unknown = Snippet(plan_for({"collection_name": "Shops"}), "Shops", None).program()
    assert "weaviate.connect_to_local()" in unknown


def test_only_a_live_executors_result_has_a_program() -> None:
    assert QueryResult(collection="Shops", operator_class="fetch").program() is None


@pytest.mark.parametrize("show_code", [True, False])
def test_ask_prints_each_calls_program_whole_with_show_code(show_code: bool) -> None:
    from agent import ExecutedCall
    from dbgorilla.cli.ask import show_call
    from dbgorilla.cli.console import out

    raw = {"collection_name": "Shops", "search_query": "a bakery " * 30}
    plan = plan_for(raw)
    result = QueryResult(collection="Shops", operator_class="search", calls=plan.rendered())
    program = result.with_snippet(Snippet(plan, "Shops", LOCAL)).program()
    assert program is not None
    call = ExecutedCall(tool_call_id="c1", tool_name="query_database", raw_arguments="{}", arguments=raw, result=result)
    with out.capture() as captured:
        show_call(0, call, show_code=show_code)
    assert (program in captured.get()) is show_code  # unwrapped: it pastes as it is
