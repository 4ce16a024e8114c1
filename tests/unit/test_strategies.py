"""Agent strategies with scripted models and the reference executor: the seam (names, composition,
react unchanged), `examples` (retrieved examples before the question, the prefix unchanged) and
`grounded` (values pointed at, copied by the agent, verified and retried once; one call's one
answer written by the agent without a commit turn)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from typing import Any

import pytest

from agent import Agent, AgentConfig, ModelReply, OracleModel, ToolDesign, build_tools
from agent.answer import FinalAnswer, is_commit_request
from agent.follows import Follows
from agent.loop import ExecutedCall
from agent.query_agent import QueryAgent
from agent.reading import Reading
from agent.strategies import (
    STRATEGIES,
    SolvedExample,
    UnknownStrategy,
    build_strategy,
    canonical,
    examples_preamble,
    parse_strategy,
)
from agent.strategies.asked_for import (
    asking_alone,
    invented_property,
    named_by_properties,
    named_in,
    properties_name,
    written_in,
)
from agent.strategies.chain import comparison_of, parts_of, pick
from agent.strategies.check import refusal
from agent.strategies.check_turns import CHECK_SCHEMA_NAME, LISTED, NOT_LISTED, listing
from agent.strategies.examples import DEFAULT_K, in_schema_order
from agent.strategies.facts import GROUNDED_SCHEMA_NAME, answer_from, facts_of
from agent.strategies.grounded import answer_text, answers_statistic, derived_answer, holds_the_answer, text_agrees
from agent.strategies.naming import can_match, linked
from agent.strategies.refine import conditions_in
from agent.strategies.reshape import asked_slots, group_named
from agent.strategies.shares import BOOLEAN_AGGREGATION
from agent.strategies.which_group import per_group_part
from agent.testing import FunctionModel, tool_reply
from agent.tokens import estimate_counter
from evaluation.refusal import grade_committed_abstention
from evaluation.samples import SAMPLE_PATH, build_sample, read_sample
from executors import DatabaseSchema, ReferenceExecutor
from executors.schema import CollectionSchema, PropertySchema
from executors.testing import sample_objects, sample_schema
from executors.vocabulary import ToolOperations
from fixtures.datasets import Case, load_split, split_path
from llm import ModelMessage, ResponseFormat, UserPromptPart
from llm.messages import all_parts, tool_returns

NAME = "Offline"
SCHEMA = sample_schema(NAME)
OBJECTS = sample_objects(40, seed=3)
MEAN_PRICE = {"collection_name": NAME, "integer_property_aggregation": {"property_name": "price", "metrics": "MEAN"}}
QUESTION = "What is the average price?"
PER_CUISINE = {
    "collection_name": NAME,
    "integer_property_aggregation": {"property_name": "price", "metrics": "MEAN"},
    "groupby_property": "cuisine",
}
#: A second call after the mean, so the result holds more than one answer and the model must point.
LISTING = {
    "collection_name": NAME,
    "boolean_property_filter": {"property_name": "open_late", "operator": "=", "value": True},
}


def executor() -> ReferenceExecutor:
    return ReferenceExecutor(SCHEMA, {NAME: OBJECTS})


def tools() -> Any:
    return build_tools(SCHEMA, counter=estimate_counter())


def schema_name(response_format: ResponseFormat | None) -> str | None:
    return response_format.name if response_format is not None else None


def content(message: ModelMessage) -> str:
    """The text of a message's last part (a request's user prompt, a response's text)."""
    return str(getattr(message.parts[-1], "content", ""))


class Shelf:
    """A retriever over a fixed list (the Weaviate-backed memory is tested in the integration tier)."""

    def __init__(self, examples: list[SolvedExample]) -> None:
        self.examples = examples
        self.asked: list[tuple[str, int]] = []

    def nearest(self, question: str, k: int) -> list[SolvedExample]:
        self.asked.append((question, k))
        return self.examples[:k]


SHELF = [
    SolvedExample(question=f"How many things of kind {i}?", arguments={"collection_name": f"C{i}"}, use_case=f"u{i}")
    for i in range(6)
]


def mean_model(point: Any = None, calls: tuple[dict[str, Any], ...] = (MEAN_PRICE,)) -> FunctionModel:
    """Makes `calls` (the mean price), answers in prose, then commits (a FinalAnswer or, grounded, by `point`)."""

    def reply(messages: list[ModelMessage], _tools: Any) -> ModelReply:
        response_format = model.calls[-1]["response_format"]
        if schema_name(response_format) == GROUNDED_SCHEMA_NAME:
            users = [p for p in all_parts(messages) if isinstance(p, UserPromptPart)]
            return ModelReply(content=json.dumps(point(messages, len(users))))
        if is_commit_request(response_format):
            return ModelReply(content=json.dumps({"numbers": [5]}))  # the miscopy grounded prevents
        made = len(tool_returns(messages))
        if made < len(calls):
            return tool_reply("query_database", calls[made])
        return ModelReply(content="The average price is 5.")

    model = FunctionModel(reply)
    return model


def true_mean() -> float:
    prices = [o.properties["price"] for o in OBJECTS if o.properties.get("price") is not None]
    return sum(prices) / len(prices)


def test_names_compose_in_registry_order_and_bad_names_are_typed_errors() -> None:
    assert list(STRATEGIES) == [
        "react", "chain", "check", "values", "examples", "typed", "decompose", "plan", "refine", "grounded", "onestep"
    ]  # fmt: skip
    assert canonical("grounded+examples") == "examples+grounded" == canonical("react+examples+grounded")
    assert canonical("react") == "react"
    with pytest.raises(
        UnknownStrategy,
        match="choose from react, chain, check, values, examples, typed, decompose, plan, refine, grounded, onestep",
    ):
        parse_strategy("telepathy")
    with pytest.raises(UnknownStrategy, match="twice"):
        parse_strategy("examples+examples")
    with pytest.raises(UnknownStrategy, match="choose one"):
        parse_strategy("decompose+plan")
    with pytest.raises(UnknownStrategy, match="query memory"):
        build_strategy("examples")


@pytest.mark.parametrize(
    ("question", "offered"),
    [
        ("What is the average price of Thai places?", ['cuisine = "Thai"']),
        ("How many seats do the greek restaurants have?", ['cuisine = "Greek"']),
        ("What is the average price?", []),  # no stored value named: nothing added, the question as is
        ("Which places are called pizza kitchen?", []),  # a title's words: a name, not a repeated category
    ],
)
def test_values_offers_the_stored_categories_the_question_names_after_it(question: str, offered: list[str]) -> None:
    model = mean_model()
    run = build_strategy("values").run(model, executor(), tools(), AgentConfig(), question)
    [user] = [p for p in all_parts(model.calls[0]["messages"]) if isinstance(p, UserPromptPart)]
    assert run.strategy_notes["values"] == {"candidates": offered, "moved": 0}
    assert user.content.startswith(question)
    assert all(candidate in user.content for candidate in offered)
    assert (user.content == question) is (not offered)
    # a call that filters no text property gets back the one value the question names; the record keeps
    # what the model wrote and why
    put_back = {}
    if offered:
        value = offered[0].split('"')[1]
        put_back = {"text_property_filter": {"property_name": "cuisine", "operator": "=", "value": value}}
    assert [c.arguments for c in run.calls()] == [{**MEAN_PRICE, **put_back}]
    assert all((c.amended or "").startswith("the question names cuisine") for c in run.calls()) is bool(offered)


def test_value_links_meet_a_category_across_word_endings_and_skip_prose() -> None:
    stored = {"weather": ["sun", "rain", "drizzle"], "activity": ["Hiking", "Fine dining"], "note": ["x" * 50]}
    assert linked("Which hikes had sunny weather?", stored) == [("weather", "sun"), ("activity", "Hiking")]
    assert linked("Any fine dining when it rained?", stored) == [("activity", "Fine dining"), ("weather", "rain")]
    assert linked("What about the classes?", {"kind": ["class", "Class B"]}) == [("kind", "class")]
    assert linked("Where was it sunny?", {"city": ["Sunnyvale"]}) == []  # a word is not a prefix of a name


def test_a_filter_value_matches_a_category_when_a_stored_value_holds_its_letters() -> None:
    stored = ["Impressionism", "Pop Art", "Street Art"]
    assert can_match("*ism", stored) and can_match("Pop Art", stored) and can_match("P*", stored)
    assert can_match("art", stored) and can_match("*", stored)  # generous: case, a part of a value, nothing
    assert not can_match("*Paris*", stored) and not can_match("murals", stored)


