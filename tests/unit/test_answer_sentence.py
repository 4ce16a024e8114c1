"""The sentence a person reads, the empty result that is not a number, and stored values met through
their forms: checked on made-up values of no use case of ours."""

from __future__ import annotations

from agent.answer import FinalAnswer
from agent.sentence import empty_result, plain, rounded, sentence, unit_of
from agent.strategies.grounded import text_agrees
from agent.strategies.naming import nearest_value
from executors import QueryResult

MEAN = {
    "collection_name": "Penguins",
    "text_property_filter": {"property_name": "species", "operator": "=", "value": "Chinstrap"},
    "integer_property_aggregation": {"property_name": "bill_length_mm", "metrics": "MEAN"},
}


def result(total: int | None, aggregations: dict | None = None, groups: dict | None = None) -> QueryResult:
    return QueryResult(
        collection="Penguins", operator_class="aggregate", aggregations=aggregations or {}, total_count=total
    )


def test_a_mean_reads_as_what_was_computed_over_which_objects_rounded_with_its_unit() -> None:
    answer = FinalAnswer(numbers=[48.8338235294])
    text = sentence(answer, MEAN, result(68, {"bill_length_mm": {"MEAN": 48.8338235294}}))
    assert text == 'The average bill length (mm) of the 68 penguins with species = "Chinstrap" is 48.83.'
    assert text_agrees(text, answer)  # the sentence states the committed value


def test_a_mean_over_a_sorts_first_objects_says_which_they_are() -> None:
    heaviest = {**MEAN, "sort": {"property_name": "body_mass_g", "order": "descending", "limit": 5}}
    text = sentence(FinalAnswer(numbers=[52.1]), heaviest, result(5, {"bill_length_mm": {"MEAN": 52.1}}))
    assert text == (
        'The average bill length (mm) of the 5 penguins with species = "Chinstrap" and the highest body mass (g) '
        "is 52.10."
    )


def test_how_many_different_reads_as_the_number_of_values() -> None:
    from executors import GroupResult

    grouped = {"collection_name": "Penguins", "groupby_property": "island"}
    groups = {name: GroupResult(value=name, count=1) for name in ("Biscoe", "Dream", "Torgersen")}
    found = QueryResult(collection="Penguins", operator_class="group_by", groups=groups, group_by="island")
    text = sentence(FinalAnswer(numbers=[3.0]), grouped, found, "distinct")
    assert text == "The penguins have 3 different values of island."
    assert sentence(FinalAnswer(numbers=[3.0]), grouped, found) != text  # only where the number of groups was asked
    assert text_agrees(text, FinalAnswer(numbers=[3.0]))


def test_a_count_a_top_value_and_groups_read_as_sentences_that_state_the_commit() -> None:
    count = {
        "collection_name": "Penguins",
        "boolean_property_filter": {"property_name": "tagged", "operator": "=", "value": True},
    }
    assert sentence(FinalAnswer(numbers=[12.0]), count, result(12)) == "There are 12 penguins with tagged = true."
    assert sentence(FinalAnswer(numbers=[1.0]), count, result(1)) == "There is 1 penguin with tagged = true."
    top = {
        "collection_name": "Penguins",
        "text_property_aggregation": {
            "property_name": "island",
            "metrics": "TOP_OCCURRENCES",
            "top_occurrences_limit": 1,
        },
    }
    text = sentence(FinalAnswer(names=["Biscoe"]), top, result(344))
    assert text == "The most common island among the 344 penguins is Biscoe."
    grouped = {**MEAN, "groupby_property": "island"}
    del grouped["text_property_filter"]
    answer = FinalAnswer(groups={"Biscoe": 45.257, "Dream": 44.1677})
    text = sentence(answer, grouped, result(None))
    assert text == "The average bill length (mm) of penguins by island is Biscoe: 45.26; Dream: 44.17."
    assert text_agrees(text, answer)


def test_names_are_listed_only_where_the_answer_commits_them() -> None:
    assert "Biscoe" not in sentence(FinalAnswer(numbers=[3.0]), MEAN, result(3, {"bill_length_mm": {"MEAN": 3.0}}))
    assert plain(FinalAnswer(names=["Dream"], numbers=[44.1677])) == "The answer is Dream, 44.17."


def test_an_aggregation_over_no_objects_is_no_answer_and_a_count_of_zero_is_a_count() -> None:
    usa = {**MEAN, "text_property_filter": {"property_name": "country", "operator": "=", "value": "USA"}}
    reason = empty_result(usa, result(0, {"bill_length_mm": {"MEAN": 0.0}}))
    assert reason == 'no objects matched (filter country = "USA")'
    assert empty_result(usa, result(0, {"bill_length_mm": {"COUNT": 0}})) is None
    assert empty_result({"collection_name": "Penguins"}, result(0)) is None  # a plain count
    assert empty_result(usa, result(5, {"bill_length_mm": {"MEAN": 40.0}})) is None
    grouped = {
        "collection_name": "Penguins",
        "groupby_property": "island",
        "text_property_filter": usa["text_property_filter"],
    }
    assert empty_result(grouped, result(0)) == 'no objects matched (filter country = "USA")'  # no group to name


