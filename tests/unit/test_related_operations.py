"""The `related` operations without a server: the tool's schema, validation and typed errors, the
reference executor's semantics, equivalence, and that the paper's tool is unchanged by any of it."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import pytest

from agent.tooldef import ToolDesign, build_tools, schema_limit_violations
from executors import ExecutorError, tool_parameters_schema
from executors.equivalence import canonical_form
from executors.errors import (
    InvalidArgumentsError,
    InvalidDateError,
    TypeMismatchError,
    UnknownPropertyError,
    UnknownReferenceError,
    UnsortablePropertyError,
)
from executors.options import COMPLETE_RESULTS
from executors.reference import DataObject, ReferenceExecutor
from executors.vocabulary import ToolOperations
from fixtures.generator import generate_objects
from fixtures.use_cases import database_schema_of, get_use_case, get_use_cases

RELATED = ToolOperations.RELATED


def snapshot(use_case: str = "restaurants") -> dict[str, list[DataObject]]:
    """The generated objects as Weaviate stores them: properties, dates, and each link's target id."""
    case = get_use_case(use_case)
    return {
        c.name: [
            DataObject(
                uuid=str(o.uuid),
                properties={**o.stored_properties(), **{k: str(v) for k, v in o.references.items()}},
            )
            for o in generate_objects(c)
        ]
        for c in case.collections
    }


@pytest.fixture(scope="module")
def executor() -> ReferenceExecutor:
    case = get_use_case("restaurants")
    return ReferenceExecutor(database_schema_of([case]), snapshot(), COMPLETE_RESULTS, operations=RELATED)


def test_the_paper_tool_schema_and_description_are_unchanged() -> None:
    schema = tool_parameters_schema(["Restaurants"])
    assert "sort" not in schema["properties"] and "date_filter" not in schema["properties"]
    paper = database_schema_of(get_use_cases()).for_operations(ToolOperations.PAPER)
    tools = build_tools(paper)
    assert "reservationDate" not in tools.description and "reference" not in tools.description
    assert all(not c.references and not c.dates() for c in paper.collections)


def test_the_related_tool_adds_three_optional_slots_within_provider_limits() -> None:
    schema = tool_parameters_schema(["Restaurants"], operations=RELATED)
    assert list(schema["properties"])[-4:] == ["reference_filter", "date_filter", "sort", "collection_name"]
    assert schema["required"] == ["collection_name"]
    assert schema_limit_violations(schema) == []
    tools = build_tools(database_schema_of(get_use_cases()), ToolDesign(operations=RELATED))
    assert "reservationDate (date)" in tools.description
    assert "restaurant (reference to Restaurants)" in tools.description
    assert tools.design.label() == "unified+related"


def test_a_reference_filter_keeps_objects_whose_target_matches(executor: ReferenceExecutor) -> None:
    data = snapshot()
    italian = {o.uuid for o in data["Restaurants"] if o.properties["cuisine"] == "Italian"}
    expected = {o.uuid for o in data["Reservations"] if o.properties["restaurant"] in italian}
    result = executor.execute(
        {
            "collection_name": "Reservations",
            "reference_filter": {
                "reference": "restaurant",
                "property_name": "cuisine",
                "operator": "=",
                "value": "Italian",
            },
            "integer_property_aggregation": {"property_name": "partySize", "metrics": "COUNT"},
        }
    )
    assert 0 < len(expected) < 100
    assert result.total_count == len(expected)
    assert "Filter.by_ref(link_on='restaurant').by_property('cuisine').equal('Italian')" in result.calls[0]