@pytest.mark.parametrize(
    ("value", "ran", "amended"),
    [
        ("*garden*", {"property_name": "title", "operator": "LIKE", "value": "*garden*"}, True),
        ("garden", {"property_name": "title", "operator": "LIKE", "value": "*garden*"}, True),
        ("Thai", {"property_name": "cuisine", "operator": "=", "value": "Thai"}, False),  # a stored value
        ("xyzzy", {"property_name": "cuisine", "operator": "=", "value": "xyzzy"}, False),  # no property holds it
    ],
)
def test_values_moves_a_filter_no_category_value_can_match_to_the_text_that_holds_it(
    value: str, ran: dict[str, Any], amended: bool
) -> None:
    """`cuisine = "garden"` can match nothing (every cuisine was read, none holds it); titles hold it: the
    filter runs there, the record keeps both, and the model reads why above the result."""
    written = {**MEAN_PRICE, "text_property_filter": {"property_name": "cuisine", "operator": "=", "value": value}}
    model = mean_model(calls=(written,))
    question = f"What is the average price of {value.strip('*')} places?"  # a value named: not left out
    run = build_strategy("values").run(model, executor(), tools(), AgentConfig(), question)
    [call] = run.calls()
    assert json.loads(call.raw_arguments) == written, "what the model wrote is kept"
    assert call.ok and call.arguments == {**MEAN_PRICE, "text_property_filter": ran}
    assert bool(call.amended) is amended and run.strategy_notes["values"]["moved"] == int(amended)
    shown = [r.content for m in model.calls[-1]["messages"] for r in tool_returns([m])]
    assert any("amended" in str(text) for text in shown) is amended
    if amended:
        assert "cuisine holds only" in str(call.amended) and "'Thai'" in str(call.amended)
        titles = [o for o in OBJECTS if "garden" in str(o.properties.get("title")).lower()]
        assert call.result is not None and call.result.aggregations["price"]["MEAN"] == pytest.approx(
            sum(o.properties["price"] for o in titles if o.properties.get("price") is not None)
            / len([o for o in titles if o.properties.get("price") is not None])
        )


@pytest.mark.parametrize(
    ("question", "slots"),
    [
        ("What percentage of the clinics accept walk-ins?", ("boolean_property_aggregation",)),
        (
            "How many of the exhibitions require booking, for each city?",
            ("boolean_property_aggregation", "groupby_property"),
        ),
        ("What is the average rating of restaurants per cuisine?", ("groupby_property",)),
        ("Are there any courses, grouped by subject?", ("groupby_property",)),
        ("Which accommodations cost under $100 per night?", ()),  # a unit, not a group
        ("How many days were there of each type of weather?", ("groupby_property",)),
        ("What is the mean price in every category of menu item?", ("groupby_property",)),
        ("What is the rating of each restaurant?", ()),  # one value per object: a listing, not groups
        ("What share is that, in per cent?", ()),
        ("How many sessions per personal trainer?", ("groupby_property",)),  # not "per person"
        ("How many restaurants are there?", ()),
    ],
)
def test_the_questions_words_say_which_slots_the_call_needs(question: str, slots: tuple[str, ...]) -> None:
    assert asked_slots(question) == slots


@pytest.mark.parametrize(
    ("question", "written", "ran"),
    [
        (
            "What percentage of places are open late?",
            {"boolean_property_filter": {"property_name": "open_late", "operator": "=", "value": True}},
            {"boolean_property_aggregation": {"property_name": "open_late", "metrics": "PERCENTAGE_TRUE"}},
        ),
        (
            "How many of the places are not open late, for each cuisine?",
            {"boolean_property_filter": {"property_name": "open_late", "operator": "!=", "value": True}},
            {
                "boolean_property_aggregation": {"property_name": "open_late", "metrics": "TOTAL_FALSE"},
                "groupby_property": "cuisine",
            },
        ),
        (  # a filter on the property whose share is asked: the share is 1 whatever the data
            "What percentage of places are not open late?",
            {
                "boolean_property_filter": {"property_name": "open_late", "operator": "!=", "value": True},
                "boolean_property_aggregation": {"property_name": "open_late", "metrics": "PERCENTAGE_FALSE"},
            },
            {"boolean_property_aggregation": {"property_name": "open_late", "metrics": "PERCENTAGE_FALSE"}},
        ),
        (  # a COUNT of what the filter kept is no share: the call as written
            "How many places are open late?",
            {
                "boolean_property_filter": {"property_name": "open_late", "operator": "=", "value": True},
                "boolean_property_aggregation": {"property_name": "open_late", "metrics": "COUNT"},
            },
            None,
        ),
        (  # a share already aggregated, a group-by already there: the call as written
            "What percentage of places are open late, split by whether they are open late?",
            {
                "boolean_property_aggregation": {"property_name": "open_late", "metrics": "PERCENTAGE_TRUE"},
                "groupby_property": "open_late",
            },
            None,
        ),
        ("What is the average price per seat?", {}, None),  # "per seat" names no groupable property
        (  # the share word names what is averaged: the boolean filter is a condition, kept
            "What is the average price percentage of places that are open late?",
            {
                "boolean_property_filter": {"property_name": "open_late", "operator": "=", "value": True},
                "integer_property_aggregation": {"property_name": "price", "metrics": "MEAN"},
            },
            None,
        ),
        (  # a call that filters the group's property chose its group: no group-by added
            "What is the average price of Thai places, for each cuisine?",
            {"text_property_filter": {"property_name": "cuisine", "operator": "=", "value": "Thai"}},
            None,
        ),
    ],
)
def test_typed_amends_a_call_that_left_out_what_the_questions_words_ask_for(
    question: str, written: dict[str, Any], ran: dict[str, Any] | None
) -> None:
    """A boolean filter where a share is asked becomes its aggregation; a group-by asked for is added on the
    property its words name. The model's call is kept as written beside what ran, with why."""
    call = {"collection_name": NAME, **written}
    model = mean_model(calls=(call,))
    run = build_strategy("typed").run(model, executor(), tools(), AgentConfig(), question)
    [made] = run.calls()
    assert json.loads(made.raw_arguments) == call
    assert made.arguments == {"collection_name": NAME, **(ran if ran is not None else written)}
    assert bool(made.amended) is (ran is not None) and made.ok


def test_the_group_a_question_names_is_the_one_property_its_words_meet() -> None:
    names = ["visitType", "isFirstVisit", "reasonForVisit", "language", "acceptingNewPatients"]
    assert group_named("What percentage are first visits, for each visit type?", names) == "visitType"
    assert group_named("How many accept new patients, for each consultation language?", names) == "language"
    assert group_named("Split by whether they accept new patients, how many?", names) == "acceptingNewPatients"
    assert group_named("How many, for each visit?", names) is None  # three properties name a visit
    assert group_named("How many, for each city?", names) is None


def test_every_split_gold_call_has_the_slots_the_questions_words_ask_for() -> None:
    for split in ("natural", "explicit"):
        for case in load_split(split_path(split)):
            gold = case.ground_truth.model_dump(exclude_none=True)
            assert all(gold.get(slot) for slot in asked_slots(case.query)), (split, case.id)
            if BOOLEAN_AGGREGATION in asked_slots(case.query):
                assert not gold.get("boolean_property_filter"), (split, case.id)


def test_chain_cuts_a_question_at_its_question_marks_and_picks_the_value_each_part_names() -> None:
    two = "What is the most common cuisine? What is the average price of the places of that cuisine?"
    assert parts_of(two) == [
        "What is the most common cuisine?",
        "What is the average price of the places of that cuisine?",
    ]
    assert parts_of(QUESTION) == [QUESTION]
    assert parts_of("Which cuisine? And then? And? And more?") == ["Which cuisine? And then? And? And more?"]
    # text after the last question mark is a part too
    assert parts_of("Which cuisine? Tell me its price.") == ["Which cuisine?", "Tell me its price?"]


def test_chain_cuts_two_parts_people_write_in_one_sentence_or_two() -> None:
    assert parts_of("Which country has the most wines, and what is the average price of the wines from there?") == [
        "Which country has the most wines?",
        "what is the average price of the wines from there?",
    ]
    assert parts_of("which origin makes the most cars and how many of them have 4 cylinders") == [
        "which origin makes the most cars?",
        "how many of them have 4 cylinders?",
    ]
    assert parts_of("Find the busiest state. How many of its airports are in Dallas?") == [
        "Find the busiest state?",
        "How many of its airports are in Dallas?",
    ]
    # a relative clause, a question of one part with "and", and a comparison after a comma stay whole
    for whole in (
        "How many cars are from Japan and which have 4 cylinders?",
        "What is the average price and rating of Thai restaurants?",
        "Of the two most common subjects among courses, which has the higher average number of credits, and by how much?",
        "How many instructors who research global warming and who are tenured are there?",
    ):
        assert parts_of(whole) == [whole]
    groups = FinalAnswer(groups={"Thai": 31.0, "Greek": 12.5, "French": 20.0})
    assert pick(groups, "Which cuisine has the highest average price?") == "Thai"
    assert pick(groups, "Which cuisine has the lowest average price?") == "Greek"
    assert pick(FinalAnswer(names=["French", "Greek"]), "What is the most common cuisine?") == "French"
    assert pick(FinalAnswer(names=["French", "Greek"]), "What is the least common cuisine?") == "Greek"
    assert pick(FinalAnswer(), "Which?") is None


