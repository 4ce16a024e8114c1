"""Call rewrites the question's words ask for: an aggregation's sort kept only where the question counts the
first objects, and "how many different" grouped by the property it names."""

from __future__ import annotations


def test_an_aggregation_keeps_its_sort_only_where_the_question_counts_the_first_objects() -> None:
    from agent.strategies.reshape import to_first

    mean = {"collection_name": "C", "integer_property_aggregation": {"property_name": "hp", "metrics": "MEAN"}}
    heaviest = {**mean, "sort": {"property_name": "weight", "order": "descending", "limit": 5}}
    assert to_first("What is the average horsepower of the 5 heaviest cars?", heaviest) == (heaviest, "")
    assert to_first("Mean hp of the five heaviest?", heaviest) == (heaviest, "")
    one = {**mean, "sort": {"property_name": "year", "order": "ascending", "limit": 1}}
    assert to_first("Which site had the lowest average yield in 1931?", one) == (mean, to_first("x", one)[1])
    assert to_first("What is the average horsepower of the 3 heaviest cars?", heaviest)[0] == mean
    listing = {"collection_name": "C", "sort": heaviest["sort"]}
    assert to_first("Which are the heaviest cars?", listing) == (listing, "")


def test_how_many_different_groups_by_the_property_it_names_and_no_gold_call_changes() -> None:
    from agent.strategies.reshape import to_distinct
    from fixtures.datasets import load_split, split_path
    from fixtures.use_cases import get_use_case

    counted = {"collection_name": "C", "integer_property_aggregation": {"property_name": "year", "metrics": "COUNT"}}
    question = "How many different model years does the dataset cover?"
    assert to_distinct(question, counted, ["name", "year"])[0] == {"collection_name": "C", "groupby_property": "year"}
    iris = {
        "collection_name": "I",
        "text_property_filter": {"property_name": "species", "operator": "=", "value": "Iris"},
    }
    assert to_distinct("how many different species r in the iris data", iris, ["species"])[0]["groupby_property"]
    assert (
        "text_property_filter" not in to_distinct("how many different species r in the iris data", iris, ["species"])[0]
    )
    assert to_distinct("How many cars are there?", counted, ["year"]) == (counted, "")
    changed = []
    for split in ("natural", "explicit", "compound", "related", "multistep"):
        for case in load_split(split_path(split)):
            names = [p.name for c in get_use_case(case.use_case).collections for p in c.properties]
            gold = case.ground_truth.to_tool_arguments()
            if to_distinct(case.query, gold, names)[0] != gold:
                changed.append((split, case.id))
    assert changed == []


def test_which_value_is_most_common_after_a_long_opening_clause() -> None:
    from agent.strategies.wording import amend_wording

    question = "Among airports with County in their name, which state appears most often?"
    counted = {"collection_name": "A", "text_property_aggregation": {"property_name": "state", "metrics": "COUNT"}}
    amended, why = amend_wording(question, counted)
    assert amended["text_property_aggregation"]["metrics"] == "TOP_OCCURRENCES" and why


def test_a_stored_value_that_is_the_collections_own_noun_is_no_condition() -> None:
    from agent.strategies.values import names_the_objects

    assert names_the_objects("RiotDeaths", "Death") and names_the_objects("Cars", "car")
    assert not names_the_objects("RiotDeaths", "Officer-involved shooting")
    assert not names_the_objects("Airports", "Texas") and not names_the_objects("Penguins", "")


def test_a_group_by_written_with_a_sort_runs_without_the_sort_and_no_gold_call_changes() -> None:
    from agent.strategies.reshape import groups_unsorted
    from fixtures.datasets import load_split, split_path

    grouped = {"collection_name": "C", "groupby_property": "origin"}
    sort = {"property_name": "mpg", "order": "descending", "limit": 1}
    kept, why = groups_unsorted({**grouped, "sort": sort})
    assert kept == grouped and "origin" in why
    assert groups_unsorted({"collection_name": "C", "sort": sort}) == ({"collection_name": "C", "sort": sort}, "")
    assert groups_unsorted(grouped) == (grouped, "")
    changed = [
        (split, case.id)
        for split in ("natural", "explicit", "compound", "related", "multistep")
        for case in load_split(split_path(split))
        if groups_unsorted(case.ground_truth.to_tool_arguments())[1]
    ]
    assert changed == []
