"""`chain` on parts side by side ("how many does A have, and how many does B?") and on "the single highest"."""

from __future__ import annotations

import json
from typing import Any

from agent import AgentConfig, ModelReply
from agent.answer import is_commit_request
from agent.strategies import build_strategy
from agent.strategies.chain import parts_of
from agent.strategies.which_group import per_group_part
from agent.testing import FunctionModel, tool_reply
from llm import ModelMessage, UserPromptPart
from llm.messages import all_parts, tool_returns
from tests.unit.test_arithmetic import NAME, OBJECTS, executor, tools


def test_parts_side_by_side_keep_each_answer_and_ask_the_next_as_written() -> None:
    question = "How many places have 50 seats, and how many have 20 seats?"
    asked: list[str] = []

    def reply(messages: list[ModelMessage], _tools: Any) -> ModelReply:
        part = next(p.content for p in all_parts(messages) if isinstance(p, UserPromptPart))
        seats = 50 if "50 seats" in part else 20
        count = sum(o.properties.get("seats") == seats for o in OBJECTS)
        if is_commit_request(model.calls[-1]["response_format"]):
            return ModelReply(content=json.dumps({"numbers": [count]}))
        if not tool_returns(messages):
            asked.append(part)
            where = {"property_name": "seats", "operator": "=", "value": seats}
            return tool_reply("query_database", {"collection_name": NAME, "integer_property_filter": where})
        return ModelReply(content=f"There are {count}.")

    model = FunctionModel(reply)
    run = build_strategy("chain").run(model, executor(), tools(), AgentConfig(), question)
    expected = [sum(o.properties.get("seats") == n for o in OBJECTS) for n in (50, 20)]
    assert run.answer is not None and run.answer.numbers == expected
    # no rewrite, nothing in it refers back; the thing counted, left to the first part, is put back
    assert asked[-1].endswith("how many places have 20 seats?")
    assert run.strategy_notes["chain"]["parts"][0]["next"] == "side by side"


def test_a_count_asked_stays_in_the_answer_where_the_next_part_refers_to_what_it_counted() -> None:
    question = "How many places have 50 seats, and what is their average price?"
    fifty = [o for o in OBJECTS if o.properties.get("seats") == 50]
    mean = sum(o.properties["price"] for o in fifty) / len(fifty)

    def reply(messages: list[ModelMessage], _tools: Any) -> ModelReply:
        part = next(p.content for p in all_parts(messages) if isinstance(p, UserPromptPart))
        averaging = "average" in part.lower()
        if is_commit_request(model.calls[-1]["response_format"]):
            return ModelReply(content=json.dumps({"numbers": [mean if averaging else len(fifty)]}))
        if not tool_returns(messages):
            call: dict[str, Any] = {
                "collection_name": NAME,
                "integer_property_filter": {"property_name": "seats", "operator": "=", "value": 50},
            }
            if averaging:
                call["integer_property_aggregation"] = {"property_name": "price", "metrics": "MEAN"}
            return tool_reply("query_database", call)
        return ModelReply(content=f"It is {mean if averaging else len(fifty)}.")

    model = FunctionModel(reply)
    run = build_strategy("chain").run(model, executor(), tools(), AgentConfig(), question)
    assert run.answer is not None and run.answer.numbers == [float(len(fifty)), mean]


def test_a_part_gets_back_what_it_leaves_to_the_part_before() -> None:
    from agent.strategies.rewrite import completed

    assert parts_of("How many airports does Texas have, and how many does California have?") == [
        "How many airports does Texas have?",
        "how many airports does California have?",
    ]
    later = completed("How many versicolor flowers have a sepal length over 6 cm?", "how many virginica flowers do?")
    assert later == "how many virginica flowers have a sepal length over 6 cm?"
    for earlier, asked in [
        ("Which country has the most wines?", "what is the average price of the wines from that country?"),
        ("How many airports does Texas have?", "how many of them are private?"),
        ("What is the average price?", "what is the most common cuisine?"),
        ("How many months are there for Google, how many for Microsoft?", "how many fewer does Google have?"),
    ]:
        assert completed(earlier, asked) == asked


