"""Argument match, execution match and case selection, without a server."""

from __future__ import annotations

from collections import Counter

import pytest

from evaluation.argument_match import score_arguments
from evaluation.execution_match import compare, vacuity
from evaluation.selection import select_cases
from executors import GroupResult, QueryResult, ResultObject, SearchMode
from fixtures.datasets import read_dataset

TRUTH = {
    "collection_name": "Menus",
    "search_query": "spicy soup",
    "integer_property_filter": {"property_name": "price", "operator": "<", "value": 20},
    "text_property_aggregation": {"property_name": "name", "metrics": "TOP_OCCURRENCES", "top_occurrences_limit": 3},
}


def test_numbers_normalise_and_search_matches_on_presence() -> None:
    predicted = {
        **TRUTH,
        "search_query": "soup that is spicy",
        "integer_property_filter": {"property_name": "price", "operator": "<", "value": 20.0},
    }
    scores = score_arguments(TRUTH, predicted)
    assert scores["exact_match"] and scores["ast_score"] == 1.0
    assert 0 < scores["search_similarity"] < 1


@pytest.mark.parametrize(
    ("change", "ast", "lenient"),
    [
        ({"collection_name": "Drinks"}, 0.0, 0.0),
        ({"search_query": None}, 0.85, 1.0),  # a missing component is a mismatch; the reference skipped it
        ({"groupby_property": "name"}, 0.85, 1.0),  # so is an extra one
        ({"integer_property_filter": {"property_name": "price", "operator": "<=", "value": 20}}, 0.85, 0.85),
        ({"text_property_aggregation": {"property_name": "name", "metrics": "COUNT"}}, 0.85, 0.85),
    ],
)
def test_ast_score_uses_the_papers_weights(change: dict, ast: float, lenient: float) -> None:
    predicted = {k: v for k, v in {**TRUTH, **change}.items() if v is not None}
    scores = score_arguments(TRUTH, predicted)
    assert scores["ast_score"] == pytest.approx(ast) and scores["ast_score_lenient"] == pytest.approx(lenient)
    assert not scores["exact_match"]


def test_no_prediction_scores_zero_and_marks_every_component_wrong() -> None:
    scores = score_arguments(TRUTH, None)
    assert scores["ast_score"] == 0 and not scores["routing"]
    assert scores["components"] == {"search": False, "integer_filter": False, "text_aggregation": False}


def _objects(uuids: list[str], search: bool = False) -> QueryResult:
    return QueryResult(
        collection="Menus",
        operator_class="search" if search else "filter",
        search_mode=SearchMode.HYBRID if search else None,
        objects=[ResultObject(uuid=u, rank=i + 1 if search else None) for i, u in enumerate(uuids)],
    )


def test_object_sets_exact_and_subset() -> None:
    assert compare(_objects(["a", "b"]), _objects(["b", "a"])).exact
    wider = compare(_objects(["a", "b"]), _objects(["a", "b", "c"]))
    assert not wider.exact and wider.subset
    assert not compare(_objects(["a", "b"]), _objects(["a"])).subset


def test_search_compares_top_k_sets_and_reports_recall() -> None:
    swapped = compare(_objects(["a", "b", "c"], True), _objects(["b", "a", "c", "d"], True))
    assert swapped.exact and swapped.recall == 1.0
    partial = compare(_objects(["a", "b", "c"], True), _objects(["a", "x", "y", "b", "c"], True))
    assert not partial.exact and partial.subset and partial.recall == pytest.approx(1 / 3)


def test_aggregates_within_tolerance_and_groups_per_group() -> None:
    def aggregate(value: float) -> QueryResult:
        return QueryResult(
            collection="Menus", operator_class="aggregate", aggregations={"price": {"MEAN": value}}, total_count=4
        )

    assert compare(aggregate(12.5), aggregate(12.5 * (1 + 1e-9))).exact
    assert not compare(aggregate(12.5), aggregate(12.6)).subset

    def groups(counts: dict[str, int]) -> QueryResult:
        return QueryResult(
            collection="Menus",
            operator_class="group_by",
            group_by="name",
            groups={k: GroupResult(value=k, count=v) for k, v in counts.items()},
        )

    assert compare(groups({"x": 2, "y": 1}), groups({"y": 1, "x": 2})).exact
    more = compare(groups({"x": 2}), groups({"x": 2, "y": 1}))
    assert not more.exact and more.subset
    assert not compare(groups({"x": 2}), groups({"x": 3})).subset


def test_shapes_and_collections_must_agree() -> None:
    other = _objects(["a"]).model_copy(update={"collection": "Drinks"})
    assert not compare(_objects(["a"]), other).subset
    aggregate = QueryResult(collection="Menus", operator_class="aggregate", aggregations={"price": {"MAX": 3.0}})
    assert not compare(aggregate, _objects(["a"])).subset


def test_vacuity() -> None:
    assert vacuity(_objects([]), 10) == "empty"
    assert vacuity(_objects([str(i) for i in range(10)]), 10) == "all_objects"
    assert vacuity(_objects(["a"]), 10) is None
    assert vacuity(_objects([str(i) for i in range(10)], search=True), 10) is None


def test_default_subset_spans_every_collection_level_and_component() -> None:
    cases = read_dataset().cases
    subset = select_cases(cases)
    assert len(subset) == 15 and len({c.collection for c in subset}) == 15
    assert Counter(c.complexity for c in subset) == {"simple": 5, "moderate": 5, "complex": 5}
    assert {x for c in subset for x in c.components} == {x for c in cases for x in c.components}
    assert select_cases(cases, limit=0) == cases and len(select_cases(cases, ["restaurants"], 0)) == 63
