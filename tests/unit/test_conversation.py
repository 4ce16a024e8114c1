"""Conversations: what a follow-up keeps of the turn before it, and the `conversation` split.

The session runs over the reference executor of the restaurants use case (the generated objects), its
model scripted, so each number is the executor's: a follow-up that refers back runs with the earlier
conditions it lacks, one that names another value replaces the earlier one, one that does not refer
back starts afresh, and the amendment is recorded on the call.
"""

from __future__ import annotations

import hashlib
import json
from functools import partial
from typing import Any

import pytest

from agent import AgentConfig, ToolDesign
from agent.conversation import (
    Carried,
    Turn,
    TurnMemory,
    asks_again,
    carried_into,
    carry,
    context_of,
    conversation_of,
    keeps_from,
    refers_back,
)
from agent.query_agent import QueryAgent
from agent.session import AgentSession
from agent.testing import FunctionModel, tool_reply
from executors import compare_results
from executors.vocabulary import ToolOperations
from fixtures.authoring.compound import CompoundComposer
from fixtures.authoring.conversation import compose
from fixtures.datasets import SPLITS_DIR, read_dataset, read_meta
from fixtures.datasets.cases import operations_needed
from llm import ModelReply

ITALIAN = {"property_name": "cuisine", "operator": "=", "value": "Italian"}
CARRIED = Carried(collection="Restaurants", conditions=(ITALIAN,))
OPEN_NOW = {
    "collection_name": "Restaurants",
    "boolean_property_aggregation": {"property_name": "openNow", "metrics": "TOTAL_TRUE"},
}


@pytest.fixture(scope="module")
def composer() -> CompoundComposer:
    return CompoundComposer("restaurants")


@pytest.mark.parametrize(
    ("question", "follows"),
    [
        ("And how many of those are open now?", True),
        ("What is their average rating?", True),
        ("How many of them are vegetarian?", True),
        ("What about restaurants serving Japanese cuisine?", True),
        ("How many guests are expected in that city?", True),
        ("How many restaurants are open now?", False),
        ("How many restaurants are there?", False),
        ("Is there a restaurant open now?", False),
        ("How many guests are expected there?", True),
        ("Which restaurants that serve pasta are open late?", False),
        ("What is the average rating of Thai restaurants?", False),
    ],
)
def test_a_follow_up_is_told_by_its_words(question: str, follows: bool) -> None:
    assert refers_back(question) is follows
    earlier = [Turn(question="How many Italian restaurants are there?", answer="27", keeps=CARRIED)]
    assert (carried_into(question, earlier) is CARRIED) is follows
    assert carried_into(question, []) is None


def test_the_model_reads_what_a_follow_up_follows() -> None:
    turn = Turn(question="How many Italian restaurants are there?", answer="27", keeps=CARRIED)
    follows = context_of(turn)
    said = follows.context()
    assert said == (
        '(This follows the question "How many Italian restaurants are there?". '
        "Its answer rested on Restaurants where cuisine = Italian.)"
    )
    config = AgentConfig(follows=follows, question_context="Stored values: x.")
    asked = config.user_turn("And those open now?")
    # the question first, as every strategy reads it; the earlier question alone, its conditions carried
    question_only = '(This follows the question "How many Italian restaurants are there?".)'
    assert asked == f"And those open now?\n{question_only}\nStored values: x."
    # once the check has named the collection the earlier answer rested on, nothing of the earlier turn
    settled = config.read(collection="Restaurants")
    assert settled.user_turn("And those open now?") == "And those open now?\nStored values: x."
    elsewhere = config.read(collection="MenuItems")
    assert elsewhere.user_turn("And those open now?") == f"And those open now?\n{question_only}\nStored values: x."
    # a follow-up that asks the earlier question again of other objects is told what that one rested on
    again = AgentConfig(follows=context_of(turn, again=True))
    assert again.user_turn("And what about Thai ones?") == f"And what about Thai ones?\n{said}"
    # the check reads which collection it is about, not the earlier question's words nor its conditions
    brief = config.user_turn("And those open now?", brief=True)
    assert brief == "And those open now?\n(It follows a question on Restaurants.)\nStored values: x."
    unknown = Turn(question="How many Italian restaurants are there?", answer="27")
    assert (
        context_of(unknown).brief()
        == context_of(unknown).context()
        == ('(This follows the question "How many Italian restaurants are there?".)')
    )
    assert AgentConfig().user_turn("And those open now?") == "And those open now?"