def test_chain_answers_part_by_part_and_commits_the_pick_with_the_last_answer() -> None:
    """The second part is asked naming the first part's value; one run, steps in order, one answer."""
    question = "What is the most common cuisine? What is the average price of the places of that cuisine?"
    top = {
        "collection_name": NAME,
        "text_property_aggregation": {"property_name": "cuisine", "metrics": "TOP_OCCURRENCES"},
    }
    french = {
        "collection_name": NAME,
        "text_property_filter": {"property_name": "cuisine", "operator": "=", "value": "French"},
        "integer_property_aggregation": {"property_name": "price", "metrics": "MEAN"},
    }
    prices = [
        o.properties["price"] for o in OBJECTS if o.properties.get("cuisine") == "French" and o.properties["price"]
    ]

    def reply(messages: list[ModelMessage], _tools: Any) -> ModelReply:
        asked = next(p.content for p in all_parts(messages) if isinstance(p, UserPromptPart))
        second = "French" in asked
        if schema_name(model.calls[-1]["response_format"]) == "FollowUpQuestion":
            return ModelReply(content=json.dumps({"question": "What is the average price of the French places?"}))
        if is_commit_request(model.calls[-1]["response_format"]):
            answer = {"numbers": [sum(prices) / len(prices)]} if second else {"names": ["French", "Greek"]}
            return ModelReply(content=json.dumps(answer))
        if not tool_returns(messages):
            return tool_reply("query_database", french if second else top)
        return ModelReply(content="Here it is.")

    model = FunctionModel(reply)
    heard: list[int] = []
    run = build_strategy("chain").run(
        model, executor(), tools(), AgentConfig(), question, on_call=lambda step, _call: heard.append(step)
    )
    assert [c.arguments for c in run.calls()] == [top, french]
    assert [s.index for s in run.steps] == list(range(len(run.steps))) and heard == [0, 2]
    assert run.answer is not None and run.answer.names == ["French"]
    assert run.answer.numbers == pytest.approx([sum(prices) / len(prices)])
    assert run.question == question and run.strategy == "chain"
    [first, second] = run.strategy_notes["chain"]["parts"]
    assert first["picked"] == "French" and first["next"] == "rewritten"
    assert second["question"] == "What is the average price of the French places?"
    assert "French" in (run.final_answer or "")


def test_chain_picks_the_group_of_a_per_group_result_when_the_part_committed_a_bare_number() -> None:
    question = "Which cuisine has the highest average price? How many seats do the places of that cuisine have?"
    per_cuisine = PER_CUISINE
    means = executor().execute(per_cuisine).groups or {}
    highest = max(means, key=lambda key: means[key].aggregations["price"]["MEAN"] or 0)

    def reply(messages: list[ModelMessage], _tools: Any) -> ModelReply:
        asked = next(p.content for p in all_parts(messages) if isinstance(p, UserPromptPart))
        name = schema_name(model.calls[-1]["response_format"])
        if name == "FollowUpQuestion":
            return ModelReply(content=json.dumps({"question": f"How many seats do the {highest} places have?"}))
        if is_commit_request(model.calls[-1]["response_format"]):
            return ModelReply(content=json.dumps({"numbers": [99.0]}))  # the highest mean, not the cuisine
        if not tool_returns(messages):
            return tool_reply("query_database", MEAN_PRICE if highest in asked else per_cuisine)
        return ModelReply(content="Here it is.")

    model = FunctionModel(reply)
    run = build_strategy("chain").run(model, executor(), tools(), AgentConfig(), question)
    assert run.strategy_notes["chain"]["parts"][0]["picked"] == highest
    assert run.answer is not None and run.answer.names == [highest] and run.answer.numbers == [99.0]


def test_chain_asks_a_part_about_the_highest_group_statistic_per_group() -> None:
    """ "Which cuisine has the highest average price among places?" is asked per cuisine; the pick reads the
    per-group result, so the next part names the cuisine, not a number."""
    question = (
        "Which cuisine has the highest average price among places? How many seats do places of that cuisine have?"
    )
    first = "Which cuisine has the highest average price among places?"
    assert per_group_part(first) == "What is the average price of places per cuisine?"
    assert per_group_part("Which cuisine has the highest price?") is None
    per_cuisine = PER_CUISINE
    means = executor().execute(per_cuisine).groups or {}
    highest = max(means, key=lambda key: means[key].aggregations["price"]["MEAN"] or 0)
    heard: list[str] = []
    required: list[list[str]] = []

    def reply(messages: list[ModelMessage], offered: Any) -> ModelReply:
        asked = next(p.content for p in all_parts(messages) if isinstance(p, UserPromptPart))
        heard.append(asked)
        required.extend([t.parameters.get("required", []) for t in offered or []][:1])
        if schema_name(model.calls[-1]["response_format"]) == "FollowUpQuestion":
            return ModelReply(content=json.dumps({"question": f"How many seats do {highest} places have?"}))
        if is_commit_request(model.calls[-1]["response_format"]):
            return ModelReply(content=json.dumps({"numbers": [7.0]}))
        if not tool_returns(messages):
            return tool_reply("query_database", MEAN_PRICE if highest in asked else per_cuisine)
        return ModelReply(content="Here it is.")

    model = FunctionModel(reply)
    run = build_strategy("chain+typed").run(model, executor(), tools(), AgentConfig(), question)
    assert heard[0].endswith("What is the average price of places per cuisine?")
    assert "groupby_property" in required[0], "the per-group question's call must group (typed makes it required)"
    assert "groupby_property" not in required[-1], "the next part's call need not"
    assert run.strategy_notes["chain"]["parts"][0]["picked"] == highest
    assert run.answer is not None and run.answer.names == [highest] and run.answer.numbers == [7.0]


def test_a_question_of_one_part_asking_which_group_is_highest_is_asked_per_group_and_commits_the_name() -> None:
    question = "Which cuisine has the highest average price among places?"
    means = {
        k: g.aggregations["price"]["MEAN"] or 0.0 for k, g in (executor().execute(PER_CUISINE).groups or {}).items()
    }
    highest = max(means, key=lambda key: means[key])
    heard: list[str] = []

    def reply(messages: list[ModelMessage], offered: Any) -> ModelReply:
        heard.append(next(p.content for p in all_parts(messages) if isinstance(p, UserPromptPart)))
        if is_commit_request(model.calls[-1]["response_format"]):
            return ModelReply(content=json.dumps({"groups": means}))
        return tool_reply("query_database", PER_CUISINE) if not tool_returns(messages) else ModelReply(content="Here.")

    model = FunctionModel(reply)
    run = build_strategy("chain+typed").run(model, executor(), tools(), AgentConfig(), question)
    assert heard[0].endswith("What is the average price of places per cuisine?")
    assert run.question == question and run.strategy_notes["chain"]["parts"][0]["picked"] == highest
    assert run.answer is not None and run.answer.names == [highest] and not run.answer.numbers and not run.answer.groups
    assert run.final_answer is not None and run.final_answer.startswith(f"{highest}, the highest. ")


def test_chain_answers_a_one_sentence_comparison_from_one_per_group_result() -> None:
    """The comparison is asked as one per-group question; the agent takes the two most common groups by
    their counts and commits the one with the higher mean and the difference, whatever the model said."""
    question = "Of the two most common cuisines among places, which has the lower average price, and by how much?"
    comparison = comparison_of(question)
    assert comparison is not None and comparison.per_group() == "What is the average price of places per cuisine?"
    assert comparison_of("Of the two most common cuisines, which is cheaper?") is None
    per_cuisine = PER_CUISINE
    groups = executor().execute(per_cuisine).groups or {}
    common = sorted(groups, key=lambda key: groups[key].count, reverse=True)[:2]
    means = {key: groups[key].aggregations["price"]["MEAN"] or 0.0 for key in common}
    lower = min(common, key=lambda key: means[key])

    def reply(messages: list[ModelMessage], _tools: Any) -> ModelReply:
        asked = next(p.content for p in all_parts(messages) if isinstance(p, UserPromptPart))
        assert asked.endswith("What is the average price of places per cuisine?")
        if is_commit_request(model.calls[-1]["response_format"]):
            return ModelReply(content=json.dumps({"numbers": [1.0]}))
        if not tool_returns(messages):
            return tool_reply("query_database", per_cuisine if calls_per_group else MEAN_PRICE)
        return ModelReply(content="Here it is.")

    calls_per_group = True
    model = FunctionModel(reply)
    run = build_strategy("chain").run(model, executor(), tools(), AgentConfig(), question)
    assert run.question == question
    assert run.answer is not None and run.answer.names == [lower]
    assert run.answer.numbers == pytest.approx([abs(means[common[0]] - means[common[1]])])
    assert run.strategy_notes["chain"]["compared"]["among"] == common
    assert lower in (run.final_answer or "")
    calls_per_group = False  # no per-group result: the inner answer to the per-group question is kept
    model = FunctionModel(reply)
    run = build_strategy("chain").run(model, executor(), tools(), AgentConfig(), question)
    assert run.answer is not None and run.answer.names == [] and "winner" not in run.strategy_notes["chain"]["compared"]


def test_react_is_the_loop_unchanged() -> None:
    direct = Agent(mean_model(), executor(), tools(), AgentConfig()).run(QUESTION)
    via = build_strategy("react").run(mean_model(), executor(), tools(), AgentConfig(), QUESTION)
    assert via.strategy == "react" and direct.strategy == "react"
    assert via.messages == direct.messages
    assert via.answer is not None and via.answer.numbers == [5.0]  # the react commit, miscopy and all


