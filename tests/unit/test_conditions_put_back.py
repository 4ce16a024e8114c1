"""Conditions the question states and the call dropped, put back as the compound tool's `conditions`: a
time span read from the words, and the rules that keep a condition out (a property already filtered,
alternatives, a full list, an amount that only looks like a year)."""

from __future__ import annotations

from typing import Any

import pytest

from agent.strategies.alternatives import alternatives, either, exclude, excluded, or_clause
from agent.strategies.conditions import date_condition, filtered_properties, put_back, shown, with_condition
from agent.strategies.naming import mentions
from agent.strategies.restating import restates
from agent.strategies.shares import boolean_beside
from agent.strategies.typed import amended_call
from executors.vocabulary import MAX_CONDITIONS
from fixtures.use_cases import database_schema_of, get_use_case


@pytest.mark.parametrize(
    ("question", "operator", "value", "value_to"),
    [
        ("What was the average price in 2005?", "=", "2005", None),
        ("How many records since 2002?", ">=", "2002", None),
        ("Which close after 2003 was highest?", ">", "2003", None),
        ("How many before 2005?", "<", "2005", None),
        ("How many up to 2005?", "<=", "2005", None),
        ("the mean price between 2002 and 2004", "between", "2002", "2004"),
        ("from Jan 2001 to Dec 2003", "between", "2001-01", "2003-12"),
        ("how many in the 90s", "=", "1990s", None),
        ("the 1980s average", "=", "1980s", None),
        ("the highest price in March 2005?", "=", "2005-03", None),
        ("closing price in sept. 2004", "=", "2004-09", None),
        ("before March 2003", "<", "2003-03", None),
        ("How many people died on April 30, 1992?", "=", "1992-04-30", None),
        ("on or after May 1st 1992", ">=", "1992-05-01", None),
        ("How many died on 1992-04-30?", "=", "1992-04-30", None),
    ],
)
def test_a_time_span_is_read_from_the_words(question: str, operator: str, value: str, value_to: str | None) -> None:
    found = date_condition(question, ["date"])
    expected: dict[str, Any] = {"property_name": "date", "operator": operator, "value": value}
    assert found == (expected if value_to is None else {**expected, "value_to": value_to})


@pytest.mark.parametrize(
    "question",
    [
        "How many cars weigh over 3000?",
        "prices in 2004 and 2005",  # two spans, not a range: left to the model
        "Which price was over 2000 dollars?",
        "How many cost $2010 or more?",
        "the 3 most common",
    ],
)
def test_no_span_or_several_or_an_amount_put_back_nothing(question: str) -> None:
    assert date_condition(question, ["date"]) is None


def test_a_span_needs_exactly_one_date_property() -> None:
    assert date_condition("in 2005", []) is None
    assert date_condition("in 2005", ["opened", "closed"]) is None


CALL = {
    "collection_name": "Wines",
    "text_property_filter": {"property_name": "country", "operator": "=", "value": "France"},
}
VARIETY = {"property_name": "variety", "operator": "=", "value": "Pinot Noir"}


def test_a_condition_is_added_beside_the_slots() -> None:
    added = with_condition(CALL, VARIETY)
    assert added == {**CALL, "conditions": [VARIETY]}
    assert filtered_properties(added) == {"country", "variety"}


def test_a_filtered_property_alternatives_and_a_full_list_take_no_more() -> None:
    assert with_condition(CALL, {**VARIETY, "property_name": "country"}) is None
    either = {**CALL, "conditions": [VARIETY, {**VARIETY, "value": "Merlot"}], "match": "any"}
    assert with_condition(either, {"property_name": "points", "operator": ">", "value": 90}) is None
    full = {
        "collection_name": "Wines",
        "conditions": [{"property_name": f"p{i}", "operator": "=", "value": 1} for i in range(MAX_CONDITIONS)],
    }
    assert with_condition(full, VARIETY) is None


def test_a_condition_is_shown_as_a_person_reads_it() -> None:
    assert shown(VARIETY) == 'variety = "Pinot Noir"'
    assert shown({"property_name": "date", "operator": "between", "value": "2002", "value_to": "2004"}) == (
        "date between 2002 and 2004"
    )
    assert shown({"property_name": "date", "operator": ">=", "value": "1990s"}) == "date >= 1990s"