def test_the_single_highest_is_asked_per_group() -> None:
    assert per_group_part("Which ticker had the highest single monthly close?") == (
        "What is the highest monthly close per ticker?"
    )
    assert per_group_part("Which species has the single longest petal?") == "What is the longest petal per species?"
    assert per_group_part("Which cuisine has the highest price?") is None  # a mean or a maximum: not read


def test_what_a_verb_names_on_average_is_asked_per_group() -> None:
    assert per_group_part("On which day do people tip the most on average?") == (
        "What is the average tip for each day?"  # "per day" is a rate, and the group-by was left out
    )
    assert per_group_part("Which route do riders pay the least on average?") == "What is the average pay per route?"
    assert per_group_part("Which day do people tip?") is None


def test_a_possessive_names_the_stored_value() -> None:
    from agent.strategies.naming import mentions

    tickers = {"symbol": ["MSFT", "AMZN", "IBM", "GOOG", "AAPL"]}
    assert mentions("What was IBM's close?", tickers) == [("symbol", "IBM", 9, 12)]


def test_a_value_of_another_category_moves_the_filter_to_the_property_that_holds_it() -> None:
    from agent.strategies.values import Values
    from executors import DatabaseSchema, ReferenceExecutor
    from executors.schema import CollectionSchema, PropertySchema
    from executors.testing import DataObject

    fields = ("variety", "site")
    schema = DatabaseSchema(
        collections=(
            CollectionSchema(
                name="Trials",
                properties=tuple(PropertySchema(name=f, data_type="text", tokenization="field") for f in fields),
            ),
        )
    )
    rows = [(v, s) for v in ("Trebi", "Velvet", "Peatland") for s in ("Waseca", "Morris", "Duluth") for _ in range(2)]
    objects = [
        DataObject(uuid=f"00000000-0000-0000-0000-{i:012d}", properties=dict(zip(fields, r, strict=True)))
        for i, r in enumerate(rows)
    ]
    executor = ReferenceExecutor(schema, {"Trials": objects})
    written = {
        "collection_name": "Trials",
        "text_property_filter": {"property_name": "variety", "operator": "=", "value": "waseca"},
    }
    moved, why = Values(None).amend(executor, written)
    assert moved["text_property_filter"] == {"property_name": "site", "operator": "=", "value": "Waseca"} and why
    held = {**written, "text_property_filter": {"property_name": "variety", "operator": "=", "value": "Velvet"}}
    assert Values(None).amend(executor, held) == (held, "")


def test_words_of_size_and_of_the_compass_name_their_measure() -> None:
    from agent.strategies.wording import number_condition

    assert (
        per_group_part("Which origin has the lightest cars on average?")
        == "What is the average weight of cars per origin?"
    )
    assert per_group_part("Which origin has the prettiest cars on average?") is None  # no measure named
    assert per_group_part("Which source generated the most electricity on average?") == (
        "What is the average electricity per source?"
    )
    assert per_group_part("Which source generated the most electricity?") is None  # a total, or a count
    south = number_condition(
        "Which state has the most airports south of 25 degrees latitude?", ["latitude", "longitude"]
    )
    assert south == {"property_name": "latitude", "operator": "<", "value": 25}


