"""Final answers on live Weaviate: the multi-step split, its gold chains, the oracle and the probes.

The split was composed offline through the reference executor; here every chain runs again on the
loaded data, composing must give the committed file back, the oracle's answers must all be right,
and answers built to be wrong (stopping after the first call, saying nothing, naming every value,
swapping group values) must all be graded wrong.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.testing import MockOpenAIServer, Reply, call, text
from dbgorilla.connection import connect
from evaluation.audit import audit_dataset
from evaluation.audit.answer_probes import answer_probe_rates, citation_probe_rates
from evaluation.ground_truth import GroundTruthCache
from evaluation.records import EvalRecord, Outcome
from evaluation.runner import scoring_executor
from executors import QueryDatabaseArguments
from fixtures.authoring.multistep import compose_use_case
from fixtures.datasets import Case, load_split, render, split_path
from fixtures.datasets.chains import AnswerPart, ChainStep, Pick, placeholders, run_chain
from fixtures.loader import load_use_cases
from fixtures.use_cases import use_case_names
from tests.conftest import Stack, run_cli

pytestmark = pytest.mark.integration
MULTISTEP = load_split(split_path("multistep"))


@pytest.fixture(scope="module")
def loaded(weaviate_stack: Stack) -> Stack:
    with connect(weaviate_stack.settings) as client:
        assert load_use_cases(client, "all").ok
    return weaviate_stack


def test_the_split_is_sixty_chains_of_two_or_more_dependent_calls() -> None:
    assert len(MULTISTEP) >= 60
    assert all(sum(c.use_case == name for c in MULTISTEP) >= 12 for name in use_case_names())
    for case in MULTISTEP:
        assert case.multi_step
        assert all(placeholders(step.call) for step in case.chain[1:]), case.id  # each later call needs a pick


def test_composing_on_live_data_gives_the_committed_split(loaded: Stack) -> None:
    with connect(loaded.settings) as client:
        live = scoring_executor(client)
        cases = [case for name in use_case_names() for case in compose_use_case(name, execute=live.execute)]
        assert render(cases) == split_path("multistep").read_text()
        for case in MULTISTEP:  # the question never gives away what a step has to find out
            run = run_chain(case.chain, live.execute)
            assert run.ok, (case.id, run.issues)
            named = [v for v in run.values.values() if isinstance(v, str)]
            assert named and not any(v.lower() in case.query.lower() for v in named), case.id


def test_gold_answers_pass_and_every_probe_fails(loaded: Stack) -> None:
    with connect(loaded.settings) as client:
        truths = GroundTruthCache(scoring_executor(client), client)
        for split in ("multistep", "natural"):
            records = [
                EvalRecord.for_case(c, model="probe", tool_design="", outcome=Outcome.OK)
                for c in load_split(split_path(split))
            ]
            rates = answer_probe_rates(records, truths)
            assert rates["gold"]["right"] == 1.0, split
            for probe, rate in rates.items():
                if probe != "gold":
                    assert rate["right"] == 0.0, (split, probe, rate)
            assert rates["says_cannot"]["questions"] == rates["gold"]["questions"]  # a refusal fails every one
            if split == "multistep":
                assert rates["first_call_only"]["questions"] == len(records)
            if split == "natural":  # listings: citing what the tool showed is precise, anything else is not
                cited = citation_probe_rates(records, truths)
                assert (
                    cited["gold"] == cited["full_uuids"] == {"questions": cited["gold"]["questions"], "precision": 1.0}
                )
                assert cited["gold"]["questions"] >= 30  # 35 on the committed data
                assert cited["invented"]["precision"] == cited["other_question"]["precision"] == 0.0


def test_oracle_answers_every_multistep_question(loaded: Stack, tmp_path: Path) -> None:
    args = ["eval", "--dataset", "multistep", "--model", "oracle", "--limit", "0", "--out", str(tmp_path), "--json"]
    result = run_cli(*args, env=loaded.env)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["answers"]["accuracy"] == 1.0 and summary["answers"]["keyed_cases"] == len(MULTISTEP)
    assert summary["answers"]["all_gold_calls_reached"] == 1.0
    for protocol in ("first", "final"):
        assert summary["protocols"][protocol]["execution_match_exact"] == 1.0, protocol


def test_a_model_that_stops_after_the_first_call_is_right_on_the_call_and_wrong_on_the_answer(
    loaded: Stack, tmp_path: Path
) -> None:
    first_calls = {c.query: c.ground_truth.to_tool_arguments() for c in MULTISTEP}

    def stop_early(body: dict, index: int) -> Reply:  # type: ignore[type-arg]
        question = next(m["content"] for m in body["messages"] if m["role"] == "user")
        results = [m["content"] for m in body["messages"] if m["role"] == "tool"]
        return text(results[-1]) if results else call("query_database", first_calls[question])

    with MockOpenAIServer(stop_early) as server:
        args = ["eval", "--dataset", "multistep", "--base-url", server.base_url, "--model", "mock-model"]
        args += ["--strategy", "react"]  # the model answers the loop's turns and commit, not a strategy's
        result = run_cli(*args, "--limit", "0", "--out", str(tmp_path), "--json", env=loaded.env)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["protocols"]["first"]["exact_match"] == 1.0
    assert summary["answers"]["accuracy"] == 0.0
    assert summary["answers"]["all_gold_calls_reached"] == 0.0


def test_the_audit_runs_every_chain_and_catches_one_that_depends_on_a_tie(loaded: Stack, tmp_path: Path) -> None:
    with connect(loaded.settings) as client:
        report = audit_dataset(client, split_path("multistep"))
        assert report.ok, report.failed_targets
        assert report.probes["gold"].least == 1.0  # the gold chain earns everything under `final` too
        assert report.answer_probes["gold"]["right"] == 1.0 and report.answer_probes["first_call_only"]["right"] == 0
        # "the two most common countries": Italy, then Mexico, Portugal and Thailand tie for second
        first = {"collection_name": "Destinations", "groupby_property": "country"}
        steps = [
            ChainStep(
                call=first, picks=[Pick(name="top", kind="most_common"), Pick(name="next", kind="second_most_common")]
            ),
            ChainStep(
                call={
                    "collection_name": "Destinations",
                    "text_property_filter": {"property_name": "country", "operator": "=", "value": "{next}"},
                    "integer_property_aggregation": {"property_name": "averageDailyCost", "metrics": "MEAN"},
                },
                picks=[Pick(name="mean", kind="metric", property="averageDailyCost", metric="MEAN")],
            ),
        ]
        parts = [AnswerPart(kind="name", refs=["next"]), AnswerPart(kind="number", refs=["mean"])]
        case = Case.of("travel_planning-999", 1, "travel_planning", "Which country is second? Its average cost?",
                       QueryDatabaseArguments.model_validate(first))  # fmt: skip
        path = tmp_path / "tied.jsonl"
        path.write_text(render([case.model_copy(update={"chain": steps, "answer": parts})]))
        untrusted = audit_dataset(client, path)
    assert not untrusted.ok and untrusted.chain_issues and "ties" in untrusted.chain_issues[0]