SITES = {"site": ["University Farm", "Duluth", "Morris"], "variety": ["Manchuria", "Svansota", "Velvet"]}


@pytest.mark.parametrize(
    ("question", "out", "either_of"),
    [
        ("How many trials were run at sites other than Morris?", ["Morris"], None),
        ("the lowest yield outside University Farm and Duluth?", ["University Farm", "Duluth"], None),
        ("Average yield of the Manchuria or Svansota plots?", [], ("variety", ["Manchuria", "Svansota"])),
        ("Average yield of Manchuria at Morris?", [], None),
        ("Is Morris or Duluth higher for Velvet?", [], None),  # a choice between them: each its own group
        ("Which site yields more, Morris or Duluth?", [], None),
        ("How many trials at Morris or Duluth?", [], ("site", ["Morris", "Duluth"])),
        ("How many trials weren't labeled as Morris?", ["Morris"], None),  # a negated verb and its word
        ("How many trials that didn't have Velvet at Duluth?", ["Velvet"], None),
        ("How many trials were labeled as Morris?", [], None),
        ("How many trials did Velvet win without a Morris?", ["Morris"], None),  # "without a majority"
    ],
)
def test_excluded_values_and_alternatives_are_read_where_the_question_names_them(
    question: str, out: list[str], either_of: tuple[str, list[str]] | None
) -> None:
    at = mentions(question, SITES)
    assert [m[1] for m in excluded(question, at)] == out
    assert alternatives(question, at) == either_of


def test_a_short_code_is_named_in_capitals_only() -> None:
    states = {"state": ["NY", "NJ", "OR"]}
    assert [m[1] for m in mentions("airports in NY or NJ", states)] == ["NY", "NJ"]


def test_an_excluded_value_turns_its_filter_around_or_is_added() -> None:
    slot = {
        "collection_name": "Barley",
        "text_property_filter": {"property_name": "site", "operator": "=", "value": "Morris"},
    }
    flipped, notes = exclude(slot, [("site", "Morris", 0, 0)])
    assert flipped == {
        "collection_name": "Barley",
        "conditions": [{"property_name": "site", "operator": "!=", "value": "Morris"}],
    }
    assert notes == ['the question excludes site = "Morris": site != "Morris".']
    both, _ = exclude({"collection_name": "Barley"}, [("site", "University Farm", 0, 0), ("site", "Duluth", 0, 0)])
    assert [c["value"] for c in both["conditions"]] == ["University Farm", "Duluth"]
    part = {**slot, "text_property_filter": {"property_name": "site", "operator": "LIKE", "value": "*Morris*"}}
    assert exclude(part, [("site", "Morris", 0, 0)])[0] == flipped  # the model's LIKE on the excluded value
    other = {
        "collection_name": "Barley",
        "text_property_filter": {"property_name": "site", "operator": "=", "value": "Duluth"},
    }
    assert exclude(other, [("site", "Morris", 0, 0)]) == (other, [])  # the call reads the property otherwise


def test_alternatives_replace_an_equal_on_one_of_them() -> None:
    call = {
        "collection_name": "Barley",
        "text_property_filter": {"property_name": "variety", "operator": "=", "value": "Manchuria"},
    }
    grouped, notes = either(call, "variety", ["Manchuria", "Svansota"])
    assert grouped == {
        "collection_name": "Barley",
        "conditions": [
            {"property_name": "variety", "operator": "=", "value": "Manchuria"},
            {"property_name": "variety", "operator": "=", "value": "Svansota"},
        ],
        "match": "any",
    }
    assert notes == ['the question asks for variety "Manchuria" or "Svansota".']
    held = {"collection_name": "Barley", "conditions": [{"property_name": "site", "operator": "=", "value": "Morris"}]}
    assert either(held, "variety", ["Manchuria", "Svansota"]) == (held, [])  # one group of alternatives a call


def test_a_year_inside_a_value_the_call_holds_is_not_a_time_span() -> None:
    """Found by the oracle on the compound split: "whose term is Spring 2025" is a term, not the year 2025."""
    question = "What is the lowest final grade among enrollments whose term is Spring 2025 and whose feedback mentions organized?"
    held = {
        "collection_name": "Enrollments",
        "conditions": [{"property_name": "term", "operator": "=", "value": "Spring 2025"}],
    }
    assert put_back(question, held, ["finalGrade"], ["enrolledOn"]) == (held, [])
    other = {
        "collection_name": "Enrollments",
        "text_property_filter": {"property_name": "term", "operator": "=", "value": "Spring"},
    }
    arguments, notes = put_back(
        "How many enrollments in 2025 are for the Spring term?", other, ["finalGrade"], ["enrolledOn"]
    )
    assert arguments["conditions"] == [{"property_name": "enrolledOn", "operator": "=", "value": "2025"}] and notes


