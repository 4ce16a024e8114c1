"""A difference, a share, a spread: the model writes the one call, the agent runs its variants through the
reference executor and computes the answer; compared here with the same numbers computed from the objects."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent import AgentConfig, ModelReply, ToolDesign, build_tools
from agent.answer import is_commit_request
from agent.strategies import build_strategy
from agent.strategies.compared import asked_of, held, keeping, pair_of
from agent.testing import FunctionModel, tool_reply
from agent.tokens import estimate_counter
from executors import ReferenceExecutor
from executors.testing import sample_objects, sample_schema
from executors.vocabulary import ToolOperations
from llm import ModelMessage
from llm.messages import tool_returns

NAME = "Places"
SCHEMA = sample_schema(NAME)
OBJECTS = sample_objects(60, seed=5)
COMPOUND = ToolOperations.COMPOUND


def executor() -> ReferenceExecutor:
    return ReferenceExecutor(SCHEMA, {NAME: OBJECTS}, operations=COMPOUND)


def tools() -> Any:
    return build_tools(SCHEMA, ToolDesign(operations=COMPOUND), counter=estimate_counter())


def calling(arguments: dict[str, Any]) -> FunctionModel:
    """Makes `arguments`, answers in prose, then commits a number of its own (which the agent replaces)."""

    def reply(messages: list[ModelMessage], _tools: Any) -> ModelReply:
        if is_commit_request(model.calls[-1]["response_format"]):
            return ModelReply(content=json.dumps({"numbers": [5]}))
        if not tool_returns(messages):
            return tool_reply("query_database", arguments)
        return ModelReply(content="It is 5.")

    model = FunctionModel(reply)
    return model


def mean(values: list[Any]) -> float:
    present = [v for v in values if v is not None]
    return sum(present) / len(present)


def prices(**where: Any) -> list[Any]:
    return [o.properties["price"] for o in OBJECTS if all(o.properties.get(k) == v for k, v in where.items())]


def run(question: str, arguments: dict[str, Any]) -> Any:
    return build_strategy("chain").run(calling(arguments), executor(), tools(), AgentConfig(), question)


@pytest.mark.parametrize(
    ("question", "form"),
    [
        ("How much more expensive is a Thai place than an Italian one on average?", "difference"),
        ("By how many seats do French places beat Greek ones?", "difference"),
        ("Thai or Greek: which is cheaper on average, and what's the gap?", "difference"),
        ("What fraction of the places stay open late?", "share"),
        ("In what percentage of its dishes is the price above 20?", "share"),
        ("What is the difference between the most and least expensive Thai place?", "spread"),
        ("How far apart are the cheapest and the dearest price among the Greek places? Give the range.", "spread"),
        ("Which cuisine has the highest average price?", None),
        ("How many places stay open late?", None),
        ("Which part of the menu has the most dishes?", None),
        ("How many other places stay open late?", None),
    ],
)
def test_the_form_is_read_from_the_question_s_words(question: str, form: str | None) -> None:
    asked = asked_of(question)
    assert (asked.form if asked else None) == form


def test_a_difference_runs_the_call_once_for_each_value_compared() -> None:
    question = "How much higher is the average price of Thai places than of Italian places?"
    thai = {
        "collection_name": NAME,
        "text_property_filter": {"property_name": "cuisine", "operator": "=", "value": "Thai"},
        "integer_property_aggregation": {"property_name": "price", "metrics": "MEAN"},
    }
    done = run(question, thai)
    expected = abs(mean(prices(cuisine="Thai")) - mean(prices(cuisine="Italian")))
    assert done.answer.numbers == pytest.approx([expected]) and done.answer.names == []
    computed = done.steps[-1].calls
    assert [c.arguments["conditions"] for c in computed] == [
        [{"property_name": "cuisine", "operator": "=", "value": "Thai"}],
        [{"property_name": "cuisine", "operator": "=", "value": "Italian"}],
    ]
    assert "text_property_filter" not in computed[0].arguments  # the compared property's own filter is replaced
    assert done.strategy_notes["arithmetic"] == {"form": "difference", "calls": 2}
    assert "Thai" in done.final_answer and "Italian" in done.final_answer


@pytest.mark.parametrize(
    "question",
    [
        "Thai or Greek: which is cheaper on average, and by how much?",
        "Are Thai or Greek places the cheaper on average? By how much?",  # a yes/no question between two
    ],
)
def test_which_of_the_two_names_the_one_the_question_s_words_ask_for(question: str) -> None:
    call = {"collection_name": NAME, "integer_property_aggregation": {"property_name": "price", "metrics": "MEAN"}}
    done = run(question, call)
    thai, greek = mean(prices(cuisine="Thai")), mean(prices(cuisine="Greek"))
    assert done.answer.names == ["Thai" if thai < greek else "Greek"]
    assert done.answer.numbers == pytest.approx([abs(thai - greek)])


def test_how_many_more_counts_and_two_numbers_in_the_question_make_the_pair() -> None:
    question = "How many more places have 50 seats than 20 seats?"
    call = {
        "collection_name": NAME,
        "integer_property_filter": {"property_name": "seats", "operator": "=", "value": 50},
    }
    done = run(question, call)
    counts = [sum(o.properties.get("seats") == n for o in OBJECTS) for n in (50, 20)]
    assert done.answer.numbers == [abs(counts[0] - counts[1])]


def test_how_many_more_of_a_summed_count_differs_the_sums_not_the_objects() -> None:
    """ "How many more guests can Thai places seat than Greek ones?": the call's SUM of seats is the count
    asked (`events`); the objects' numbers would answer another question."""
    question = "How many more guests can Thai places seat than Greek ones?"
    call = {
        "collection_name": NAME,
        "text_property_filter": {"property_name": "cuisine", "operator": "=", "value": "Thai"},
        "integer_property_aggregation": {"property_name": "seats", "metrics": "SUM"},
    }
    done = run(question, call)
    sums = [
        sum(o.properties.get("seats") or 0 for o in OBJECTS if o.properties["cuisine"] == c) for c in ("Thai", "Greek")
    ]
    assert done.answer.numbers == [abs(sums[0] - sums[1])]


