"""One number per argument metric: `score`, `score --execute` and `eval` agree on every argument metric
of the same predictions, ground truths that do not fit the schema included (issue 39).

Before, offline scoring read a schema off the calls, in which every label fits, while `--execute` and
`eval` read the loaded one: a mislabeled question counted for routing offline and 0 executed. The
execution metrics exist only where the calls were executed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.testing import MockOpenAIServer, Reply, call, text
from evaluation.evaluators.arguments import Arguments
from evaluation.protocols import PROTOCOLS, ScoringProtocol
from evaluation.records import EvalRecord, Outcome, PredictedCall
from executors import PropertyKind
from fixtures.datasets import PAPER_EXAMPLE_PATH, Case, load_split, paper_case_id, read_dataset
from fixtures.datasets.paper import load_paper_dataset, weaviate_property_name
from fixtures.use_cases import get_use_case
from tests.conftest import Stack, run_cli

pytestmark = pytest.mark.integration
RESTAURANTS = [r for r in load_split() if r.use_case == "restaurants"]
PROTOCOL_KEYS = tuple(Arguments().protocol_numbers([], ScoringProtocol.FIRST))
SUMMARY_KEYS = tuple(Arguments().summary([], executed_scoring=False))


def argument_metrics(summary: dict[str, Any]) -> dict[str, Any]:
    """Every argument metric of a summary, as the Arguments evaluator names them: each protocol's, each
    slice's, and the run's (the labels scored on included)."""
    numbers: dict[str, Any] = {key: summary[key] for key in SUMMARY_KEYS}
    for protocol in PROTOCOLS:
        numbers[protocol.value] = {k: summary["protocols"][protocol.value][k] for k in PROTOCOL_KEYS}
    for slices in ("by_use_case", "by_complexity"):
        numbers[slices] = {
            name: {p.value: {k: block[p.value][k] for k in PROTOCOL_KEYS} for p in PROTOCOLS}
            for name, block in summary[slices].items()
        }
    return numbers


def score(env: dict[str, str], predictions: Path, *flags: str) -> dict[str, Any]:
    result = run_cli("score", "--predictions", str(predictions), "--json", *flags, env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def assert_one_number_per_metric(env: dict[str, str], predictions: Path, *flags: str) -> dict[str, Any]:
    offline, executed = score(env, predictions, *flags), score(env, predictions, "--execute", *flags)
    assert argument_metrics(offline) == argument_metrics(executed)
    assert "execution_match_exact" in executed["protocols"]["first"]
    assert "execution_match_exact" not in offline["protocols"]["first"]
    return executed


@pytest.fixture(scope="module")
def paper_stack(weaviate_stack: Stack) -> Iterator[Stack]:
    """The session's Weaviate with the paper example loaded (under Paper_), dropped afterwards."""
    paper = ["--dataset", str(PAPER_EXAMPLE_PATH)]
    loaded = run_cli("load", *paper, "--objects-per-collection", "30", env=weaviate_stack.env)
    assert loaded.returncode == 0, loaded.stderr
    yield weaviate_stack
    run_cli("drop", *paper, env=weaviate_stack.env)


def loaded_names(query: dict[str, Any]) -> dict[str, Any]:
    """A label with its property names as the loader creates them (a prediction keeps what it writes)."""
    named = {}
    for key, value in query.items():
        if isinstance(value, dict) and isinstance(value.get("property_name"), str):
            value = {**value, "property_name": weaviate_property_name(value["property_name"])}
        named[key] = weaviate_property_name(value) if key == "groupby_property" and value else value
    return named


def test_the_paper_set_scores_the_same_offline_and_executed(paper_stack: Stack, tmp_path: Path) -> None:
    records = json.loads(PAPER_EXAMPLE_PATH.read_text())

    def predict(index: int, record: dict[str, Any]) -> dict[str, Any] | None:
        truth = record["query"]
        schema = json.loads(record["database_schema"])["weaviate_collections"]
        # a number property of the target (the first collection's where the label names none it has)
        target = next((c for c in schema if c["name"] == truth["target_collection"]), schema[0])
        number = next(p["name"] for p in target["properties"] if p["data_type"] == ["number"])
        return [
            loaded_names(truth),  # the label
            {"target_collection": truth["target_collection"]},  # a bare listing
            {**loaded_names(truth), "target_collection": "Nowhere"},  # a collection the schema lacks
            {"target_collection": truth["target_collection"],  # a number property used as text
             "text_property_filter": {"property_name": number, "operator": "=", "value": "4"}},
            None,  # no call
        ][index % 5]  # fmt: skip

    results = [
        {
            "query_index": index,
            "natural_language_query": record["query"]["corresponding_natural_language_query"],
            "ground_truth_query": {**record["query"], "database_schema": record["database_schema"]},
            "predicted_query": predict(index, record),
        }
        for index, record in enumerate(records)
    ]
    path = tmp_path / "paper.json"
    path.write_text(json.dumps({"model_name": "mixed", "detailed_results": results}))
    executed = assert_one_number_per_metric(paper_stack.env, path)
    flagged = sorted(paper_case_id(i) for i in load_paper_dataset(PAPER_EXAMPLE_PATH).mislabeled)
    assert flagged and executed["labels"]["excluded_ids"] == flagged
    assert executed["labels"]["valid"] == len(records) - len(flagged)