def test_a_between_replaces_the_one_bound_the_call_holds_of_it() -> None:
    """A model that writes `>= 15` of "between 15 and 40" gets the range; a bound of another value is kept."""
    question = "How many of the clinics whose waiting time is between 15 and 40 accept walk-ins?"
    held = {
        "collection_name": "Clinics",
        "integer_property_filter": {"property_name": "averageWaitMinutes", "operator": ">", "value": 15},
    }
    arguments, notes = put_back(question, held, ["averageWaitMinutes"], [])
    between = {"property_name": "averageWaitMinutes", "operator": "between", "value": 15, "value_to": 40}
    assert arguments == {"collection_name": "Clinics", "conditions": [between]} and "replaced" in notes[0]
    other = {**held, "integer_property_filter": {**held["integer_property_filter"], "value": 20}}
    assert put_back(question, other, ["averageWaitMinutes"], [])[0] == other
    # the range written as one of its ends, an equality
    one_end = {**held, "integer_property_filter": {**held["integer_property_filter"], "operator": "=", "value": 40}}
    arguments, notes = put_back(question, one_end, ["averageWaitMinutes"], [])
    assert arguments == {"collection_name": "Clinics", "conditions": [between]} and "= 40" in notes[0]


def test_the_year_of_a_time_span_written_as_a_number_condition_is_left_out() -> None:
    """ "since 2005" is a date, not `price >= 2005`: with it the count was 0. A property named for years keeps it."""
    question = "How many monthly records does IBM have since 2005?"
    held = {
        "collection_name": "Stocks",
        "integer_property_filter": {"property_name": "price", "operator": ">=", "value": 2005},
        "text_property_filter": {"property_name": "symbol", "operator": "=", "value": "IBM"},
    }
    arguments, notes = put_back(question, held, ["price"], ["date"])
    assert arguments == {
        "collection_name": "Stocks",
        "text_property_filter": held["text_property_filter"],
        "conditions": [{"property_name": "date", "operator": ">=", "value": "2005"}],
    }
    assert "price >= 2005" in notes[0]
    years = {**held, "integer_property_filter": {"property_name": "model_year", "operator": ">=", "value": 2005}}
    assert put_back(question, years, ["model_year"], ["date"])[0]["integer_property_filter"]["value"] == 2005


def test_putting_back_leaves_every_gold_call_of_our_splits_as_it_is() -> None:
    from executors.vocabulary import PropertyKind
    from fixtures.datasets import load_split, split_path
    from fixtures.use_cases import get_use_case

    for split in ("natural", "explicit", "compound", "related"):
        for case in load_split(split_path(split)):
            gold = case.ground_truth.to_tool_arguments()
            own = [c for c in get_use_case(case.use_case).collections if c.name == gold["collection_name"]]
            numbers = [p.name for c in own for p in c.properties if p.kind is PropertyKind.NUMBER]
            dates = [d.name for c in own for d in c.dates]
            assert put_back(case.query, gold, numbers, dates) == (gold, []), (split, case.id)


def test_an_or_that_opens_a_clause_makes_the_call_s_two_filters_alternatives() -> None:
    question = "How many credits do courses whose subject is History or that are taught online add up to in total?"
    both = {
        "collection_name": "Courses",
        "text_property_filter": {"property_name": "subject", "operator": "=", "value": "History"},
        "boolean_property_filter": {"property_name": "isOnline", "operator": "=", "value": True},
    }
    named = mentions(question, {"subject": ["History", "Mathematics"]})
    arguments, notes = or_clause(question, both, named)
    assert arguments["match"] == "any" and len(arguments["conditions"]) == 2 and notes
    assert "text_property_filter" not in arguments
    anded = question.replace(" or that", " and that")
    assert or_clause(anded, both, mentions(anded, {"subject": ["History"]})) == (both, [])
    chooses = "Which is larger: the credits of History or those taught online?"
    assert or_clause(chooses, both, mentions(chooses, {"subject": ["History"]}))[0] == both


