"""Fuzzing on a live Weaviate: arbitrary arguments, valid and invalid, give a result or a typed
error and never change the database (object counts and every collection's config are compared)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from executors import ExecutorError, ExecutorOptions, QueryResult, SearchMode, WeaviateExecutor
from executors.testing import (
    create_sample_collection,
    sample_objects,
    sample_schema,
    tool_arguments_strategy,
    unique_name,
)

pytestmark = pytest.mark.integration

SEEN: dict[str, int] = {}


@pytest.fixture(scope="module")
def fuzz_target(weaviate_stack: Any) -> Iterator[tuple[Any, str]]:
    from dbgorilla.connection import connect

    client = connect(weaviate_stack.settings)
    name = unique_name("ExecFuzz")
    try:
        create_sample_collection(client, name, sample_objects(40, seed=5))
        yield client, name
    finally:
        client.collections.delete(name)
        client.close()


def snapshot(client: Any) -> dict[str, Any]:
    """Every collection's full config and object count."""
    configs = client.collections.list_all(simple=False)
    return {
        name: (config.to_dict(), client.collections.use(name).aggregate.over_all(total_count=True).total_count)
        for name, config in sorted(configs.items())
    }


@pytest.fixture(scope="module")
def executors(fuzz_target: tuple[Any, str]) -> Iterator[list[WeaviateExecutor]]:
    client, _ = fuzz_target
    before = snapshot(client)
    yield [WeaviateExecutor(client, ExecutorOptions(search_mode=mode)) for mode in SearchMode]
    assert snapshot(client) == before, "fuzzing changed the database"


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(data=tool_arguments_strategy(sample_schema("PLACEHOLDER")))
def test_fuzzed_arguments_give_a_result_or_a_typed_error(
    fuzz_target: tuple[Any, str], executors: list[WeaviateExecutor], data: Any
) -> None:
    _, name = fuzz_target
    raw = _retarget(data, name)
    executor = executors[hash(repr(raw)) % len(executors)]
    try:
        result = executor.execute(raw)
    except ExecutorError as error:
        assert error.code != "internal_error", error
        assert error.message
        SEEN[error.code] = SEEN.get(error.code, 0) + 1
    else:
        assert isinstance(result, QueryResult)
        assert len(result.to_llm_text(max_chars=500)) <= 500
        QueryResult.model_validate_json(result.model_dump_json())
        SEEN["result"] = SEEN.get("result", 0) + 1


def test_fuzzing_reached_results_and_errors() -> None:
    """The strategy must exercise both outcomes, or the fuzz test above proves little."""
    if not SEEN:
        pytest.skip("fuzz test did not run")
    assert SEEN.get("result", 0) >= 10, SEEN
    assert sum(count for code, count in SEEN.items() if code != "result") >= 10, SEEN


def _retarget(value: Any, name: str) -> Any:
    """Point the placeholder collection name at the live collection, wherever it appears."""
    if isinstance(value, str):
        return value.replace("PLACEHOLDER", name)
    if isinstance(value, dict):
        return {_retarget(k, name): _retarget(v, name) for k, v in value.items()}
    if isinstance(value, list):
        return [_retarget(v, name) for v in value]
    return value
