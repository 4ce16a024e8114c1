"""A tiny end-to-end check of a running stack: server-side vectorization and every query kind."""

from __future__ import annotations

from typing import Any

from weaviate.classes.aggregate import GroupByAggregate
from weaviate.classes.config import Configure, DataType, Property
from weaviate.classes.query import Filter, MetadataQuery, Metrics

from dbgorilla.config import Settings
from dbgorilla.connection import connect
from executors.index_health import wait_until_indexed
from executors.ownership import mark, require_ours

SMOKE_COLLECTION = "DbgorillaSmoke"
SMOKE_DATASET = "smoke"
SMOKE_OBJECTS = [
    {
        "name": "Trattoria Sole",
        "description": "Wood-fired pizza and fresh pasta in a cosy Italian trattoria",
        "rating": 4.6,
        "open_late": True,
    },
    {
        "name": "Sakura Bar",
        "description": "Omakase sushi and sashimi prepared by a Japanese chef",
        "rating": 4.8,
        "open_late": False,
    },
    {
        "name": "Taco Loco",
        "description": "Street tacos, burritos and spicy salsa from Mexico",
        "rating": 4.1,
        "open_late": True,
    },
    {
        "name": "Green Leaf",
        "description": "Vegan salads, grain bowls and cold-pressed juices",
        "rating": 3.9,
        "open_late": False,
    },
    {
        "name": "Curry House",
        "description": "Spicy Indian curries, tandoori chicken and naan bread",
        "rating": 4.3,
        "open_late": True,
    },
    {
        "name": "Le Petit Bistro",
        "description": "French bistro with steak frites, onion soup and red wine",
        "rating": 4.5,
        "open_late": False,
    },
]


def create_smoke_collection(client: Any, name: str = SMOKE_COLLECTION) -> Any:
    """(Re)create a collection with text, number and boolean properties, vectorized server-side.

    It carries the project's marker; a collection of that name without it is never replaced
    (`NotOurCollection`)."""
    if client.collections.exists(name):
        require_ours(client, name, action="replace the smoke collection")
        client.collections.delete(name)
    collection = client.collections.create(
        name,
        description=mark("A handful of restaurants used to check a running stack.", SMOKE_DATASET),
        vector_config=Configure.Vectors.text2vec_transformers(source_properties=["name", "description"]),
        properties=[
            Property(name="name", data_type=DataType.TEXT, description="Restaurant name"),
            Property(name="description", data_type=DataType.TEXT, description="What the restaurant serves"),
            Property(name="rating", data_type=DataType.NUMBER, description="Average rating, 0-5"),
            Property(name="open_late", data_type=DataType.BOOL, description="Open after 11pm"),
        ],
    )
    with collection.batch.fixed_size(batch_size=100) as batch:
        for item in SMOKE_OBJECTS:
            batch.add_object(properties=item)
    if collection.batch.failed_objects:
        raise RuntimeError(f"smoke import failed: {collection.batch.failed_objects[0].message}")
    wait_until_indexed(collection)
    return collection


def run_smoke(settings: Settings) -> dict[str, Any]:
    with connect(settings) as client:
        collection = create_smoke_collection(client)
        names = lambda response: [o.properties["name"] for o in response.objects]  # noqa: E731
        queries: dict[str, Any] = {
            "bm25 'sushi'": names(collection.query.bm25("sushi", limit=2)),
            "near_text 'noodles from Italy'": names(collection.query.near_text("noodles from Italy", limit=2)),
            "hybrid 'spicy food'": names(
                collection.query.hybrid("spicy food", limit=3, return_metadata=MetadataQuery(score=True))
            ),
            "filter rating > 4.4": names(
                collection.query.fetch_objects(filters=Filter.by_property("rating").greater_than(4.4))
            ),
            "aggregate mean rating": collection.aggregate.over_all(return_metrics=Metrics("rating").number(mean=True))
            .properties["rating"]
            .mean,
            "aggregate group_by open_late": {
                str(g.grouped_by.value).lower(): g.total_count
                for g in collection.aggregate.over_all(
                    group_by=GroupByAggregate(prop="open_late"), total_count=True
                ).groups
            },
        }
        client.collections.delete(SMOKE_COLLECTION)
    return {"collection": SMOKE_COLLECTION, "queries": queries}
