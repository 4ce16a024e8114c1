"""A part's highest (lowest) value, and a next part about what holds it: answered from those objects, through
the reference executor, and compared with the objects themselves."""

from __future__ import annotations

from typing import Any

from agent import AgentConfig
from agent.strategies import build_strategy
from agent.strategies.holder import MAX_HOLDERS
from executors import ReferenceExecutor
from tests.unit.test_arithmetic import COMPOUND, NAME, OBJECTS, SCHEMA, calling, executor, tools

MAX_PRICE = {"collection_name": NAME, "integer_property_aggregation": {"property_name": "price", "metrics": "MAX"}}


def run(question: str, arguments: dict[str, Any]) -> Any:
    return build_strategy("chain").run(calling(arguments), executor(), tools(), AgentConfig(), question)


def holders(prop: str, value: float, **where: Any) -> list[Any]:
    return [
        o
        for o in OBJECTS
        if o.properties.get(prop) == value and all(o.properties.get(k) == v for k, v in where.items())
    ]


def test_the_next_part_is_read_from_the_objects_that_hold_the_extreme() -> None:
    top = max(o.properties["price"] for o in OBJECTS if o.properties.get("price") is not None)
    done = run("What is the highest price? How many seats does that place have?", MAX_PRICE)
    seats = list(dict.fromkeys(o.properties["seats"] for o in holders("price", top)))
    assert done.answer.numbers == [top, *seats]
    assert done.strategy_notes["holder"]["calls"] == 1
    assert not done.answer.is_partial_answer
    made = done.calls()[-1].arguments
    assert made["conditions"] == [{"property_name": "price", "operator": "=", "value": top}]


def test_the_call_s_conditions_are_kept_and_a_minimum_reads_the_lowest() -> None:
    cuisine = next(o.properties["cuisine"] for o in OBJECTS if o.properties.get("cuisine"))
    call = {
        "collection_name": NAME,
        "text_property_filter": {"property_name": "cuisine", "operator": "=", "value": cuisine},
        "integer_property_aggregation": {"property_name": "price", "metrics": "MIN"},
    }
    low = min(o.properties["price"] for o in holders("cuisine", cuisine) if o.properties.get("price") is not None)
    done = run(f"What is the lowest price of a {cuisine} place? What is its title?", call)
    titles = list(dict.fromkeys(o.properties["title"] for o in holders("price", low, cuisine=cuisine)))
    assert done.answer.names == titles
    assert done.answer.numbers == [low]


def test_a_next_part_naming_a_stored_value_two_properties_or_a_statistic_is_asked_as_before() -> None:
    cuisine = next(o.properties["cuisine"] for o in OBJECTS if o.properties.get("cuisine"))
    for follow_up in (
        f"How many seats do {cuisine} places at that price have?",
        "What are its seats and title?",
        "How many places have that many seats?",
        "What is the average number of seats of those places?",
    ):
        done = run(f"What is the highest price? {follow_up}", MAX_PRICE)
        assert "holder" not in done.strategy_notes


def test_a_mean_has_no_holder() -> None:
    mean = {"collection_name": NAME, "integer_property_aggregation": {"property_name": "price", "metrics": "MEAN"}}
    done = run("What is the average price? How many seats does that place have?", mean)
    assert "holder" not in done.strategy_notes


def test_an_extreme_many_objects_share_names_none_of_them() -> None:
    tied = [o.model_copy(update={"properties": {**o.properties, "price": 999.0}}) for o in OBJECTS[: MAX_HOLDERS + 1]]
    many = ReferenceExecutor(SCHEMA, {NAME: [*tied, *OBJECTS[MAX_HOLDERS + 1 :]]}, operations=COMPOUND)
    question = "What is the highest price? How many seats does that place have?"
    done = build_strategy("chain").run(calling(MAX_PRICE), many, tools(), AgentConfig(), question)
    assert "holder" not in done.strategy_notes


def test_only_the_last_part_is_read_from_what_holds_the_extreme() -> None:
    question = "What is the highest price? How many seats does that place have? What is the average price?"
    done = run(question, MAX_PRICE)
    assert len(done.strategy_notes["chain"]["parts"]) == 3  # every part asked, none answered by the holder
    assert "holder" not in done.strategy_notes


def test_a_count_of_what_the_holder_s_property_holds_reads_it() -> None:
    from agent.strategies.holder import reads_held
    from executors.schema import CollectionSchema, PropertySchema

    months = CollectionSchema(
        name="ArmyDeaths",
        description="The army's monthly deaths, by cause.",
        properties=tuple(PropertySchema(name=n, data_type=t) for n, t in (("month", "date"), ("wounds", "int"))),
    )
    assert reads_held("how many soldiers died of wounds in that month?", "wounds", months)
    assert not reads_held("how many months had wounds?", "wounds", months), "the objects are counted"
    assert not reads_held("how many soldiers died of wounds in that month?", "wounds", None)


def test_a_property_named_by_its_description_alone_is_read() -> None:
    from agent.strategies.holder import described, reads_held
    from executors.schema import CollectionSchema, PropertySchema

    fares = CollectionSchema(
        name="Fares",
        properties=tuple(
            PropertySchema(name=n, data_type=t, description=d)
            for n, t, d in (
                ("fare", "number", "What the ride cost, in dollars."),
                ("riders", "int", "How many people shared the ride."),
                ("zone", "text", "Where the ride began."),
            )
        ),
    )
    asked = "how many people shared that ride?"
    assert described(asked, fares) == "riders"
    assert reads_held(asked, "riders", fares)
    assert described("where was that?", fares) is None, "one shared word is not enough"
    assert described("how many people shared that ride?", None) is None


def test_which_group_holds_the_extreme_is_read_from_the_sorted_objects_where_the_groups_were_cut() -> None:
    from executors.options import ExecutorOptions

    cut = ReferenceExecutor(SCHEMA, {NAME: OBJECTS}, ExecutorOptions(max_groups=3), operations=COMPOUND)
    per_title = {**MAX_PRICE, "groupby_property": "title"}
    done = build_strategy("chain").run(
        calling(per_title), cut, tools(), AgentConfig(), "Which title has the highest price?"
    )
    priced = [o.properties for o in OBJECTS if o.properties.get("price") is not None]
    top = max(priced, key=lambda p: p["price"])
    assert done.answer.names == [top["title"]]
    assert done.answer.numbers == [], "the name asked, alone"
    assert done.strategy_notes["extreme_group"]["calls"] == 1
    uncut = build_strategy("chain").run(
        calling(per_title), executor(), tools(), AgentConfig(), "Which title has the highest price?"
    )
    assert "extreme_group" not in uncut.strategy_notes, "every group listed: the result answers as it is"