def test_carry_adds_what_the_call_lacks_and_nothing_else(composer: CompoundComposer) -> None:
    validate = composer.executor.validate
    amended, why = carry(OPEN_NOW, CARRIED, validate)
    assert amended["conditions"] == [ITALIAN] and "cuisine = Italian" in why
    japanese = {**OPEN_NOW, "text_property_filter": {"property_name": "cuisine", "operator": "=", "value": "Japanese"}}
    assert carry(japanese, CARRIED, validate) == (japanese, "")  # another value of the property replaces it
    menu = {
        "collection_name": "MenuItems",
        "integer_property_aggregation": {"property_name": "price", "metrics": "MEAN"},
    }
    assert carry(menu, CARRIED, validate) == (menu, "")  # another collection
    either = {**OPEN_NOW, "conditions": [{"property_name": "openNow", "operator": "=", "value": True}], "match": "any"}
    assert carry(either, CARRIED, validate) == (either, "")  # it would join the alternatives
    broken = {**OPEN_NOW, "groupby_property": "nope"}
    assert carry(broken, CARRIED, validate) == (broken, "")  # the executor says why, as for any call
    asked = Carried(collection="Restaurants", conditions=(ITALIAN,), asked={"groupby_property": "openNow"})
    japanese_list = {"collection_name": "Restaurants", "text_property_filter": japanese["text_property_filter"]}
    again, why = carry(japanese_list, asked, validate, again=True)  # "and what about Japanese ones?"
    assert again == {**japanese_list, "groupby_property": "openNow"} and "asked what the earlier" in why
    assert carry(japanese_list, asked, validate)[0] == japanese_list  # not asked again: nothing added
    mean = {
        "collection_name": "Restaurants",
        "integer_property_aggregation": {"property_name": "averageRating", "metrics": "MEAN"},
    }
    grouped, why = carry({**mean, "groupby_property": "cuisine"}, CARRIED, validate)  # "their average rating?"
    assert grouped == {**mean, "conditions": [ITALIAN]} and "fixes it to one value" in why
    by_flag = {**mean, "groupby_property": "openNow"}
    assert carry(by_flag, CARRIED, validate)[0] == {**by_flag, "conditions": [ITALIAN]}  # a group-by it does not fix
    result = composer.run(amended)
    assert compare_results(result, composer.run({**OPEN_NOW, "text_property_filter": ITALIAN})) == []  # equal
    assert compare_results(result, composer.run(OPEN_NOW))


def test_the_conversation_amends_a_call_after_every_strategy(composer: CompoundComposer) -> None:
    """A filter a strategy leaves out (one no word of the question names, as `values` drops an invented
    "Thai") is then the earlier condition on that property: carried after the strategies, not before."""
    thai = {**OPEN_NOW, "text_property_filter": {"property_name": "cuisine", "operator": "=", "value": "Thai"}}

    def unnamed(arguments: dict[str, Any]) -> tuple[dict[str, Any], str]:
        kept = {k: v for k, v in arguments.items() if k != "text_property_filter"}
        return kept, "the question names no cuisine = Thai: the condition left out."

    kept = partial(carry, carried=CARRIED, validate=composer.executor.validate)
    config = AgentConfig(carry=kept).amended_by(unnamed)
    arguments, why = config.amended(thai)
    assert arguments == {**OPEN_NOW, "conditions": [ITALIAN]}
    assert (
        why
        == "the question names no cuisine = Thai: the condition left out. "
        + carry(OPEN_NOW, CARRIED, kept.keywords["validate"])[1]
    )
    assert AgentConfig().amended(thai) == (thai, ""), "no amendment: the call as written"


def test_what_a_turn_keeps(composer: CompoundComposer) -> None:
    validate = composer.executor.validate
    call = {
        "collection_name": "Restaurants",
        "conditions": [ITALIAN, {"property_name": "openNow", "operator": "=", "value": True}],
    }
    assert keeps_from(validate(call), []).conditions == tuple(call["conditions"])
    most = {
        "collection_name": "Restaurants",
        "text_property_aggregation": {
            "property_name": "cuisine",
            "metrics": "TOP_OCCURRENCES",
            "top_occurrences_limit": 1,
        },
    }
    kept = keeps_from(validate(most), ["Italian"])
    assert kept is not None and kept.conditions == CARRIED.conditions  # the value the answer named
    assert kept.asked == {"text_property_aggregation": most["text_property_aggregation"]}
    assert keeps_from(validate(most), ["Italian", "Thai"]) is None  # two named: none picked
    grouped = {
        "collection_name": "Restaurants",
        "groupby_property": "cuisine",
        "boolean_property_filter": {"property_name": "openNow", "operator": "=", "value": True},
    }
    kept = keeps_from(validate(grouped), ["Thai"])
    assert kept is not None and {c["property_name"]: c["value"] for c in kept.conditions} == {
        "openNow": True,
        "cuisine": "Thai",
    }


def test_conversation_messages_and_the_turns_a_door_remembers() -> None:
    messages = [
        {"role": "user", "content": "How many Italian restaurants are there?"},
        {"role": "assistant", "content": "27."},
        {"role": "user", "content": "And how many of those are open now?"},
    ]
    question, pairs = conversation_of(messages)
    assert question == "And how many of those are open now?" and pairs == [
        ("How many Italian restaurants are there?", "27.")
    ]
    for bad in ([], messages[:2], [{"role": "system", "content": "x"}, *messages[2:]]):
        with pytest.raises(ValueError):
            conversation_of(bad)
    memory = TurnMemory(size=2)
    memory.remember(Turn(question="How many Italian restaurants are there?", answer="27.", keeps=CARRIED))
    assert memory.turns(pairs)[0].keeps == CARRIED
    assert memory.turns([("How many Italian restaurants are there?", "28.")])[0].keeps is None  # not this door's answer
    for n in range(2):
        memory.remember(Turn(question=f"q{n}", answer="a"))
    assert memory.turns(pairs)[0].keeps is None  # the oldest was let go


