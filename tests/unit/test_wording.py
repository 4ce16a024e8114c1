"""`agent.strategies.wording`: the literals a question's words fix, checked against every label."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from agent.strategies.wording import (
    NUMBER_FILTER,
    TEXT_AGGREGATION,
    TEXT_FILTER,
    amend_wording,
    comparisons,
    like_pattern,
    top_count,
)
from fixtures.datasets import load_split, split_path

WRONG_OPERATOR = {">": ">=", ">=": ">", "<": "<=", "<=": "<", "=": ">="}


def _broken(gold: dict[str, Any]) -> dict[str, Any]:
    """The label written as the small model writes it: no limit, the neighbouring operator, a one-sided
    or SQL pattern."""
    broken = dict(gold)
    if isinstance(top := gold.get(TEXT_AGGREGATION), dict) and top.get("metrics") == "TOP_OCCURRENCES":
        broken[TEXT_AGGREGATION] = {k: v for k, v in top.items() if k != "top_occurrences_limit"}
    if isinstance(where := gold.get(NUMBER_FILTER), dict):
        broken[NUMBER_FILTER] = {**where, "operator": WRONG_OPERATOR[where["operator"]]}
    if isinstance(where := gold.get(TEXT_FILTER), dict) and where.get("operator") == "LIKE":
        value = where["value"]
        broken[TEXT_FILTER] = {**where, "value": f"%{value.strip('*')}%" if value.startswith("*") else f"*{value}"}
    return broken


def test_every_label_is_left_as_it_is_and_every_label_written_loosely_is_mended() -> None:
    """The words agree with the label wherever they speak, and the label written loosely comes back."""
    marked: Counter[str] = Counter()
    for split in ("natural", "explicit", "related"):
        for case in load_split(split_path(split)):
            gold = case.ground_truth.model_dump(exclude_none=True)
            assert amend_wording(case.query, gold) == (gold, []), (split, case.id)
            broken = _broken(gold)
            if broken == gold:
                continue
            mended, why = amend_wording(case.query, broken)
            fixable = [
                slot
                for slot in (TEXT_AGGREGATION, NUMBER_FILTER, TEXT_FILTER)
                if broken.get(slot) != gold.get(slot)
                and (
                    (slot == TEXT_AGGREGATION and top_count(case.query) is not None)
                    or (slot == NUMBER_FILTER and float(gold[slot]["value"]) in comparisons(case.query))
                    or slot == TEXT_FILTER
                )
            ]
            for slot in fixable:
                assert mended[slot] == gold[slot], (split, case.id, slot, why)
                marked[slot] += 1
    # the marked questions of the natural and explicit splits (the related split's numbers sit in references)
    assert marked == {TEXT_AGGREGATION: 140, NUMBER_FILTER: 160, TEXT_FILTER: 108}


@pytest.mark.parametrize(
    ("question", "count"),
    [
        ("What is the most common weather?", (1, False)),
        ("What are the 3 most common cuisines?", (3, True)),
        ("Which are the two most frequent moods?", (2, True)),
        ("Which variety most often topped 40 bushels?", (1, False)),  # "most often": the most common one
        ("What is the most prevalent origin of cars?", (1, False)),  # a synonym of "most common"
        ("What are the 2 most typical moods?", (2, True)),
        ("What are the most common cuisines?", None),  # says no count
        ("List the most common genres.", None),  # a plural
        ("What is the second most common genre?", None),  # an ordinal: not a count
        ("What is the 2nd most common genre?", None),
        ("The most common genre, and the 3 most common moods?", None),  # two: which call is which
        ("What were the 2023 most popular songs?", None),  # a year, not a count
        ("What is the average price?", None),
    ],
)
def test_the_count_a_most_common_question_asks_for(question: str, count: tuple[int, bool] | None) -> None:
    assert top_count(question) == count


def test_a_count_the_words_leave_open_stays_the_models() -> None:
    top = {"property_name": "cuisine", "metrics": "TOP_OCCURRENCES", "top_occurrences_limit": 5}
    call = {"collection_name": "Restaurants", TEXT_AGGREGATION: top}
    assert amend_wording("Which 5 cuisines are most common?", call) == (call, [])
    assert amend_wording("What is the most common cuisine?", call) == (call, [])  # no number written: kept
    fixed, _ = amend_wording("What are the 3 most common cuisines?", call)
    assert fixed[TEXT_AGGREGATION]["top_occurrences_limit"] == 3  # a number written: the words'


@pytest.mark.parametrize(
    ("question", "compared"),
    [
        ("days with more than 30 mm of rain and 25 degrees or more", {30.0: ">", 25.0: ">="}),
        ("wines costing $1,200 or less, made before 1990", {1200.0: "<=", 1990.0: "<"}),
        ("no more than 20 guests", {20.0: "<="}),
        ("not more than 20 guests", {20.0: "<="}),
        ("no fewer than 3 stars", {3.0: ">="}),
        ("a rating at or above 4", {4.0: ">="}),
        ("opened on or after 2010", {2010.0: ">="}),
        ("built in or before 1990", {1990.0: "<="}),
        ("equal to or greater than 20", {20.0: ">="}),
        ("3 stars or more than 100 reviews", {}),  # 3 is not "3 or more"; "or more than 100" is left
        ("more than 5 but not at least 5", {}),  # compared two ways
        ("the 5 wines", {}),
    ],
)
def test_comparisons_read_the_operator_the_words_say(question: str, compared: dict[float, str]) -> None:
    assert comparisons(question) == compared


@pytest.mark.parametrize(
    ("question", "value", "pattern"),
    [
        ('Wines whose region starts with "Bo"?', "*Bo", "Bo*"),
        ('Wines whose region ends with "aux"?', "%aux%", "*aux"),
        ("Reviews that mention tannins?", "%tannins", "*tannins*"),
        ("Reviews that mention tannins?", "* tannins", "*tannins*"),
        ('Cities that start with "New York"?', "*New York*", "New York*"),  # a quoted phrase, spaces and all
        ('Regions that start with "Bo"?', "*Rh*", "*Rh*"),  # another prefix than the words': the model's
        ("Names starting with the letter M?", "M*", "M*"),  # one-sided on purpose
        ("Names starting with the letter M?", "*M*", "M*"),
        ("Names ending in son?", "*son", "*son"),
        ("SKUs with the prefix AB?", "AB*", "AB*"),
        ('Sites that end with ".com"?', "*.com", "*.com"),
        ("Offers of 50% off?", "*50%*", "*50%*"),  # the question writes a %: a literal one
        ("Reviews that mention tannins?", "tannins", "tannins"),  # no wildcard: not a pattern to mend
        ("Reviews with a*b?", "a*b", "a*b"),
        ("Reviews with a?b?", "*a?b", "*a?b"),
    ],
)
def test_like_patterns_take_the_wildcards_the_words_ask_for(question: str, value: str, pattern: str) -> None:
    assert like_pattern(question, value) == pattern


def test_a_call_is_mended_in_a_collection_of_a_users_own_and_told_why() -> None:
    question = "How many days had more than 30 degrees, and what is the most common weather among them?"
    call = {
        "collection_name": "SeattleWeather",
        NUMBER_FILTER: {"property_name": "temp_max", "operator": ">=", "value": 30},
        TEXT_AGGREGATION: {"property_name": "weather", "metrics": "TOP_OCCURRENCES"},
    }
    mended, why = amend_wording(question, call)
    assert mended[NUMBER_FILTER]["operator"] == ">" and mended[TEXT_AGGREGATION]["top_occurrences_limit"] == 1
    assert len(why) == 2 and call[NUMBER_FILTER]["operator"] == ">="  # the written call is not changed
    other = {**call, NUMBER_FILTER: {"property_name": "temp_max", "operator": ">=", "value": 12}}
    assert amend_wording(question, other)[0][NUMBER_FILTER]["operator"] == ">="  # 12 is not the words' number


def test_which_value_is_the_most_common_is_its_top_occurrence_not_a_count() -> None:
    counted = {
        "collection_name": "Airports",
        "text_property_aggregation": {"property_name": "state", "metrics": "COUNT"},
    }
    for question in (
        "Which state has the most airports?",
        "Among the 8-cylinder cars, which origin shows up most often?",
    ):
        amended, why = amend_wording(question, counted)
        assert amended["text_property_aggregation"] == {
            "property_name": "state",
            "metrics": "TOP_OCCURRENCES",
            "top_occurrences_limit": 1,
        }, question
        assert why
    for question in ("How many states have airports?", "Which island has the heaviest penguins?"):
        assert amend_wording(question, counted) == (counted, []), question


def test_how_many_different_counted_as_values_is_the_number_of_groups_and_break_down_by_groups() -> None:
    from agent.strategies.reshape import amend_to_question

    counted = {
        "collection_name": "Trials",
        "text_property_aggregation": {"property_name": "variety", "metrics": "COUNT"},
    }
    amended, why = amend_to_question("How many different varieties were tested?", counted, ["variety", "site"])
    assert amended == {"collection_name": "Trials", "groupby_property": "variety"} and why
    assert amend_to_question("How many varieties have a name?", counted, ["variety"]) == (counted, "")
    wild = {
        "collection_name": "Trials",
        "text_property_filter": {"property_name": "variety", "operator": "=", "value": "*"},
    }
    amended, why = amend_to_question("how many distinct varieties r in the data", wild, ["variety", "site"])
    assert amended == {"collection_name": "Trials", "groupby_property": "variety"} and "wildcards" in why
    amended, _ = amend_to_question("How many trials are there?", wild, ["variety", "site"])
    assert amended == {"collection_name": "Trials"}  # no value named: every object, not grouped
    mean = {"collection_name": "Trials", "integer_property_aggregation": {"property_name": "yield", "metrics": "MEAN"}}
    tallied = {**mean, "text_property_aggregation": {"property_name": "variety", "metrics": "TYPE"}}
    amended, why = amend_to_question("What's the mean yield of the Trebi trials?", tallied, ["variety"])
    assert amended == mean and "TYPE of variety" in why
    assert amend_to_question("What type is the variety, and the mean yield?", tallied, ["variety"])[0] == tallied
    amended, _ = amend_to_question("Break down the mean yield by site.", mean, ["variety", "site"])
    assert amended["groupby_property"] == "site"


def test_a_search_on_a_collection_without_a_vectorizer_is_refused_by_name_and_left_out_of_a_call_with_conditions() -> (
    None
):
    from agent import AgentConfig, build_tools
    from agent.strategies import build_strategy
    from agent.testing import FunctionModel, tool_reply
    from executors import DatabaseSchema, InvalidValueError, ReferenceExecutor
    from executors.testing import sample_objects, sample_schema

    plain = sample_schema("Shops").collections[0].model_copy(update={"searchable": False})
    executor = ReferenceExecutor(DatabaseSchema(collections=(plain,)), {"Shops": sample_objects(20, seed=1)})
    alone = {"collection_name": "Shops", "search_query": "cheap"}
    try:
        executor.execute(alone)
        raise AssertionError("a search without a vectorizer must be refused")
    except InvalidValueError as error:
        assert "no vectorizer" in str(error)
    call = {**alone, "integer_property_aggregation": {"property_name": "price", "metrics": "MAX"}}
    sent: list[dict] = []

    def reply(messages: list, _tools: object):  # type: ignore[no-untyped-def]
        sent.append(call)
        return tool_reply("query_database", call)

    run = build_strategy("typed").run(
        FunctionModel(reply),
        executor,
        build_tools(executor.schema),
        AgentConfig(max_steps=1),
        "Highest price of cheap shops?",
    )
    ran = run.calls()[0]
    assert ran.result is not None and "search_query" not in (ran.arguments or {}), ran.error


def test_a_number_condition_the_call_dropped_is_put_back_on_the_property_its_words_name() -> None:
    from agent.strategies.wording import number_condition

    numbers = ["miles_per_gallon", "cylinders", "horsepower", "weight_in_lbs", "year"]
    assert number_condition("How many cars have 200 horsepower or more?", numbers) == {
        "property_name": "horsepower",
        "operator": ">=",
        "value": 200,
    }
    assert number_condition("average weight of cars with more than 6 cylinders", numbers) == {
        "property_name": "cylinders",
        "operator": ">",
        "value": 6,
    }
    assert number_condition("Total displacement of the 1970 model-year cars?", numbers) == {
        "property_name": "year",
        "operator": "=",
        "value": 1970,
    }
    assert number_condition("How many cars weigh between 2000 and 3000 lbs?", numbers) is None  # two bounds: one slot
    assert number_condition("How many cars are faster than 15?", numbers) is None  # no property named
    eight = number_condition("Among the 8-cylinder cars, which origin is most common?", numbers)
    assert eight == {"property_name": "cylinders", "operator": "=", "value": 8}
    assert number_condition("Which 4-cylinder or 6-cylinder car is lightest?", numbers) is None  # two: not one
    assert number_condition("How many 2-door cars are there?", numbers) is None  # no property counts doors
    six = number_condition("What is the smallest displacement among American six-cylinder cars?", numbers)
    assert six == {"property_name": "cylinders", "operator": "=", "value": 6}  # a number written as a word
    spaced = number_condition("avg weight of US cars with 8 cylinders?", numbers)
    assert spaced == number_condition("How many cars have eight cylinders?", numbers) == eight  # "with N <word>"
    assert number_condition("What is the mpg of cars with 4 doors?", numbers) is None
    topped = number_condition("How many cars topped 200 horsepower?", numbers)
    assert topped == {"property_name": "horsepower", "operator": ">", "value": 200}  # a verb that compares
    typo = number_condition("Average weight of the 4-cyclinder cars?", numbers)
    assert typo == {"property_name": "cylinders", "operator": "=", "value": 4}  # a typo of the property's word
    assert number_condition("How many one-way trips are there?", numbers) is None  # no property counts ways
    flowers = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
    wider = number_condition("How many have sepals wider than 3.5 cm?", flowers)
    assert wider == {"property_name": "sepal_width", "operator": ">", "value": 3.5}  # a word of size: its measure
    assert number_condition("How many flowers are wider than 3?", flowers) is None  # sepal or petal: not said
    better = number_condition("Average weight of cars that get 30 mpg or better?", numbers)
    assert better == {"property_name": "miles_per_gallon", "operator": ">=", "value": 30}  # initials, "or better"


def test_the_number_conditions_read_off_our_splits_agree_with_their_gold_filters() -> None:
    from agent.strategies.wording import number_condition
    from executors.vocabulary import PropertyKind
    from fixtures.use_cases import get_use_case

    agree = disagree = 0
    for split in ("natural", "explicit", "multistep"):
        for case in load_split(split_path(split)):
            collection = get_use_case(case.use_case).get_collection(case.collection)
            numbers = [p.name for p in collection.properties if p.kind is PropertyKind.NUMBER]
            read = number_condition(case.query, numbers)
            if read is None:
                continue
            gold = case.ground_truth.to_tool_arguments().get("integer_property_filter") or {}
            same = gold.get("property_name") == read["property_name"] and gold.get("operator") == read["operator"]
            agree, disagree = agree + same, disagree + (not same)
    assert agree > 100 and disagree == 0


def test_the_one_stored_value_the_question_names_is_put_back_when_the_call_has_no_text_filter() -> None:
    from agent.strategies.values import Values
    from executors import ReferenceExecutor
    from executors.testing import sample_objects, sample_schema

    executor = ReferenceExecutor(sample_schema("Shops"), {"Shops": sample_objects(60, seed=2)})
    mean = {"collection_name": "Shops", "integer_property_aggregation": {"property_name": "price", "metrics": "MEAN"}}
    restored, why = Values(None).restore(executor, mean, "What's the average price of the Greek places?")
    assert restored["text_property_filter"] == {"property_name": "cuisine", "operator": "=", "value": "Greek"} and why
    for question in ("Average price of Greek or Thai places?", "What is the average price?"):  # two named, none
        assert Values(None).restore(executor, mean, question) == (mean, "")
    grouped = {**mean, "groupby_property": "cuisine"}  # it chose the groups: the answer reads the one named
    assert Values(None).restore(executor, grouped, "Which cuisine has the highest average price?") == (grouped, "")
    # one number asked, typed without "what is": the value put back (`reshape` leaves the group-by out)
    restored, why = Values(None).restore(executor, grouped, "average price of Greek places")
    assert restored["text_property_filter"] == {"property_name": "cuisine", "operator": "=", "value": "Greek"} and why


def test_restoring_a_dropped_text_filter_gives_back_every_gold_filter_of_our_splits_and_adds_none() -> None:
    from agent.strategies.values import Values
    from tests.unit.test_fixtures_benchmark import reference_executor

    executor, values = reference_executor(), Values(None)
    agree, asked = 0, []

    def choose(prop: str, value: str, codes: list[str]) -> None:  # a name read as a code: none of our data
        asked.append((prop, value))

    for split in ("natural", "explicit", "multistep"):
        for case in load_split(split_path(split)):
            gold = case.ground_truth.to_tool_arguments()
            where = gold.get("text_property_filter")
            if where is None:
                assert values.restore(executor, gold, case.query, choose=choose) == (gold, ""), case.id
                continue
            dropped = {k: v for k, v in gold.items() if k != "text_property_filter"}
            back = values.restore(executor, dropped, case.query, choose=choose)[0].get("text_property_filter")
            if back is not None:
                assert (back["property_name"], back["value"].lower()) == (
                    where["property_name"],
                    str(where["value"]).lower(),
                ), case.id
                agree += 1
    assert agree >= 20 and asked == []


def test_a_year_compared_goes_to_the_year_property_and_never_to_a_price() -> None:
    from agent.strategies.wording import number_condition

    assert number_condition("How many cars from 1975 or later?", ["mpg", "year"]) == {
        "property_name": "year",
        "operator": ">=",
        "value": 1975,
    }
    assert number_condition("max price of amazn in the 2000s (2000 thru 2009)", ["price"]) is None


def test_a_superlative_of_a_number_asks_for_its_extreme_and_agrees_with_every_gold_call_of_our_splits() -> None:
    from agent.strategies.asked import extreme_asked
    from agent.strategies.reshape import to_extreme
    from executors.vocabulary import PropertyKind
    from fixtures.datasets import load_split, split_path
    from fixtures.use_cases import get_use_case

    places = ["latitude", "longitude"]
    assert extreme_asked("What's the westernmost longitude of any airport in Hawaii?", places) == ("longitude", "MIN")
    assert extreme_asked("What was the lowest yield of any trial at Morris?", ["yield_bushels", "year"]) == (
        "yield_bushels",
        "MIN",
    )
    assert extreme_asked("What was the best yield at Duluth in 1931?", ["yield_bushels", "year"]) == (
        "yield_bushels",
        "MAX",
    )  # "best" is the most, "worst" the least
    assert extreme_asked("What is the worst rating of any hotel?", ["rating", "price"]) == ("rating", "MIN")
    assert extreme_asked("What is the fewest years of service among guides?", ["years", "price"]) == ("years", "MIN")
    assert extreme_asked("What is the most expensive nightly price among inns?", ["price", "rooms"]) == ("price", "MAX")
    assert extreme_asked("What is the earliest founding year of any inn?", ["founding_year"]) == (
        "founding_year",
        "MIN",
    )
    assert extreme_asked("What is the most common room count of the inns?", ["room_count"]) is None  # not an extreme
    assert extreme_asked("What is the highest average rating among them?", ["rating"]) is None  # a statistic's
    assert extreme_asked("What is the highest monthly close?", ["price"]) is None  # no word names `price`
    # asked without "what is the", the superlative the question's first word
    assert extreme_asked(
        "Smallest sepal length of any flower that isn't a setosa?", ["sepal_length", "petal_length"]
    ) == (
        "sepal_length",
        "MIN",
    )
    assert extreme_asked("Highest monthly closing price ever for GOOG?", ["price"]) == ("price", "MAX")
    assert extreme_asked("Average price of GOOG?", ["price"]) is None  # only a superlative opens one
    assert extreme_asked("Most common party size?", ["party_size"]) is None
    listing = {
        "collection_name": "A",
        "groupby_property": "code",
        "text_property_aggregation": {"property_name": "code"},
    }
    amended, why = to_extreme("What is the northernmost latitude of any airport?", listing, places)
    assert amended == {
        "collection_name": "A",
        "integer_property_aggregation": {"property_name": "latitude", "metrics": "MAX"},
    }
    assert why
    read = 0
    for split in ("natural", "explicit", "compound", "related"):
        for case in load_split(split_path(split)):
            properties = [p for c in get_use_case(case.use_case).collections for p in c.properties]
            numbers = [p.name for p in properties if p.kind is PropertyKind.NUMBER]
            asked = extreme_asked(case.query, numbers)
            if asked is not None:
                read += 1
                held = case.ground_truth.model_dump(exclude_none=True).get("integer_property_aggregation") or {}
                assert (held.get("property_name"), held.get("metrics")) == asked, (split, case.id)
    assert read >= 30  # the rule is tried on our questions, not only on the ones above


def test_a_statistic_of_the_first_objects_a_superlative_counts_is_over_them() -> None:
    from agent.strategies.asked import first_counted
    from agent.strategies.reshape import to_counted_first
    from executors.vocabulary import PropertyKind
    from fixtures.datasets import load_split, split_path
    from fixtures.use_cases import get_use_case

    cars = ["weight_in_lbs", "horsepower", "miles_per_gallon"]
    assert first_counted("the 5 heaviest cars", cars) == ("weight_in_lbs", "descending", 5)
    flowers = ["sepal_width", "sepal_length", "petal_width", "petal_length"]
    assert first_counted("the three flowers with the shortest petals?", flowers) == ("petal_length", "ascending", 3)
    assert first_counted("How many cars have 4 cylinders?", cars) is None  # a count, not of first objects
    assert first_counted("the 5 best monthly closes", ["price"]) is None  # no word names `price`
    mean = {
        "collection_name": "Cars",
        "integer_property_aggregation": {"property_name": "horsepower", "metrics": "MEAN"},
    }
    amended, why = to_counted_first("What is the average horsepower of the 5 heaviest cars?", mean, cars)
    assert amended == {**mean, "sort": {"property_name": "weight_in_lbs", "order": "descending", "limit": 5}} and why
    listing = {"collection_name": "Cars", "conditions": [{"property_name": "origin", "operator": "=", "value": "USA"}]}
    assert to_counted_first("List the 5 heaviest cars from the USA", listing, cars) == (listing, "")  # no statistic
    for split in ("natural", "explicit", "compound", "related", "multistep"):
        for case in load_split(split_path(split)):
            properties = [p for c in get_use_case(case.use_case).collections for p in c.properties]
            numbers = [p.name for p in properties if p.kind is PropertyKind.NUMBER]
            gold = case.ground_truth.to_tool_arguments()
            assert to_counted_first(case.query, gold, numbers)[0] == gold, (split, case.id)


def test_a_group_by_over_one_value_the_question_does_not_name_groups_over_all() -> None:
    from agent.strategies.reshape import groups_of_one
    from fixtures.datasets import load_split, split_path

    one = {
        "collection_name": "Airports",
        "text_property_filter": {"property_name": "state", "operator": "=", "value": "CA"},
        "groupby_property": "state",
        "integer_property_filter": {"property_name": "latitude", "operator": "<", "value": 25},
    }
    amended, why = groups_of_one("Which state has the most airports south of 25 degrees latitude?", one)
    assert amended == {k: v for k, v in one.items() if k != "text_property_filter"} and why
    assert groups_of_one("Which state has more airports, California or Texas?", one) == (one, "")  # a code's name
    assert groups_of_one("Which state is CA?", one) == (one, "")  # written
    assert groups_of_one("How many airports are there, by state?", one) == (one, "")  # not which group
    for split in ("natural", "explicit", "compound", "related", "multistep"):
        for case in load_split(split_path(split)):
            gold = case.ground_truth.to_tool_arguments()
            assert groups_of_one(case.query, gold)[0] == gold, (split, case.id)


def test_a_mean_or_median_the_words_ask_for_is_computed_where_the_call_computes_no_number() -> None:
    from agent.strategies.reshape import to_statistic
    from executors.vocabulary import PropertyKind
    from fixtures.datasets import load_split, split_path
    from fixtures.use_cases import get_use_case

    counted = {
        "collection_name": "B",
        "text_property_aggregation": {"property_name": "variety", "metrics": "COUNT"},
        "conditions": [{"property_name": "variety", "operator": "=", "value": "Trebi"}],
    }
    amended, why = to_statistic("Average yield of the Trebi plots?", counted, ["yield_bushels", "year"])
    assert (
        amended
        == {
            "collection_name": "B",
            "conditions": counted["conditions"],
            "integer_property_aggregation": {"property_name": "yield_bushels", "metrics": "MEAN"},
        }
        and why
    )
    topped = {  # "the median final grade of those" written as the most common feedback
        "collection_name": "Enrollments",
        "text_property_aggregation": {"property_name": "feedback", "metrics": "TOP_OCCURRENCES"},
    }
    amended, why = to_statistic("What is the median final grade of those?", topped, ["finalGrade", "credits"])
    assert amended == {
        "collection_name": "Enrollments",
        "integer_property_aggregation": {"property_name": "finalGrade", "metrics": "MEDIAN"},
    }
    per_group = {"collection_name": "B", "groupby_property": "site"}  # a bare group-by: its counts may be read
    assert to_statistic("What is the average yield per site?", per_group, ["yield_bushels"]) == (per_group, "")
    counted_per_group = {  # the model counted each origin for "the average weight in lbs for each origin"
        "collection_name": "Cars",
        "text_property_aggregation": {"property_name": "origin", "metrics": "COUNT"},
        "groupby_property": "origin",
    }
    amended, why = to_statistic(
        "What is the average weight in lbs for each origin?", counted_per_group, ["weight_in_lbs", "horsepower"]
    )
    assert (
        amended
        == {
            "collection_name": "Cars",
            "groupby_property": "origin",
            "integer_property_aggregation": {"property_name": "weight_in_lbs", "metrics": "MEAN"},
        }
        and "MEAN of weight_in_lbs" in why
    )
    ungrouped = {"collection_name": "B", "text_property_aggregation": {"property_name": "site", "metrics": "COUNT"}}
    assert to_statistic("What is the average yield per site?", ungrouped, ["yield_bushels"]) == (ungrouped, "")
    changed = []
    for split in ("natural", "explicit", "compound", "related", "multistep"):
        for case in load_split(split_path(split)):
            properties = [p for c in get_use_case(case.use_case).collections for p in c.properties]
            numbers = [p.name for p in properties if p.kind is PropertyKind.NUMBER]
            gold = case.ground_truth.to_tool_arguments()
            if to_statistic(case.query, gold, numbers)[0] != gold:
                changed.append((split, case.id))
    assert changed == []


def test_a_statistic_of_a_property_the_call_holds_to_one_value_moves_to_the_one_the_words_name() -> None:
    from agent.strategies.reshape import off_fixed
    from executors.vocabulary import PropertyKind
    from fixtures.datasets import load_split, split_path
    from fixtures.use_cases import get_use_case

    numbers = ["miles_per_gallon", "cylinders", "weight_in_lbs", "horsepower"]
    fixed = {
        "collection_name": "Cars",
        "integer_property_aggregation": {"property_name": "cylinders", "metrics": "MEAN"},
        "conditions": [{"property_name": "cylinders", "operator": "=", "value": 8}],
    }
    amended, why = off_fixed("avg weight of cars with 8 cylinders?", fixed, numbers)
    assert amended["integer_property_aggregation"] == {"property_name": "weight_in_lbs", "metrics": "MEAN"}
    assert amended["conditions"] == fixed["conditions"] and "holds to one value" in why
    # no other property named with a statistic: left as it is; a count of it is a count
    assert off_fixed("How many cars have 8 cylinders?", fixed, numbers) == (fixed, "")
    counted = {**fixed, "integer_property_aggregation": {"property_name": "cylinders", "metrics": "COUNT"}}
    assert off_fixed("average weight of cars with 8 cylinders?", counted, numbers) == (counted, "")
    changed = []
    for split in ("natural", "explicit", "compound", "related", "multistep"):
        for case in load_split(split_path(split)):
            properties = [p for c in get_use_case(case.use_case).collections for p in c.properties]
            gold = case.ground_truth.to_tool_arguments()
            names = [p.name for p in properties if p.kind is PropertyKind.NUMBER]
            if off_fixed(case.query, gold, names)[0] != gold:
                changed.append((split, case.id))
    assert changed == []


def test_a_number_filter_the_question_does_not_write_is_left_out() -> None:
    from agent.strategies.wording import unwritten_numbers, written_numbers
    from fixtures.datasets import load_split, split_path

    assert {4500.0, 66.56, 50000.0, 3.0} <= written_numbers("under 4,500 g, over 66.56, $50k, three stars")
    guessed = {
        "collection_name": "Flowers",
        "integer_property_filter": {"property_name": "stem_cm", "operator": "<=", "value": 4.3},
    }
    amended, why = unwritten_numbers("Shortest stem of any flower that isn't a tulip?", guessed)
    assert amended == {"collection_name": "Flowers"} and "4.3" in why
    written = {**guessed, "integer_property_filter": {"property_name": "stem_cm", "operator": ">", "value": 12}}
    assert unwritten_numbers("How many flowers have stems over twelve cm?", written) == (written, "")
    assert unwritten_numbers("How many flowers have stems over 12.0 cm?", written) == (written, "")
    changed = []
    for split in ("natural", "explicit", "compound", "related", "multistep", "conversation"):
        for case in load_split(split_path(split)):
            gold = case.ground_truth.to_tool_arguments()
            if unwritten_numbers(case.query, gold)[0] != gold:
                changed.append((split, case.id))
    assert changed == []


def test_a_range_on_a_collection_of_one_number_property_is_on_it() -> None:
    from agent.strategies.wording import number_range

    assert number_range("In how many weeks did the catch land between 25 and 30?", ["weight_kg"]) == [
        {"property_name": "weight_kg", "operator": "between", "value": 25, "value_to": 30}
    ]
    assert number_range("In how many weeks did the catch land between 25 and 30?", ["weight_kg", "length_cm"]) == []
    assert number_range("How many catches were landed between 2003 and 2005?", ["weight_kg"]) == []  # years


def test_a_superlative_of_heat_wet_or_wind_counts_first_objects_and_its_count_is_no_condition() -> None:
    from agent.strategies.asked import extreme_asked, first_counted
    from agent.strategies.reshape import to_counted_first

    days = ["precipitation", "temp_max", "temp_min", "wind"]
    assert first_counted("the mean wind speed on the 10 wettest days?", days) == ("precipitation", "descending", 10)
    assert first_counted("the 3 driest days", days) == ("precipitation", "ascending", 3)
    assert extreme_asked("What was the windiest day?", days) == ("wind", "MAX")
    assert extreme_asked("What's the hottest it got?", days) is None  # a high and a low: which, the words do not say
    mean = {"collection_name": "Days", "integer_property_aggregation": {"property_name": "wind", "metrics": "MEAN"}}
    counted = {**mean, "integer_property_filter": {"property_name": "precipitation", "operator": "=", "value": 10.0}}
    amended, why = to_counted_first("What was the mean wind speed on the 10 wettest days?", counted, days)
    assert amended == {**mean, "sort": {"property_name": "precipitation", "order": "descending", "limit": 10}}, why
    other = {**mean, "integer_property_filter": {"property_name": "precipitation", "operator": ">", "value": 10.0}}
    assert to_counted_first("the mean wind on the 10 wettest days?", other, days)[0]["integer_property_filter"]


def test_the_most_common_values_of_a_property_are_not_asked_within_its_own_groups() -> None:
    from agent.strategies.reshape import groups_of_itself
    from fixtures.datasets import load_split, split_path

    top = {"property_name": "weather", "metrics": "TOP_OCCURRENCES", "top_occurrences_limit": 1}
    call = {"collection_name": "Days", "text_property_aggregation": top, "groupby_property": "weather"}
    assert groups_of_itself(call)[0] == {"collection_name": "Days", "text_property_aggregation": top}
    by_other = {**call, "groupby_property": "season"}
    assert groups_of_itself(by_other) == (by_other, "")
    for split in ("natural", "explicit", "compound", "related", "multistep"):
        for case in load_split(split_path(split)):
            gold = case.ground_truth.to_tool_arguments()
            assert groups_of_itself(gold)[0] == gold, (split, case.id)