def test_a_group_by_no_word_of_the_question_asks_for_is_left_out_of_one_number() -> None:
    from agent.strategies.reshape import amend_to_question
    from fixtures.datasets import load_split, split_path

    mean = {"collection_name": "Cars", "integer_property_aggregation": {"property_name": "mpg", "metrics": "MEAN"}}
    grouped = {**mean, "groupby_property": "origin"}
    assert amend_to_question("What was the average mpg for 1982?", grouped, ["origin"])[0] == mean
    assert amend_to_question("What was the mean miles per gallon in 1982?", grouped, ["origin"])[0] == mean
    listed = {"collection_name": "Cars", "groupby_property": "origin"}
    assert amend_to_question("How many cars are over 3000 lbs?", listed, ["origin"])[0] == {"collection_name": "Cars"}
    for asked in (
        "What was the average mpg for each origin?",
        "Which origin has the best mpg on average?",
        "What is the mean mpg per origin?",
    ):
        assert amend_to_question(asked, grouped, ["origin"])[0] == grouped, asked
    for split in ("natural", "explicit", "compound", "related", "conversation"):
        for case in load_split(split_path(split)):
            gold = case.ground_truth.model_dump(exclude_none=True)
            if gold.get("groupby_property"):
                groupable = [gold["groupby_property"]]
                assert amend_to_question(case.query, gold, groupable)[0].get("groupby_property"), (split, case.id)


def test_a_count_of_objects_keeps_no_statistic_of_a_number_the_question_does_not_name() -> None:
    from agent.strategies.reshape import amend_to_question
    from fixtures.datasets import load_split, split_path

    summed = {
        "collection_name": "Days",
        "integer_property_aggregation": {"property_name": "precipitation", "metrics": "SUM"},
    }
    counted = {**summed, "integer_property_aggregation": {"property_name": "precipitation", "metrics": "COUNT"}}
    assert amend_to_question("How many foggy days were there in 2015?", summed, [])[0] == counted
    asked = "How many millimetres of precipitation fell in 2015?"  # the property named: its sum is asked
    assert amend_to_question(asked, summed, [])[0] == summed
    assert amend_to_question("How many guests in total are expected?", summed, [])[0] == summed  # a sum asked
    bounded = {  # "average rating" names the property, and the call averages the rating it bounds
        "collection_name": "Restaurants",
        "integer_property_filter": {"property_name": "averageRating", "operator": ">", "value": 3.8},
        "integer_property_aggregation": {"property_name": "averageRating", "metrics": "MEAN"},
    }
    amended = amend_to_question("How many Italian restaurants have an average rating of more than 3.8?", bounded, [])
    assert amended[0]["integer_property_aggregation"]["metrics"] == "COUNT"
    for split in ("natural", "explicit", "compound", "related", "multistep", "conversation"):
        for case in load_split(split_path(split)):
            gold = case.ground_truth.model_dump(exclude_none=True)
            if gold.get("integer_property_aggregation"):
                kept = amend_to_question(case.query, gold, [])[0].get("integer_property_aggregation")
                assert kept == gold["integer_property_aggregation"], (split, case.id)


def test_a_count_of_the_objects_and_a_name_needs_no_verdict() -> None:
    from agent._words import content_stems
    from agent.strategies.asked_for import beyond_names
    from agent.strategies.check_turns import LISTED, NOT_LISTED
    from executors.schema import CollectionSchema

    def model(asks_for: str, statistic: str) -> FunctionModel:
        def reply(messages: list[ModelMessage], _tools: Any) -> ModelReply:
            name = (model.calls[-1]["response_format"] or None) and model.calls[-1]["response_format"].name
            if name == "QuestionCheck":
                return ModelReply(
                    content=json.dumps({"collection": NAME, "asks_for": asks_for, "statistic": statistic})
                )
            if name == "CheckVerdict":
                return ModelReply(content=json.dumps({"verdict": NOT_LISTED}))
            if name is not None:
                return ModelReply(content=json.dumps({"numbers": [3]}))
            call = {"collection_name": NAME}
            return tool_reply("query_database", call) if not tool_returns(messages) else ModelReply(content="3")

        model = FunctionModel(reply)
        return model

    asked = model("number of places in Oaxaca", "count")
    run = build_strategy("check").run(asked, executor(), tools(), AgentConfig(), "How many places are in Oaxaca?")
    assert run.strategy_notes["check"]["decision"]["verdict"] == LISTED and run.calls()
    assert "CheckVerdict" not in [c["response_format"].name for c in asked.calls if c["response_format"]]
    lacking = model("places with a rooftop terrace", "count")  # a thing no property holds: the verdict decides
    run = build_strategy("check").run(
        lacking, executor(), tools(), AgentConfig(), "How many places have a rooftop terrace?"
    )
    assert run.answer is not None and run.answer.refuses and not run.calls()
    kept = beyond_names("average price in Oaxaca", "What is the average price in Oaxaca?", CollectionSchema(name=NAME))
    assert kept == content_stems("price")