def test_except_those_whose_excludes_the_value_at_the_clause_s_end() -> None:
    question = "What is the average rating of restaurants that are open now, except those whose cuisine is Italian?"
    assert [m[1] for m in excluded(question, mentions(question, {"cuisine": ["Italian", "Thai"]}))] == ["Italian"]
    plain = "What is the average rating of restaurants whose cuisine is Italian?"
    assert excluded(plain, mentions(plain, {"cuisine": ["Italian"]})) == []


def test_a_search_that_only_restates_conditions_is_told_from_a_topic() -> None:
    schema = database_schema_of([get_use_case("courses"), get_use_case("restaurants")])
    courses, restaurants = schema.get("Courses"), schema.get("Restaurants")
    assert courses is not None and restaurants is not None
    like = {"text_property_filter": {"property_name": "description", "operator": "LIKE", "value": "*Python*"}}
    stored = {"subject": ["History", "Computer Science"]}
    assert restates("Computer Science and Python", like, courses, stored)
    assert restates("credits between 1 and 4", {}, courses, stored)
    assert restates("July 2025", {}, courses, stored)
    assert restates("isOnline courses with credits between 3.4 and 6.7", {}, courses, stored), (
        "a property's name as written"
    )
    assert restates("subject = 'History'", {}, courses, stored), "a condition written out"
    assert not restates("python programming for beginners", like, courses, stored)
    assert not restates("places with live music", {}, restaurants, {"cuisine": ["Italian"]})


def test_a_count_of_a_number_beside_the_share_asked_is_left_out() -> None:
    """Found on the compound split's first run: `COUNT` of the filtered number beside `TOTAL_TRUE` made the
    answer "The answer is 42, 26."; a COUNT alone, or beside a number's own metric, stays."""
    from agent.strategies.reshape import amend_to_question

    question = "How many of the clinics whose waiting time is between 15 and 40 accept walk-ins?"
    count = {"property_name": "averageWaitMinutes", "metrics": "COUNT"}
    share = {"property_name": "acceptsWalkIns", "metrics": "TOTAL_TRUE"}
    both = {"collection_name": "Clinics", "integer_property_aggregation": count, "boolean_property_aggregation": share}
    amended, why = amend_to_question(question, both, ["specialty"])
    assert "integer_property_aggregation" not in amended and amended["boolean_property_aggregation"] == share and why
    alone = {"collection_name": "Clinics", "integer_property_aggregation": count}
    assert amend_to_question("How many clinics are there?", alone, ["specialty"]) == (alone, "")
    # a statistic of the bound number the count replaced: its COUNT is then beside the share too
    maximum = {**both, "integer_property_aggregation": {"property_name": "averageWaitMinutes", "metrics": "MAX"}}
    bound = {"property_name": "averageWaitMinutes", "operator": "between", "value": 15, "value_to": 40}
    amended, _ = amend_to_question(question, {**maximum, "conditions": [bound]}, ["specialty"])
    assert amended == {"collection_name": "Clinics", "boolean_property_aggregation": share, "conditions": [bound]}


def test_a_boolean_tallied_beside_the_statistic_asked_is_a_condition_or_left_out() -> None:
    """Found on the compound split: MIN of the price beside a COUNT of the booking asked as a condition."""
    cheapest = {"property_name": "ticketPrice", "metrics": "MIN"}
    tallied = {"property_name": "requiresBooking", "metrics": "COUNT"}
    call = {
        "collection_name": "Exhibitions",
        "integer_property_aggregation": cheapest,
        "boolean_property_aggregation": tallied,
    }
    asked = "What is the cheapest ticket price among exhibitions that require advance booking?"
    booked = {"property_name": "requiresBooking", "operator": "=", "value": True}
    assert boolean_beside(asked, call)[0] == {
        **_without(call, "boolean_property_aggregation"),
        "boolean_property_filter": booked,
    }
    unbooked = boolean_beside(asked.replace("that require", "that do not require"), call)[0]
    assert unbooked["boolean_property_filter"] == {**booked, "value": False}
    unnamed = boolean_beside("What is the cheapest ticket price among exhibitions in Paris?", call)[0]
    assert unnamed == _without(call, "boolean_property_aggregation")
    # a count or a share asked anywhere: the boolean's aggregation may be what it asks
    both = "What is the cheapest ticket price, and how many exhibitions require booking?"
    assert boolean_beside(both, call) == (call, [])