def test_a_difference_with_no_statistic_written_differs_what_the_named_number_holds() -> None:
    """ "By how much did nonfarm employment fall between January 2008 and January 2010?" with the model's call
    listing the months: the SUM of the one number property named, for each value (each month one object)."""
    question = "By how much does the price differ between Thai and Greek places?"
    listed = {"collection_name": NAME}
    done = run(question, listed)
    sums = [sum(p for p in prices(cuisine=c) if p is not None) for c in ("Thai", "Greek")]
    assert done.answer.numbers == pytest.approx([abs(sums[0] - sums[1])])
    assert done.strategy_notes["arithmetic"] == {"form": "difference", "calls": 2}


def test_a_share_divides_the_call_s_count_by_its_population_s() -> None:
    call = {
        "collection_name": NAME,
        "conditions": [
            {"property_name": "cuisine", "operator": "=", "value": "Thai"},
            {"property_name": "price", "operator": ">", "value": 30},
        ],
    }
    done = run("What fraction of the Thai places have a price over 30?", call)
    thai = prices(cuisine="Thai")
    assert done.answer.numbers == pytest.approx([sum(p is not None and p > 30 for p in thai) / len(thai)])
    over = {**call, "conditions": call["conditions"][1:]}
    done = run("What share of all places have a price over 30?", over)
    assert done.answer.numbers == pytest.approx([sum((p or 0) > 30 for p in prices()) / len(OBJECTS)])


def test_a_share_the_call_computes_itself_is_the_model_s_own() -> None:
    call = {
        "collection_name": NAME,
        "boolean_property_aggregation": {"property_name": "open_late", "metrics": "PERCENTAGE_TRUE"},
    }
    done = run("What percentage of places stay open late?", call)
    assert "arithmetic" not in done.strategy_notes and len(done.steps[-1].calls) <= 1


def test_a_spread_is_the_maximum_less_the_minimum_over_the_call_s_conditions() -> None:
    call = {
        "collection_name": NAME,
        "text_property_filter": {"property_name": "cuisine", "operator": "=", "value": "Greek"},
        "integer_property_aggregation": {"property_name": "price", "metrics": "MAX"},
        "groupby_property": "cuisine",
    }
    done = run("What's the gap between the highest and lowest price of the Greek places?", call)
    greek = [p for p in prices(cuisine="Greek") if p is not None]
    assert done.answer.numbers == pytest.approx([max(greek) - min(greek)])