def test_words_of_size_and_names_past_which_every_word_is_a_property_s_need_no_verdict() -> None:
    from agent.strategies.asked_for import named_by_properties
    from executors.schema import CollectionSchema, PropertySchema

    cars = CollectionSchema(
        name="Cars", properties=tuple(PropertySchema(name=n, data_type="number") for n in ("weight_in_lbs", "year"))
    )
    assert named_by_properties("heaviest car from Japan in lbs", "What's the heaviest car from Japan in lbs?", cars)
    assert not named_by_properties("cars with a sunroof", "How many cars have a sunroof?", cars)
    assert not named_by_properties("number of cars", "How many cars are there?", cars)  # nothing a property holds
    # a comparison and the number it gives are no more than the property they compare
    asks_for = "number of cars with weight_in_lbs above 3500.5"
    assert named_by_properties(asks_for, "How many cars have a weight in lbs above 3500.5?", cars)
    assert not named_by_properties("cars with rainfall above 30", "How many cars had rainfall above 30?", cars)


def test_a_stopword_names_no_stored_value() -> None:
    from agent.strategies.naming import mentions

    cuisines = {"cuisine": ["Italian", "Thai", "Oregon"]}
    assert [m[1] for m in mentions("Is it Thai or not?", cuisines)] == ["Thai"]


def test_a_compound_names_the_stored_value_after_its_last_hyphen_where_the_whole_names_none() -> None:
    from agent.strategies.naming import mentions

    stored = {"gram_staining": ["negative", "positive"], "genre": ["Sci-Fi", "Drama"]}
    question = "Do gram-positive or gram-negative bacteria have the higher MIC?"
    assert [m[:2] for m in mentions(question, stored)] == [("gram_staining", "positive"), ("gram_staining", "negative")]
    assert [m[1] for m in mentions("How many sci-fi films?", stored)] == ["Sci-Fi"]  # the whole word first
    assert mentions("How many well-known places?", stored) == []


def test_a_stored_code_shortens_a_name_written_out_only_where_one_code_fits() -> None:
    from agent.strategies.naming import mentions, nearest_value

    codes = ["AK", "AL", "AS", "TX", "TN", "FL", "PR", "PA", "CA", "CO"]
    from agent.strategies.codes import code_for

    assert [c for c in codes if code_for("Texas", c)] == ["TX"] and [c for c in codes if code_for("Florida", c)] == [
        "FL"
    ]
    assert [c for c in codes if code_for("Puerto Rico", c)] == ["PR"]  # its initials
    assert len([c for c in codes if code_for("Alaska", c)]) == 3  # AK, AL, AS: the model chooses
    assert not code_for("texas", "TX")  # a name is written with its capital
    assert nearest_value("Which", [*codes, "WI"]) is None  # a question's word is never read as a code
    assert mentions("How many are in Texas?", {"state": codes}) == []  # in the question: a code only as written