def scripted() -> FunctionModel:
    """The model: the call each question's words ask for, then a prose answer."""
    count_open = {k: v for k, v in OPEN_NOW.items() if k != "collection_name"}
    calls = {  # the follow-up first: its turn quotes the question it follows
        "And how many of those": OPEN_NOW,
        "How many Italian restaurants": {
            "collection_name": "Restaurants",
            "text_property_filter": ITALIAN,
            **count_open,
        },
    }

    def model(messages: list[Any], tools: Any) -> ModelReply:
        asked = json.dumps([m.model_dump(mode="json") for m in messages])
        if '"tool-return"' in asked:
            return ModelReply(content="Done.")
        return tool_reply("query_database", next(c for q, c in calls.items() if q in asked))

    return FunctionModel(model)


def test_a_session_carries_a_follow_up_and_records_the_amendment(composer: CompoundComposer) -> None:
    design = ToolDesign(operations=ToolOperations.COMPOUND)
    session = AgentSession.over(
        composer.executor, ["Restaurants"], design, scripted(), "react", AgentConfig(commit_answer=False)
    )
    first = session.run("How many Italian restaurants are open now?")
    turns = [session.turn_of(first)]
    assert turns[0].keeps is not None and turns[0].keeps.conditions == CARRIED.conditions
    follow_up = session.run("And how many of those are open now?", earlier=turns)
    (ran,) = follow_up.calls()
    assert ran.arguments is not None and ran.arguments["conditions"] == [ITALIAN]
    assert ran.amended is not None and "earlier conditions" in ran.amended
    assert follow_up.question == "And how many of those are open now?"  # the user's words, not the context
    follow_up_request = session.model.calls[-2]["messages"][0]  # type: ignore[attr-defined]
    assert "This follows the question" in json.dumps(follow_up_request.model_dump(mode="json"))
    assert follow_up.strategy_notes["carried"] == turns[0].keeps.model_dump()
    assert ran.result is not None and compare_results(ran.result, first.calls()[0].result) == []
    afresh = session.run("And how many of those are open now?")  # no conversation: nothing carried
    assert "conditions" not in (afresh.calls()[0].arguments or {})


def test_the_python_query_agent_takes_chat_messages(composer: CompoundComposer) -> None:
    design = ToolDesign(operations=ToolOperations.COMPOUND)
    config = AgentConfig(commit_answer=False)
    agent = QueryAgent(None, ["Restaurants"], scripted(), config, design, composer.executor, "react")  # type: ignore[arg-type]
    first = agent.ask("How many Italian restaurants are open now?")
    messages = [
        {"role": "user", "content": "How many Italian restaurants are open now?"},
        {"role": "assistant", "content": first.final_answer},
        {"role": "user", "content": "And how many of those are open now?"},
    ]
    follow_up = agent.ask(messages)
    assert follow_up.trace.calls()[0].arguments["conditions"] == [ITALIAN]
    assert follow_up.original_query == "And how many of those are open now?"
    streamed = list(agent.ask_stream([*messages[:2], {"role": "user", "content": "And how many of those are there?"}]))
    assert streamed[-1].trace.calls()[0].arguments["conditions"] == [ITALIAN]


def test_the_conversation_split_is_what_the_composer_writes() -> None:
    """95 turns of 40 chains, from the data; every follow-up holds the turns before it, its gold keeps them."""
    path = SPLITS_DIR / "conversation.jsonl"
    assert [case.to_json_line() for case in compose()] == path.read_text().splitlines()
    assert read_meta(path).sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    cases = read_dataset("conversation").cases
    assert len(cases) == 95 and operations_needed(cases) is ToolOperations.COMPOUND
    chains = [c for c in cases if not c.earlier]
    assert len(chains) == 40
    follow_ups = [c for c in cases if c.earlier]
    assert all(refers_back(c.query) for c in follow_ups)
    assert not any(refers_back(c.query) for c in chains)
    for case in follow_ups:  # a narrowing follow-up's gold keeps every earlier condition it does not replace
        earlier = case.earlier[-1].call.get("conditions", [])
        own = {c["property_name"] for c in case.ground_truth.to_tool_arguments().get("conditions", [])}
        assert {c["property_name"] for c in earlier} <= own or not earlier


def test_a_follow_up_asking_the_earlier_question_again_takes_its_form() -> None:
    from agent.conversation import form_question

    turn = Turn(question="How many courses whose subject is History are there?", answer="6", keeps=None)
    said = context_of(turn)
    again = context_of(turn, again=asks_again("And what about courses whose subject is Mathematics?"))
    asked = form_question("And what about courses whose subject is Mathematics?", again)
    assert asked == "How many courses whose subject is History are there?"  # the form asked again
    assert form_question("Which of those are online?", said) == "Which of those are online?"  # its own form
    assert form_question("And what about Mathematics?", None) == "And what about Mathematics?"
