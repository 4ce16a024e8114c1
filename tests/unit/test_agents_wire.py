"""`dbgorilla serve`'s wire format, read by weaviate-agents' own response models, and its cluster check.

Calls are checked by the reference executor of the restaurants use case; what the server writes must
validate as the client's `QueryResultWithCollectionNormalized` and `AggregationResultWithCollectionNormalized`,
and a search the client sends back must run as the same call.
"""

from __future__ import annotations

from typing import Any

import pytest
from weaviate.classes.query import Filter
from weaviate_agents.classes import QueryAgentCollectionConfig
from weaviate_agents.query.classes.response import (
    AggregationResultWithCollectionNormalized,
    QueryResultWithCollectionNormalized,
)

from dbgorilla.doors.agents_api import Refused, check_cluster, deltas
from dbgorilla.doors.agents_wire import WireError, aggregations_of, arguments_of, collections_of, search_of
from executors import compare_results
from fixtures.authoring.compound import CompoundComposer

CALLS: list[dict[str, Any]] = [
    {
        "collection_name": "Restaurants",
        "text_property_filter": {"property_name": "cuisine", "operator": "=", "value": "Italian"},
    },
    {
        "collection_name": "Restaurants",
        "search_query": "live music",
        "conditions": [
            {"property_name": "averageRating", "operator": "between", "value": 3.5, "value_to": 4.5},
            {"property_name": "openNow", "operator": "=", "value": True},
        ],
    },
    {
        "collection_name": "Restaurants",
        "conditions": [
            {"property_name": "cuisine", "operator": "=", "value": "Thai"},
            {"property_name": "cuisine", "operator": "=", "value": "Italian"},
        ],
        "match": "any",
        "sort": {"property_name": "averageRating", "order": "descending", "limit": 5},
    },
    {
        "collection_name": "Reservations",
        "conditions": [
            {"property_name": "reservationDate", "operator": "between", "value": "2025-03", "value_to": "2025-04"}
        ],
    },
]


@pytest.fixture(scope="module")
def composer() -> CompoundComposer:
    return CompoundComposer("restaurants")


@pytest.mark.parametrize("call", CALLS)
def test_a_search_is_the_clients_and_runs_again_as_the_same_call(
    composer: CompoundComposer, call: dict[str, Any]
) -> None:
    written = search_of(composer.executor.validate(call))
    parsed = QueryResultWithCollectionNormalized.model_validate(written)  # the client's own model
    sent_back = parsed.model_dump(mode="json")  # what its `.next()` posts
    again = arguments_of(sent_back, limit=call.get("sort", {}).get("limit", 20))
    assert shape(composer.executor.validate(again)) == shape(composer.executor.validate(call))
    if "search_query" not in call:  # the reference executor searches only with an embedder
        assert compare_results(composer.run(call), composer.run(again)) == []


def shape(spec: Any) -> tuple[Any, ...]:
    """What a checked call runs: its search, its filters, its alternatives and its sort."""

    def filters(group: Any) -> list[tuple[str, str, str]]:
        return sorted((f.prop.name, f.operator, str(f.value)) for f in group)

    sort = (spec.sort.prop.name, spec.sort.descending, spec.sort.limit) if spec.sort else None
    return spec.search_query, filters(spec.filters), sorted(filters(g) for g in spec.any_of), sort


def test_aggregations_are_one_property_and_metric_each(composer: CompoundComposer) -> None:
    call = {
        "collection_name": "Restaurants",
        "boolean_property_filter": {"property_name": "openNow", "operator": "=", "value": True},
        "integer_property_aggregation": {"property_name": "averageRating", "metrics": "MAX"},
        "groupby_property": "cuisine",
    }
    (written,) = aggregations_of(composer.executor.validate(call))
    parsed = AggregationResultWithCollectionNormalized.model_validate(written)
    assert parsed.groupby_property == "cuisine" and parsed.aggregation.metrics.value == "MAXIMUM"
    bare = aggregations_of(
        composer.executor.validate({"collection_name": "Restaurants", "groupby_property": "cuisine"})
    )
    assert AggregationResultWithCollectionNormalized.model_validate(bare[0]).aggregation.metrics.value == "COUNT"


def test_collections_and_additional_filters() -> None:
    config = QueryAgentCollectionConfig(
        name="Restaurants",
        additional_filters=Filter.by_property("cuisine").equal("Thai")
        & Filter.by_property("averageRating").greater_than(3),
    )
    names, scope = collections_of([config.model_dump(mode="json"), "MenuItems"])
    assert names == ["Restaurants", "MenuItems"] and scope is not None
    assert [(f.property_name, f.operator, f.value) for f in scope.filters["Restaurants"]] == [
        ("cuisine", "=", "Thai"),
        ("averageRating", ">", 3),
    ]
    assert scope.filters["MenuItems"] == []  # named, so in scope, unfiltered
    assert collections_of(["Restaurants"]) == (["Restaurants"], None)
    either = QueryAgentCollectionConfig(
        name="Restaurants",
        additional_filters=Filter.by_property("cuisine").equal("Thai") | Filter.by_property("cuisine").equal("Greek"),
    )
    for unserved in (
        either.model_dump(mode="json"),
        {"name": "Restaurants", "tenant": "acme"},
        {"name": "Restaurants", "target_vector": "title"},
        {"name": "Restaurants", "view_properties": ["cuisine"]},
    ):
        with pytest.raises(WireError):
            collections_of([unserved])
    with pytest.raises(WireError):
        collections_of([])


@pytest.mark.parametrize(
    ("named", "allowed"),
    [
        ("http://localhost:8080", True),
        ("http://127.0.0.1:8080", True),
        ("http://[::1]:8080", True),
        ("http://localhost:8081", False),
        ("http://10.0.0.2:8080", False),
        ("https://cluster.weaviate.cloud", False),
        ("https://localhost:8080", False),
        (None, False),
    ],
)
def test_only_this_servers_weaviate_is_served(named: str | None, allowed: bool) -> None:
    if allowed:
        check_cluster(named, "http://127.0.0.1:8080")
    else:
        with pytest.raises(Refused):
            check_cluster(named, "http://127.0.0.1:8080")


def test_the_answer_streams_in_pieces_that_add_up() -> None:
    text = "The average rating of the 27 Italian restaurants is 4.02."
    assert "".join(deltas(text)) == text and len(list(deltas(text))) > 1
    assert "".join(deltas("")) == ""
