"""Shared by the executor benchmarks: a sample collection per size and one query per operator class.

Each operator class pairs a `query_database` tool call with the hand-written weaviate-client
calls that answer it, plus the Python source those calls are expected to render as; the
benchmarks refuse to run if the executor's plan differs, so "overhead" always compares the
executor with the very same requests made by hand.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from weaviate.classes.aggregate import GroupByAggregate
from weaviate.classes.query import Filter, MetadataQuery, Metrics, Sort

from dbgorilla.config import Settings
from dbgorilla.connection import connect
from executors import WeaviateExecutor
from executors.testing import create_sample_collection, sample_objects

PREFIX = "BenchExec"
Q = "cozy pizza"
NIL = "00000000-0000-0000-0000-000000000000"


@dataclass(frozen=True)
class OperatorClass:
    name: str
    arguments: dict[str, Any]
    rendered: list[str]
    by_hand: Callable[[Any], Any]


def _cheap() -> Any:
    return Filter.by_property("price").less_than(30.0)


def _late() -> Any:
    return Filter.by_property("open_late").equal(True)


def _mean() -> list[Any]:
    return [Metrics("price").number(mean=True)]


PRICE = {"integer_property_filter": {"property_name": "price", "operator": "<", "value": 30}}
LATE = {"boolean_property_filter": {"property_name": "open_late", "operator": "=", "value": True}}
MEAN = {"integer_property_aggregation": {"property_name": "price", "metrics": "MEAN"}}
CHEAP = "Filter.by_property('price').less_than(30.0)"
LATE_SRC = "Filter.by_property('open_late').equal(True)"
MEAN_SRC = "[Metrics('price').number(mean=True)]"
SCORE = "MetadataQuery(score=True)"

OPERATOR_CLASSES: list[OperatorClass] = [
    OperatorClass(
        "search",
        {"search_query": Q},
        [f"collection.query.hybrid('{Q}', limit=10, return_metadata={SCORE})"],
        lambda c: c.query.hybrid(Q, limit=10, return_metadata=MetadataQuery(score=True)),
    ),
    OperatorClass(
        "filter",
        PRICE,
        [f"collection.query.fetch_objects(limit=11, filters=Filter.all_of([{CHEAP}, {CHEAP}]), sort=Sort.by_id())"],
        lambda c: c.query.fetch_objects(limit=11, filters=Filter.all_of([_cheap(), _cheap()]), sort=Sort.by_id()),
    ),
    OperatorClass(
        "aggregate",
        MEAN,
        [f"collection.aggregate.over_all(return_metrics={MEAN_SRC}, total_count=True)"],
        lambda c: c.aggregate.over_all(return_metrics=_mean(), total_count=True),
    ),
    OperatorClass(
        "group_by",
        {"groupby_property": "cuisine"},
        [
            "collection.aggregate.over_all(group_by=GroupByAggregate(prop='cuisine', limit=1000), total_count=True)",
            f"collection.query.fetch_objects(limit=250, after='{NIL}')",
        ],
        lambda c: (
            c.aggregate.over_all(group_by=GroupByAggregate(prop="cuisine", limit=1000), total_count=True),
            c.query.fetch_objects(limit=250, after=NIL),
        ),
    ),
    OperatorClass(
        "search+filter",
        {"search_query": Q, **LATE},
        [f"collection.query.hybrid('{Q}', limit=10, filters={LATE_SRC}, return_metadata={SCORE})"],
        lambda c: c.query.hybrid(Q, limit=10, filters=_late(), return_metadata=MetadataQuery(score=True)),
    ),
    OperatorClass(
        "filter+aggregate",
        {**PRICE, **LATE, **MEAN},
        [
            f"collection.aggregate.over_all(filters=Filter.all_of([{CHEAP}, {LATE_SRC}]), "
            f"return_metrics={MEAN_SRC}, total_count=True)"
        ],
        lambda c: c.aggregate.over_all(
            filters=Filter.all_of([_cheap(), _late()]), return_metrics=_mean(), total_count=True
        ),
    ),
    OperatorClass(
        "search+aggregate",
        {"search_query": Q, **MEAN},
        [f"collection.aggregate.hybrid('{Q}', object_limit=100, return_metrics={MEAN_SRC}, total_count=True)"],
        lambda c: c.aggregate.hybrid(Q, object_limit=100, return_metrics=_mean(), total_count=True),
    ),
    OperatorClass(
        "filter+aggregate+group_by",
        {**LATE, **MEAN, "groupby_property": "cuisine"},
        [
            f"collection.aggregate.over_all(filters={LATE_SRC}, group_by=GroupByAggregate(prop='cuisine', "
            f"limit=1000), return_metrics={MEAN_SRC}, total_count=True)"
        ],
        lambda c: c.aggregate.over_all(
            filters=_late(),
            group_by=GroupByAggregate(prop="cuisine", limit=1000),
            return_metrics=_mean(),
            total_count=True,
        ),
    ),
    OperatorClass(
        "search+filter+aggregate+group_by",
        {"search_query": Q, **PRICE, **MEAN, "groupby_property": "cuisine"},
        [
            f"collection.aggregate.hybrid('{Q}', object_limit=100, filters={CHEAP}, "
            f"group_by=GroupByAggregate(prop='cuisine', limit=1000), return_metrics={MEAN_SRC}, total_count=True)"
        ],
        lambda c: c.aggregate.hybrid(
            Q,
            object_limit=100,
            filters=_cheap(),
            group_by=GroupByAggregate(prop="cuisine", limit=1000),
            return_metrics=_mean(),
            total_count=True,
        ),
    ),
]


def open_client() -> Any:
    """The stack of `dbgorilla up` (or WEAVIATE_URL), as everywhere else."""
    return connect(Settings())


def prepare(client: Any, size: int, *, reuse: bool, echo: Callable[[str], None] = print) -> str:
    """Create (or, with `reuse`, keep) `BenchExec<size>` holding `size` sample objects."""
    name = f"{PREFIX}{size}"
    if reuse and client.collections.exists(name):
        count = client.collections.use(name).aggregate.over_all(total_count=True).total_count
        if count == size:
            echo(f"reusing {name} ({size} objects)")
            return name
    echo(f"creating {name} with {size} objects (server-side vectorization)...")
    create_sample_collection(client, name, sample_objects(size, seed=size), batch_size=500)
    return name


def check_plans(executor: WeaviateExecutor, name: str) -> None:
    """Fail loudly if a hand-written call no longer matches what the executor sends."""
    for operator in OPERATOR_CLASSES:
        made = executor.plan({"collection_name": name, **operator.arguments}).rendered()
        if made != operator.rendered:
            raise SystemExit(f"{operator.name}: executor plan changed:\n  {made}\n  expected {operator.rendered}")