def test_date_filters_and_sort_match_a_plain_reading_of_the_data(executor: ReferenceExecutor) -> None:
    data = snapshot()["Reservations"]
    march = [o for o in data if o.properties["reservationDate"].startswith("2025-03")]
    result = executor.execute(
        {
            "collection_name": "Reservations",
            "date_filter": {
                "property_name": "reservationDate",
                "operator": "between",
                "value": "2025-03-01",
                "value_to": "2025-03-31",
            },
            "sort": {"property_name": "reservationDate", "order": "descending", "limit": 3},
        }
    )
    latest = sorted(march, key=lambda o: o.properties["reservationDate"], reverse=True)[:3]
    assert [o.uuid for o in result.objects] == [o.uuid for o in latest]
    assert result.total_count == len(march) and result.truncated
    before = executor.execute(
        {
            "collection_name": "Reservations",
            "date_filter": {"property_name": "reservationDate", "operator": "before", "value": "2025-02-01T00:00:00Z"},
            "integer_property_aggregation": {"property_name": "partySize", "metrics": "COUNT"},
        }
    )
    assert before.total_count == sum(o.properties["reservationDate"] < "2025-02-01" for o in data)
    top = executor.execute(
        {"collection_name": "MenuItems", "sort": {"property_name": "price", "order": "ascending", "limit": 5}}
    )
    prices = sorted((o.properties["price"], o.uuid) for o in snapshot()["MenuItems"])[:5]
    assert [o.uuid for o in top.objects] == [uid for _, uid in prices]
    assert all("restaurant" in o.properties for o in top.objects)  # results show references


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        (
            {"reference_filter": {"reference": "place", "property_name": "cuisine", "operator": "=", "value": "x"}},
            UnknownReferenceError,
        ),
        (
            {"reference_filter": {"reference": "restaurant", "property_name": "chef", "operator": "=", "value": "x"}},
            UnknownPropertyError,
        ),
        (
            {"date_filter": {"property_name": "reservationDate", "operator": "after", "value": "March 3rd"}},
            InvalidDateError,
        ),
        (
            {"date_filter": {"property_name": "reservationDate", "operator": "after", "value": "2025-13-45"}},
            InvalidDateError,
        ),
        (
            {
                "date_filter": {
                    "property_name": "reservationDate",
                    "operator": "between",
                    "value": "2025-05-01",
                    "value_to": "2025-04-01",
                }
            },
            InvalidDateError,
        ),
        (
            {"date_filter": {"property_name": "reservationDate", "operator": "between", "value": "2025-05-01"}},
            InvalidArgumentsError,
        ),
        (
            {"date_filter": {"property_name": "partySize", "operator": "after", "value": "2025-05-01"}},
            TypeMismatchError,
        ),
        ({"sort": {"property_name": "occasion", "order": "ascending", "limit": 3}}, UnsortablePropertyError),
        ({"sort": {"property_name": "confirmed", "order": "ascending", "limit": 3}}, UnsortablePropertyError),
        (
            {"sort": {"property_name": "partySize", "order": "ascending", "limit": 3}, "search_query": "a birthday"},
            InvalidArgumentsError,
        ),
        (
            {"sort": {"property_name": "partySize", "order": "ascending", "limit": 3}, "groupby_property": "occasion"},
            InvalidArgumentsError,
        ),
    ],
)
def test_typed_errors(executor: ReferenceExecutor, arguments: dict[str, Any], error: type[ExecutorError]) -> None:
    with pytest.raises(error) as raised:
        executor.execute({"collection_name": "Reservations", **arguments})
    assert raised.value.field is not None and raised.value.message


def test_errors_name_the_way_out(executor: ReferenceExecutor) -> None:
    with pytest.raises(UnknownReferenceError, match=r"Its references: restaurant \(reference to Restaurants\)"):
        executor.execute(
            {
                "collection_name": "Reservations",
                "reference_filter": {
                    "reference": "restaurants",
                    "property_name": "cuisine",
                    "operator": "=",
                    "value": "x",
                },
            }
        )
    with pytest.raises(
        UnsortablePropertyError, match="Sortable properties of 'Reservations': partySize, reservationDate"
    ):
        executor.execute(
            {"collection_name": "Reservations", "sort": {"property_name": "occasion", "order": "ascending", "limit": 1}}
        )