def test_a_spread_keeps_the_value_a_group_by_stood_for() -> None:
    grouped = {  # the model grouped by the property whose value the question names, and filtered nothing
        "collection_name": NAME,
        "integer_property_aggregation": {"property_name": "price", "metrics": "MAX"},
        "groupby_property": "cuisine",
    }
    done = run("What's the gap between the highest and lowest price among the Greek places?", grouped)
    greek = [p for p in prices(cuisine="Greek") if p is not None]
    assert done.answer.numbers == pytest.approx([max(greek) - min(greek)])


def test_a_chain_of_parts_is_not_read_as_one_share() -> None:
    question = "Which cuisine is most common? What percentage of the places of that cuisine stay open late?"
    done = run(
        question,
        {
            "collection_name": NAME,
            "text_property_aggregation": {
                "property_name": "cuisine",
                "metrics": "TOP_OCCURRENCES",
                "top_occurrences_limit": 1,
            },
        },
    )
    assert "arithmetic" not in done.strategy_notes and "parts" in done.strategy_notes["chain"]


def test_no_pair_in_sight_leaves_a_difference_question_to_the_chain() -> None:
    assert pair_of("How much more does it cost?", {}, {"cuisine": ["Thai", "Greek"]}, None) is None
    assert pair_of("Thai against Greek", {}, {"cuisine": ["Thai", "Greek"]}, None).values == ("Thai", "Greek")


def test_conditions_are_kept_or_dropped_wherever_the_call_holds_them() -> None:
    call = {
        "collection_name": NAME,
        "text_property_filter": {"property_name": "cuisine", "operator": "=", "value": "Thai"},
        "conditions": [{"property_name": "price", "operator": ">", "value": 3}],
        "match": "all",
    }
    assert len(held(call)) == 2
    assert keeping(call, lambda c: c["property_name"] != "price") == {
        k: v for k, v in call.items() if k not in ("conditions", "match")
    }


def test_two_years_compare_the_year_property_or_the_one_date_property() -> None:
    from executors.schema import CollectionSchema, PropertySchema

    yearly = CollectionSchema(name="T", properties=(PropertySchema(name="year", data_type="int"),))
    dated = CollectionSchema(name="S", properties=(PropertySchema(name="date", data_type="date"),))
    pair = pair_of("By how much did the mean yield fall from 1931 to 1932?", {}, {}, yearly)
    assert pair is not None and (pair.prop, pair.values, pair.kind) == ("year", (1931, 1932), "number")
    pair = pair_of("What did it close at in January 2000, and in January 2010?", {}, {}, dated)
    assert pair is not None and (pair.prop, pair.values, pair.kind) == ("date", ("2000-01", "2010-01"), "date")


def test_each_value_is_committed_where_the_parts_ask_for_each_and_not_where_they_ask_which() -> None:
    call = {"collection_name": NAME, "integer_property_aggregation": {"property_name": "price", "metrics": "MEAN"}}
    thai, greek = mean(prices(cuisine="Thai")), mean(prices(cuisine="Greek"))
    done = run("Thai or Greek: which is cheaper on average? By how much?", call)
    assert done.answer.numbers == pytest.approx([abs(thai - greek)]) and len(done.answer.names) == 1
    done = run("What is the average price of Thai places, what of Greek ones, and how much higher is it?", call)
    assert done.answer.numbers == pytest.approx([thai, greek, abs(thai - greek)]) and done.answer.names == []


def test_a_call_with_no_statistic_takes_the_one_the_question_names_and_else_computes_nothing() -> None:
    listing = {
        "collection_name": NAME,
        "text_property_filter": {"property_name": "cuisine", "operator": "=", "value": "Thai"},
    }
    done = run("How much higher is the average price of Thai places than of Greek places?", listing)
    expected = abs(mean(prices(cuisine="Thai")) - mean(prices(cuisine="Greek")))
    assert done.answer.numbers == pytest.approx([expected])
    done = run("How much better are Thai places than Greek ones?", listing)  # no statistic said: not a count
    assert "arithmetic" not in done.strategy_notes


def test_the_population_of_a_share_is_read_up_to_the_sentence_s_own_verb() -> None:
    call = {
        "collection_name": NAME,
        "conditions": [
            {"property_name": "price", "operator": "<=", "value": 30},
            {"property_name": "open_late", "operator": "=", "value": True},
        ],
    }
    done = run("What share of places whose price is at most 30 stay open late?", call)
    cheap = [o for o in OBJECTS if (o.properties.get("price") or 99) <= 30]
    late = [o for o in cheap if o.properties.get("open_late") is True]
    assert done.answer.numbers == pytest.approx([len(late) / len(cheap)])