def test_examples_go_in_the_user_turn_after_an_unchanged_prefix() -> None:
    shelf = Shelf(SHELF)
    model = mean_model()
    run = build_strategy("examples", retriever=shelf).run(model, executor(), tools(), AgentConfig(), QUESTION)
    plain = mean_model()
    Agent(plain, executor(), tools(), AgentConfig()).run(QUESTION)
    first, plain_first = list(all_parts(model.calls[0]["messages"])), list(all_parts(plain.calls[0]["messages"]))
    assert first[0] == plain_first[0], "the system prompt (the cached prefix) is the same"
    assert isinstance(first[1], UserPromptPart) and first[1].content.endswith(QUESTION)
    assert first[1].content == examples_preamble(SHELF[:DEFAULT_K]) + QUESTION
    assert f'"collection_name":"C{DEFAULT_K - 1}"' in first[1].content and f"C{DEFAULT_K}" not in first[1].content
    assert shelf.asked == [(QUESTION, DEFAULT_K)]
    assert run.question == QUESTION and run.strategy == "examples"
    assert [e["question"] for e in run.strategy_notes["examples"]] == [e.question for e in SHELF[:DEFAULT_K]]


def test_a_tool_held_to_one_collection_is_offered_shown_and_run_without_the_collection_slot() -> None:
    """One collection offered: the typed tool has no collection slot, the examples are shown without one, and
    the call written without it runs on that collection, recorded with it first."""
    written = {k: v for k, v in MEAN_PRICE.items() if k != "collection_name"}
    counted = SolvedExample(question="How many?", arguments={"collection_name": "C0", **written}, use_case="u0")
    model, seen = mean_model(calls=(written,)), []

    class Recording:
        name = "recording"

        def complete(self, request: Any) -> ModelReply:
            seen.append(request.tools)
            return model.complete(request)

    run = build_strategy("examples+typed", retriever=Shelf([counted])).run(
        Recording(), executor(), tools(), AgentConfig(), QUESTION
    )
    [tool] = seen[0]
    assert "collection_name" not in tool.parameters["properties"]
    turn = list(all_parts(model.calls[0]["messages"]))[1].content
    assert '"collection_name"' not in turn and '"integer_property_aggregation"' in turn
    [call] = run.calls()
    assert call.ok and call.arguments == MEAN_PRICE and next(iter(call.arguments)) == "collection_name"
    assert "collection_name" not in json.loads(call.raw_arguments)
    assert run.strategy_notes["examples"][0]["arguments"] == written


def test_a_follow_up_shows_as_many_examples_as_a_first_question() -> None:
    shelf = Shelf(SHELF)
    follows = Follows(question="How many Italian restaurants are there?", collection=NAME, where="cuisine = Italian")
    config = AgentConfig(follows=follows)
    build_strategy("examples", retriever=shelf).run(mean_model(), executor(), tools(), config, QUESTION)
    build_strategy("examples", retriever=shelf).run(mean_model(), executor(), tools(), AgentConfig(), QUESTION)
    assert shelf.asked == [(QUESTION, DEFAULT_K), (QUESTION, DEFAULT_K)]
    build_strategy("examples", retriever=shelf, k=0).run(mean_model(), executor(), tools(), config, QUESTION)
    assert shelf.asked[2:] == [], "no examples asked is still none for a follow-up"


def test_grounded_copies_the_value_pointed_at_never_the_models_digits() -> None:
    def point(messages: list[ModelMessage], _turn: int) -> dict[str, Any]:
        [fact_id] = re.findall(r"^(c2\.price\.\S+) = ", content(messages[-1]), re.MULTILINE)
        return {"numbers": [fact_id], "names": [], "groups": "", "cannot_answer": ""}

    model = mean_model(point, calls=(LISTING, MEAN_PRICE))
    run = build_strategy("grounded").run(model, executor(), tools(), AgentConfig(), QUESTION)
    assert run.answer is not None and run.answer.numbers == [pytest.approx(true_mean(), rel=1e-12)]
    # the prose said 5: the user reads the committed mean instead, and the trace keeps what the prose said
    assert run.strategy == "grounded" and run.final_answer == answer_text(run.answer)
    assert run.strategy_notes["grounded"]["text_replaced"] == "The average price is 5."
    sent = model.calls[-1]["response_format"].json_schema
    assert "c2.price" in json.dumps(sent["properties"]["numbers"]["items"]["enum"])  # ids as a grammar
    assert len(run.strategy_notes["grounded"]["attempts"]) == 1
    assert run.usage.completion_tokens == sum(s.usage.completion_tokens for s in run.steps)  # no usage lost


def test_grounded_verifies_and_retries_once() -> None:
    def point(messages: list[ModelMessage], turn: int) -> dict[str, Any]:
        if turn == 2:  # the question, then the grounded request: points at nothing
            return {"numbers": [], "names": [], "groups": "", "cannot_answer": ""}
        [fact_id] = re.findall(r"^(c2\.price\.\S+) = ", content(messages[-3]), re.MULTILINE)
        assert "pointed at no value" in content(messages[-1])
        return {"numbers": [fact_id], "names": [], "groups": "", "cannot_answer": ""}

    model = mean_model(point, calls=(LISTING, MEAN_PRICE))
    run = build_strategy("grounded").run(model, executor(), tools(), AgentConfig(), QUESTION)
    attempts = run.strategy_notes["grounded"]["attempts"]
    assert [a["problem"] is None for a in attempts] == [False, True]
    assert run.answer is not None and run.answer.numbers == [pytest.approx(true_mean())]


def test_grounded_records_an_answer_it_could_not_verify_after_the_retry() -> None:
    never = build_strategy("grounded").run(
        mean_model(
            lambda _m, _t: {"numbers": ["c9.nothing"], "names": [], "groups": "", "cannot_answer": ""},
            calls=(LISTING, MEAN_PRICE),
        ),
        executor(),
        tools(),
        AgentConfig(),
        QUESTION,
    )
    assert never.commit is not None and never.answer is None
    assert "no value has the id c9.nothing" in (never.commit.error or "")
    assert len(never.strategy_notes["grounded"]["attempts"]) == 2


def test_grounded_writes_one_calls_one_answer_itself_without_a_commit_turn() -> None:
    model = mean_model(lambda _m, _t: pytest.fail("nothing to point at: no grounded turn"))
    config = AgentConfig(reading=Reading(statistic="average"))  # as the check read the question
    run = build_strategy("grounded").run(model, executor(), tools(), config, QUESTION)
    assert run.answer is not None and run.answer.numbers == [pytest.approx(true_mean(), rel=1e-12)]
    assert run.strategy_notes["grounded"]["derived"] is True
    assert not any(is_commit_request(call["response_format"]) for call in model.calls), "no commit turn"
    assert len(model.calls) == 1, "the call only: the loop ends at the result that answers, no prose turn"
    # the sentence a person reads: what was computed, over how many objects, rounded; it states the commit
    assert (
        run.outcome == "answered" and run.final_answer == f"The average price of the 40 offline is {true_mean():.2f}."
    )
    assert text_agrees(run.final_answer, run.answer)


def test_a_result_of_another_statistic_goes_on_to_the_models_next_turn() -> None:
    for statistic in ("", "count", "maximum"):  # unread, or not what the mean computes
        model = mean_model(lambda _m, _t: pytest.fail("nothing to point at: no grounded turn"))
        run = build_strategy("grounded").run(
            model, executor(), tools(), AgentConfig(reading=Reading(statistic=statistic)), QUESTION
        )
        assert len(model.calls) == 2 and run.strategy_notes["grounded"]["text_replaced"] == "The average price is 5."
        assert run.answer is not None and run.answer.numbers == [pytest.approx(true_mean(), rel=1e-12)]


def test_a_question_of_one_part_ends_at_the_first_result_that_holds_an_answer_whatever_the_statistic() -> None:
    """`chain` asks one part at a time: the check's statistic ("none", or another) no longer sends the loop on
    to a prose turn whose answer would be derived from the same result all the same."""
    for statistic in ("", "none", "maximum"):
        model = mean_model(lambda _m, _t: pytest.fail("nothing to point at: no grounded turn"))
        run = build_strategy("chain+grounded").run(
            model, executor(), tools(), AgentConfig(reading=Reading(statistic=statistic)), QUESTION
        )
        assert len(model.calls) == 1, "the call only: no prose turn"
        assert run.answer is not None and run.answer.numbers == [pytest.approx(true_mean(), rel=1e-12)]
        assert run.final_answer == f"The average price of the 40 offline is {true_mean():.2f}."


def point_at_the_second_mean(messages: list[ModelMessage], _tools: Any) -> dict[str, Any]:
    """A grounded commit that points at the mean of the second call's result."""
    return {
        "numbers": re.findall(r"^(c2\.price\.\S+) = ", content(messages[-1]), re.MULTILINE),
        "names": [],
        "groups": "",
        "cannot_answer": "",
    }


def test_a_question_of_one_part_goes_on_past_names_where_a_number_is_asked() -> None:
    """ "The average price of the most common cuisine?" is one sentence: its first result is a pick."""
    top = {
        "collection_name": NAME,
        "text_property_aggregation": {
            "property_name": "cuisine",
            "metrics": "TOP_OCCURRENCES",
            "top_occurrences_limit": 1,
        },
    }
    for statistic, calls in (("average", 2), ("most common", 1), ("none", 1)):
        model = mean_model(
            point_at_the_second_mean,
            calls=(top, MEAN_PRICE),
        )
        run = build_strategy("chain+grounded").run(
            model, executor(), tools(), AgentConfig(reading=Reading(statistic=statistic)), QUESTION
        )
        assert len(run.calls()) == calls, statistic
        if calls == 2:
            assert run.answer is not None and run.answer.numbers == [pytest.approx(true_mean(), rel=1e-12)]


