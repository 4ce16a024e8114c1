"""The `related` operations on a live Weaviate: `Filter.by_ref`, date filters and `Sort.by_property`
give what the reference executor says, over a loaded, linked use case; each typed error is raised
before Weaviate is asked; the paper's tool on the same data is the paper's tool."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from executors import ExecutorError, ReferenceExecutor, WeaviateExecutor, compare_results
from executors.errors import InvalidDateError, UnknownReferenceError, UnsortablePropertyError
from executors.options import COMPLETE_RESULTS
from executors.vocabulary import ToolOperations
from fixtures import UseCase, drop_use_cases, get_use_case, load_schemas

pytestmark = pytest.mark.integration
PREFIX = f"Rx{uuid.uuid4().hex[:6]}"
RELATED = ToolOperations.RELATED


@pytest.fixture(scope="module")
def linked(weaviate_stack: Any) -> Iterator[tuple[UseCase, Any]]:
    from dbgorilla.connection import connect

    case = get_use_case("restaurants").with_prefix(PREFIX)
    with connect(weaviate_stack.settings) as client:
        assert load_schemas(client, [case], 100).ok
        try:
            yield case, client
        finally:
            drop_use_cases(client, [case])


def calls(p: str) -> list[dict[str, Any]]:
    reservations, menu = f"{p}Reservations", f"{p}MenuItems"
    by_ref = {"reference": "restaurant", "property_name": "cuisine", "operator": "=", "value": "Italian"}
    return [
        {"collection_name": reservations, "reference_filter": by_ref},
        {
            "collection_name": reservations,
            "reference_filter": {
                "reference": "restaurant",
                "property_name": "averageRating",
                "operator": ">",
                "value": 4.5,
            },
            "integer_property_aggregation": {"property_name": "partySize", "metrics": "MEAN"},
        },
        {
            "collection_name": menu,
            "reference_filter": {"reference": "restaurant", "property_name": "openNow", "operator": "=", "value": True},
            "groupby_property": "course",
            "integer_property_aggregation": {"property_name": "price", "metrics": "MAX"},
        },
        {
            "collection_name": reservations,
            "date_filter": {"property_name": "reservationDate", "operator": "after", "value": "2025-11-01"},
        },
        {
            "collection_name": reservations,
            "date_filter": {
                "property_name": "reservationDate",
                "operator": "between",
                "value": "2025-03-01T00:00:00Z",
                "value_to": "2025-05-31",
            },
            "boolean_property_aggregation": {"property_name": "confirmed", "metrics": "PERCENTAGE_TRUE"},
        },
        {
            "collection_name": reservations,
            "date_filter": {
                "property_name": "reservationDate",
                "operator": "before",
                "value": "2025-04-01T12:00:00+02:00",
            },
            "text_property_aggregation": {"property_name": "occasion", "metrics": "TOP_OCCURRENCES"},
        },
        {
            "collection_name": reservations,
            "sort": {"property_name": "reservationDate", "order": "descending", "limit": 5},
        },
        {"collection_name": menu, "sort": {"property_name": "price", "order": "ascending", "limit": 7}},
        {
            "collection_name": menu,
            "boolean_property_filter": {"property_name": "isVegetarian", "operator": "=", "value": True},
            "reference_filter": by_ref,
            "sort": {"property_name": "price", "order": "descending", "limit": 3},
        },
        {  # an aggregation over the sort's first objects: the average price of the 3 priciest vegetarian dishes
            "collection_name": menu,
            "boolean_property_filter": {"property_name": "isVegetarian", "operator": "=", "value": True},
            "integer_property_aggregation": {"property_name": "price", "metrics": "MEAN"},
            "sort": {"property_name": "price", "order": "descending", "limit": 3},
        },
        {
            "collection_name": reservations,
            "text_property_aggregation": {"property_name": "occasion", "metrics": "TOP_OCCURRENCES"},
            "sort": {"property_name": "reservationDate", "order": "ascending", "limit": 10},
        },
        {
            "collection_name": reservations,
            "integer_property_filter": {"property_name": "partySize", "operator": ">=", "value": 6},
            "date_filter": {"property_name": "reservationDate", "operator": "after", "value": "2025-06-30"},
            "sort": {"property_name": "partySize", "order": "descending", "limit": 4},
        },
    ]


def test_live_and_reference_agree_on_every_related_operation(linked: tuple[UseCase, Any]) -> None:
    case, client = linked
    live = WeaviateExecutor(client, COMPLETE_RESULTS, operations=RELATED)
    reference = ReferenceExecutor.from_weaviate(
        client, [c.name for c in case.collections], COMPLETE_RESULTS, operations=RELATED
    )
    for arguments in calls(PREFIX):
        got, want = live.execute(arguments), reference.execute(arguments)
        assert compare_results(want, got) == [], arguments
        if "sort" in arguments:  # the order is the result
            assert [o.uuid for o in got.objects] == [o.uuid for o in want.objects]
            assert [o.properties for o in got.objects] == [o.properties for o in want.objects]
        assert 0 < (got.total_count or len(got.groups or {})) < 100 or "sort" in arguments, arguments


def test_an_aggregation_with_a_sort_runs_over_the_objects_the_sort_lists(linked: tuple[UseCase, Any]) -> None:
    _, client = linked
    live = WeaviateExecutor(client, operations=RELATED)
    sort = {"property_name": "partySize", "order": "descending", "limit": 4}
    listed = live.execute({"collection_name": f"{PREFIX}Reservations", "sort": sort})
    mean = {"property_name": "partySize", "metrics": "MEAN"}
    got = live.execute({"collection_name": f"{PREFIX}Reservations", "sort": sort, "integer_property_aggregation": mean})
    sizes = [float(o.properties["partySize"]) for o in listed.objects]
    assert got.total_count == len(sizes) == 4
    assert got.aggregations["partySize"]["MEAN"] == pytest.approx(sum(sizes) / len(sizes))
    everything = live.execute({"collection_name": f"{PREFIX}Reservations", "integer_property_aggregation": mean})
    assert got.aggregations["partySize"]["MEAN"] > everything.aggregations["partySize"]["MEAN"]
    assert "the first 4 are aggregated" in got.to_llm_text()


def test_results_show_references_and_dates(linked: tuple[UseCase, Any]) -> None:
    _, client = linked
    live = WeaviateExecutor(client, operations=RELATED)
    listed = live.execute({"collection_name": f"{PREFIX}Reservations"})
    assert all(o.properties["restaurant"] and o.properties["reservationDate"] for o in listed.objects)
    text = listed.to_llm_text()
    assert "reservationDate" in text and "restaurant" in text
    tools_view = live.schema.get(f"{PREFIX}Reservations")
    assert tools_view is not None and [r.targets for r in tools_view.references] == [(f"{PREFIX}Restaurants",)]


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        (
            {"reference_filter": {"reference": "eatery", "property_name": "cuisine", "operator": "=", "value": "Thai"}},
            UnknownReferenceError,
        ),
        (
            {"date_filter": {"property_name": "reservationDate", "operator": "before", "value": "01/03/2025"}},
            InvalidDateError,
        ),
        ({"sort": {"property_name": "specialRequests", "order": "ascending", "limit": 3}}, UnsortablePropertyError),
    ],
)
def test_typed_errors_live(linked: tuple[UseCase, Any], arguments: dict[str, Any], error: type[ExecutorError]) -> None:
    _, client = linked
    live = WeaviateExecutor(client, operations=RELATED)
    with pytest.raises(error):
        live.execute({"collection_name": f"{PREFIX}Reservations", **arguments})


def test_the_paper_tool_sees_the_data_as_before(linked: tuple[UseCase, Any]) -> None:
    _, client = linked
    paper = WeaviateExecutor(client)
    schema = paper.schema.get(f"{PREFIX}Reservations")
    assert schema is not None and not schema.references
    assert [p.name for p in schema.properties] == ["occasion", "specialRequests", "partySize", "confirmed"]
    listed = paper.execute({"collection_name": f"{PREFIX}Reservations"})
    assert all(set(o.properties) == {"occasion", "specialRequests", "partySize", "confirmed"} for o in listed.objects)
    with pytest.raises(ExecutorError, match="'date_filter' is not an argument"):
        paper.execute(
            {
                "collection_name": f"{PREFIX}Reservations",
                "date_filter": {"property_name": "reservationDate", "operator": "after", "value": "2025-01-01"},
            }
        )
