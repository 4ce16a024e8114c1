"""Test and benchmark support: a deterministic sample collection with every property kind.

Not used by the executors (which never write); tests and benchmarks call it to create their own
uniquely named collections. The objects have duplicates (MODE and TOP_OCCURRENCES ties), nulls
(COUNT semantics) and both text tokenizations:

- `title` (text, `word`): prose, vectorized, what searches hit
- `cuisine` (text, `field`): a small vocabulary, what filters and group-by use
- `price` (number), `seats` (int), `open_late` (boolean)
"""

from __future__ import annotations

import random
import uuid
from typing import Any

from executors.reference import DataObject

CUISINES = ("Italian", "Thai", "French", "Mexican", "Indian", "Japanese", "Greek")
ADJECTIVES = ("Cozy", "Busy", "Quiet", "Family", "Rustic", "Modern", "Tiny", "Grand")
DISHES = ("pizza", "noodles", "curry", "tacos", "sushi", "pasta", "salad", "soup", "dumplings")
PLACES = ("kitchen", "bistro", "bar", "cafe", "house", "diner", "corner", "garden")
PROPERTY_DESCRIPTIONS = {
    "title": "Name and specialty of the restaurant",
    "cuisine": "Cuisine of the restaurant",
    "price": "Average price of a meal in euros",
    "seats": "Number of seats",
    "open_late": "Open after 11pm",
}
_NAMESPACE = uuid.UUID("6f1c3f4e-2d7b-4b8e-9a51-0d3c8e4f7a10")


def sample_objects(count: int, seed: int = 0, null_rate: float = 0.08) -> list[DataObject]:
    """`count` restaurants, the same for the same seed, with about `null_rate` missing values."""
    rng = random.Random(seed)
    objects = []
    for index in range(count):
        cuisine = rng.choice(CUISINES)
        properties: dict[str, Any] = {
            "title": f"{rng.choice(ADJECTIVES)} {cuisine.lower()} {rng.choice(DISHES)} {rng.choice(PLACES)}",
            "cuisine": cuisine,
            "price": rng.randrange(10, 120) / 2,
            "seats": rng.randrange(2, 25) * 5,
            "open_late": rng.random() < 0.4,
        }
        for name in ("cuisine", "price", "seats", "open_late"):
            if rng.random() < null_rate:
                properties[name] = None
        objects.append(DataObject(uuid=str(uuid.uuid5(_NAMESPACE, f"{seed}-{index}")), properties=properties))
    return objects


def create_sample_collection(
    client: Any, name: str, objects: list[DataObject], *, vectorize: bool = True, batch_size: int = 200
) -> Any:
    """(Re)create `name` with the sample properties and insert `objects` with their UUIDs."""
    from weaviate.classes.config import Configure, DataType, Property, Tokenization
    from weaviate.classes.data import DataObject as WeaviateObject

    if client.collections.exists(name):
        client.collections.delete(name)
    vector_config = (
        Configure.Vectors.text2vec_transformers(source_properties=["title", "cuisine"])
        if vectorize
        else Configure.Vectors.self_provided()
    )
    collection = client.collections.create(
        name,
        description="Restaurants (executor test data)",
        vector_config=vector_config,
        properties=[
            Property(name="title", data_type=DataType.TEXT, tokenization=Tokenization.WORD),
            Property(name="cuisine", data_type=DataType.TEXT, tokenization=Tokenization.FIELD),
            Property(name="price", data_type=DataType.NUMBER),
            Property(name="seats", data_type=DataType.INT),
            Property(name="open_late", data_type=DataType.BOOL),
        ],
    )
    for start in range(0, len(objects), batch_size):
        chunk = [
            WeaviateObject(
                uuid=obj.uuid,
                properties={k: v for k, v in obj.properties.items() if v is not None},
                vector=None if vectorize else _vector(obj.uuid),
            )
            for obj in objects[start : start + batch_size]
        ]
        response = collection.data.insert_many(chunk)
        if response.errors:
            first = next(iter(response.errors.values()))
            raise RuntimeError(f"inserting into {name} failed: {first.message}")
    return collection


def _vector(seed: str, dimensions: int = 8) -> list[float]:
    rng = random.Random(seed)
    return [rng.uniform(-1, 1) for _ in range(dimensions)]


def unique_name(prefix: str = "ExecTest") -> str:
    """A fresh collection name (Weaviate capitalises the first letter, so the prefix should be)."""
    return f"{prefix}{uuid.uuid4().hex[:10]}"


def tool_arguments_strategy(collections: dict[str, list[str]]) -> Any:
    """Hypothesis strategy of raw tool arguments, valid and invalid, for fuzzing executors.

    `collections` maps collection names to property names. Draws mix plausible calls (known
    names, every operator and metric, values of every JSON type including NaN and huge numbers)
    with garbage: unknown names, wrong slot shapes, random JSON values and malformed JSON text.
    """
    import json

    from hypothesis import strategies as st

    from executors.arguments import (
        BooleanMetric,
        BooleanOperator,
        NumberMetric,
        NumberOperator,
        TextMetric,
        TextOperator,
    )

    names = sorted(collections)
    props = sorted({p for ps in collections.values() for p in ps})
    collection_names = st.one_of(st.sampled_from(names), st.text(max_size=12)) if names else st.text(max_size=12)
    property_names = st.one_of(st.sampled_from(props), st.text(max_size=12)) if props else st.text(max_size=12)
    operators = st.sampled_from(
        sorted({o.value for o in (*NumberOperator, *TextOperator, *BooleanOperator)} | {"!=", "~", "", "contains"})
    )
    metrics = st.sampled_from(sorted({m.value for m in (*NumberMetric, *TextMetric, *BooleanMetric)} | {"AVG", ""}))
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=30),
        st.sampled_from(["pizza", "Thai", "It*", "?ta*", "the", "*", "  ", "Italian", "cozy pizza"]),
    )
    json_values = st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
        max_leaves=6,
    )

    def slot(keys: dict[str, Any]) -> Any:
        return st.one_of(st.fixed_dictionaries({}, optional=keys), json_values)

    filter_slot = slot({"property_name": property_names, "operator": operators, "value": scalars})
    aggregation_slot = slot(
        {
            "property_name": property_names,
            "metrics": metrics,
            "top_occurrences_limit": st.one_of(st.integers(-5, 1000), scalars),
        }
    )
    calls = st.fixed_dictionaries(
        {"collection_name": collection_names},
        optional={
            "search_query": st.one_of(st.text(max_size=40), scalars),
            "integer_property_filter": filter_slot,
            "text_property_filter": filter_slot,
            "boolean_property_filter": filter_slot,
            "integer_property_aggregation": aggregation_slot,
            "text_property_aggregation": aggregation_slot,
            "boolean_property_aggregation": aggregation_slot,
            "groupby_property": st.one_of(property_names, scalars),
            "rationale": st.text(max_size=10),
            "unexpected": scalars,
        },
    )
    return st.one_of(
        calls,
        calls.map(lambda call: json.dumps(call, allow_nan=True)),
        json_values,
        st.text(max_size=60),
    )