def test_a_listing_first_goes_on_to_the_models_next_turn() -> None:
    model = mean_model(
        point_at_the_second_mean,
        calls=(LISTING, MEAN_PRICE),
    )
    run = build_strategy("grounded").run(model, executor(), tools(), AgentConfig(), QUESTION)
    assert len(run.calls()) == 2 and run.strategy_notes["grounded"]["text_replaced"] == "The average price is 5."
    assert "derived" not in run.strategy_notes["grounded"]


def test_derived_answers_are_the_results_one_answer_and_nothing_when_there_is_a_choice() -> None:
    run = executor().execute
    grouped = run({"collection_name": NAME, "groupby_property": "cuisine"})
    per_group = derived_answer(grouped)
    assert per_group is not None and per_group.groups == {k: float(g.count) for k, g in (grouped.groups or {}).items()}
    mean_per_group = derived_answer(run({**MEAN_PRICE, "groupby_property": "cuisine"}))
    assert mean_per_group is not None and set(mean_per_group.groups.values()) != {
        float(g.count) for g in (grouped.groups or {}).values()
    }, "the metric asked for, not the group sizes"
    top = derived_answer(
        run(
            {
                "collection_name": NAME,
                "text_property_aggregation": {
                    "property_name": "cuisine",
                    "metrics": "TOP_OCCURRENCES",
                    "top_occurrences_limit": 2,
                },
            }
        )
    )
    assert top is not None and len(top.names) == 2 and not top.numbers
    assert derived_answer(run(LISTING)) is None, "a listing: the objects are the answer, the model points"
    assert (
        derived_answer(
            run(
                {"collection_name": NAME, "integer_property_aggregation": {"property_name": "price", "metrics": "TYPE"}}
            )
        )
        is None
    )
    counted = run(
        {"collection_name": NAME, "text_property_aggregation": {"property_name": "cuisine", "metrics": "COUNT"}}
    )
    lacking = counted.model_copy(update={"aggregations": {"cuisine": {"COUNT": (counted.total_count or 0) - 3}}})
    assert derived_answer(lacking) == FinalAnswer(numbers=[float(counted.total_count or 0)]), "the objects counted"


def test_facts_cover_counts_groups_and_objects() -> None:
    grouped = executor().execute({"collection_name": NAME, "groupby_property": "cuisine"})
    listed = executor().execute(
        {
            "collection_name": NAME,
            "text_property_filter": {
                "property_name": "cuisine",
                "operator": "=",
                "value": next(o.properties["cuisine"] for o in OBJECTS if o.properties.get("cuisine")),
            },
        }
    )
    facts = {f.id: f for f in facts_of([grouped, listed])}
    per_group = facts["c1.per_group.count"].groups
    assert per_group is not None and sum(per_group.values()) == sum(g.count for g in (grouped.groups or {}).values())
    answer = answer_from(json.dumps({"groups": "c1.per_group.count", "names": ["c2.o1.title"]}), list(facts.values()))
    assert answer.groups == per_group and answer.names == [listed.objects[0].properties["title"]]
    assert answer.sources == [listed.objects[0].uuid[:8]]


@pytest.mark.parametrize(
    "name",
    ["react", "check", "grounded", "decompose", "decompose+grounded", "plan", "plan+grounded", "check+refine+grounded"],
)
def test_the_oracle_passes_through_every_strategy(name: str) -> None:
    oracle = OracleModel(MEAN_PRICE).knowing([MEAN_PRICE], "about that", {"numbers": [true_mean()]})
    run = build_strategy(name).run(oracle, executor(), tools(), AgentConfig(), QUESTION)
    assert run.answer is not None and run.answer.numbers == [pytest.approx(true_mean())]
    assert run.strategy == name


class _Stopped(OracleModel):
    """The oracle behind a server that honours `stop`: the check's reply ends before its statistic."""

    def complete(self, request: Any) -> ModelReply:
        if request.schema_name == CHECK_SCHEMA_NAME:
            return ModelReply(content=f'{{"collection": "{NAME}", "asks_for": "the price", ')
        return super().complete(request)


def test_check_refuses_what_the_database_lacks_before_any_query_and_passes_the_rest_on() -> None:
    lacking = OracleModel.abstaining("no salary")
    run = build_strategy("check").run(lacking, executor(), tools(), AgentConfig(), "How high is the average salary?")
    assert run.answer is not None and run.answer.refuses and not run.calls()
    assert run.strategy_notes["check"]["decision"]["verdict"] == NOT_LISTED
    kind = build_strategy("check").run(lacking, executor(), tools(), AgentConfig(), "What is the average salary?")
    assert kind.strategy_notes["check"]["decision"] == {"unheld_kind": "salary"}, "no request: nothing holds it"
    answered = build_strategy("check").run(OracleModel(MEAN_PRICE), executor(), tools(), AgentConfig(), QUESTION)
    decided = answered.strategy_notes["check"]["decision"]
    assert decided == {"collection": NAME, "asks_for": "", "statistic": "none", "verdict": LISTED}, "its own"
    assert [c.arguments for c in answered.calls()] == [MEAN_PRICE]
    read = build_strategy("check").run(_Stopped(MEAN_PRICE), executor(), tools(), AgentConfig(), QUESTION)
    assert read.strategy_notes["check"]["decision"]["statistic"] == "average", "from the question's words"
    shown = listing(list(SCHEMA.collections))
    assert shown.startswith(f"{NAME}: title (") and "price (" in shown, "every property, with what it holds"
    fine = {"verdict": LISTED, "asks_for": "the average price", "statistic": "average"}
    assert not refusal(fine)
    assert "variance" in refusal({**fine, "statistic": "variance"})
    assert "standard deviation" in refusal({**fine, "asks_for": "the standard deviation of prices"}), "in its words"
    assert "no property" in refusal({**fine, "verdict": NOT_LISTED})
    assert "variance" in refusal(fine, "What is the variance of the ticket prices?"), "in the question's words"
    assert not refusal(fine, "What is the average ticket price?")
    mapped = {**fine, "verdict": NOT_LISTED, "asks_for": "price"}
    assert refusal(mapped, "How much rain fell?") == "no property of the database holds what the question asks for"
    assert refusal(mapped, "What is the mean price?").endswith("asks for (price)"), "the question's own words"
    for copied in ("none", "what it asks for, in a few words"):  # the prompt's words say nothing: not shown
        said = refusal({**mapped, "asks_for": copied}, "How many have a patient rating above 4.5?")
        assert said == "no property of the database holds what the question asks for", copied
    for written in ("whats the std dev of prices", "the stdev of the prices", "are price and rating correlated"):
        assert "the query tool cannot compute" in refusal(fine, written), written
    assert not refusal(fine, "which standard rooms cost most?"), "a word that only begins like one"


def test_check_refuses_a_name_no_unsearchable_collection_holds_without_asking_the_model() -> None:
    """A collection without a vectorizer can only filter: a name nothing of it holds has no answer there."""
    # a new schema, not a copy: a copy keeps the views the original cached
    unsearchable = DatabaseSchema(collections=(SCHEMA.collections[0].model_copy(update={"searchable": False}),))
    data = ReferenceExecutor(unsearchable, {NAME: OBJECTS})
    silent = FunctionModel(lambda *_: pytest.fail("no request: the data decides"))
    asked = "What is the average price of Zanzibar's dishes?"
    run = build_strategy("check").run(silent, data, tools(), AgentConfig(), asked)
    assert run.answer is not None and run.answer.refuses and not run.calls()
    assert run.final_answer.endswith('nothing in the database is named "Zanzibar".')
    assert run.strategy_notes["check"]["decision"] == {"unheld_names": ["Zanzibar"]}
    # a stored value, a word inside a title: the model is asked
    for named in ("What is the average price of Japanese dishes?", "How many Rustic places are there?"):
        run = build_strategy("check").run(OracleModel(MEAN_PRICE), data, tools(), AgentConfig(), named)
        assert "unheld_names" not in run.strategy_notes["check"]["decision"], named
    # a collection that can search: the name may be searched for, so the rule does not read it
    run = build_strategy("check").run(OracleModel(MEAN_PRICE), executor(), tools(), AgentConfig(), asked)
    assert "unheld_names" not in run.strategy_notes["check"]["decision"]


def checking_model(asks_for: str) -> FunctionModel:
    """Checks with `asks_for`, the verdict "listed"; then calls the mean price, says 5 and commits the mean."""

    def reply(messages: list[ModelMessage], _tools: Any) -> ModelReply:
        name = schema_name(model.calls[-1]["response_format"])
        if name == "QuestionCheck":
            return ModelReply(content=json.dumps({"collection": NAME, "asks_for": asks_for, "statistic": "average"}))
        if name == "CheckVerdict":
            return ModelReply(content=json.dumps({"verdict": LISTED}))
        if name is not None:  # the commit
            return ModelReply(content=json.dumps({"numbers": [true_mean()]}))
        return tool_reply("query_database", MEAN_PRICE) if not tool_returns(messages) else ModelReply(content="5")

    model = FunctionModel(reply)
    return model