def test_a_boolean_tallied_beside_the_extreme_the_words_ask_is_left_out_after_it_is_computed() -> None:
    """Found on the compound split: a COUNT of a text beside a boolean's TOTAL_FALSE became the MIN asked, and
    the boolean stayed beside it ("The answer is 4, 3."): it is read after the statistic is settled."""
    schema = database_schema_of([get_use_case("visual_art")]).get("Exhibitions")
    assert schema is not None
    london = {"property_name": "city", "operator": "=", "value": "London"}
    written = {
        "collection_name": "Exhibitions",
        "text_property_filter": london,
        "text_property_aggregation": {"property_name": "summary", "metrics": "COUNT", "top_occurrences_limit": 1},
        "boolean_property_aggregation": {"property_name": "requiresBooking", "metrics": "TOTAL_FALSE"},
    }
    asked = "What is the cheapest ticket price among exhibitions that are held in London?"
    amended, why = amended_call(asked, written, schema, compound=True, first=True)
    assert "boolean_property_aggregation" not in amended, why
    assert amended["integer_property_aggregation"] == {"property_name": "ticketPrice", "metrics": "MIN"}
    assert "requiresBooking" in why


def _without(call: dict[str, Any], slot: str) -> dict[str, Any]:
    return {k: v for k, v in call.items() if k != slot}


def test_a_search_for_words_of_stored_prose_is_a_topic_not_a_restatement() -> None:
    """Found by the oracle on the natural split: "wheelchair access" is in stored requests ("The host asks for
    wheelchair access."), and the gold search for it was dropped. Only a category of a few words counts."""
    schema = database_schema_of([get_use_case("restaurants")])
    reservations = schema.get("Reservations")
    assert reservations is not None
    stored = {"specialRequests": ["The host asks for wheelchair access."], "occasion": ["Anniversary"]}
    assert not restates("wheelchair access", {}, reservations, stored)
    assert restates("Anniversary", {}, reservations, stored)


def test_the_question_s_number_on_another_property_is_moved_to_the_property_its_words_name() -> None:
    """ "model year 1980 or later" sent as `horsepower >= 1980`: the question's condition takes its place."""
    question = "What's the maximum horsepower among cars from model year 1980 or later?"
    numbers = ["horsepower", "year", "weight_in_lbs"]
    slot = {"property_name": "horsepower", "operator": ">=", "value": 1980}
    held = {"collection_name": "Cars", "integer_property_filter": slot}
    arguments, notes = put_back(question, held, numbers, [])
    year = {"property_name": "year", "operator": ">=", "value": 1980}
    assert arguments == {"collection_name": "Cars", "integer_property_filter": year}
    assert notes == ["the question's condition year >= 1980 replaced horsepower >= 1980."]
    listed = {
        "collection_name": "Cars",
        "conditions": [{"property_name": "origin", "operator": "=", "value": "USA"}, slot],
    }
    assert put_back(question, listed, numbers, [])[0]["conditions"][1] == year, "a condition of the list too"
    other = {**held, "integer_property_filter": {**slot, "value": 150}}  # another number: a condition of its own
    assert put_back(question, other, numbers, [])[0]["conditions"] == [year]


def test_excluded_names_of_stored_codes_exclude_the_codes_whatever_the_model_wrote() -> None:
    from agent.strategies.alternatives import excluded
    from agent.strategies.codes import code_mentions

    question = "How many airports are in states other than Alaska and Texas?"
    states = {"state": ["AK", "TX", "CA", "KS"]}
    out = excluded(question, code_mentions(question, states, None, lambda _prop, _name: False))
    assert [(prop, code, question[start:end]) for prop, code, start, end in out] == [
        ("state", "AK", "Alaska"),
        ("state", "TX", "Texas"),
    ]
    wrote = {"property_name": "state", "operator": "LIKE", "value": "!ALaska"}  # the model's, matching nothing
    call, notes = exclude({"collection_name": "Airports", "text_property_filter": wrote}, out, question)
    assert call == {
        "collection_name": "Airports",
        "conditions": [
            {"property_name": "state", "operator": "!=", "value": "AK"},
            {"property_name": "state", "operator": "!=", "value": "TX"},
        ],
    }
    assert len(notes) == 2
    both = {**wrote, "value": "!ALaska, Texas"}  # both names in one value
    assert exclude({"collection_name": "Airports", "text_property_filter": both}, out, question)[0] == call
    kept = {"property_name": "state", "operator": "=", "value": "CA"}  # another value: the model's own reading
    assert exclude({"collection_name": "Airports", "text_property_filter": kept}, out[:1], question)[1] == []