def test_a_name_the_model_wrote_runs_as_the_one_stored_code_it_shortens() -> None:
    from agent.strategies.values import Values
    from executors import DatabaseSchema, ReferenceExecutor
    from executors.schema import CollectionSchema, PropertySchema
    from executors.testing import DataObject

    state = PropertySchema(name="state", data_type="text", tokenization="field")
    schema = DatabaseSchema(collections=(CollectionSchema(name="Ports", properties=(state,)),))
    codes = ["TX", "AK", "AL", "AS", "FL"] * 3
    objects = [
        DataObject(uuid=f"00000000-0000-0000-0000-{i:012d}", properties={"state": c}) for i, c in enumerate(codes)
    ]
    executor = ReferenceExecutor(schema, {"Ports": objects})
    texas = {
        "collection_name": "Ports",
        "text_property_filter": {"property_name": "state", "operator": "=", "value": "Texas"},
    }
    moved, why = Values(None).amend(executor, texas)
    assert moved["text_property_filter"]["value"] == "TX" and why
    alaska = {**texas, "text_property_filter": {**texas["text_property_filter"], "value": "Alaska"}}
    assert Values(None).amend(executor, alaska)[0]["text_property_filter"]["value"] == "Alaska"  # AK, AL, AS fit
    offered: list[list[str]] = []

    def choose(prop: str, value: str, fitting: list[str]) -> str | None:
        offered.append(fitting)
        return "AK"

    chosen, why = Values(None).amend(executor, alaska, choose)
    assert chosen["text_property_filter"]["value"] == "AK" and "AK" in why
    assert offered == [["AK", "AL", "AS"]], "only the codes the name's letters fit are offered, each once"
    assert Values(None).amend(executor, alaska, lambda *_: None)[0] == alaska, "none chosen: the call as written"
    either = {
        "collection_name": "Ports",
        "conditions": [
            {"property_name": "state", "operator": "=", "value": "Florida"},
            {"property_name": "state", "operator": "=", "value": "TX"},
        ],
        "match": "any",
    }
    moved, why = Values(None).amend(executor, either)
    assert [c["value"] for c in moved["conditions"]] == ["FL", "TX"] and "'FL'" in why, "a condition of the list too"
    count = {"collection_name": "Ports"}
    restored, why = Values(None).restore(executor, count, "How many ports are in Texas?", compound=True)
    assert restored["text_property_filter"] == {"property_name": "state", "operator": "=", "value": "TX"}, why
    restored = Values(None).restore(executor, count, "How many ports does Alaska have?", True, choose)[0]
    assert restored["text_property_filter"]["value"] == "AK" and offered[-1] == ["AK", "AL", "AS"]
    assert Values(None).restore(executor, count, "Which ports are busiest?", True, choose)[0] == count, "no name"


def test_the_model_chooses_among_the_codes_a_name_fits_and_its_other_replies_take_none() -> None:
    from agent.models import ModelError, ModelReply, schema_name
    from agent.strategies.codes import NO_CODE, VALUE_SCHEMA_NAME, chosen_code
    from agent.testing import FunctionModel

    def model_saying(content: str) -> FunctionModel:
        return FunctionModel(lambda _messages, _tools: ModelReply(content=content))

    said = model_saying('{"value": "AK"}')
    assert chosen_code(said, "How many airports in Alaska?", "state", "Alaska", ["AK", "AL", "AS"]) == "AK"
    wanted = said.calls[0]["response_format"]
    assert schema_name(wanted) == VALUE_SCHEMA_NAME
    for reply in (f'{{"value": "{NO_CODE}"}}', '{"value": "TX"}', "not json"):
        assert chosen_code(model_saying(reply), "q", "state", "Alaska", ["AK", "AL", "AS"]) is None, reply

    def failing(_messages: object, _tools: object) -> ModelReply:
        raise ModelError("the server is down")

    assert chosen_code(FunctionModel(failing), "q", "state", "Alaska", ["AK", "AL"]) is None


def test_an_extreme_computed_needs_no_sort() -> None:
    from agent.strategies.reshape import to_extreme

    sorted_call = {
        "collection_name": "Cars",
        "sort": {"property_name": "weight_in_lbs", "order": "descending", "limit": 1},
        "integer_property_aggregation": {"property_name": "weight_in_lbs", "metrics": "MODE"},
    }
    amended, _ = to_extreme("What is the heaviest weight of any car?", sorted_call, ["weight_in_lbs"])
    assert amended == {
        "collection_name": "Cars",
        "integer_property_aggregation": {"property_name": "weight_in_lbs", "metrics": "MAX"},
    }