def test_rounding_and_units_as_a_person_writes_them() -> None:
    assert [rounded(v) for v in (1200.0, 3.14159, 0.04567, 48.8338)] == ["1,200", "3.14", "0.0457", "48.83"]
    assert [unit_of(p) for p in ("body_mass_g", "price_usd", "weight_in_lbs", "wind", "temp_max")] == [
        "g",
        "USD",
        "lbs",
        "",
        "",
    ]


def test_a_filter_value_the_data_does_not_hold_meets_the_one_stored_value_it_names() -> None:
    assert nearest_value("USA", ["US", "France", "Italy"]) == "US"
    assert nearest_value("Adelies", ["Adelie", "Gentoo", "Chinstrap"]) == "Adelie"
    assert nearest_value("Setosas", ["setosa", "versicolor", "virginica"]) == "setosa"
    assert nearest_value("New York", ["NY", "NJ", "TX"]) is None  # no initials rule for a stored abbreviation
    assert nearest_value("NY", ["New York", "New Jersey"]) == "New York"
    assert nearest_value("Versicolour", ["setosa", "versicolor", "virginica"]) == "versicolor"
    assert nearest_value("rainfall", ["sun", "rain", "snow"]) is None  # "rain" is a prefix, but no value is meant
    assert nearest_value("New", ["New York", "New Jersey"]) is None  # two fit: none is taken
    # a two-letter code shortens no ordinary word: "mean" is not Maine, "most" not Missouri
    assert nearest_value("mean", ["AK", "ME", "MO"]) is None and nearest_value("most", ["AK", "ME", "MO"]) is None
    assert nearest_value("google", ["GOOG", "IBM"]) == "GOOG"
    # a typo: two letters swapped are one edit, a fifth of the letters at most
    assert nearest_value("Japna", ["Japan", "Europe", "USA"]) == "Japan"
    assert nearest_value("virginca", ["setosa", "versicolor", "virginica"]) == "virginica"
    assert nearest_value("Jpaan", ["Japan", "Europe", "USA"]) == "Japan"
    assert nearest_value("Jpnaa", ["Japan", "Europe", "USA"]) is None  # two edits in five letters


def grouped_result(values: dict[str, float]) -> QueryResult:
    from executors.results import GroupResult

    groups = {k: GroupResult(value=k, count=10, aggregations={"mass": {"MEAN": v}}) for k, v in values.items()}
    return QueryResult(collection="Penguins", operator_class="aggregate", groups=groups)


def test_a_count_question_answered_by_a_listing_is_its_count_not_the_names() -> None:
    from agent.strategies.answer_form import shaped

    listing = QueryResult(collection="Penguins", operator_class="fetch", total_count=73)
    listed = FinalAnswer(names=["a", "b"], numbers=[73.0])
    assert shaped(listed, listing, "how many penguins in the table live on dream") == (
        FinalAnswer(numbers=[73.0]),
        "count",
    )
    assert shaped(listed, listing, "Show me the penguins on Dream") == (listed, "")


def test_a_per_group_answer_takes_the_form_the_question_asks_for() -> None:
    from agent.strategies.answer_form import shaped

    values = {"Biscoe": 4716.0, "Dream": 3712.9, "Torgersen": 3706.4}
    answer, result = FinalAnswer(groups=values), grouped_result(values)
    assert shaped(answer, result, "Which island has the heaviest penguins on average?") == (
        FinalAnswer(names=["Biscoe"]),
        "which",
    )
    assert shaped(answer, result, "what island has the lightest birds")[0].names == ["Torgersen"]
    assert shaped(answer, result, "Average body mass of the penguins from Dream Island?") == (
        FinalAnswer(numbers=[3712.9]),
        "named group",
    )
    assert shaped(answer, result, "How many different islands are there?") == (FinalAnswer(numbers=[3.0]), "distinct")
    for breakdown in (
        "Break down the average body mass by island.",
        "What is the mean mass for each island?",
        "average mass per island",
    ):
        assert shaped(answer, result, breakdown) == (answer, "")
    # two groups named, or a counted top: the choice stays with the answer as it was
    assert shaped(answer, result, "Average mass on Dream and Biscoe?") == (answer, "")
    assert shaped(answer, result, "Which are the two heaviest islands?") == (answer, "")