def test_words_copied_from_the_prompt_are_no_sign_that_only_the_objects_are_asked() -> None:
    assert asking_alone("how many") and asking_alone("count")
    assert not asking_alone("none") and not asking_alone("None."), "the statistic's choice written as what is asked"
    assert not asking_alone("what it asks for, in a few words"), "the hint written back"


def test_a_follow_up_naming_only_what_its_earlier_collection_holds_needs_no_check_request() -> None:
    """ "And what about Japanese ones?" or "And how many of those are open late?" name only stored values and
    property names of the collection the earlier answer rested on: no request, asked again or not; words no
    property names ("their salaries"), an earlier turn with no collection, or another collection named, are
    checked."""
    earlier = Follows(question="What is the average price of Italian places?", collection=NAME, where="x", again=True)
    other = sample_schema("Kitchens")
    both = DatabaseSchema(collections=(SCHEMA.collections[0], other.collections[0]))
    two = (ReferenceExecutor(both, {NAME: OBJECTS, "Kitchens": OBJECTS}), build_tools(both, counter=estimate_counter()))
    for question, follows, database, checked in (
        ("And what about Japanese ones?", earlier, (executor(), tools()), False),
        ("And what about Japanese ones?", earlier.model_copy(update={"again": False}), (executor(), tools()), False),
        ("And how many of those are open late?", earlier.model_copy(update={"again": False}), two, False),
        ("And what about their salaries?", earlier, (executor(), tools()), True),
        ("And what about Japanese ones?", earlier.model_copy(update={"collection": ""}), (executor(), tools()), True),
        ("And how many kitchens are open late among those?", earlier, two, True),
    ):
        model = checking_model("average price")
        run = build_strategy("check").run(model, *database, AgentConfig(follows=follows), question)
        asked = [schema_name(c["response_format"]) for c in model.calls]
        assert ("QuestionCheck" in asked) is checked, (question, follows)
        assert run.strategy_notes["check"]["decision"].get("earlier_holds", False) is not checked
        assert [c.arguments for c in run.calls()] == [MEAN_PRICE], "the query runs either way"


def test_a_follow_up_is_checked_on_the_collection_its_objects_are_in() -> None:
    """ "those" are the earlier answer's objects: the model's choice of another collection does not move the
    check, nor does a property word of another collection; naming another collection does."""
    earlier = Follows(question="How many kitchens are open late?", collection="Kitchens", where="x")
    both = DatabaseSchema(collections=(SCHEMA.collections[0], sample_schema("Kitchens").collections[0]))
    two = (ReferenceExecutor(both, {NAME: OBJECTS, "Kitchens": OBJECTS}), build_tools(both, counter=estimate_counter()))
    for question, checked in (
        ("And what is the average cost of those?", "Kitchens"),
        ("And of the offline ones?", NAME),
    ):
        model = checking_model("average price")  # it names the first collection
        run = build_strategy("check").run(model, *two, AgentConfig(follows=earlier), question)
        decision = run.strategy_notes["check"]["decision"]
        assert decision["collection"] == checked, question
        assert ("chose" in decision) is (checked == "Kitchens"), decision


@pytest.mark.parametrize("copied", ["none", "what it asks for, in a few words"])
def test_where_the_model_says_nothing_of_what_is_asked_the_question_s_words_are_read(copied: str) -> None:
    """ "none" written as what is asked says nothing (the verdict is asked), but the question's own words may:
    "And how many of those are tenured?" names a property, and needs no verdict (6 of 55 follow-ups)."""
    for question, verdict in (("And what is the average price of those?", False), ("And their star rating?", True)):
        model = checking_model(copied)
        run = build_strategy("check").run(model, executor(), tools(), AgentConfig(), question)
        asked = [schema_name(c["response_format"]) for c in model.calls]
        assert ("CheckVerdict" in asked) is verdict, question
        assert run.strategy_notes["check"]["decision"].get("named_by_properties", False) is not verdict


@pytest.mark.parametrize(
    ("asks_for", "named"),
    [
        ("average tuition fee", False),  # no collection, property or description says it
        ("phone numbers", False),
        ("average price", True),  # a property names it: no verdict
        ("the cuisines", True),  # forms of a word meet
        ("price of the late places", True),  # "places" is no property's word: the verdict decides
        ("how many", True),  # a statistic alone asks for nothing the database must name
        ("maximum temperature", True),  # "temp" names it
        ("the 3 most common media", True),  # the Latin plural of `medium`
        ("the most common meduims", True),  # a typo of six letters or more: two letters swapped
        ("the cheapest prcie", False),  # a shorter word a letter apart is another word
        ("what it asks for, in a few words.", True),  # the prompt's hint written back says nothing: the verdict decides
        ("none", True),  # the statistic's "none" written as what is asked says nothing either: the verdict decides
    ],
)
def test_check_refuses_without_a_verdict_what_no_word_of_the_database_names(asks_for: str, named: bool) -> None:
    weather = CollectionSchema(
        name="Weather",
        properties=(
            PropertySchema(name="temp_max", data_type="number"),
            PropertySchema(name="medium", data_type="text"),
        ),
    )
    assert named_in(asks_for, [*SCHEMA.collections, weather]) is named

    model = checking_model(asks_for)
    run = build_strategy("check").run(model, executor(), tools(), AgentConfig(), f"Tell me the {asks_for}.")
    asked = [schema_name(c["response_format"]) for c in model.calls]
    if properties_name(asks_for, SCHEMA.collections[0]):  # a property names each word: no verdict, the query runs
        assert asked[0] == "QuestionCheck" and "CheckVerdict" not in asked
        assert [c.arguments for c in run.calls()] == [MEAN_PRICE]
        assert run.strategy_notes["check"]["decision"]["named_by_properties"] is True
    elif asking_alone(asks_for):  # words of asking alone ask for the objects: no verdict, the query runs
        assert asked[0] == "QuestionCheck" and "CheckVerdict" not in asked
        assert run.strategy_notes["check"]["decision"]["asks_for_objects"] is True
    elif named_in(asks_for, list(SCHEMA.collections)):  # the verdict decides, and it says listed: the query runs
        assert asked[:2] == ["QuestionCheck", "CheckVerdict"] and [c.arguments for c in run.calls()] == [MEAN_PRICE]
        [verdict] = [p.content for p in all_parts(model.calls[1]["messages"]) if isinstance(p, UserPromptPart)]
        assert verdict.startswith(f"Collection {NAME}: ") and "price (" in verdict, "one collection, what each holds"
    else:  # refused at once: no verdict asked, no query run
        assert asked == ["QuestionCheck"] and run.answer is not None and run.answer.refuses and not run.calls()
        assert run.strategy_notes["check"]["decision"]["named_in_database"] is False


@pytest.mark.parametrize(
    ("asks_for", "invented"),
    [
        ("average_price_stars", ["stars"]),  # a word nothing in the collection names
        ("avgPrice", []),  # a statistic's abbreviation and a property's word
        ("price", []),  # a property's own name
        ("top_3_cuisines", []),  # a number is no word a property must hold
        ("price stars", []),  # words, not a name: what the verdict is for
    ],
)
def test_a_property_the_model_invents_is_refused_without_a_verdict(asks_for: str, invented: list[str]) -> None:
    [collection] = SCHEMA.collections
    assert invented_property(asks_for, collection) == invented

    model = checking_model(asks_for)
    run = build_strategy("check").run(model, executor(), tools(), AgentConfig(), "What is the average price in stars?")
    asked = [schema_name(c["response_format"]) for c in model.calls]
    if invented:  # refused with the words it lacks: no verdict asked, no query run
        assert asked == ["QuestionCheck"] and run.answer is not None and run.answer.refuses and not run.calls()
        assert run.final_answer and run.final_answer.endswith("holds the stars.")
    else:
        assert run.calls(), "the query runs"


def test_a_property_the_model_names_for_words_the_question_does_not_write_is_left_to_the_verdict() -> None:
    assert written_in("average price", "What is the mean ticket price?")
    assert written_in("weight", "Which is the heaviest?"), "a word of size writes its measure"
    assert not written_in("yield_bushels", "How much rain fell at Waseca in 1931?"), "the model's own mapping"
    assert not written_in("name, state", "Which airport in Texas has the most runways?")
    assert written_in("averageWaitMinutes", "The shortest average wait?"), "a unit a property's name ends in"
    assert not written_in("minutes", "The shortest average wait?"), "a unit alone is what is asked"
    assert not written_in("year", "How old is the oldest penguin?")


def test_refine_turns_back_a_search_holding_conditions_and_the_corrected_call_runs() -> None:
    sql = {"collection_name": NAME, "search_query": "open_late = true AND price < 20"}
    fixed = {**MEAN_PRICE, "boolean_property_filter": {"property_name": "open_late", "operator": "=", "value": True}}
    model = mean_model(calls=(sql, fixed))
    run = build_strategy("refine").run(model, executor(), tools(), AgentConfig(), QUESTION)
    first, second = run.calls()
    assert (
        first.error is not None and first.error.field == "search_query" and "(=, true, AND, <)" in first.error.message
    )
    assert first.result is None, "turned back before it ran"
    assert second.ok and second.arguments == fixed and run.strategy_notes["refine"] == {"turned_back": 1}
    stubborn = build_strategy("refine").run(mean_model(calls=(sql, sql)), executor(), tools(), AgentConfig(), QUESTION)
    again = stubborn.calls()[1].error  # the reference executor runs no search: its own error, not refine's
    assert again is not None and again.code == "unsupported_query", "the same search sent again is run"
    properties = {"isOnline", "credits", "price"}
    assert conditions_in("courses on isOnline topics", properties) == ["isOnline"]
    assert conditions_in("back or knee pain", properties) == [] and conditions_in("price of art", properties) == []