def test_a_name_is_read_as_a_code_only_inside_the_question_and_where_no_other_property_holds_it() -> None:
    from agent.strategies.codes import code_mentions

    def named_codes(*args: Any) -> list[tuple[str, str]]:
        return [(prop, code) for prop, code, *_ in code_mentions(*args)]

    states = {"state": ["TX", "TN", "DE", "AR", "AK", "WI"]}
    cities = {"Denver", "Houston"}

    def held(prop: str, name: str) -> bool:
        return name in cities

    def pick_first(prop: str, value: str, codes: list[str]) -> str:
        return codes[0]

    assert named_codes("How many airports are in Houston, Texas?", states, None, held) == [("state", "TX")]
    assert named_codes("How many airports are in Denver?", states, pick_first, held) == []  # a city, not DE
    assert named_codes("How many are above the Arctic Circle?", states, pick_first, held) == []  # after "the"
    assert named_codes("Which airports are busiest?", states, pick_first, held) == []  # the first word
    assert named_codes("How many have the word Texas in their name?", states, pick_first, held) == []  # no place
    assert named_codes("Average latitude of Texan airports?", states, pick_first, held) == [("state", "TX")]
    assert named_codes("How many are in Texas?", {"origin": ["USA", "Europe"]}, pick_first, held) == []  # no codes
    columbia = named_codes(
        "How many airports are in the District of Columbia?", {"state": ["DC", "CO", "CA"]}, None, held
    )
    assert columbia == [("state", "DC")]  # "X of Y" after "the" is one name; "Columbia" alone fits CO and CA


def test_the_collection_the_question_s_words_name_stands_over_one_they_do_not() -> None:
    from agent.strategies.asked_for import linked_collection
    from executors.schema import CollectionSchema, PropertySchema

    def made(name: str, *properties: str) -> CollectionSchema:
        return CollectionSchema(
            name=name, properties=tuple(PropertySchema(name=p, data_type="text") for p in properties)
        )

    penguins = made("Penguins", "species", "island", "body_mass_g")
    deaths = made("RiotDeaths", "race", "latitude", "type")
    shown = [penguins, deaths]
    assert linked_collection("What is the average latitude for each race?", shown, penguins) is deaths
    assert linked_collection("How many penguins live on Dream?", shown, penguins) is penguins
    assert linked_collection("How many are in Texas?", shown, penguins) is penguins  # no word names one
    # the model's choice stands where its words name it, even if another's name more
    assert linked_collection("What species has the most race latitude?", shown, penguins) is penguins
    tied = [penguins, deaths, made("Races", "winner")]
    assert linked_collection("How many races had a winner?", tied, penguins) is tied[2]  # named most
    assert linked_collection("How many races were there?", tied, penguins) is penguins  # two named alike


def test_a_count_by_a_stored_value_the_question_names_needs_no_verdict() -> None:
    from agent.strategies.asked_for import counts_named_values
    from executors.schema import CollectionSchema, PropertySchema

    days = CollectionSchema(
        name="SeattleWeather",
        properties=(
            PropertySchema(name="weather", data_type="text"),
            PropertySchema(name="wind", data_type="number"),
        ),
    )
    kinds = {"weather": ["sun", "fog", "rain", "snow"]}
    assert counts_named_values("how many days had snow", "How many days had snow?", days, kinds)
    assert counts_named_values("number of foggy days", "How many foggy days were there in 2015?", days, kinds)
    assert counts_named_values("sunny days with wind of 5", "How many sunny days had a wind of 5 or more?", days, kinds)
    assert not counts_named_values("days with a UV index", "How many days had a UV index over 8?", days, kinds)
    assert not counts_named_values("number of tornadoes", "How many tornadoes were there?", days, kinds)  # no value
    assert not counts_named_values("average wind", "What is the average wind on rainy days?", days, kinds)  # no count


