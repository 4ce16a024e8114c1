"""The composer of a user's own benchmark over made-up rows: each shape's answer is the rows', a filter
that keeps every object or a tied pick is never asked, and the order is the seed's."""

from __future__ import annotations

from datetime import datetime, timezone

from executors.schema import CollectionSchema, PropertySchema
from fixtures.authoring.own import compose_questions

PLANTS = CollectionSchema(
    name="GardenPlants",
    properties=(
        PropertySchema(name="color", data_type="text"),
        PropertySchema(name="height_cm", data_type="number"),
        PropertySchema(name="indoor", data_type="boolean"),
        PropertySchema(name="everywhere", data_type="text"),
        PropertySchema(name="planted", data_type="date"),
    ),
)
ROWS = [
    {
        "color": color,
        "height_cm": float(height),
        "indoor": height % 3 == 0,
        "everywhere": "yes",
        "planted": datetime(2020 + height % 2, 5, 1, tzinfo=timezone.utc),
    }
    for color, height in (
        ("red", 10),
        ("red", 14),
        ("red", 31),
        ("green", 20),
        ("green", 25),
        ("blue", 40),
        ("blue", 42),
        ("green", 12),
        ("red", 9),
    )
]


def test_each_answer_is_the_rows_and_nothing_vacuous_is_asked() -> None:
    composed = compose_questions(PLANTS, ROWS, per_shape=5, seed=1, near=lambda m: 0.9 if m == "age" else 0.1)
    by_query = {c.question.query: c for c in composed}
    red = [r for r in ROWS if r["color"] == "red"]
    count = by_query["How many garden plants have color red?"]
    assert count.question.gold is not None and count.question.gold(ROWS)["numbers"][0]["value"] == len(red)
    assert count.call == {
        "collection_name": "GardenPlants",
        "text_property_filter": {"property_name": "color", "operator": "=", "value": "red"},
    }
    mean = by_query["What is the average height cm of the garden plants with color red?"].question.gold(ROWS)
    assert mean["numbers"][0]["value"] == sum(r["height_cm"] for r in red) / len(red)
    top = by_query["Which color is the most common among the garden plants?"].question.gold(ROWS)
    assert top["names"] == ["red"] and top["other_names"] == ["blue", "green"]
    assert not any("everywhere" in query for query in by_query)  # one value for every object: asks nothing
    assert any(c.question.kind == "unanswerable" and c.call is None for c in composed)
    in_year = [c for c in composed if c.shape == "count_in_year"]
    odd = sum(1 for r in ROWS if r["planted"].year == 2021)
    assert in_year and in_year[0].question.gold(ROWS)["numbers"][0]["value"] in (odd, len(ROWS) - odd)
    assert in_year[0].call["conditions"][0]["value"] in ("2020", "2021")
    unanswerable = [c.question.query for c in composed if c.question.kind == "unanswerable"]
    assert unanswerable and not {"height", "age"} & {w for q in unanswerable for w in q.split()}  # named or near
    assert not [c for c in compose_questions(PLANTS, ROWS) if c.question.kind == "unanswerable"]  # nothing to tell
    bound = [c for c in composed if c.shape == "count_above"]
    shown = float(bound[0].question.query.split()[-1].rstrip("?")) if bound else None
    assert shown is not None and shown not in {r["height_cm"] for r in ROWS}  # no value sits on the bound


def test_a_tied_most_common_value_is_not_asked_and_the_seed_orders_the_rest() -> None:
    tied = [*ROWS, {"color": "blue", "height_cm": 50.0}, {"color": "blue", "height_cm": 51.0}]  # blue 4, red 4
    assert not [c for c in compose_questions(PLANTS, tied) if c.shape == "most_common"]
    first = [c.question.query for c in compose_questions(PLANTS, ROWS, per_shape=1, seed=1)]
    assert first == [c.question.query for c in compose_questions(PLANTS, ROWS, per_shape=1, seed=1)]