def test_no_gold_search_query_holds_what_refine_turns_back() -> None:
    for case in load_split():
        calls = [case.ground_truth.to_tool_arguments(), *(step.call for step in case.chain)]
        for call in calls:
            assert not conditions_in(str(call.get("search_query") or ""), set()), case.id


def test_the_committed_sample_is_the_seeded_rules_and_covers_every_component() -> None:
    assert json.loads(SAMPLE_PATH.read_text()) == build_sample(), "rebuild: python -m evaluation.samples"
    cases = read_sample()
    single = [c for c in cases if isinstance(c, Case) and len(c.chain) <= 1]
    multi = [c for c in cases if isinstance(c, Case) and len(c.chain) > 1]
    assert (len(single), len(multi), len(cases) - len(single) - len(multi)) == (60, 30, 20)
    every = {str(component) for case in load_split() for component in case.components}
    assert {str(component) for case in single for component in case.components} == every
    assert len({c.id for c in cases}) == 110


def test_decompose_decides_in_three_enforced_steps_then_runs_the_call() -> None:
    asked: list[tuple[str, dict[str, Any]]] = []
    decisions = {
        "Decompose_collection": {"collection": NAME},
        "Decompose_kind": {"kind": "aggregate"},
        "Decompose_arguments": {"integer_property_aggregation": {"property_name": "price", "metrics": "MEAN"}},
    }

    def reply(messages: list[ModelMessage], tools_sent: Any) -> ModelReply:
        name = schema_name(model.calls[-1]["response_format"])
        if name in decisions:
            asked.append((name, model.calls[-1]["response_format"].json_schema))
            assert tools_sent is None and content(messages[-1]).startswith(QUESTION)
            return ModelReply(content=json.dumps(decisions[name]))
        if is_commit_request(model.calls[-1]["response_format"]):
            return ModelReply(content=json.dumps({"numbers": [1]}))
        return ModelReply(content="The mean is as shown.")

    model = FunctionModel(reply)
    run = build_strategy("decompose").run(model, executor(), tools(), AgentConfig(), QUESTION)
    assert [name for name, _ in asked] == ["Decompose_kind", "Decompose_arguments"]  # one collection: no step 1
    narrowed = asked[1][1]["properties"]
    assert narrowed["integer_property_aggregation"]["properties"]["property_name"]["enum"] == ["price", "seats"]
    assert narrowed["text_property_filter"]["properties"]["property_name"]["enum"] == ["title", "cuisine"]
    assert "groupby_property" not in narrowed
    [call] = run.calls()
    assert call.arguments == MEAN_PRICE and call.ok and run.outcome == "answered"
    assert run.strategy_notes["decompose"]["decisions"]["kind"] == "aggregate"


def test_decompose_with_several_collections_asks_for_the_collection_first() -> None:
    schema = DatabaseSchema(collections=(*SCHEMA.collections, *sample_schema("Other").collections))
    several = build_tools(schema, counter=estimate_counter())
    oracle = OracleModel(MEAN_PRICE).knowing([MEAN_PRICE], "about that", {"numbers": [true_mean()]})
    run = build_strategy("decompose+grounded").run(
        oracle, ReferenceExecutor(schema, {NAME: OBJECTS, "Other": []}), several, AgentConfig(), QUESTION
    )
    assert run.strategy_notes["decompose"]["decisions"]["collection"] == NAME
    assert [c.arguments for c in run.calls()] == [MEAN_PRICE]
    assert run.answer is not None and run.answer.numbers == [pytest.approx(true_mean())]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--question", "q", "--call", "[1]"], "--call must be a JSON object"),
        (["--question", "q", "--call", "{"], "--call is not JSON"),
        (["--question", "q", "--call", '{"collection": "X"}'], "--call is not query_database arguments"),
        (["--question", "q"], "give --question and --call"),
        (["--from-run", "/nonexistent-run"], "holds no results.jsonl"),
    ],
)
def test_a_bad_example_is_bad_input_before_any_connection(args: list[str], message: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "dbgorilla", "examples", "add", *args], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 10 and message in result.stderr, result.stderr


def test_a_bad_strategy_name_is_a_usage_error() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "dbgorilla", "eval", "--strategy", "telepathy", "--model", "oracle"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 9 and "unknown strategy telepathy" in result.stderr, result.stderr


def test_plan_fills_a_later_call_from_an_earlier_result() -> None:
    by_cuisine = {"collection_name": NAME, "groupby_property": "cuisine"}
    then = {
        "collection_name": NAME,
        "text_property_filter": {"property_name": "cuisine", "operator": "=", "value": "{step1}"},
        "integer_property_aggregation": {"property_name": "price", "metrics": "MEAN"},
    }
    plan = {"steps": [{"call": by_cuisine, "pick": "most_common"}, {"call": then, "pick": "metric"}]}

    def reply(messages: list[ModelMessage], _tools: Any) -> ModelReply:
        name = schema_name(model.calls[-1]["response_format"])
        if name == "QueryPlan":
            assert '"{step1}"' in content(messages[-1])
            return ModelReply(content=json.dumps(plan))
        if is_commit_request(model.calls[-1]["response_format"]):
            return ModelReply(content=json.dumps({"numbers": [1]}))
        return ModelReply(content="That is the mean.")

    model = FunctionModel(reply)
    run = build_strategy("plan").run(model, executor(), tools(), AgentConfig(max_steps=2), QUESTION)
    counts: dict[str, int] = {}
    for obj in OBJECTS:
        if obj.properties.get("cuisine") is not None:
            counts[obj.properties["cuisine"]] = counts.get(obj.properties["cuisine"], 0) + 1
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
    first, second = run.calls()
    assert first.arguments == by_cuisine and second.ok
    assert second.arguments is not None and second.arguments["text_property_filter"]["value"] == top
    assert run.strategy_notes["plan"]["picked"]["step1"] == top and run.outcome == "answered"
    assert len(model.calls) == 3, "the plan, the answer after both results, the commit: no call retyped"


def test_grounded_computes_a_difference_of_two_values_pointed_at() -> None:
    first = executor().execute(
        {**MEAN_PRICE, "boolean_property_filter": {"property_name": "open_late", "operator": "=", "value": True}}
    )
    second = executor().execute(MEAN_PRICE)
    facts = facts_of([first, second])
    late, every = (next(f for f in facts if f.id.startswith(f"c{i}.price.")) for i in (1, 2))
    answer = answer_from(json.dumps({"differences": [{"of": every.id, "minus": late.id}]}), facts)
    assert answer.numbers == [pytest.approx(abs(float(every.value) - float(late.value)))]


def test_the_python_api_takes_a_strategy() -> None:
    def point(messages: list[ModelMessage], _turn: int) -> dict[str, Any]:
        [fact_id] = re.findall(r"^(c2\.price\.\S+) = ", content(messages[-1]), re.MULTILINE)
        return {"numbers": [fact_id], "names": [], "groups": "", "cannot_answer": ""}

    agent = QueryAgent(
        None, model=mean_model(point, calls=(LISTING, MEAN_PRICE)), executor=executor(), strategy="grounded"
    )
    response = agent.ask(QUESTION)
    assert response.trace.strategy == "grounded"
    assert response.answer is not None and response.answer.numbers == [pytest.approx(true_mean())]
    with pytest.raises(UnknownStrategy, match="query memory"):
        QueryAgent(None, model=mean_model(), executor=executor(), strategy="examples")
    shelf = Shelf(SHELF)
    streamed = list(
        QueryAgent(None, model=mean_model(), executor=executor(), strategy="examples", retriever=shelf).ask_stream(
            QUESTION
        )
    )
    assert streamed[-1].trace.strategy == "examples" and shelf.asked == [(QUESTION, DEFAULT_K)]


def test_examples_show_each_call_in_the_order_the_grammar_writes_it() -> None:
    stored = {  # as the memory keeps it: keys sorted, the group-by before the filter
        "collection_name": NAME,
        "groupby_property": "cuisine",
        "text_property_filter": {"operator": "=", "property_name": "cuisine", "value": "Thai"},
    }
    parameters = tools().tools[0]["function"]["parameters"]
    shown = in_schema_order(stored, parameters)
    assert list(shown) == ["collection_name", "text_property_filter", "groupby_property"]
    assert list(shown["text_property_filter"]) == ["property_name", "operator", "value"]
    preamble = examples_preamble([SolvedExample(question="q", arguments=stored)], parameters)
    assert preamble.index('"text_property_filter"') < preamble.index('"groupby_property"')


def _with_other() -> DatabaseSchema:
    """The sample collection and another whose properties are named differently ("price" -> "otherPrice")."""
    [other] = sample_schema("Other").collections
    renamed = tuple(p.model_copy(update={"name": f"other{p.name.title()}"}) for p in other.properties)
    return DatabaseSchema(collections=(*SCHEMA.collections, other.model_copy(update={"properties": renamed})))


