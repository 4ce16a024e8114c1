"""Argument match on validated calls, execution match in honest tiers, protocols, case selection:
without a server (the reference executor answers where results are needed)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from evaluation.argument_match import canonical, exact_as_written, score_canonical, try_canonical
from evaluation.execution_match import compare, vacuity
from evaluation.ground_truth import GroundTruthCache
from evaluation.predictions import from_paper_results
from evaluation.protocols import ScoringProtocol, protocol_calls
from evaluation.records import EvalRecord, Outcome, PredictedCall
from evaluation.runner import needs_rerun
from evaluation.scorer import Scorer, schema_from_calls
from evaluation.selection import select_cases
from executors import (
    CollectionSchema,
    DatabaseSchema,
    GroupResult,
    PropertySchema,
    QueryResult,
    ReferenceExecutor,
    ResultObject,
    WeaviateUnavailableError,
)
from fixtures.datasets import read_dataset

MENUS = CollectionSchema(
    name="Menus",
    properties=(
        PropertySchema(name="name", data_type="text", tokenization="word"),
        PropertySchema(name="course", data_type="text", tokenization="field"),
        PropertySchema(name="price", data_type="number"),
        PropertySchema(name="seats", data_type="int"),
        PropertySchema(name="vegan", data_type="boolean"),
    ),
)
SCHEMA = DatabaseSchema(collections=(MENUS, CollectionSchema(name="Drinks", properties=MENUS.properties)))
TRUTH = {
    "collection_name": "Menus",
    "search_query": "spicy soup",
    "integer_property_filter": {"property_name": "price", "operator": "<", "value": 20},
    "text_property_aggregation": {"property_name": "name", "metrics": "TOP_OCCURRENCES", "top_occurrences_limit": 3},
}


def score(truth: dict[str, Any], predicted: dict[str, Any] | None) -> Any:
    return score_canonical([canonical(truth, SCHEMA)], try_canonical(predicted, SCHEMA) if predicted else None)


def test_numbers_normalise_and_search_matches_on_presence() -> None:
    predicted = {
        **TRUTH,
        "search_query": "soup that is spicy",
        "integer_property_filter": {"property_name": "price", "operator": "<", "value": 20.0},
    }
    scores = score(TRUTH, predicted)
    assert scores.exact_match and scores.ast_score == 1.0


@pytest.mark.parametrize(
    ("change", "ast", "lenient"),
    [
        ({"collection_name": "Drinks"}, 0.0, 0.0),
        ({"search_query": None}, 0.85, 1.0),  # a missing component is a mismatch; the reference skipped it
        ({"groupby_property": "name"}, 0.85, 1.0),  # so is an extra one
        ({"integer_property_filter": {"property_name": "price", "operator": "<=", "value": 20}}, 0.85, 0.85),
        ({"text_property_aggregation": {"property_name": "name", "metrics": "COUNT"}}, 0.85, 0.85),
    ],
)
def test_ast_score_uses_the_papers_weights(change: dict, ast: float, lenient: float) -> None:
    predicted = {k: v for k, v in {**TRUTH, **change}.items() if v is not None}
    scores = score(TRUTH, predicted)
    assert scores.ast_score == pytest.approx(ast) and scores.ast_score_lenient == pytest.approx(lenient)
    assert not scores.exact_match


def test_no_prediction_scores_zero_and_marks_every_component_wrong() -> None:
    scores = score(TRUTH, None)
    assert scores.ast_score == 0 and not scores.routing
    assert scores.components == {"search": False, "integer_filter": False, "text_aggregation": False}


@pytest.mark.parametrize(
    ("truth_slot", "predicted_slot"),
    [
        ({"boolean_property_filter": {"property_name": "vegan", "operator": "!=", "value": True}},
         {"boolean_property_filter": {"property_name": "vegan", "operator": "=", "value": False}}),
        ({"text_property_filter": {"property_name": "course", "operator": "=", "value": "Main"}},
         {"text_property_filter": {"property_name": "course", "operator": "LIKE", "value": "Main"}}),
        ({"text_property_filter": {"property_name": "name", "operator": "=", "value": "Spicy Soup"}},
         {"text_property_filter": {"property_name": "name", "operator": "=", "value": "spicy soup"}}),
        ({"integer_property_filter": {"property_name": "price", "operator": ">", "value": 3}},
         {"integer_property_filter": {"property_name": "price", "operator": ">", "value": "3"}}),
        ({"integer_property_filter": {"property_name": "seats", "operator": "<", "value": 4}},
         {"integer_property_filter": {"property_name": "seats", "operator": "<", "value": 3.5}}),
        ({"text_property_aggregation": {"property_name": "name", "metrics": "TOP_OCCURRENCES", "top_occurrences_limit": 5}},
         {"text_property_aggregation": {"property_name": "name", "metrics": "TOP_OCCURRENCES"}}),
        ({"groupby_property": None}, {"groupby_property": "   "}),
        ({"integer_property_aggregation": {"property_name": "price", "metrics": "MEAN"}},
         {"integer_property_aggregation": json.dumps({"property_name": "price", "metrics": "MEAN"})}),
    ],
)  # fmt: skip
def test_forms_the_executor_treats_as_equal_are_equal(truth_slot: dict, predicted_slot: dict) -> None:
    truth = {k: v for k, v in {"collection_name": "Menus", **truth_slot}.items() if v is not None}
    predicted = {"collection_name": "Menus", **predicted_slot}
    assert score(truth, predicted).exact_match and score(predicted, truth).exact_match


MEAN_PRICE = {"collection_name": "Menus", "integer_property_aggregation": {"property_name": "price", "metrics": "MEAN"}}
LIKE_MAIN = {"collection_name": "Menus", "text_property_filter": {"property_name": "course", "operator": "LIKE", "value": "Main"}}  # fmt: skip
ABOVE_ONE = {"collection_name": "Menus", "integer_property_filter": {"property_name": "price", "operator": ">", "value": 1}}  # fmt: skip


@pytest.mark.parametrize(
    ("truth", "predicted"),
    [
        (MEAN_PRICE, {**MEAN_PRICE, "integer_property_aggregation": {"property_name": "price", "metrics": "mean"}}),
        (MEAN_PRICE, {**MEAN_PRICE, "integer_property_aggregation": {"property_name": "price", "metrics": ["MEAN"]}}),
        (MEAN_PRICE, {**MEAN_PRICE, "explanation": "an extra top-level key"}),
        (LIKE_MAIN, {**LIKE_MAIN, "text_property_filter": {"property_name": "course", "operator": "like", "value": "Main"}}),
        (ABOVE_ONE, {**ABOVE_ONE, "integer_property_filter": {"property_name": "price", "operator": ">", "value": True}}),
    ],
)  # fmt: skip
def test_a_call_the_executor_rejects_never_matches(truth: dict, predicted: dict) -> None:
    assert try_canonical(predicted, SCHEMA) is None
    assert not score(truth, predicted).exact_match


def test_as_written_is_the_raw_json() -> None:
    assert exact_as_written(MEAN_PRICE, dict(MEAN_PRICE))
    assert not exact_as_written(ABOVE_ONE, {**ABOVE_ONE, "integer_property_filter": {"property_name": "price", "operator": ">", "value": "1"}})  # fmt: skip


def test_top_occurrences_limit_counts_from_both_sides() -> None:
    with_limit = {"collection_name": "Menus", "text_property_aggregation": {"property_name": "name", "metrics": "TOP_OCCURRENCES", "top_occurrences_limit": 3}}  # fmt: skip
    without = {"collection_name": "Menus", "text_property_aggregation": {"property_name": "name", "metrics": "TOP_OCCURRENCES"}}  # fmt: skip
    assert not score(with_limit, without).exact_match
    assert not score(without, with_limit).exact_match


def test_an_accepted_alternative_counts_as_the_label() -> None:
    truth = {"collection_name": "Menus", "boolean_property_filter": {"property_name": "vegan", "operator": "=", "value": True}, "boolean_property_aggregation": {"property_name": "vegan", "metrics": "COUNT"}}  # fmt: skip
    alternative = {"collection_name": "Menus", "boolean_property_aggregation": {"property_name": "vegan", "metrics": "TOTAL_TRUE"}}  # fmt: skip
    truths = [canonical(truth, SCHEMA), canonical(alternative, SCHEMA)]
    assert score_canonical(truths, canonical(alternative, SCHEMA)).exact_match
    assert not score_canonical(truths[:1], canonical(alternative, SCHEMA)).exact_match


def _objects(uuids: list[str], truncated: bool = False) -> QueryResult:
    return QueryResult(
        collection="Menus",
        operator_class="filter",
        objects=[ResultObject(uuid=u) for u in uuids],
        truncated=truncated,
    )


def test_object_sets_exact_no_extra_rows_and_row_f1() -> None:
    assert compare(_objects(["a", "b"]), _objects(["b", "a"])).exact
    wider = compare(_objects(["a", "b"]), _objects(["a", "b", "c"]))
    assert not wider.exact and not wider.subset  # SQL-Eval's subset allows extra columns, never extra rows
    assert wider.recall == 1.0 and wider.precision == pytest.approx(2 / 3) and wider.f1 == pytest.approx(0.8)
    narrower = compare(_objects(["a", "b"]), _objects(["a"]))
    assert not narrower.subset and narrower.precision == 1.0 and narrower.recall == 0.5


def test_aggregates_within_tolerance_extra_metrics_only_in_subset() -> None:
    def aggregate(metrics: dict[str, float], total: int = 4) -> QueryResult:
        return QueryResult(collection="Menus", operator_class="aggregate", aggregations={"price": metrics}, total_count=total)  # fmt: skip

    assert compare(aggregate({"MEAN": 12.5}), aggregate({"MEAN": 12.5 * (1 + 1e-9)})).exact
    assert not compare(aggregate({"MEAN": 12.5}), aggregate({"MEAN": 12.6})).subset
    extra = compare(aggregate({"MEAN": 12.5}), aggregate({"MEAN": 12.5, "MAX": 20.0}))
    assert not extra.exact and extra.subset  # an extra metric is an extra column
    assert not compare(aggregate({"MEAN": 12.5}), aggregate({"MEAN": 12.5}, total=9)).subset  # other rows


def test_groups_per_group_and_no_extra_groups() -> None:
    def groups(counts: dict[str, int]) -> QueryResult:
        return QueryResult(
            collection="Menus",
            operator_class="group_by",
            group_by="name",
            groups={k: GroupResult(value=k, count=v) for k, v in counts.items()},
        )

    assert compare(groups({"x": 2, "y": 1}), groups({"y": 1, "x": 2})).exact
    more = compare(groups({"x": 2}), groups({"x": 2, "y": 1}))
    assert not more.exact and not more.subset and more.recall == 1.0 and more.precision == 0.5
    assert not compare(groups({"x": 2}), groups({"x": 3})).subset


def test_vacuity() -> None:
    assert vacuity(_objects([]), 10) == "empty"
    assert vacuity(_objects([str(i) for i in range(10)]), 10) == "all_objects"
    assert vacuity(_objects(["a"]), 10) is None


def test_default_subset_spans_every_collection_level_and_component() -> None:
    cases = read_dataset().cases
    subset = select_cases(cases)
    assert len(subset) == 15 and len({c.collection for c in subset}) == 15
    assert Counter(c.complexity for c in subset) == {"simple": 5, "moderate": 5, "complex": 5}
    assert {x for c in subset for x in c.components} == {x for c in cases for x in c.components}
    assert select_cases(cases, limit=0) == cases and len(select_cases(cases, ["restaurants"], 0)) == 63


# --- protocols ------------------------------------------------------------------------------------

RIGHT = {"collection_name": "Menus", "boolean_property_filter": {"property_name": "vegan", "operator": "=", "value": True}}  # fmt: skip
WRONG = {"collection_name": "Menus", "boolean_property_filter": {"property_name": "vegan", "operator": "=", "value": False}}  # fmt: skip


def call(step: int, arguments: dict[str, Any] | None, ok: bool = True) -> PredictedCall:
    return PredictedCall(step=step, tool_name="query_database", raw_arguments=json.dumps(arguments), arguments=arguments, ok=ok)  # fmt: skip


def trajectory(*calls: PredictedCall) -> EvalRecord:
    return EvalRecord(
        id="menus-001", use_case="menus", query="Which dishes are vegan?", complexity="simple",
        components=["boolean_filter"], ground_truth=RIGHT, model="m", tool_design="unified",
        predicted_calls=list(calls), outcome=Outcome.OK if calls else Outcome.NO_TOOL_CALL,
    )  # fmt: skip


ROWS = [{"uuid": f"00000000-0000-4000-8000-00000000000{i}", "properties": {"name": f"dish {i}", "vegan": i % 2 == 0}} for i in range(6)]  # fmt: skip


def scorer() -> Scorer:
    reference = ReferenceExecutor(SCHEMA, {"Menus": ROWS, "Drinks": []})

    class Truths(GroundTruthCache):
        def collection_size(self, collection: str) -> int:
            return len(ROWS)

    return Scorer(lambda _r: SCHEMA, reference, Truths(reference, None))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("calls", "first", "final"),
    [
        ([call(0, RIGHT)], True, True),
        ([call(0, {"collection_name": "Nope"}, ok=False), call(1, RIGHT)], False, True),  # a correction: final only
        ([call(0, RIGHT), call(1, WRONG)], True, False),  # the answer rests on the wrong call
        ([call(0, RIGHT), call(0, WRONG)], False, False),  # hedging with parallel calls earns nothing
        ([call(0, None, ok=False)], False, False),  # unparseable
        ([], False, False),
    ],
)
def test_first_and_final_protocols(calls: list[PredictedCall], first: bool, final: bool) -> None:
    record = scorer().score(trajectory(*calls))
    assert record.scores.first.exact_match is first and record.scores.first.execution_exact is first
    assert record.scores.final.exact_match is final and record.scores.final.execution_exact is final
    assert record.scores.calls_made == len(calls)


def test_routing_and_components_count_a_call_rejected_for_another_reason() -> None:
    both = {**RIGHT, "text_property_filter": {"property_name": "name", "operator": "=", "value": "soup"}}
    wrong_property = {**both, "text_property_filter": {"property_name": "colour", "operator": "=", "value": "red"}}
    rejected = scorer().score(trajectory(call(0, wrong_property, ok=False)).model_copy(update={"ground_truth": both}))
    first = rejected.scores.first
    assert first.routing is True  # the collection named is the label's
    assert first.components == {"boolean_filter": True, "text_filter": False}
    assert first.exact_match is False and first.ast_score == 0 and first.execution_exact is False  # as before
    elsewhere = scorer().score(trajectory(call(0, {**wrong_property, "collection_name": "Drinks"}, ok=False)))
    assert elsewhere.scores.first.routing is False and not any(elsewhere.scores.first.components.values())
    unknown = scorer().score(trajectory(call(0, {**RIGHT, "collection_name": "Nope"}, ok=False)))
    assert unknown.scores.first.routing is False


def test_any_call_is_a_diagnostic_not_a_score() -> None:
    record = scorer().score(trajectory(call(0, WRONG), call(0, RIGHT)))
    assert record.scores.any_call_execution_exact is True
    assert record.scores.first.execution_exact is False and record.scores.final.execution_exact is False


def test_protocol_calls_pick_the_first_step_and_the_last_answered_step() -> None:
    record = trajectory(call(0, WRONG, ok=False), call(1, RIGHT), call(2, WRONG, ok=False))
    assert [c.step for c in protocol_calls(record, ScoringProtocol.FIRST)] == [0]
    assert [c.step for c in protocol_calls(record, ScoringProtocol.FINAL)] == [1]


# --- the small defects, each pinned ------------------------------------------------------------------


def test_an_infrastructure_failure_while_scoring_is_scored_again_on_resume() -> None:
    class Down:
        schema = SCHEMA

        def execute(self, arguments: Any) -> QueryResult:
            raise WeaviateUnavailableError("Weaviate is not reachable right now.")

    class Truths(GroundTruthCache):
        def collection_size(self, collection: str) -> int:
            return len(ROWS)

    truths = Truths(ReferenceExecutor(SCHEMA, {"Menus": ROWS}), None)  # type: ignore[arg-type]
    record = Scorer(lambda _r: SCHEMA, Down(), truths).score(trajectory(call(0, RIGHT)))  # type: ignore[arg-type]
    assert record.scores.scoring_error is not None and "weaviate_unavailable" in record.scores.scoring_error
    assert needs_rerun(record)
    assert not needs_rerun(scorer().score(trajectory(call(0, RIGHT))))


def test_paper_rescoring_keeps_the_predicted_collection_as_written() -> None:
    payload = {
        "model_name": "m",
        "detailed_results": [
            {"query_index": 0, "natural_language_query": "q", "ground_truth_query": {"target_collection": "restaurants"},
             "predicted_query": {"target_collection": "restaurants"}},
        ],
    }  # fmt: skip
    [record] = from_paper_results(payload)
    assert record.ground_truth["collection_name"] == "Restaurants"
    assert record.predicted_calls[0].arguments == {"collection_name": "restaurants"}
    schema = schema_from_calls([record.ground_truth, record.predicted_calls[0].arguments])
    scored = Scorer(lambda _r: schema).score(record)
    assert not scored.scores.first.routing and not scored.scores.first.exact_match
