"""The object generator: deterministic, prefix-stable, streamed, schema-driven for any schema."""

from __future__ import annotations

import types
from collections import Counter

import pytest

from executors import PropertyKind
from fixtures import (
    DEFAULT_OBJECTS_PER_COLLECTION,
    CollectionSpec,
    ObjectGenerator,
    PropertySpec,
    TextRole,
    generate_objects,
    get_use_case,
    get_use_cases,
    object_uuid,
)
from fixtures.generator import round_step
from fixtures.hints import resolve_hints


def snapshot(collection: CollectionSpec, count: int, seed: int) -> list[tuple[str, dict]]:
    return [(str(o.uuid), o.properties) for o in generate_objects(collection, count, seed)]


@pytest.mark.parametrize("collection", [c for case in get_use_cases() for c in case.collections], ids=lambda c: c.name)
def test_same_seed_same_objects_and_other_seed_other_objects(collection: CollectionSpec) -> None:
    assert snapshot(collection, 50, seed=7) == snapshot(collection, 50, seed=7)
    other = snapshot(collection, 50, seed=8)
    assert [p for _, p in other] != [p for _, p in snapshot(collection, 50, seed=7)]
    assert [u for u, _ in other] == [u for u, _ in snapshot(collection, 50, seed=7)], "ids do not depend on seed"


def test_a_smaller_count_is_a_prefix_of_a_larger_one() -> None:
    collection = get_use_case("restaurants").collections[0]
    assert snapshot(collection, 20, 42) == snapshot(collection, 200, 42)[:20]
    assert ObjectGenerator(collection, 42).object(150).properties == snapshot(collection, 200, 42)[150][1]


def test_objects_are_streamed_not_listed() -> None:
    stream = generate_objects(get_use_case("courses").collections[0], 10**9)
    assert isinstance(stream, types.GeneratorType)
    assert next(stream).index == 0


def test_ids_are_uuid5_of_collection_and_index() -> None:
    assert object_uuid("Restaurants", 3) == object_uuid("Restaurants", 3)
    assert object_uuid("Restaurants", 3) != object_uuid("Restaurants", 4)
    assert object_uuid("Restaurants", 3) != object_uuid("MenuItems", 3)
    assert object_uuid("Restaurants", 3).version == 5


@pytest.mark.parametrize("collection", [c for case in get_use_cases() for c in case.collections], ids=lambda c: c.name)
def test_values_fit_their_schema_and_are_varied(collection: CollectionSpec) -> None:
    objects = [o.properties for o in generate_objects(collection, DEFAULT_OBJECTS_PER_COLLECTION)]
    for prop in collection.properties:
        values = [o[prop.name] for o in objects]
        hints = resolve_hints(prop, collection)
        if prop.kind is PropertyKind.NUMBER:
            assert all(isinstance(v, float) and hints.minimum <= v <= hints.maximum for v in values)
            assert max(values) - min(values) > 0.6 * (hints.maximum - hints.minimum), "spread over the range"
        elif prop.kind is PropertyKind.BOOLEAN:
            assert 0.15 < sum(values) / len(values) < 0.9
        elif prop.role is TextRole.SHORT:
            counts = Counter(values)
            assert set(counts) <= set(hints.values or [])
            assert len(counts) >= 5 and counts.most_common(1)[0][1] > 10, "a small vocabulary that repeats"
        else:
            assert len(set(values)) > 60, "prose composed from phrases is mostly distinct"
            assert all(v.endswith(".") and len(v.split()) >= 4 for v in values)


def test_rich_text_mentions_its_own_short_text_often_but_not_always() -> None:
    """Prose agrees with its object (never names another cuisine), yet does not determine the
    attribute: filtering the description for "Italian" must not equal filtering the cuisine."""
    restaurants = get_use_case("restaurants").collections[0]
    cuisines = set(restaurants.get_property("cuisine").generation.values)  # type: ignore[union-attr]
    objects = list(generate_objects(restaurants, 100))
    mentions = [obj.properties["cuisine"] in obj.properties["description"] for obj in objects]
    assert 0.4 < sum(mentions) / len(objects) < 0.9
    for obj in objects:
        others = cuisines - {obj.properties["cuisine"]}
        assert not any(other in obj.properties["description"] for other in others)


def test_sparse_numbers_hold_round_values() -> None:
    """A share of prices sits on round steps, so "more than $20" and "$20 or more" differ on the data."""
    items = get_use_case("restaurants").get_collection("MenuItems")
    assert items is not None
    prices = [obj.properties["price"] for obj in generate_objects(items, 100)]
    assert round_step(3.0, 45.0, 2) == 2.5
    on_step = [p for p in prices if (p / 2.5).is_integer()]
    assert 0.15 < len(on_step) / len(prices) < 0.5
    assert {10.0, 15.0, 20.0, 30.0} & set(prices)
    assert round_step(1, 40, 0) is None  # dense ranges are left alone


def test_unknown_schemas_fall_back_to_generic_vocabularies() -> None:
    collection = CollectionSpec(
        name="StaffMembers",
        description="Restaurant staff.",
        properties=[
            PropertySpec(name="staffName", kind=PropertyKind.TEXT, description="The name of the staff member."),
            PropertySpec(name="shiftNotes", kind=PropertyKind.TEXT, description="Free-form notes."),
            PropertySpec(name="experienceYears", kind=PropertyKind.NUMBER, description="Years of experience."),
            PropertySpec(name="averageRating", kind=PropertyKind.NUMBER, description="Guest rating."),
            PropertySpec(name="widgetCount", kind=PropertyKind.NUMBER, description="Something numeric."),
            PropertySpec(name="isOnDuty", kind=PropertyKind.BOOLEAN, description="On duty now."),
        ],
    )
    objects = [o.properties for o in generate_objects(collection, 100, seed=1)]
    assert collection.get_property("shiftNotes").role is TextRole.RICH
    assert len({o["staffName"] for o in objects}) <= 12
    assert all("staff member" in o["shiftNotes"] for o in objects)
    assert all(1 <= o["experienceYears"] <= 40 for o in objects)
    assert all(1 <= o["averageRating"] <= 5 for o in objects)
    assert all(1 <= o["widgetCount"] <= 50 for o in objects)
    assert 0 < sum(o["isOnDuty"] for o in objects) < 100


def test_a_schema_without_short_text_still_generates_prose() -> None:
    collection = CollectionSpec(
        name="Notes",
        description="Notes.",
        properties=[PropertySpec(name="body", kind=PropertyKind.TEXT, description="Text", text_role=TextRole.RICH)],
    )
    texts = [o.properties["body"] for o in generate_objects(collection, 20)]
    assert all("{" not in t and t.endswith(".") for t in texts)