def test_stored_values_a_question_names_are_no_more_than_names() -> None:
    from agent.strategies.asked_for import named_by_properties
    from executors.schema import CollectionSchema, PropertySchema

    days = CollectionSchema(
        name="SeattleWeather",
        properties=tuple(PropertySchema(name=n, data_type="number") for n in ("temp_max", "wind")),
    )
    kinds = {"weather": ["sun", "fog", "snow"]}
    asked = "What is the average maximum temperature of snow?"
    assert named_by_properties("average maximum temperature of snow", asked, days, kinds)
    assert not named_by_properties("average maximum temperature of snow", asked, days)  # the value unread
    humid = "What is the average humidity on snow days?"
    assert not named_by_properties("average humidity on snow days", humid, days, kinds)


def test_a_search_on_a_collection_without_a_vectorizer_stands_for_no_condition() -> None:
    from agent.strategies.values import Values
    from executors import DatabaseSchema, ReferenceExecutor
    from executors.schema import CollectionSchema, PropertySchema
    from executors.testing import DataObject

    state = PropertySchema(name="state", data_type="text", tokenization="field")
    ports = CollectionSchema(name="Ports", properties=(state,), searchable=False)
    objects = [
        DataObject(uuid=f"00000000-0000-0000-0000-{i:012d}", properties={"state": c})
        for i, c in enumerate(["TX", "FL", "GA"] * 3)
    ]
    executor = ReferenceExecutor(DatabaseSchema(collections=(ports,)), {"Ports": objects})
    searched = {"collection_name": "Ports", "search_query": "Texas ports"}
    restored, why = Values(None).restore(executor, searched, "How many ports are in Texas?", compound=True)
    assert restored["text_property_filter"] == {"property_name": "state", "operator": "=", "value": "TX"}, why
    searchable = ReferenceExecutor(DatabaseSchema(collections=(ports.model_copy(update={"searchable": True}),)), {})
    assert Values(None).restore(searchable, searched, "How many ports are in Texas?", compound=True)[0] == searched


def test_which_who_and_whose_ask_for_groups_only_where_a_question_or_clause_begins() -> None:
    from agent.strategies.asked import asks_for_groups, one_number_asked

    assert one_number_asked("How many courses whose number of credits is between 1 and 4 are there?")
    assert one_number_asked("What is the average price of doctors who are tenured?")
    assert not one_number_asked("Which cuisine has the most restaurants?")
    assert one_number_asked("Average petal width for virginica or versicolor flowers?")  # typed without "what is"
    assert not one_number_asked("Average horsepower by origin?")
    assert asks_for_groups("What is the average rating, and which cuisine is most common?")
    assert asks_for_groups("Count the airports in Georgia. Then the ones in Florida. Which state has more?")
    assert asks_for_groups("Who teaches the most courses?")


def test_a_short_sentence_that_tells_how_to_answer_is_no_part_of_its_own() -> None:
    assert parts_of("How many boats are there for each rig? Break it down.") == [
        "How many boats are there for each rig? Break it down."
    ]
    # an elliptical question, or a sentence with content of its own, is still a part
    assert len(parts_of("Which boat is the longest? And its rig?")) == 2
    assert len(parts_of("Find the longest boat. Then count the boats of its rig.")) == 2


def test_a_search_that_restates_a_condition_the_call_lacks_puts_the_condition_in_its_place() -> None:
    from agent.strategies.values import Values
    from executors import DatabaseSchema, ReferenceExecutor
    from executors.schema import CollectionSchema, PropertySchema
    from executors.testing import DataObject

    high = PropertySchema(name="temp_max", data_type="number")
    weather = PropertySchema(name="weather", data_type="text", tokenization="field")
    days = CollectionSchema(name="Days", properties=(high, weather), searchable=False)
    objects = [
        DataObject(uuid=f"00000000-0000-0000-0000-{i:012d}", properties={"temp_max": 10.0 + i, "weather": w})
        for i, w in enumerate(["sun", "rain", "fog"] * 3)
    ]
    executor = ReferenceExecutor(DatabaseSchema(collections=(days,)), {"Days": objects})
    count = {
        "collection_name": "Days",
        "integer_property_aggregation": {"property_name": "temp_max", "metrics": "COUNT"},
    }
    searched = {**count, "search_query": "temp_max between 12 and 18"}
    asked = "Count the days with a daily high between 12 and 18 degrees."
    restored, why = Values(None).restore(executor, searched, asked, compound=True)
    assert restored == {
        **count,
        "conditions": [{"property_name": "temp_max", "operator": "between", "value": 12, "value_to": 18}],
    }, why
    held = {
        **searched,
        "conditions": [{"property_name": "temp_max", "operator": "between", "value": 12, "value_to": 18}],
    }
    assert Values(None).restore(executor, held, asked, compound=True)[0] == {
        k: v for k, v in held.items() if k != "search_query"
    }