def test_the_paper_operations_refuse_the_new_slots_and_hide_dates_and_links(executor: ReferenceExecutor) -> None:
    paper = executor.with_operations(ToolOperations.PAPER)
    with pytest.raises(InvalidArgumentsError, match="'sort' is not an argument"):
        paper.execute(
            {"collection_name": "MenuItems", "sort": {"property_name": "price", "order": "ascending", "limit": 5}}
        )
    with pytest.raises(UnknownPropertyError):
        paper.execute({"collection_name": "Reservations", "groupby_property": "reservationDate"})
    listed = paper.execute({"collection_name": "Reservations"})
    assert all(set(o.properties) == {"occasion", "specialRequests", "partySize", "confirmed"} for o in listed.objects)


def test_equivalent_date_forms_have_one_canonical_form(executor: ReferenceExecutor) -> None:
    def form(value: str) -> dict[str, Any]:
        arguments = {
            "collection_name": "Reservations",
            "date_filter": {"property_name": "reservationDate", "operator": "after", "value": value},
        }
        return canonical_form(executor.validate(arguments))

    assert form("2025-03-01") == form("2025-03-01T00:00:00Z") == form("2025-03-01T01:00:00+01:00")
    assert form("2025-03-01") != form("2025-03-02")
    sort = {"collection_name": "MenuItems", "sort": {"property_name": "price", "order": "ascending", "limit": 5}}
    other = {**sort, "sort": {**sort["sort"], "limit": 6}}
    assert canonical_form(executor.validate(sort)) != canonical_form(executor.validate(other))


def test_related_streams_leave_every_paper_value_as_it_was() -> None:
    """The dates and links come from their own random streams: the objects' paper properties are
    those of the generator before them (a digest of every value of every use case, 100 objects each)."""
    import hashlib

    digest = hashlib.sha256()
    for case in get_use_cases():
        for collection in case.collections:
            for obj in generate_objects(collection):
                digest.update(json.dumps([str(obj.uuid), obj.properties, obj.topic], sort_keys=True).encode())
    assert digest.hexdigest() == PAPER_VALUES_DIGEST


def test_dates_are_coherent() -> None:
    """An enrollment's date lies in the enrollment window of its term; dates are distinct minutes."""
    enrollments = get_use_case("courses").get_collection("Enrollments")
    assert enrollments is not None
    spec = enrollments.dates[0]
    moments = []
    for obj in generate_objects(enrollments):
        moment = datetime.fromisoformat(obj.dates["enrolledOn"].replace("Z", "+00:00"))
        low, high = spec.ranges[obj.properties["term"]]
        assert low <= moment <= high and moment.tzinfo == timezone.utc
        moments.append(moment)
    assert len(set(moments)) == len(moments)


#: sha256 of the paper properties before dates and references existed (measured on main, 1e5eb78).
PAPER_VALUES_DIGEST = "1f5bbf39c4bec5d9953f1ad2a496d608ef773493ed4d82906e2fceaaacaba89f"


def test_the_related_split_is_what_the_composer_writes() -> None:
    """60 questions (12 per use case) composed from the data; the committed file and its meta agree."""
    import hashlib

    from fixtures.authoring.related import compose
    from fixtures.datasets import SPLITS_DIR, read_dataset, read_meta
    from fixtures.datasets.cases import operations_needed

    path = SPLITS_DIR / "related.jsonl"
    composed = compose()
    assert [case.to_json_line() for case in composed] == path.read_text().splitlines()
    assert read_meta(path).sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    cases = read_dataset("related").cases
    assert len(cases) == 60 and operations_needed(cases) is ToolOperations.RELATED
    slots = [set(c.ground_truth.to_tool_arguments()) for c in cases if not c.chain]
    assert sum("reference_filter" in s for s in slots) == 15
    assert sum("date_filter" in s for s in slots) == 15
    assert sum("sort" in s for s in slots) == 15
    chains = [c for c in cases if c.chain]
    assert len(chains) == 15
    assert all(c.chain[0].call["collection_name"] != c.chain[-1].call["collection_name"] for c in chains)
    assert all("reference_filter" in c.chain[-1].call for c in chains)
    assert not any('"' in c.query or "_" in c.query for c in cases)  # no quoted arguments, no property names
