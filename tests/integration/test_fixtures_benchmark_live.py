"""Self-check of the benchmark on the default data loaded into the session's live Weaviate.

Every ground truth without search must return a non-empty, not-all answer for its filter, as
counted by Weaviate itself; every ground truth must execute through `WeaviateExecutor`; and
Weaviate's answers must equal the pure-Python reference executor's on the generated objects.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from weaviate.classes.query import Filter

from dbgorilla.connection import connect
from executors import WeaviateExecutor, compare_results
from executors.arguments import BooleanPropertyFilter, TextPropertyFilter
from fixtures import (
    DEFAULT_OBJECTS_PER_COLLECTION,
    DEFAULT_SEED,
    drop_use_cases,
    get_use_cases,
    load_split,
    load_use_cases,
)
from fixtures.authoring.sanity import AnyFilter, filtered, the_filter
from tests.unit.test_fixtures_benchmark import default_objects, reference_executor

pytestmark = pytest.mark.integration
RECORDS = load_split()


@pytest.fixture(scope="module")
def loaded(weaviate_stack: Any) -> Iterator[Any]:
    """All five use cases at the default size and seed, under their real names, dropped afterwards."""
    with connect(weaviate_stack.settings) as client:
        report = load_use_cases(client, "all", DEFAULT_OBJECTS_PER_COLLECTION, DEFAULT_SEED)
        assert report.ok, report.failed
        try:
            yield client
        finally:
            drop_use_cases(client, get_use_cases())


def weaviate_filter(flt: AnyFilter) -> Any:
    prop = Filter.by_property(flt.property_name)
    op = flt.operator.value
    if isinstance(flt, TextPropertyFilter):
        return prop.equal(flt.value) if op == "=" else prop.like(flt.value)
    if isinstance(flt, BooleanPropertyFilter):
        return prop.equal(flt.value) if op == "=" else prop.not_equal(flt.value)
    compare = {
        "=": prop.equal,
        "<": prop.less_than,
        ">": prop.greater_than,
        "<=": prop.less_or_equal,
        ">=": prop.greater_or_equal,
    }
    return compare[op](flt.value)


def test_every_filter_keeps_some_but_not_all_objects_in_weaviate(loaded: Any) -> None:
    with_filter = [r for r in RECORDS if the_filter(r.ground_truth) is not None]
    counts = {}
    for record in with_filter:
        flt = the_filter(record.ground_truth)
        assert flt is not None
        collection = loaded.collections.get(record.collection)
        counts[record.id] = collection.aggregate.over_all(filters=weaviate_filter(flt), total_count=True).total_count
        expected = len(filtered(default_objects(record.collection), record.ground_truth))
        assert counts[record.id] == expected, f"{record.id}: Weaviate counts {counts[record.id]}, Python {expected}"
    non_vacuous = [i for i, n in counts.items() if 0 < n < DEFAULT_OBJECTS_PER_COLLECTION]
    assert len(with_filter) == 240
    assert len(non_vacuous) == len(with_filter), sorted(set(counts) - set(non_vacuous))


def test_every_ground_truth_executes_with_a_non_empty_answer(loaded: Any) -> None:
    executor = WeaviateExecutor(loaded)
    empty = []
    for record in RECORDS:
        result = executor.execute(record.ground_truth)
        metrics = [v for per in result.aggregations.values() for v in per.values()]
        group_metrics = [
            v for g in (result.groups or {}).values() for per in g.aggregations.values() for v in per.values()
        ]
        if not (result.objects or any(m not in (None, []) for m in metrics + group_metrics) or result.groups):
            empty.append(record.id)
    assert empty == []


def test_weaviate_agrees_with_the_reference_executor_without_search(loaded: Any) -> None:
    live, reference = WeaviateExecutor(loaded), reference_executor()
    differences = {}
    for record in RECORDS:
        if record.ground_truth.search_query is None:
            diff = compare_results(
                reference.execute(record.ground_truth), live.execute(record.ground_truth), 1e-6, 1e-6
            )
            if diff:
                differences[record.id] = diff[:3]
    assert differences == {}
