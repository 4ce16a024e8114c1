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
from dataclasses import dataclass
from typing import Any

from executors.index_health import wait_until_indexed
from executors.reference import DataObject
from executors.schema import CollectionSchema, DatabaseSchema, PropertySchema
from executors.vocabulary import AGGREGATION_SLOT, FILTER_SLOT, METRICS, OPERATORS, PropertyKind

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
    health = wait_until_indexed(collection)
    if not health.ok:
        raise RuntimeError(f"the vector index of {name} did not catch up: {health.found} of {health.checked} found")
    return collection


def _vector(seed: str, dimensions: int = 8) -> list[float]:
    rng = random.Random(seed)
    return [rng.uniform(-1, 1) for _ in range(dimensions)]


def unique_name(prefix: str = "ExecTest") -> str:
    """A fresh collection name (Weaviate capitalises the first letter, so the prefix should be)."""
    return f"{prefix}{uuid.uuid4().hex[:10]}"


def sample_schema(name: str) -> Any:
    """The `DatabaseSchema` of one sample collection, as `WeaviateExecutor.schema` would read it."""
    properties = (
        PropertySchema(name="title", data_type="text", tokenization="word"),
        PropertySchema(name="cuisine", data_type="text", tokenization="field"),
        PropertySchema(name="price", data_type="number"),
        PropertySchema(name="seats", data_type="int"),
        PropertySchema(name="open_late", data_type="boolean"),
    )
    return DatabaseSchema(collections=(CollectionSchema(name=name, properties=properties),))


def tool_arguments_strategy(schema: Any) -> Any:
    """Hypothesis strategy of raw tool arguments, valid and invalid, for fuzzing executors.

    Draws come from three families: well-typed calls against `schema` (a `DatabaseSchema`) with
    occasional wrong names, operators, metrics and values (NaN, huge numbers, wrong JSON types);
    structurally broken calls (unknown keys, slots that are not objects); and garbage (random JSON
    values and text). Calls are also sent as JSON strings.
    """
    import json

    from hypothesis import strategies as st

    pools = _pools(schema)
    typed_calls = _typed_calls(pools, corrupt=True)
    clean_calls = _typed_calls(pools, corrupt=False)
    return st.one_of(
        clean_calls,
        clean_calls,
        typed_calls,
        typed_calls,
        typed_calls.map(lambda call: json.dumps(call, allow_nan=True)),
        _broken_calls(pools),
        pools.json_values,
        st.text(max_size=60),
    )


@dataclass(frozen=True)
class _Pools:
    """What every family of fuzzed calls draws from: the schema, its names and values good and bad."""

    schema: Any
    names: list[str]
    props: list[str]
    scalars: Any
    json_values: Any
    all_operators: list[str]
    all_metrics: list[str]
    good_values: dict[PropertyKind, Any]


def _pools(schema: Any) -> _Pools:
    """The schema's collection and property names; JSON scalars of every type (NaN, huge integers, wild
    words), nested JSON values, every operator and metric plus unknown ones, and well-typed values per kind."""
    from hypothesis import strategies as st

    names = schema.names()
    props = sorted({p.name for c in schema.collections for p in c.properties})
    words = ["pizza", "Thai", "It*", "?ta*", "the", "*", "  ", "Italian", "cozy pizza", "", "a?b", "Ω"]
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=30),
        st.sampled_from(words),
    )
    json_values = st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
        max_leaves=6,
    )
    all_operators = sorted({op for ops in OPERATORS.values() for op in ops} | {"~", "", "contains"})
    all_metrics = sorted({m for ms in METRICS.values() for m in ms} | {"AVG", ""})
    good_values = {
        PropertyKind.NUMBER: st.one_of(st.integers(-10, 200), st.floats(-10, 200, allow_nan=False)),
        PropertyKind.TEXT: st.one_of(st.sampled_from(words), st.text(min_size=1, max_size=12)),
        PropertyKind.BOOLEAN: st.booleans(),
    }
    return _Pools(schema, names, props, scalars, json_values, all_operators, all_metrics, good_values)


def _typed_calls(pools: _Pools, corrupt: bool) -> Any:
    """Calls shaped as the tool's schema says; with `corrupt`, one draw in ten of each name, operator,
    metric and value is a wrong one."""
    from hypothesis import strategies as st

    schema, names, props, scalars = pools.schema, pools.names, pools.props, pools.scalars

    def mostly(good: Any, bad: Any) -> Any:
        return st.one_of(good, good, good, good, good, good, good, good, good, bad) if corrupt else good

    def kind_props(kind: PropertyKind) -> Any:
        typed = sorted({p.name for c in schema.collections for p in c.properties if p.kind == kind})
        return mostly(st.sampled_from(typed), st.sampled_from(props) | st.text(max_size=8)) if typed else st.text()

    def filter_slot(kind: PropertyKind) -> Any:
        return st.fixed_dictionaries(
            {
                "property_name": kind_props(kind),
                "operator": mostly(st.sampled_from(OPERATORS[kind]), st.sampled_from(pools.all_operators)),
                "value": mostly(pools.good_values[kind], scalars),
            }
        )

    def aggregation_slot(kind: PropertyKind) -> Any:
        optional = {"top_occurrences_limit": mostly(st.integers(1, 100), st.integers(-5, 1000) | scalars)}
        return st.fixed_dictionaries(
            {
                "property_name": kind_props(kind),
                "metrics": mostly(st.sampled_from(METRICS[kind]), st.sampled_from(pools.all_metrics)),
            },
            optional=optional if kind == PropertyKind.TEXT else {},
        )

    collection_names = mostly(st.sampled_from(names), st.text(max_size=12)) if names else st.text(max_size=12)
    return st.fixed_dictionaries(
        {"collection_name": collection_names},
        optional={
            "search_query": mostly(st.sampled_from(["pizza", "cozy thai noodles", "bar"]), scalars),
            **{slot: filter_slot(kind) for kind, slot in FILTER_SLOT.items()},
            **{slot: aggregation_slot(kind) for kind, slot in AGGREGATION_SLOT.items()},
            "groupby_property": mostly(st.sampled_from(props), scalars),
            "rationale": st.text(max_size=10),
        },
    )


def _broken_calls(pools: _Pools) -> Any:
    """Calls broken in structure: any collection name or JSON scalar, slots that are loose objects (any of
    the slots' keys, and one extra) or any JSON value, and an unexpected key."""
    from hypothesis import strategies as st

    scalars = pools.scalars
    collection_names = st.sampled_from(pools.names) if pools.names else st.text(max_size=12)
    loose_slot = st.one_of(
        st.fixed_dictionaries(
            {},
            optional={
                "property_name": st.sampled_from(pools.props) | scalars,
                "operator": st.sampled_from(pools.all_operators),
                "metrics": st.sampled_from(pools.all_metrics),
                "value": scalars,
                "extra": scalars,
            },
        ),
        pools.json_values,
    )
    return st.fixed_dictionaries(
        {"collection_name": collection_names | scalars},
        optional={
            **{slot: loose_slot for slot in (*FILTER_SLOT.values(), *AGGREGATION_SLOT.values())},
            "unexpected": scalars,
        },
    )