def test_a_people_s_name_names_its_country_as_the_data_stores_it_excluded_too() -> None:
    from agent.strategies.alternatives import excluded
    from agent.strategies.naming import nearest_value

    origins = {"origin": ["USA", "Japan", "Europe"]}
    assert [m[1] for m in mentions("Is the average American car heavier than a Japanese one?", origins)] == [
        "USA",
        "Japan",
    ]
    question = "how many non-american cars r there"
    assert [m[:2] for m in excluded(question, mentions(question, origins))] == [("origin", "USA")]
    assert nearest_value("British", ["UK", "US", "France"]) == "UK"
    assert nearest_value("American", ["United States", "Canada"]) == "United States"
    assert nearest_value("Swiss", ["Sweden", "Switzerland"]) == "Switzerland"
    assert nearest_value("American", ["Asia", "Europe"]) is None  # no country of theirs stored
    assert mentions("How many are in the us?", origins) == []  # a short code is still named in capitals


def test_a_condition_on_a_stored_value_the_question_does_not_name_is_left_out() -> None:
    from agent.strategies.conditions import unasked

    kinds = {"weather": ["sun", "rain", "snow"], "state": ["TX", "AK"]}
    rain = {"property_name": "weather", "operator": "=", "value": "rain"}
    year = {"property_name": "date", "operator": "=", "value": "2013"}
    call = {"collection_name": "Days", "text_property_filter": rain, "conditions": [year]}
    kept, why = unasked("What was the lowest minimum temperature in 2013?", call, kinds)
    assert kept == {"collection_name": "Days", "conditions": [year]} and "weather" in why
    assert unasked("What was the lowest temperature on rainy days?", call, kinds) == (call, "")  # named, by a form
    capital = {**call, "text_property_filter": {**rain, "value": "Rain"}}  # the model's case: the same value
    assert unasked("What was the lowest minimum temperature in 2013?", capital, kinds)[0] == kept
    texas = {"collection_name": "Places", "conditions": [{"property_name": "state", "operator": "=", "value": "TX"}]}
    assert unasked("How many airports are in Texas?", texas, kinds) == (texas, "")  # a code: a name stands for it
    either = {**call, "match": "any"}
    assert unasked("What was the lowest minimum temperature in 2013?", either, kinds) == (either, "")


def test_a_boolean_s_true_no_word_names_is_left_out_and_its_false_stays() -> None:
    """Found on the compound split: `openNow = true` beside the range a count question asked."""
    from agent.strategies.conditions import unasked

    rating = {"property_name": "averageRating", "operator": "between", "value": 3.0, "value_to": 4.2}
    open_now = {"property_name": "openNow", "operator": "=", "value": True}
    call = {"collection_name": "Restaurants", "boolean_property_filter": open_now, "conditions": [rating]}
    asked = "How many restaurants whose rating is between 3.0 and 4.2 are there?"
    kept, why = unasked(asked, call, {})
    assert kept == {"collection_name": "Restaurants", "conditions": [rating]} and "openNow" in why
    assert unasked(asked.replace("are there", "are open now"), call, {}) == (call, "")  # named
    closed = {**call, "boolean_property_filter": {**open_now, "value": False}}  # "currently closed": no word of it
    assert unasked("How many restaurants that are currently closed are there?", closed, {}) == (closed, "")
    not_open = {**call, "boolean_property_filter": {**open_now, "operator": "!="}}  # != true asserts false
    assert unasked(asked, not_open, {}) == (not_open, "")