@pytest.mark.parametrize(
    ("strategy", "numbers"),
    [("typed", ["price", "seats", "otherPrice", "otherSeats"]), ("check+typed", ["price", "seats"])],
)
def test_typed_offers_each_slot_only_the_properties_of_its_kind(strategy: str, numbers: list[str]) -> None:
    """Alone, every offered collection's properties; after `check`, only those of the collection it read, and
    only that collection named."""
    schema = _with_other()
    paper = ToolDesign(operations=ToolOperations.PAPER)  # the slots of one kind each (conditions take any)
    offered = build_tools(schema, paper, counter=estimate_counter())
    oracle = OracleModel(MEAN_PRICE).knowing([MEAN_PRICE], "about that", {"numbers": [true_mean()]})
    seen: list[Any] = []

    class Recording:
        name = "recording"

        def complete(self, request: Any) -> ModelReply:
            seen.append(request.tools)
            return oracle.complete(request)

    run = build_strategy(strategy).run(
        Recording(), ReferenceExecutor(schema, {NAME: OBJECTS, "Other": []}), offered, AgentConfig(), QUESTION
    )
    [tool] = next(tools for tools in seen if tools)
    slots = tool.parameters["properties"]
    kinds = {p.name: p.kind.value for c in schema.collections for p in c.properties if p.kind is not None}
    for slot, spec in slots.items():
        if slot in ("search_query", "collection_name"):
            continue
        choices = spec.get("enum") or spec["properties"]["property_name"]["enum"]
        wanted = (
            {"text", "boolean"} if slot == "groupby_property" else {slot.split("_")[0].replace("integer", "number")}
        )
        assert choices and {kinds[name] for name in choices} <= wanted, slot
    assert slots["integer_property_aggregation"]["properties"]["property_name"]["enum"] == numbers
    # alone, both collections offered; after `check`, only the one it read (its properties are the only ones),
    # which the tool answers for: no slot the model must fill with the one choice it has
    if strategy == "check+typed":
        assert "collection_name" not in slots and "collection_name" not in tool.parameters["required"]
    else:
        assert slots["collection_name"]["enum"] == [NAME, "Other"]
    assert tool.description == offered.tools[0]["function"]["description"]  # the prefix the cache keeps
    untouched = offered.tools[0]["function"]["parameters"]["properties"]["text_property_filter"]["properties"]
    assert "enum" not in untouched["property_name"]  # the tool given is not changed
    assert [c.arguments for c in run.calls()] == [MEAN_PRICE] and run.strategy == strategy


def test_typed_drops_a_slot_no_property_can_fill() -> None:
    from agent.tooldef import typed_tools

    only_text = DatabaseSchema(
        collections=(SCHEMA.collections[0].model_copy(update={"properties": SCHEMA.collections[0].properties[:1]}),)
    )
    slots = typed_tools(build_tools(only_text, counter=estimate_counter()), only_text).tools[0]["function"]
    assert "integer_property_filter" not in slots["parameters"]["properties"]
    assert slots["parameters"]["properties"]["text_property_filter"]["properties"]["property_name"]["enum"] == [
        only_text.collections[0].properties[0].name
    ]


@pytest.mark.parametrize(
    ("text", "answer", "agrees"),
    [
        ("The average price is 23.56 dollars.", FinalAnswer(numbers=[23.5558]), True),
        ("The average price is 23.5 dollars.", FinalAnswer(numbers=[23.5558]), False),
        ("There are 1,200 of them.", FinalAnswer(numbers=[1200]), True),
        ("5 wines match.", FinalAnswer(numbers=[17]), False),  # the prose's count is not the committed one
        ("Mostly Italian, then Thai.", FinalAnswer(names=["Italian", "Thai"]), True),
        ("Mostly Italian.", FinalAnswer(names=["Italian", "Thai"]), False),
        ("Spring: 31 and Fall: 27.", FinalAnswer(groups={"Spring": 31, "Fall": 27}), True),
        ("Spring: 31 and Fall: 26.", FinalAnswer(groups={"Spring": 31, "Fall": 27}), False),
        ("Whatever it says.", FinalAnswer(cannot_answer="no salary property"), True),
    ],
)
def test_prose_agrees_with_a_committed_answer_only_when_it_states_every_value(
    text: str, answer: Any, agrees: bool
) -> None:
    assert text_agrees(text, answer) is agrees


def test_no_question_of_our_splits_is_cut_where_it_was_not_before_the_one_sentence_rule() -> None:
    """The one-sentence and second-sentence cuts (2026-11-27) leave every question of our splits as the
    question-mark cut alone left it."""
    from fixtures.datasets.splits import use_case_splits

    for split in use_case_splits():
        for line in split_path(split).read_text(encoding="utf-8").splitlines():
            query = json.loads(line)["query"]
            marks = [p.strip() for p in re.findall(r"[^?]+\?", query)]
            rest = re.sub(r"[^?]+\?", "", query).strip()
            before = marks if 2 <= len(marks) <= 3 and not rest else [query]
            assert parts_of(query) == before, (split, query)


def test_which_group_has_the_highest_average_is_asked_per_group_with_or_without_its_population() -> None:
    assert per_group_part("Which site had the highest average yield?") == "What is the average yield per site?"


def test_a_question_about_a_kind_nothing_holds_is_refused_before_any_request() -> None:
    model = checking_model("color")
    run = build_strategy("check").run(model, executor(), tools(), AgentConfig(), "What's the color of cheap places?")
    assert model.calls == [] and run.answer is not None and run.answer.refuses and not run.calls()
    assert run.final_answer == "I cannot answer that from this database: no property of the database holds color."

    asked = build_strategy("check").run(
        checking_model("seats"), executor(), tools(), AgentConfig(), "Which cuisine has the most seats?"
    )
    assert asked.calls(), "a kind a property holds goes on to the query"


@pytest.mark.parametrize(
    ("question", "refused"),
    [
        ("How many seats do the places have on average?", False),  # the question spells `seats`: the verdict decides
        ("How many waiters do the places have on average?", True),  # it spells no property: refused at once
    ],
)
def test_words_of_the_model_s_own_no_property_names_refuse_only_where_the_question_names_none(
    question: str, refused: bool
) -> None:
    model = checking_model("siets")  # neither the question's word nor any in the database
    run = build_strategy("check").run(model, executor(), tools(), AgentConfig(), question)
    asked = [schema_name(c["response_format"]) for c in model.calls]
    if refused:
        assert asked == ["QuestionCheck"] and run.answer is not None and run.answer.refuses
    else:
        assert asked[:2] == ["QuestionCheck", "CheckVerdict"] and run.calls()


def test_a_follow_up_s_earlier_question_is_the_user_s_own_words_for_the_check() -> None:
    follows = Follows(question="What is the average price of the Italian places?", collection=NAME, where="x")
    asked = []
    for config in (AgentConfig(follows=follows), AgentConfig()):
        model = checking_model("average price")
        build_strategy("check").run(model, executor(), tools(), config, "And what about the Thai ones?")
        asked.append([schema_name(c["response_format"]) for c in model.calls if c.get("response_format")])
    assert "CheckVerdict" not in asked[0], "a property the user named a turn before: no verdict"
    assert "CheckVerdict" in asked[1], "words the user never wrote are the model's mapping: the verdict decides"
    pointed = "And how many of those are open late?"
    assert named_by_properties("how many of those are open late", pointed, SCHEMA.collections[0]), "those points"


def test_a_group_s_most_common_values_are_its_answer_written_per_group() -> None:
    """A group-by whose groups each hold their top values is answered from the result, each group with its
    names and how often each occurs there; no model turn points at counts and group names instead."""
    arguments = {
        "collection_name": NAME,
        "text_property_aggregation": {
            "property_name": "cuisine",
            "metrics": "TOP_OCCURRENCES",
            "top_occurrences_limit": 2,
        },
        "groupby_property": "open_late",
    }
    result = executor().execute(arguments)
    answer = derived_answer(result)
    assert answer is not None and not (answer.groups or answer.names or answer.numbers)
    tops = {
        group: [item for metrics in held.aggregations.values() for value in metrics.values() for item in value]
        for group, held in (result.groups or {}).items()
    }
    assert answer.group_names == {group: [str(item.value) for item in items] for group, items in tops.items()}
    assert all(len(names) == 2 for names in answer.group_names.values())
    text = answer_text(
        answer, ExecutedCall(tool_call_id="1", tool_name="q", raw_arguments="{}", arguments=arguments, result=result)
    )
    assert text.startswith("The 2 most common cuisine of offline by open late: ")
    for group, items in tops.items():
        assert f"{group}: {items[0].value} ({items[0].count})" in text
    assert text_agrees(text, answer) and not text_agrees("The answer is 52.", answer)
    assert grade_committed_abstention(answer).correct is False, "names per group are an answer, not a refusal"
    assert not answers_statistic(result, "most common"), "a later part picks one value; names per group are none"
    assert holds_the_answer("most common")(result) and not holds_the_answer("average")(result)
    mixed = result.model_copy(
        update={
            "groups": {
                **(result.groups or {}),
                "extra": next(iter((result.groups or {}).values())).model_copy(update={"aggregations": {}}),
            }
        }
    )
    assert derived_answer(mixed) is None, "names in some groups and a count in another: the model chooses"
