"""The check's verdict is read from its first word: the reply is cut after `VERDICT_TOKENS`, and a reply
cut before its first word is asked again, uncut."""

from __future__ import annotations

import json

import pytest

from agent.strategies.check_turns import (
    LISTED,
    NOT_LISTED,
    VERDICT_SCHEMA_NAME,
    VERDICT_TOKENS,
    VERDICTS,
    ask_verdict,
    chosen,
)
from llm import ChatRequest, ModelReply, Usage


@pytest.mark.parametrize(
    ("content", "verdict"),
    [
        (json.dumps({"verdict": LISTED}), LISTED),
        ('{"verdict": "yes', LISTED),
        ('{ "verdict": "no: it needs a', NOT_LISTED),
        ('{\n  "verdict":"n', NOT_LISTED),
        ('{"verdict": "', None),
        ('{"verd', None),
        ('{"verdict": "maybe', None),
    ],
)
def test_a_verdict_is_read_from_the_first_characters_of_its_choice(content: str, verdict: str | None) -> None:
    assert chosen(content, "verdict", VERDICTS) == verdict


def test_a_whole_reply_keeps_its_value_and_a_reply_that_is_no_object_is_an_error() -> None:
    assert chosen('{"verdict": "perhaps"}', "verdict", VERDICTS) == "perhaps", "as the model wrote it"
    with pytest.raises(ValueError, match="not a JSON object"):
        chosen("[1]", "verdict", VERDICTS)


class Replies:
    name = "replies"

    def __init__(self, *contents: str) -> None:
        self.contents, self.requests = list(contents), []

    def complete(self, request: ChatRequest) -> ModelReply:
        self.requests.append(request)
        return ModelReply(content=self.contents.pop(0), usage=Usage(prompt_tokens=100, completion_tokens=5))


def test_the_verdict_is_asked_for_its_first_word_and_again_uncut_when_it_did_not_reach_one() -> None:
    model = Replies('{"verdict": "no: it needs')
    assert ask_verdict(model, "Collection ...")[0] == NOT_LISTED
    [asked] = model.requests
    assert asked.max_tokens == VERDICT_TOKENS and asked.response_format.name == VERDICT_SCHEMA_NAME
    model = Replies('{\n\n\n  "', json.dumps({"verdict": LISTED}))
    verdict, usage = ask_verdict(model, "Collection ...")
    assert verdict == LISTED and usage.prompt_tokens == 200
    assert [r.max_tokens for r in model.requests] == [VERDICT_TOKENS, None]
    with pytest.raises(ValueError, match="names no verdict"):
        ask_verdict(Replies('{"', '{"verdict": "'), "Collection ...")


def test_a_word_whose_opposite_the_collection_holds_is_not_held() -> None:
    from agent.strategies.asked_for import opposite_held
    from agent.strategies.check import refusal
    from executors.schema import CollectionSchema, PropertySchema

    prices = CollectionSchema(
        name="Quotes",
        properties=(
            PropertySchema(name="price", data_type="number", description="Closing price in dollars."),
            PropertySchema(name="openingDate", data_type="date"),
        ),
    )
    assert opposite_held("What was the opening price of the fund in May?", prices) is None  # "opening" is held too
    closing_only = prices.model_copy(update={"properties": prices.properties[:1]})
    assert opposite_held("What was the opening price of the fund in May?", closing_only) == ("opening", "closing")
    assert opposite_held("What was the closing price of the fund in May?", closing_only) is None
    assert opposite_held("On how many days did it close above 10?", closing_only) is None  # a verb, no opposite read
    decided = {"verdict": NOT_LISTED, "opposite": ["opening", "closing"]}
    assert refusal(decided, "What was the opening price?") == "it holds closing figures, not opening ones"


def test_the_objects_are_read_from_the_description_s_opening_words() -> None:
    from agent.strategies.asked_for import what_objects_are
    from executors.schema import CollectionSchema, PropertySchema

    deaths = CollectionSchema(
        name="RiotDeaths",
        description="People who died during the riots: who they were, when and how.",
        properties=(PropertySchema(name="age", data_type="int"),),
    )
    assert what_objects_are(deaths) == "People who died during the riots"
    assert what_objects_are(CollectionSchema(name="Boats", properties=())) == ""


def test_a_word_of_age_names_an_age_property() -> None:
    from agent.strategies.asked_for import named_in
    from executors.schema import CollectionSchema, PropertySchema

    crew = CollectionSchema(name="Crew", properties=(PropertySchema(name="age", data_type="int"),))
    assert named_in("number of sailors younger than 16", [crew])
    assert not named_in("number of sailors with a salary", [crew])
    boats = CollectionSchema(name="Boats", properties=(PropertySchema(name="launch_year", data_type="int"),))
    assert not named_in("the oldest skipper", [boats]), "no property of age: the word names nothing held"