def test_a_filter_on_a_name_the_question_gives_for_a_code_is_left_out() -> None:
    from agent.strategies.codes import off_code_names

    question = "How many ports are in the Isle of Skye?"
    start = question.index("Isle of Skye")
    coded_at = [("region", "IS", start, start + len("Isle of Skye"))]
    call = {
        "collection_name": "Ports",
        "text_property_filter": {"property_name": "town", "operator": "=", "value": "Skye"},
        "conditions": [{"property_name": "region", "operator": "=", "value": "IS"}],
    }
    amended, notes = off_code_names(question, call, coded_at)
    assert amended == {"collection_name": "Ports", "conditions": call["conditions"]} and len(notes) == 1
    # a value of the code's own property, a value outside the name, or a short one: kept
    own = {**call, "text_property_filter": {"property_name": "region", "operator": "=", "value": "Isle of Skye"}}
    assert off_code_names(question, own, coded_at) == (own, [])
    other = {**call, "text_property_filter": {"property_name": "town", "operator": "=", "value": "Portree"}}
    assert off_code_names(question, other, coded_at) == (other, [])
    short = {**call, "text_property_filter": {"property_name": "town", "operator": "=", "value": "Isle"}}
    assert off_code_names(question, short, coded_at)[1] != []  # four letters and inside the name: left out
    assert off_code_names(question, call, []) == (call, [])


def test_a_stored_abbreviation_a_name_of_the_question_may_stand_for_is_kept() -> None:
    from agent.strategies.codes import abbreviates
    from agent.strategies.conditions import unasked

    categories = {"ticker": ["ZNTH", "QRLX", "BOLT"]}
    call = {
        "collection_name": "Quotes",
        "text_property_filter": {"property_name": "ticker", "operator": "=", "value": "ZNTH"},
    }
    assert abbreviates("ZNTH", "What was Zenith's average close?")
    assert unasked("What was Zenith's average close?", call, categories) == (call, "")
    # no name of the question begins like it: the model's own condition, left out
    assert unasked("What was the average close in 2004?", call, categories)[0] == {"collection_name": "Quotes"}
    assert not abbreviates("ZNTH", "Zenith closed where?")  # the first word is no name: any question opens so
    assert not abbreviates("Rain", "What about Rome?")


def test_a_name_one_stored_ticker_abbreviates_is_its_code_wherever_it_stands() -> None:
    from agent.strategies.codes import code_mentions

    tickers = {"ticker": ["ZNTH", "QRLX", "BOLT", "IBX"]}
    unheld = lambda prop, name: False  # noqa: E731
    asked = "What was Quorlax's average close, and how did Zenith do?"
    assert [(p, c) for p, c, *_ in code_mentions(asked, tickers, None, unheld)] == [
        ("ticker", "QRLX"),
        ("ticker", "ZNTH"),
    ]
    # a name no stored ticker abbreviates in order, or too short to tell: none
    assert code_mentions("What was Lightning's average close?", tickers, None, unheld) == []
    assert code_mentions("What did Bolt close at?", tickers, None, unheld) == []


def test_a_reference_filter_on_the_collection_s_own_property_is_one_of_its_conditions() -> None:
    """Found on the compound split: `reference: "language"` for the doctors' own language, refused three times."""
    from agent.strategies.conditions import own_condition

    schema = database_schema_of([get_use_case("health_clinics")])
    doctors = schema.get("Doctors")
    assert doctors is not None
    mean = {
        "collection_name": "Doctors",
        "integer_property_aggregation": {"property_name": "yearsOfExperience", "metrics": "MIN"},
    }
    own = {"reference": "language", "property_name": "language", "operator": "!=", "value": "Spanish"}
    moved, why = own_condition({**mean, "reference_filter": own}, doctors)
    assert (
        moved == {**mean, "conditions": [{"property_name": "language", "operator": "!=", "value": "Spanish"}]} and why
    )
    named = {**own, "reference": "Doctors"}  # the collection's own name
    assert own_condition({**mean, "reference_filter": named}, doctors)[0] == moved
    through = {
        "reference": "clinic",
        "property_name": "specialty",
        "operator": "=",
        "value": "Cardiology",
    }  # a real one
    assert own_condition({**mean, "reference_filter": through}, doctors) == ({**mean, "reference_filter": through}, "")
    taken = {**mean, "conditions": [{"property_name": "language", "operator": "=", "value": "French"}]}
    assert own_condition({**taken, "reference_filter": own}, doctors) == ({**taken, "reference_filter": own}, "")


