"""Against the session's live Weaviate: server-side vectorization and every query kind we rely on."""

from __future__ import annotations

from typing import Any

import pytest
from weaviate.classes.aggregate import GroupByAggregate
from weaviate.classes.query import Filter, GroupBy, Metrics

from dbgorilla.smoke import SMOKE_OBJECTS, create_smoke_collection

pytestmark = pytest.mark.integration
NAME = "LiveFeatureCheck"


@pytest.fixture()
def collection(client: Any) -> Any:
    created = create_smoke_collection(client, NAME)
    yield created
    client.collections.delete(NAME)


def names(response: Any) -> list[str]:
    return [o.properties["name"] for o in response.objects]


def test_objects_are_vectorized_server_side(collection: Any) -> None:
    assert collection.aggregate.over_all(total_count=True).total_count == len(SMOKE_OBJECTS)
    objects = collection.query.fetch_objects(include_vector=True, limit=10).objects
    assert all(len(o.vector["default"]) == 384 for o in objects)
    first = objects[0].vector["default"]
    assert abs(sum(x * x for x in first) - 1.0) < 1e-3, "MiniLM vectors are L2-normalised"


def test_bm25_ranks_the_keyword_match_first(collection: Any) -> None:
    assert names(collection.query.bm25("sushi", limit=2))[0] == "Sakura Bar"


def test_near_text_finds_meaning_without_shared_words(collection: Any) -> None:
    # No object contains "noodles" or "Italy": only the embedding can link them to the trattoria.
    assert names(collection.query.near_text("noodles from Italy", limit=1)) == ["Trattoria Sole"]
    assert names(collection.query.near_text("raw fish", limit=1)) == ["Sakura Bar"]


def test_hybrid_combines_both(collection: Any) -> None:
    top = names(collection.query.hybrid("spicy", limit=2))
    assert set(top) == {"Taco Loco", "Curry House"}


def test_filters_on_each_type(collection: Any) -> None:
    by_number = collection.query.fetch_objects(filters=Filter.by_property("rating").greater_or_equal(4.5))
    assert set(names(by_number)) == {"Trattoria Sole", "Sakura Bar", "Le Petit Bistro"}
    by_text = collection.query.fetch_objects(filters=Filter.by_property("name").like("*Bistro*"))
    assert names(by_text) == ["Le Petit Bistro"]
    by_bool = collection.query.fetch_objects(filters=Filter.by_property("open_late").equal(True))
    assert set(names(by_bool)) == {"Trattoria Sole", "Taco Loco", "Curry House"}


def test_aggregate_over_all_and_grouped(collection: Any) -> None:
    ratings = [o["rating"] for o in SMOKE_OBJECTS]
    result = collection.aggregate.over_all(
        return_metrics=[
            Metrics("rating").number(mean=True, maximum=True, count=True),
            Metrics("open_late").boolean(total_true=True),
        ],
    )
    assert result.properties["rating"].mean == pytest.approx(sum(ratings) / len(ratings))
    assert result.properties["rating"].maximum == max(ratings)
    assert result.properties["open_late"].total_true == 3
    grouped = collection.aggregate.over_all(group_by=GroupByAggregate(prop="open_late"), total_count=True)
    assert {str(g.grouped_by.value).lower(): g.total_count for g in grouped.groups} == {"true": 3, "false": 3}


def test_query_group_by(collection: Any) -> None:
    response = collection.query.near_text(
        "dinner",
        group_by=GroupBy(prop="open_late", number_of_groups=2, objects_per_group=10),
        limit=10,
    )
    sizes = {str(name).lower(): len(group.objects) for name, group in response.groups.items()}
    assert sizes == {"true": 3, "false": 3}