def restaurant_record(index: int, ground_truth: dict[str, Any], predicted: dict[str, Any] | None) -> EvalRecord:
    case = RESTAURANTS[index]
    calls = [] if predicted is None else [
        PredictedCall(tool_name="query_database", raw_arguments=json.dumps(predicted), arguments=predicted, ok=True)
    ]  # fmt: skip
    record = EvalRecord.for_case(
        case,
        model="hand-made",
        tool_design="unified",
        predicted_calls=calls,
        outcome=Outcome.NO_TOOL_CALL if predicted is None else Outcome.OK,
    )
    return record.model_copy(update={"ground_truth": ground_truth})


def test_a_small_file_with_invalid_labels_scores_the_same_both_ways(restaurants_stack: Stack, tmp_path: Path) -> None:
    collection = get_use_case("restaurants").collections[0]
    number = next(p.name for p in collection.properties if p.kind is PropertyKind.NUMBER)
    as_text = {"property_name": number, "operator": "=", "value": "4"}
    broken = [  # a text filter on a number, and a group-by on a property the collection lacks
        {"collection_name": collection.name, "text_property_filter": as_text},
        {"collection_name": collection.name, "groupby_property": "noSuchProperty"},
    ]
    records = []
    for index in range(8):
        truth = RESTAURANTS[index].ground_truth.to_tool_arguments()
        label = broken[index % 2] if index < 4 else truth
        predicted = [truth, {"collection_name": truth["collection_name"]}, None,
                     {**truth, "text_property_filter": as_text}][index % 4]  # fmt: skip
        records.append(restaurant_record(index, label, predicted))
    path = tmp_path / "results.jsonl"
    path.write_text("".join(r.model_dump_json() + "\n" for r in records))
    executed = assert_one_number_per_metric(restaurants_stack.env, path)
    assert executed["labels"]["excluded_ids"] == sorted(r.id for r in records[:4])
    assert set(executed["labels"]["excluded_by_reason"]) <= {"type_mismatch", "unknown_property"}


def imperfect_model(cases: list[Case]) -> MockOpenAIServer:
    """A scripted model that answers in turn with the label, the label on another collection, the label
    grouped by a property nobody has, and no call at all."""
    truths = {c.query: c.ground_truth.to_tool_arguments() for c in cases}
    collections = sorted({c.collection for c in cases})

    def script(body: dict[str, Any], index: int) -> Reply:
        question = next(m["content"] for m in body["messages"] if m["role"] == "user")
        if any(m["role"] == "tool" for m in body["messages"]):
            return text("answer")
        position, truth = list(truths).index(question), truths[question]
        elsewhere = next(c for c in collections if c != truth["collection_name"])
        predicted = [truth, {**truth, "collection_name": elsewhere}, {**truth, "groupby_property": "noSuchProperty"},
                     None][position % 4]  # fmt: skip
        return text("I cannot tell.") if predicted is None else call("query_database", predicted)

    return MockOpenAIServer(script)


def eval_then_score(env: dict[str, str], cases: list[Case], out: Path, *dataset: str) -> None:
    """`eval` the cases, then score its results.jsonl offline and executed: one number per argument metric."""
    with imperfect_model(cases) as server:
        ids = [arg for c in cases for arg in ("--id", c.id)]
        evaluated = run_cli(
            "eval", "--base-url", server.base_url, "--model", "mock-model", *dataset, *ids, "--strategy", "react",
            "--out", str(out), "--json", env=env,
        )  # fmt: skip
    assert evaluated.returncode == 0, evaluated.stderr
    during = json.loads(evaluated.stdout)
    assert 0 < during["protocols"]["first"]["exact_match"] < 1  # the predictions differ: the test can fail
    executed = assert_one_number_per_metric(env, out / "results.jsonl", *dataset)
    assert argument_metrics(during) == argument_metrics(executed)


def test_eval_and_scoring_its_results_give_the_same_argument_metrics(restaurants_stack: Stack, tmp_path: Path) -> None:
    eval_then_score(restaurants_stack.env, RESTAURANTS[:8], tmp_path / "run")


def test_an_eval_of_the_paper_set_scores_the_same_given_its_dataset(paper_stack: Stack, tmp_path: Path) -> None:
    """A paper-set run's results carry no schema: `--dataset` gives offline scoring the one eval used."""
    cases = read_dataset(PAPER_EXAMPLE_PATH).cases
    eval_then_score(paper_stack.env, cases, tmp_path / "run", "--dataset", str(PAPER_EXAMPLE_PATH))
    unnamed = run_cli("score", "--predictions", str(tmp_path / "run" / "results.jsonl"), env=paper_stack.env)
    assert unnamed.returncode == 0 and "--dataset" in unnamed.stderr  # without it, the guess is named
