"""`dbgorilla eval` and `dbgorilla score` through the real CLI, on live Weaviate data.

Models are the oracle or a scripted OpenAI-compatible HTTP server; Weaviate is real, and one
test kills it in the middle of a run.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from agent.testing import MockOpenAIServer, Reply, call, text
from dbgorilla._process import ProcessRecord
from dbgorilla.connection import connect
from evaluation.records import EvalRecord, Outcome, PredictedCall
from evaluation.summary import infrastructure_failed
from fixtures.datasets import load_split, split_path
from fixtures.loader import load_use_cases
from tests.conftest import Stack, fresh_settings, restaurant_truths, run_cli, settings_env

#: The mock servers here answer by the question's own text: a strategy that shows no examples before it.
SCRIPTED_STRATEGY = ("--strategy", "grounded")

pytestmark = pytest.mark.integration
RESTAURANTS = [r for r in load_split() if r.use_case == "restaurants"]
TRUTH_BY_QUERY = restaurant_truths()


def replay_truth(body: dict[str, Any], index: int) -> Reply:
    """A perfect model: the ground-truth call first, then an answer once results came back."""
    question = next(m["content"] for m in body["messages"] if m["role"] == "user")
    if any(m["role"] == "tool" for m in body["messages"]):
        return text("answer")
    return call("query_database", TRUTH_BY_QUERY[question])


def records_of(out: Path) -> list[EvalRecord]:
    return [EvalRecord.model_validate_json(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_oracle_scores_100_percent_on_arguments_and_results(restaurants_stack: Stack, tmp_path: Path) -> None:
    result = run_cli(
        "eval",
        "--model",
        "oracle",
        "--use-case",
        "restaurants",
        "--limit",
        "0",
        "--concurrency",
        "4",
        "--out",
        str(tmp_path),
        "--json",
        env=restaurants_stack.env,
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["cases"] == 63
    for protocol in ("first", "final"):
        for key in ("exact_match", "ast_score", "routing_accuracy", "execution_match_exact", "execution_match_subset"):
            assert summary["protocols"][protocol][key] == 1.0, (protocol, key)
        assert summary["protocols"][protocol]["execution_f1"] == 1.0
    assert summary["no_tool_rate"] == 0.0 and summary["ground_truth_errors"] == 0
    assert summary["execution_scored_cases"] + sum(summary["vacuous_ground_truths"].values()) == 63
    assert (tmp_path / "run.json").exists() and (tmp_path / "summary.json").exists()
    # stderr is a pipe here: a line per finished case, not a bar that stays silent until the end
    lines = [line for line in result.stderr.splitlines() if line.startswith("eval ") and " ok " in line]
    assert len(lines) == 63 and lines[-1].startswith("eval 63/63 restaurants-")


def test_existing_results_need_resume_or_overwrite(restaurants_stack: Stack, tmp_path: Path) -> None:
    args = ["eval", "--model", "oracle", "--use-case", "restaurants", "--limit", "3", "--out", str(tmp_path)]
    assert run_cli(*args, env=restaurants_stack.env).returncode == 0
    again = run_cli(*args, env=restaurants_stack.env)
    assert again.returncode == 9 and "--resume or --overwrite" in again.stderr
    resumed = run_cli(*args, "--resume", "--limit", "5", env=restaurants_stack.env)
    assert resumed.returncode == 0 and "2 cases to run (3 already done)" in resumed.stderr
    ids = [r.id for r in records_of(tmp_path)]
    assert len(ids) == len(set(ids)) == 5


def test_model_server_errors_and_hangs_become_typed_outcomes(restaurants_stack: Stack, tmp_path: Path) -> None:
    broken, hanging = RESTAURANTS[1].query, RESTAURANTS[2].query

    def script(body: dict[str, Any], index: int) -> Reply:
        question = next(m["content"] for m in body["messages"] if m["role"] == "user")
        if question == broken:
            return Reply(status=500, error_message="model crashed")
        if question == hanging:
            return Reply(hang_seconds=20)
        return replay_truth(body, index)

    with MockOpenAIServer(script) as server:
        result = run_cli(
            "eval",
            "--base-url",
            server.base_url,
            "--model",
            "mock",
            *SCRIPTED_STRATEGY,
            "--use-case",
            "restaurants",
            "--limit",
            "6",
            "--request-timeout",
            "2",
            "--max-retries",
            "1",
            "--out",
            str(tmp_path),
            "--json",
            env=restaurants_stack.env,
        )
    assert result.returncode == 0, result.stderr
    by_query = {r.query: r for r in records_of(tmp_path)}
    assert len(by_query) == 6
    assert by_query[broken].outcome is Outcome.MODEL_ERROR and "500" in by_query[broken].error
    assert by_query[hanging].outcome is Outcome.TIMEOUT
    others = [r for q, r in by_query.items() if q not in (broken, hanging)]
    assert all(r.outcome is Outcome.OK and r.scores.first.exact_match for r in others)
    assert json.loads(result.stdout)["outcomes"] == {"ok": 4, "model_error": 1, "timeout": 1}


def test_killing_weaviate_mid_run_then_resume_loses_nothing(tmp_path_factory: pytest.TempPathFactory) -> None:
    settings = fresh_settings(tmp_path_factory.mktemp("killed"))
    env = settings_env(settings)
    assert run_cli("up", "--backend", "binary", env=env).returncode == 0
    try:
        with connect(settings) as client:
            assert load_use_cases(client, ["restaurants"]).ok
        weaviate = ProcessRecord.load(settings.run_dir / "weaviate.json")
        out = tmp_path_factory.mktemp("killed-run")

        def script(body: dict[str, Any], index: int) -> Reply:
            if index == 8:  # a few cases in: the database dies
                os.kill(weaviate.pid, signal.SIGKILL)
            return replay_truth(body, index)

        args = ["eval", "--model", "mock", *SCRIPTED_STRATEGY, "--use-case", "restaurants", "--limit", "12"]
        args += ["--out", str(out), "--json"]
        with MockOpenAIServer(script) as server:
            first = run_cli(*args, "--base-url", server.base_url, env=env)
        # Weaviate down for 3 cases in a row: an infrastructure failure, not a run of zeros (exit 11)
        assert first.returncode == 11, first.stderr
        # said once, with what to do; not the client's empty "Connection to Weaviate failed" per case
        assert first.stderr.count("Weaviate is not answering") == 1, first.stderr
        assert "--resume" in first.stderr
        assert "Connection to Weaviate failed" not in first.stdout + first.stderr
        crashed = records_of(out)
        assert 3 <= len(crashed) < 12 and len({r.id for r in crashed}) == len(crashed), "stopped early"
        failed = [r for r in crashed if infrastructure_failed(r)]
        assert [infrastructure_failed(r) for r in crashed[-3:]] == [True] * 3, "3 in a row stopped it"
        unavailable = [r for r in failed if r.outcome is Outcome.EXECUTION_ERROR]
        assert unavailable, "the model's calls met a dead Weaviate"
        assert all(any(c.error_code == "weaviate_unavailable" for c in r.predicted_calls) for r in unavailable)
        assert all(r in unavailable or r.ground_truth_error or r.scores.scoring_error for r in failed)
        done = len(crashed) - len(failed)

        assert run_cli("up", "--backend", "binary", env=env).returncode == 0
        with MockOpenAIServer(replay_truth) as server:
            second = run_cli(*args, "--base-url", server.base_url, "--resume", env=env)
        assert second.returncode == 0, second.stderr
        assert f"{12 - done} cases to run ({done} already done)" in second.stderr
        final = records_of(out)
        assert len(final) == 12 and {r.id for r in crashed} <= {r.id for r in final}, "no case lost or duplicated"
        assert len({r.id for r in final}) == 12
        assert all(r.outcome is Outcome.OK and r.scores.final.execution_exact for r in final)
    finally:
        run_cli("down", env=env)


def _record(case: Any, predicted: dict[str, Any] | None) -> EvalRecord:
    calls = (
        []
        if predicted is None
        else [
            PredictedCall(tool_name="query_database", raw_arguments=json.dumps(predicted), arguments=predicted, ok=True)
        ]
    )
    return EvalRecord(
        id=case.id,
        use_case=case.use_case,
        query=case.query,
        complexity=case.complexity.value,
        components=[c.value for c in case.components],
        ground_truth=case.ground_truth.to_tool_arguments(),
        model="hand-made",
        tool_design="unified",
        predicted_calls=calls,
        outcome=Outcome.NO_TOOL_CALL if predicted is None else Outcome.OK,
    )


def hand_made_predictions(client: Any) -> tuple[list[EvalRecord], dict[str, Any]]:
    """Four predictions whose every score is known by construction."""
    mean_case = next(r for r in RESTAURANTS if r.components == ["integer_aggregation"])
    filter_case = next(r for r in RESTAURANTS if r.components == ["integer_filter"])
    truth_filter = filter_case.ground_truth.integer_property_filter
    values = sorted(
        {o.properties[truth_filter.property_name] for o in client.collections.use(filter_case.collection).iterator()}
    )
    below = max(v for v in values if v < truth_filter.value)
    above = min(v for v in values if v > truth_filter.value)
    # An argument-wrong but execution-equal filter: the same set, written with another operator and value.
    operator, value = {
        ">=": (">", (below + truth_filter.value) / 2),
        ">": (">=", above),
        "<=": ("<", (above + truth_filter.value) / 2),
        "<": ("<=", below),
    }[truth_filter.operator.value]
    equal = {"property_name": truth_filter.property_name, "operator": operator, "value": value}
    other_collection = next(c for c in ("Restaurants", "MenuItems", "Reservations") if c != filter_case.collection)
    truth_mean = mean_case.ground_truth.to_tool_arguments()
    boolean = next(
        p
        for p in client.collections.use(mean_case.collection).config.get().properties
        if p.data_type.value == "boolean"
    )
    records = [
        _record(RESTAURANTS[0], None),  # no call
        _record(
            filter_case, {**filter_case.ground_truth.to_tool_arguments(), "collection_name": other_collection}
        ),  # wrong collection
        _record(
            mean_case,
            {**truth_mean, "boolean_property_filter": {"property_name": boolean.name, "operator": "=", "value": True}},
        ),  # extra filter
        _record(
            filter_case, {"collection_name": filter_case.collection, "integer_property_filter": equal}
        ),  # execution-equal
    ]
    records[3] = records[3].model_copy(update={"id": "restaurants-999"})
    return records, {"filter_case": filter_case, "mean_case": mean_case}


def test_scoring_hand_made_predictions_gives_exact_numbers(restaurants_stack: Stack, tmp_path: Path) -> None:
    with connect(restaurants_stack.settings) as client:
        records, _ = hand_made_predictions(client)
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(r.model_dump_json() + "\n" for r in records))
    result = run_cli("score", "--predictions", str(predictions), "--execute", "--json", env=restaurants_stack.env)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["cases"] == 4
    assert summary["protocols"]["first"] == summary["protocols"]["final"]  # one call each: both protocols see it
    numbers = summary["protocols"]["first"]
    assert numbers["exact_match"] == 0.0
    assert numbers["ast_score"] == pytest.approx((0 + 0 + 0.85 + 0.85) / 4)
    assert numbers["ast_score_lenient"] == pytest.approx((0 + 0 + 1.0 + 0.85) / 4)
    assert numbers["routing_accuracy"] == 0.5
    assert summary["no_tool_rate"] == 0.25
    assert numbers["execution_match_exact"] == 0.25 and numbers["execution_match_subset"] == 0.25
    assert summary["disagreement"]["first"]["execution_match_but_arguments_differ"] == 1
    assert summary["disagreement"]["first"]["examples_execution_only"][0]["id"] == "restaurants-999"
    assert summary["by_component"]["first"]["integer_filter"]["accuracy"] == 0.0
    assert summary["by_component"]["first"]["boolean_filter"]["spurious"] == 1

    arguments_only = run_cli("score", "--predictions", str(predictions), "--json", env=restaurants_stack.env)
    plain = json.loads(arguments_only.stdout)
    assert "execution_match_exact" not in plain["protocols"]["first"]
    assert plain["protocols"]["first"]["ast_score"] == numbers["ast_score"]


def test_scoring_the_dbgorilla_result_format(restaurants_stack: Stack, tmp_path: Path) -> None:
    with connect(restaurants_stack.settings) as client:
        records, _ = hand_made_predictions(client)

    def as_dbgorilla(arguments: dict[str, Any] | None) -> dict[str, Any] | None:
        if arguments is None:
            return None
        query = {k: v for k, v in arguments.items() if k != "collection_name"}
        return {"target_collection": arguments["collection_name"], "corresponding_natural_language_query": "", **query}

    payload = {
        "model_name": "some-model",
        "detailed_results": [
            {
                "query_index": i,
                "natural_language_query": r.query,
                "ground_truth_query": {**as_dbgorilla(r.ground_truth), "database_schema": "{}"},
                "predicted_query": as_dbgorilla(r.first_arguments),
                "ast_score": 0.0,
                "error": None,
            }
            for i, r in enumerate(records)
        ],
    }
    path = tmp_path / "dbgorilla_results.json"
    path.write_text(json.dumps(payload))
    # a DBGorilla result file answers the paper set unless --dataset says otherwise: here, the default split
    args = ("score", "--predictions", str(path), "--execute", "--json", "--dataset", str(split_path()))
    result = run_cli(*args, env=restaurants_stack.env)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["cases"] == 4 and summary["models"] == ["some-model"]
    assert summary["protocols"]["first"]["ast_score"] == pytest.approx(0.425) and summary["no_tool_rate"] == 0.25
    assert summary["protocols"]["first"]["execution_match_exact"] == 0.25


def test_repeats_forward_the_seed_and_name_the_questions_that_flip(restaurants_stack: Stack, tmp_path: Path) -> None:
    listings = [r for r in RESTAURANTS if not any(c.endswith(("aggregation", "groupby")) for c in r.components)][:3]
    flipping = listings[0].query

    def script(body: dict[str, Any], index: int) -> Reply:
        question = next(m["content"] for m in body["messages"] if m["role"] == "user")
        if question == flipping and body.get("seed") == 8:
            return text("I cannot tell.")  # the second repeat gives up on one question
        return replay_truth(body, index)

    with MockOpenAIServer(script) as server:
        ids = [arg for r in listings for arg in ("--id", r.id)]
        result = run_cli(
            "eval", "--base-url", server.base_url, "--model", "mock-model", *SCRIPTED_STRATEGY, *ids, "--repeats", "2", "--seed", "7",
            "--temperature", "0.5", "--out", str(tmp_path), "--json", env=restaurants_stack.env,
        )  # fmt: skip
        seeds = {body.get("seed") for body in server.requests}
        temperatures = {body.get("temperature") for body in server.requests}
    assert result.returncode == 0, result.stderr
    assert seeds == {7, 8} and temperatures == {0.5}
    repeated = json.loads(result.stdout)["repeats"]
    assert repeated["repeats"] == 2 and repeated["questions"] == 3
    assert [run["rate"] for run in repeated["runs"]] == pytest.approx([1.0, 2 / 3], abs=1e-6)
    assert repeated["pass^k"]["rate"] == pytest.approx(2 / 3, abs=1e-6)
    assert repeated["flaky"] == [listings[0].id]
    assert json.loads((tmp_path / "repeats.json").read_text()) == repeated
    report = run_cli("report", str(tmp_path / "repeat-1"), str(tmp_path / "repeat-2"), "--out", str(tmp_path / "r"),
                     env=restaurants_stack.env)  # fmt: skip
    assert report.returncode == 0, report.stderr
    comparison = (tmp_path / "r" / "comparison.md").read_text()
    parent = tmp_path.name  # a repeat is named with its parent, which groups it with its siblings
    assert f"| {parent}/repeat-2 | {parent}/repeat-1 | 3 |" in comparison and "within the noise" in comparison
    whole = run_cli("report", str(tmp_path), "--out", str(tmp_path / "whole"), env=restaurants_stack.env)
    assert whole.returncode == 0, whole.stderr
    repeats = (tmp_path / "whole" / "repeats.md").read_text()
    assert f"| {parent} | mock-model | 2 | 3 | 83.3% | 66.7% |" in repeats and listings[0].id in repeats