def test_a_loop_that_ran_out_of_steps_resending_a_call_that_worked_commits_its_answer() -> None:
    import json as _json

    from agent import AgentConfig, ModelReply, build_tools
    from agent.strategies import build_strategy
    from agent.testing import FunctionModel, tool_reply
    from executors import ReferenceExecutor
    from executors.testing import sample_objects, sample_schema

    call = {
        "collection_name": "Restaurants",
        "integer_property_aggregation": {"property_name": "price", "metrics": "MAX"},
    }

    def reply(_messages: object, _tools: object) -> ModelReply:
        return tool_reply("query_database", call)  # the same call again and again, never an answer

    executor = ReferenceExecutor(sample_schema("Restaurants"), {"Restaurants": sample_objects(40, seed=3)})
    tools = build_tools(executor.schema)
    run = build_strategy("grounded").run(
        FunctionModel(reply), executor, tools, AgentConfig(max_steps=3), "Highest price?"
    )
    assert run.outcome == "max_steps"
    prices = [o.properties["price"] for o in sample_objects(40, seed=3) if o.properties.get("price") is not None]
    assert run.answer is not None and run.answer.numbers == [max(prices)], _json.dumps(run.strategy_notes, default=str)


def test_counts_tallies_and_conditions_read_as_a_person_writes_them() -> None:
    rated = {
        "collection_name": "Penguins",
        "conditions": [
            {"property_name": "island", "operator": "=", "value": "Dream"},
            {"property_name": "flipper_length_mm", "operator": "between", "value": 180, "value_to": 200},
        ],
        "boolean_property_aggregation": {"property_name": "tagged", "metrics": "TOTAL_TRUE"},
    }
    text = sentence(FinalAnswer(numbers=[7.0]), rated, result(12, {"tagged": {"TOTAL_TRUE": 7}}))
    expected = (
        '7 of the 12 penguins with island = "Dream" and flipper_length_mm between 180 and 200 have tagged = true.'
    )
    assert text == expected
    counted = {**rated, "boolean_property_aggregation": {"property_name": "tagged", "metrics": "COUNT"}}
    assert sentence(FinalAnswer(numbers=[12.0]), counted, result(12)).startswith("There are 12 penguins with island")
    assert "11 of the 12 penguins" in sentence(FinalAnswer(numbers=[11.0]), counted, result(12))
    either = {**rated, "match": "any"}
    assert '(island = "Dream" or flipper_length_mm between 180 and 200)' in sentence(
        FinalAnswer(numbers=[7.0]), either, result(30)
    )
    mean = {
        "collection_name": "Penguins",
        "integer_property_aggregation": {"property_name": "averageMass", "metrics": "MEAN"},
    }
    assert sentence(FinalAnswer(numbers=[4.0]), mean, result(5)) == "The average mass of the 5 penguins is 4."


def test_one_object_is_one_and_a_unit_leaves_its_preposition() -> None:
    from agent.sentence import measure, singular

    assert [singular(x) for x in ("airports", "cities", "stock prices", "classes", "glass")] == [
        "airport",
        "city",
        "stock price",
        "class",
        "glass",
    ]
    assert measure("weight_in_lbs", "MEAN") == "average weight (lbs)"  # not "weight in (lbs)"
    assert measure("body_mass_g", "MEAN") == "average body mass (g)"


def test_a_filter_written_twice_reads_once() -> None:
    twice = {**MEAN, "conditions": [MEAN["text_property_filter"]]}
    text = sentence(FinalAnswer(numbers=[48.8]), twice, result(68, {"bill_length_mm": {"MEAN": 48.8}}))
    assert text == 'The average bill length (mm) of the 68 penguins with species = "Chinstrap" is 48.80.'


def test_which_one_most_often_is_the_first_top_value_when_it_leads() -> None:
    from agent.strategies.answer_form import shaped
    from executors.results import TopOccurrence

    def tops(*counts: int) -> QueryResult:
        values = [
            TopOccurrence(value=rig, count=n) for rig, n in zip(("Sloop", "Cutter", "Ketch"), counts, strict=True)
        ]
        return result(40, {"rig": {"TOP_OCCURRENCES": values}})

    listed = FinalAnswer(names=["Sloop", "Cutter", "Ketch"])
    asked = "Which rig most often has a hull longer than 30 ft?"
    assert shaped(listed, tops(20, 12, 8), asked) == (FinalAnswer(names=["Sloop"]), "which")
    assert shaped(listed, tops(14, 14, 12), asked) == (listed, "")  # a tie: no one answer
    for several in ("Which rigs are the most common?", "Which are the 2 most common rigs?", "Rigs by count?"):
        assert shaped(listed, tops(20, 12, 8), several) == (listed, "")