def test_a_second_question_may_open_with_a_preposition() -> None:
    assert parts_of("Who had the longest boat, and in which harbor is it moored?") == [
        "Who had the longest boat?",
        "in which harbor is it moored?",
    ]
    assert parts_of("How many boats are moored in Rye and which have two masts?") == [
        "How many boats are moored in Rye and which have two masts?"
    ], "a relative clause after 'and which' is still no part"


def test_an_opening_that_picks_an_object_by_an_extreme_is_a_part_of_its_own() -> None:
    assert parts_of("In the week with the most storms, how many boats sank?") == [
        "Which week had the most storms?",
        "how many boats sank in that week?",
    ]
    assert parts_of("In the 1990s, how many boats sank?") == ["In the 1990s, how many boats sank?"]


def test_a_which_question_s_sort_is_by_the_number_its_superlative_names() -> None:
    from agent.strategies.asked import sort_asked
    from agent.strategies.typed import resorted

    numbers = ["delays", "cancellations"]
    assert sort_asked("Which week had the most delays?", numbers) == ("delays", "descending")
    assert sort_asked("Which week had the least cancellations?", numbers) == ("cancellations", "ascending")
    assert sort_asked("Which week was the busiest?", numbers) is None
    by_date = {"collection_name": "Weeks", "sort": {"property_name": "week", "order": "descending", "limit": 1}}
    amended, why = resorted("Which week had the most delays?", by_date, numbers)
    assert amended["sort"] == {"property_name": "delays", "order": "descending", "limit": 1} and why
    assert resorted("Which week came last?", by_date, numbers) == (by_date, "")


def test_resorting_leaves_every_gold_sort_of_our_splits_as_it_is() -> None:
    from agent.strategies.typed import resorted
    from executors.vocabulary import PropertyKind
    from fixtures.datasets import load_split, split_path
    from fixtures.use_cases import get_use_case

    sorted_calls = 0
    for split in ("natural", "explicit", "compound", "related", "multistep"):
        for case in load_split(split_path(split)):
            gold = case.ground_truth.to_tool_arguments() if case.ground_truth else None
            if not gold or "sort" not in gold:
                continue
            own = [c for c in get_use_case(case.use_case).collections if c.name == gold["collection_name"]]
            numbers = [p.name for c in own for p in c.properties if p.kind is PropertyKind.NUMBER]
            assert resorted(case.query, gold, numbers) == (gold, ""), case.id
            sorted_calls += 1
    assert sorted_calls >= 10


def test_a_rewrite_that_names_what_nothing_named_is_not_asked() -> None:
    """The model copied its prompt's example ("Biology") into a rewrite; the follow-up is asked with the earlier
    answer after it instead, and nothing is invented."""
    from agent.strategies.rewrite import rewrite

    earlier, follow_up = "In which district did Joly get her most votes?", "How many did she get there?"
    copied = f"{earlier} The answer is 9378. How many did she get there in Biology?"
    model = FunctionModel(lambda _messages, _info: ModelReply(content=json.dumps({"question": copied})))
    asked, _, how = rewrite(model, earlier, "9378", follow_up)
    assert "Biology" not in asked and "9378" in asked and how == "appended"
    named = "How many votes did she get in 141-Côte-de-Liesse?"
    model = FunctionModel(lambda _messages, _info: ModelReply(content=json.dumps({"question": named})))
    assert rewrite(model, earlier, "141-Côte-de-Liesse", "How many votes did she get there?")[0] == named
