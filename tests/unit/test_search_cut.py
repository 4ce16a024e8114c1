"""The search cut per question (`evaluation.search_cut`): the rule, and that the gold, the agent's
executor and the scorer's executions all use it. Without a server: the reference executor searches
hand-placed vectors, so each object's distance to the query is exactly what the test says."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.evaluators.execution import unstable_questions
from evaluation.ground_truth import GroundTruthCache
from evaluation.records import EvalRecord, Outcome, PredictedCall
from evaluation.runner import agent_executor
from evaluation.scorer import Scorer
from evaluation.search_cut import (
    CUT_CLEARANCE,
    CUT_WINDOW,
    SEARCH_CUT_MARGIN,
    SearchCut,
    at_cut,
    choose_cut,
    search_cut,
    top_occurrences_tie,
)
from evaluation.statistics import pass_rate
from executors import CollectionSchema, DatabaseSchema, PropertySchema, ReferenceExecutor
from executors.options import SEARCH_MAX_DISTANCE
from fixtures.datasets import Case

DEFAULT = SEARCH_MAX_DISTANCE
DISHES = CollectionSchema(
    name="Dishes",
    properties=(
        PropertySchema(name="name", data_type="text", tokenization="word"),
        PropertySchema(name="vegan", data_type="boolean"),
    ),
)
SCHEMA = DatabaseSchema(collections=(DISHES,))
QUERY_VECTOR = (1.0, 0.0)


def at_distance(d: float) -> tuple[float, float]:
    """A unit vector whose cosine distance to `QUERY_VECTOR` is `d`."""
    return (1.0 - d, math.sqrt(1.0 - (1.0 - d) ** 2))


def executor(distances: list[tuple[float, bool]]) -> ReferenceExecutor:
    """Dishes at these distances from every query (and vegan or not), searched by near_text."""
    rows = [
        {
            "uuid": f"00000000-0000-4000-8000-{i:012d}",
            "properties": {"name": f"dish {i}", "vegan": vegan},
            "vector": at_distance(d),
        }
        for i, (d, vegan) in enumerate(distances)
    ]
    return ReferenceExecutor(SCHEMA, {"Dishes": rows}, embed=lambda _text: QUERY_VECTOR)


SEARCH = {"collection_name": "Dishes", "search_query": "soup"}
VEGAN_SEARCH = {**SEARCH, "boolean_property_filter": {"property_name": "vegan", "operator": "=", "value": True}}


# --- the rule ------------------------------------------------------------------------------------


def test_the_default_cut_stays_when_every_object_is_clear_of_it() -> None:
    assert choose_cut([0.2, DEFAULT - 2 * SEARCH_CUT_MARGIN, DEFAULT + 2 * SEARCH_CUT_MARGIN, 0.9], DEFAULT) == DEFAULT


def test_an_object_on_the_cut_moves_it_to_the_nearest_clear_place() -> None:
    # objects at 0.6505 and 0.6540: the cut moves down below 0.6505 (0.6492 is 0.0013 clear) rather
    # than up between them (0.6525 would be clear of both; it is farther from 0.65)
    cut = choose_cut([0.6505, 0.654], DEFAULT)
    assert cut == 0.6492
    # crowded below: it moves up instead, into the first gap wide enough
    crowded = [DEFAULT - 0.002 * k for k in range(26)]
    cut = choose_cut([*crowded, 0.66], DEFAULT)
    assert cut is not None and DEFAULT < cut < 0.66 and all(abs(d - cut) >= CUT_CLEARANCE for d in [*crowded, 0.66])


def test_no_cut_within_the_window_is_none() -> None:
    dense = [DEFAULT - CUT_WINDOW - 0.01 + 0.001 * k for k in range(int(2 * (CUT_WINDOW + 0.01) / 0.001) + 2)]
    assert choose_cut(dense, DEFAULT) is None


def test_a_cut_is_never_trusted_beyond_the_distances_read() -> None:
    # the probe hit its limit at 0.66: what lies beyond is unknown, so the cut stays 0.002 below it
    cut = choose_cut([0.6501, 0.655, 0.66], DEFAULT, known_up_to=0.66)
    assert cut is not None and cut <= 0.66 - CUT_CLEARANCE
    assert choose_cut([0.2], DEFAULT, known_up_to=0.3) != DEFAULT


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(min_value=0.55, max_value=0.75, allow_nan=False), max_size=60))
def test_a_chosen_cut_holds_and_is_the_nearest(distances: list[float]) -> None:
    cut = choose_cut(distances, DEFAULT)
    grid = [DEFAULT + k * 1e-5 for k in range(-int(CUT_WINDOW * 1e5), int(CUT_WINDOW * 1e5) + 1)]
    clear = [c for c in grid if all(abs(d - c) >= CUT_CLEARANCE + 1e-9 for d in distances)]
    if cut is None:
        assert not clear  # nothing in the window was missed
        return
    if cut == DEFAULT:
        assert all(abs(d - DEFAULT) >= SEARCH_CUT_MARGIN for d in distances)
        return
    assert abs(cut - DEFAULT) <= CUT_WINDOW + 1e-12
    assert all(abs(d - cut) >= CUT_CLEARANCE - 1e-12 for d in distances)
    # the audit's moved cuts (a margin either way) keep the same objects
    assert all((d <= cut) == (d <= cut - SEARCH_CUT_MARGIN) == (d <= cut + SEARCH_CUT_MARGIN) for d in distances)
    assert not clear or abs(cut - DEFAULT) <= min(abs(c - DEFAULT) for c in clear) + 1e-4


# --- on data -------------------------------------------------------------------------------------


def test_only_objects_the_filter_keeps_move_the_cut() -> None:
    on_the_cut = [(0.3, True), (0.4, True), (DEFAULT + 0.0002, False), (0.8, True)]
    assert search_cut(executor(on_the_cut), VEGAN_SEARCH) == SearchCut(value=DEFAULT, default=DEFAULT)
    moved = search_cut(executor(on_the_cut), SEARCH)
    assert moved is not None and moved.moved and not moved.unstable
    assert abs(moved.value - (DEFAULT + 0.0002)) >= CUT_CLEARANCE
    assert search_cut(executor(on_the_cut), {"collection_name": "Dishes"}) is None  # no search, no cut


def test_a_crowded_cut_is_unstable_and_says_why() -> None:
    crowded = [(DEFAULT - CUT_WINDOW - 0.005 + 0.001 * k, True) for k in range(111)]
    cut = search_cut(executor(crowded), SEARCH)
    assert cut is not None and cut.unstable and cut.value == DEFAULT
    assert "no cut within 0.05 of 0.65" in cut.unstable


class Truths(GroundTruthCache):
    """The gold over the reference executor, which cannot count a collection: 4 objects, said here."""

    def collection_size(self, collection: str) -> int:
        return 4


def record(ground_truth: dict[str, Any], *calls: dict[str, Any]) -> EvalRecord:
    return EvalRecord(
        id="dishes-001",
        use_case="dishes",
        query="Which dishes are like soup?",
        complexity="simple",
        components=["search"],
        ground_truth=ground_truth,
        model="m",
        tool_design="unified",
        predicted_calls=[
            PredictedCall(step=i, tool_name="query_database", raw_arguments="{}", arguments=c, ok=True)
            for i, c in enumerate(calls)
        ],
        outcome=Outcome.OK,
    )


def test_the_gold_and_the_calls_scored_for_it_run_at_the_questions_cut() -> None:
    # dish 2 sits 0.0002 inside 0.65: at the default cut a float's noise decides; dish 3 blocks the
    # room above, so the cut moves below dish 2 and leaves it out
    data = executor([(0.3, True), (0.4, False), (DEFAULT - 0.0002, True), (DEFAULT + 0.002, True)])
    truths = Truths(data, None)  # type: ignore[arg-type]
    scorer = Scorer(lambda _r: SCHEMA, data, truths)  # type: ignore[arg-type]
    scored = scorer.score(record(SEARCH, SEARCH))
    assert scored.search_cut is not None and scored.search_cut.moved
    assert scored.search_cut.value < DEFAULT  # the nearest clear place is below dish 2
    assert len(scored.ground_truth_result["objects"]) == 2  # type: ignore[index]
    assert scored.scores.final.execution_exact is True  # the label itself (the oracle) scores 1
    # a call at the default cut would get three objects: the scorer must not run it there
    assert len(data.execute(SEARCH).objects) == 3
    # the agent is handed the same cut it is scored at
    case = Case.model_validate({"id": "dishes-001", "version": 1, "use_case": "dishes", "query": "q", "ground_truth": SEARCH,
                                "complexity": "simple", "components": ["search"]})  # fmt: skip
    agent = agent_executor(case, data, truths)  # type: ignore[arg-type]
    assert agent.options.search_max_distance == scored.search_cut.value
    assert len(agent.execute(SEARCH).objects) == 2


def test_an_unstable_question_is_named_and_left_out_of_execution_scores() -> None:
    crowded = executor([(DEFAULT - CUT_WINDOW - 0.005 + 0.001 * k, True) for k in range(111)])
    truths = Truths(crowded, None)  # type: ignore[arg-type]
    scored = Scorer(lambda _r: SCHEMA, crowded, truths).score(record(SEARCH, SEARCH))  # type: ignore[arg-type]
    assert scored.search_cut is not None and scored.search_cut.unstable
    assert scored.scores.final.execution_exact is None and scored.scores.first.execution_exact is None
    assert unstable_questions([scored]) == ["dishes-001"]
    assert truths.gold(scored).key.unscored.startswith("unstable on this data")  # type: ignore[union-attr]


def test_at_cut_leaves_the_executor_alone_without_a_moved_cut() -> None:
    data = executor([(0.3, True)])
    assert at_cut(data, None) is data  # type: ignore[arg-type]
    assert at_cut(data, SearchCut(value=DEFAULT, default=DEFAULT)) is data  # type: ignore[arg-type]
    assert at_cut(data, SearchCut(value=0.66, default=DEFAULT)).options.search_max_distance == 0.66  # type: ignore[arg-type]


def test_a_cut_where_the_top_value_ties_is_passed_over_for_the_next() -> None:
    names = {0.3: "x", 0.4: "y", DEFAULT - 0.0002: "x", DEFAULT + 0.002: "z"}
    rows = [
        {
            "uuid": f"00000000-0000-4000-8000-{i:012d}",
            "properties": {"name": n, "vegan": True},
            "vector": at_distance(d),
        }
        for i, (d, n) in enumerate(names.items())
    ]
    data = ReferenceExecutor(SCHEMA, {"Dishes": rows}, embed=lambda _text: QUERY_VECTOR)
    top = {**SEARCH, "text_property_aggregation": {"property_name": "name", "metrics": "TOP_OCCURRENCES", "top_occurrences_limit": 1}}  # fmt: skip
    # the nearest clear cut (below 0.6498) keeps x and y once each: the top name is a coin toss there
    below = SearchCut(value=choose_cut(names, DEFAULT) or 0.0, default=DEFAULT)
    assert below.value < DEFAULT - 0.0002
    assert top_occurrences_tie(at_cut(data, below), top) == "name: places 1 and 2 both occur 1 times"  # type: ignore[arg-type]
    cut = search_cut(data, top)  # type: ignore[arg-type]
    assert cut is not None and not cut.unstable and cut.value > DEFAULT + 0.002 + CUT_CLEARANCE - 1e-9
    assert top_occurrences_tie(at_cut(data, cut), top) is None  # type: ignore[arg-type]


def dishes(named: dict[float, str]) -> ReferenceExecutor:
    """Dishes at these distances from every query, with these names."""
    rows = [
        {
            "uuid": f"00000000-0000-4000-8000-{i:012d}",
            "properties": {"name": n, "vegan": True},
            "vector": at_distance(d),
        }
        for i, (d, n) in enumerate(named.items())
    ]
    return ReferenceExecutor(SCHEMA, {"Dishes": rows}, embed=lambda _text: QUERY_VECTOR)


def top_name(arguments: dict[str, Any]) -> dict[str, Any]:
    return {**arguments, "text_property_aggregation": {"property_name": "name", "metrics": "TOP_OCCURRENCES", "top_occurrences_limit": 1}}  # fmt: skip


def test_a_top_occurrences_tie_at_every_clear_cut_makes_the_question_unstable() -> None:
    # x and y once each below the cut and nothing else within the window: every clear cut keeps the tie
    data = dishes({0.3: "x", 0.4: "y", DEFAULT - 0.0002: "z", DEFAULT + 0.0002: "w"})
    cut = search_cut(data, top_name(SEARCH))  # type: ignore[arg-type]
    assert cut is not None and cut.unstable and cut.value == DEFAULT and not cut.moved
    assert "TOP_OCCURRENCES ties at the limit" in cut.unstable and "places 1 and 2 both occur 1 times" in cut.unstable


def test_a_label_without_search_is_unstable_on_a_real_tie_and_scored_without_one() -> None:
    tied = dishes({0.3: "x", 0.4: "y", 0.5: "z", 0.6: "x", 0.7: "y"})  # x and y twice each
    cut = search_cut(tied, top_name({"collection_name": "Dishes"}))  # type: ignore[arg-type]
    assert cut is not None and cut.unstable and "places 1 and 2 both occur 2 times" in cut.unstable
    clear = dishes({0.3: "x", 0.4: "y", 0.5: "z", 0.6: "x"})  # x twice, the rest once
    assert search_cut(clear, top_name({"collection_name": "Dishes"})) is None  # type: ignore[arg-type]
    assert search_cut(tied, {"collection_name": "Dishes"}) is None  # type: ignore[arg-type]  # no TOP_OCCURRENCES


def test_an_unstable_question_is_neither_passed_nor_failed() -> None:
    tied = dishes({0.3: "x", 0.4: "y", 0.5: "z", 0.6: "x", 0.7: "y"})
    label = top_name({"collection_name": "Dishes"})
    truths = Truths(tied, None)  # type: ignore[arg-type]
    scorer = Scorer(lambda _r: SCHEMA, tied, truths)  # type: ignore[arg-type]
    unstable = scorer.score(record(label, label))
    stable = scorer.score(record(SEARCH, SEARCH).model_copy(update={"id": "dishes-002"}))
    assert unstable.scores.final.execution_exact is None and stable.scores.final.execution_exact is True
    assert unstable_questions([unstable, stable]) == ["dishes-001"]
    rate = pass_rate([unstable, stable])
    assert rate["n"] == 1 and rate["rate"] == 1.0 and rate["unstable"] == 1