def test_the_share_asked_of_the_boolean_the_words_name_replaces_a_statistic_of_the_bound_number() -> None:
    """Found on the compound split: the price's MEDIAN for "What percentage of ... are vegetarian?"."""
    from agent.strategies.shares import share_of_named

    bound = {"property_name": "price", "operator": "between", "value": 9.9, "value_to": 28.6}
    median = {
        "collection_name": "MenuItems",
        "integer_property_aggregation": {"property_name": "price", "metrics": "MEDIAN"},
    }
    call = {**median, "conditions": [bound]}
    booleans = ["isVegetarian", "isSpicy"]
    asked = "What percentage of menu items whose price is between 9.9 and 28.6 are vegetarian?"
    share = {"property_name": "isVegetarian", "metrics": "PERCENTAGE_TRUE"}
    assert share_of_named(asked, call, booleans)[0] == {
        "collection_name": "MenuItems",
        "conditions": [bound],
        "boolean_property_aggregation": share,
    }
    counted = share_of_named(
        asked.replace("What percentage", "How many of the").replace(" are ", " are not "), call, booleans
    )[0]
    assert counted["boolean_property_aggregation"] == {"property_name": "isVegetarian", "metrics": "TOTAL_FALSE"}
    beside = {**call, "boolean_property_aggregation": share}  # the share there, the bound number's statistic beside it
    assert share_of_named(asked, beside, booleans)[0] == {
        "collection_name": "MenuItems",
        "conditions": [bound],
        "boolean_property_aggregation": share,
    }
    assert share_of_named(asked.replace("vegetarian", "on the menu"), call, booleans) == (call, "")  # none named
    assert share_of_named("What is the median price of vegetarian items?", call, booleans) == (call, "")  # no share
    grouped = {**call, "groupby_property": "course"}
    assert share_of_named(asked, grouped, booleans) == (grouped, "")


def test_a_category_condition_on_a_word_of_measure_or_a_number_s_name_is_left_out() -> None:
    from agent.strategies.conditions import unasked

    kinds = {"weather": ["sun", "rain", "snow"]}
    year = {"property_name": "date", "operator": "=", "value": "2014"}
    hot = {
        "collection_name": "Days",
        "text_property_filter": {"property_name": "weather", "operator": "=", "value": "hot"},
        "conditions": [year],
    }
    kept, why = unasked("What's the hottest it got in 2014?", hot, kinds, ("temp_max", "wind"))
    assert kept == {"collection_name": "Days", "conditions": [year]} and "weather" in why
    wind = {
        "collection_name": "Days",
        "text_property_filter": {"property_name": "weather", "operator": "LIKE", "value": "*wind*"},
    }
    assert unasked("Which weather has the strongest wind?", wind, kinds, ("temp_max", "wind"))[0] == {
        "collection_name": "Days"
    }
    assert unasked("Which weather has the strongest wind?", wind, kinds) == (wind, "")  # no number named wind
    hail = {**hot, "text_property_filter": {"property_name": "weather", "operator": "=", "value": "hail"}}
    assert unasked("How many days had hail in 2014?", hail, kinds, ("temp_max", "wind")) == (
        hail,
        "",
    )  # a value, unheld
    rain = {**hot, "text_property_filter": {"property_name": "weather", "operator": "=", "value": "rain"}}
    assert unasked("How wet was it on rain days in 2014?", rain, kinds, ("rain",)) == (rain, "")  # a stored value


def test_a_day_of_a_date_is_no_number_a_condition_compares() -> None:
    from agent.strategies.conditions import without_dates
    from agent.strategies.wording import unwritten_numbers

    call = {
        "collection_name": "Deaths",
        "integer_property_filter": {"property_name": "age", "operator": "=", "value": 30},
    }
    question = "How many people died on April 30, 1992?"
    assert unwritten_numbers(without_dates(question), call)[0] == {"collection_name": "Deaths"}
    yearly = {
        "collection_name": "Power",
        "integer_property_filter": {"property_name": "year", "operator": "=", "value": 1992},
    }
    assert unwritten_numbers(without_dates(question), yearly) == (yearly, ""), "a year stays: an integer may hold it"
    aged = "How many people aged 30 died in April 1992?"
    assert unwritten_numbers(without_dates(aged), call) == (call, "")


def test_years_joined_by_a_hyphen_are_two_spans_not_a_day() -> None:
    from agent.strategies.conditions import spans

    assert spans("the average price 2002-2004") == ["2002", "2004"]
    assert spans("deaths on 1992-04-30") == ["1992-04-30"]
