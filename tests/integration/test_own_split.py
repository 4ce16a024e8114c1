"""`compose-split --collections`: a benchmark composed over a collection of a user's own, on a live Weaviate,
through the real CLI. The collection is the test's own, with a made-up schema (names and values in no use case
of ours and no public dataset): every gold answer is the rows' and the executed call's at once, the oracle
replays the gold calls to 100% on arguments, execution and answers, the audit exits 0, a probe that games the
score does not, and a file composed on other data than the collection now holds is refused."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from weaviate.classes.config import Configure, DataType, Property

from agent.answer import FinalAnswer
from dbgorilla.cli.evaluate_public import prepare_collections
from dbgorilla.connection import connect
from dbgorilla.errors import ConfigError
from evaluation.own_split import OwnSplitError, compose_split, stored_rows
from evaluation.public_run import grade
from executors import WeaviateExecutor
from executors.vocabulary import ToolOperations
from fixtures.authoring.own import SHAPES
from fixtures.datasets.public import PublicQuestion, read_public
from llm.encoder import MiniLMEncoder
from tests.conftest import Stack, run_cli

pytestmark = pytest.mark.integration
NAME = "Glimmerstones"
HUES = ("ochre", "teal", "mauve", "umber", "saffron")


def made_up_rows(count: int = 120, seed: int = 5) -> list[dict[str, Any]]:
    """Stones of a made-up schema: a hue (a category), facets and lustre (numbers), a curse (a boolean) and the
    day each was unearthed (a date)."""
    rng = random.Random(seed)
    return [
        {
            "hue": HUES[min(int(rng.expovariate(0.8)), len(HUES) - 1)],
            "facets": rng.randint(3, 40),
            "lustre": round(rng.uniform(0.5, 9.5), 2),
            "isCursed": rng.random() < 0.3,
            "unearthedOn": datetime(
                rng.choice((2019, 2020, 2020, 2021, 2021, 2021)), rng.randint(1, 12), 1, tzinfo=timezone.utc
            ),
        }
        for _ in range(count)
    ]


ROWS = made_up_rows()


@pytest.fixture(scope="module")
def own(weaviate_stack: Stack) -> Iterator[Stack]:
    with connect(weaviate_stack.settings) as client:
        if client.collections.exists(NAME):
            client.collections.delete(NAME)
        collection = client.collections.create(
            NAME,
            vector_config=Configure.Vectors.self_provided(),
            properties=[
                Property(name="hue", data_type=DataType.TEXT),
                Property(name="facets", data_type=DataType.INT),
                Property(name="lustre", data_type=DataType.NUMBER),
                Property(name="isCursed", data_type=DataType.BOOL),
                Property(name="unearthedOn", data_type=DataType.DATE),
            ],
        )
        collection.data.insert_many(ROWS)
        assert len(stored_rows(client, NAME)) == len(ROWS)
    yield weaviate_stack
    with connect(weaviate_stack.settings) as client:
        client.collections.delete(NAME)


def test_the_cli_writes_questions_whose_gold_the_rows_and_the_executed_calls_agree_on(
    own: Stack, tmp_path: Path
) -> None:
    path = tmp_path / "own.jsonl"
    done = run_cli("compose-split", "--collections", NAME, "--out", str(path), "--per-shape", "3", env=own.env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "dropped 0" in done.stdout and f"--collections {NAME}" in done.stdout
    questions = read_public(path)
    assert len({q.id for q in questions}) == len(questions) >= 20
    assert {q.collections[0] for q in questions} == {NAME} and len({q.data for q in questions}) == 1
    assert {"unanswerable", "single"} <= {q.kind for q in questions}
    assert any("sort" in q.needs for q in questions)  # the mean over the sort's first objects, executed
    assert {"how_many_different", "mean_per_group", "count_in_year", "count_true"} <= {q.shape for q in questions}
    assert all(q.gold_calls for q in questions if q.kind != "unanswerable")
    again = run_cli("compose-split", "--collections", NAME, "--out", str(path), env=own.env)
    assert again.returncode == 9 and "--replace" in again.stderr  # nothing written over
    assert len(read_public(path)) == len(questions)


def test_the_gold_answers_score_every_question_and_a_constant_answer_does_not(own: Stack) -> None:
    encode = MiniLMEncoder().encode
    with connect(own.settings) as client:
        executor = WeaviateExecutor(client, operations=ToolOperations.COMPOUND)
        composition = compose_split(client, executor, [NAME], per_shape=3, seed=7, encode=encode)
        assert compose_split(client, executor, [NAME], per_shape=3, seed=7, encode=encode).lines == composition.lines
    questions = [PublicQuestion.model_validate(line) for line in composition.lines]
    shapes = {s for s in SHAPES if s != "unanswerable"}
    assert len(questions) >= len(shapes)
    for question in questions:
        gold = FinalAnswer(cannot_answer="no property holds it") if question.answer is None else _as_answer(question)
        assert grade(question, None, gold).correct, question.query
    refusing = sum(bool(grade(q, None, FinalAnswer(cannot_answer="no")).correct) for q in questions)
    zeros = sum(bool(grade(q, None, FinalAnswer(numbers=[0.0])).correct) for q in questions)
    unanswerable = sum(q.kind == "unanswerable" for q in questions)
    assert 0 < refusing == unanswerable < len(questions) / 2 and zeros == 0


def test_questions_composed_on_other_data_are_refused_and_a_missing_collection_is_named(own: Stack) -> None:
    with connect(own.settings) as client:
        composition = compose_split(
            client, WeaviateExecutor(client, operations=ToolOperations.COMPOUND), [NAME], per_shape=1
        )
        questions = [PublicQuestion.model_validate(line) for line in composition.lines]
        assert prepare_collections(client, questions, allow_other_data=False) == {NAME: questions[0].data}
        collection = client.collections.use(NAME)
        added = collection.data.insert(dict(ROWS[0]))
        try:
            with pytest.raises(ConfigError, match="composed on other data"):
                prepare_collections(client, questions, allow_other_data=False)
            prepare_collections(client, questions, allow_other_data=True)
            assert len(stored_rows(client, NAME)) == len(ROWS) + 1
        finally:
            collection.data.delete_by_id(added)
        with pytest.raises(OwnSplitError, match="no collection named Nowhere"):
            compose_split(client, WeaviateExecutor(client, operations=ToolOperations.COMPOUND), ["Nowhere"])


def test_the_oracle_scores_every_call_and_answer_the_audit_passes_and_the_report_reads_per_shape(
    own: Stack, tmp_path: Path
) -> None:
    path = tmp_path / "own.jsonl"
    composed = run_cli("compose-split", "--collections", NAME, "--out", str(path), "--per-shape", "2", env=own.env)
    assert composed.returncode == 0, composed.stdout + composed.stderr
    questions = read_public(path)
    oracle = run_cli(
        "eval", "--dataset", str(path), "--model", "oracle", "--out", str(tmp_path / "oracle"), "--json", env=own.env
    )
    assert oracle.returncode == 0, oracle.stdout + oracle.stderr
    summary = json.loads(oracle.stdout.strip().splitlines()[-1])
    assert summary["pass"]["rate"] == 1.0 and summary["questions"] == len(questions)
    calls = summary["calls"]
    answerable = sum(q.kind != "unanswerable" for q in questions)
    assert calls["scored"] == answerable and calls["exact_match"]["rate"] == calls["execution_exact"]["rate"] == 1.0
    assert set(summary["by_shape"]) == {q.shape for q in questions} and len(summary["by_shape"]) >= 6
    audited = run_cli("audit-dataset", str(path), "--json", env=own.env)
    assert audited.returncode == 0, audited.stdout + audited.stderr
    audit = json.loads(audited.stdout)
    assert audit["ok"] and audit["mutants"] > answerable and audit["probes"]["zero_everywhere"] == 0.0
    assert audit["probes"]["gold_answers"] == audit["probes"]["gold_calls"] == 1.0
    # a file whose gold is wrong fails the audit: the first count's gold answer moved by one
    broken = tmp_path / "broken.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    wrong = next(line for line in lines if line["shape"] == "count_equal")
    wrong["answer"]["numbers"][0]["value"] += 1
    broken.write_text("".join(json.dumps(line) + "\n" for line in lines))
    failed = run_cli("audit-dataset", str(broken), env=own.env)
    assert failed.returncode == 1 and "disagreements 1" in failed.stderr, failed.stdout + failed.stderr
    report = run_cli("report", str(tmp_path / "oracle"), "--out", str(tmp_path / "report"), env=own.env)
    assert report.returncode == 0, report.stdout + report.stderr
    assert "| shape count_equal |" in report.stdout and "execution exact (last call)" in report.stdout
    ablated = run_cli(
        "ablate", "--dataset", str(path), "--model", "oracle", "--ablation", "rationale", "--limit", "4",
        "--out", str(tmp_path / "ablation"), env=own.env,
    )  # fmt: skip
    assert ablated.returncode == 0, ablated.stdout + ablated.stderr
    assert "rationale against original on 4 questions: 0 right only here, 0 only there" in ablated.stdout


def _as_answer(question: PublicQuestion) -> FinalAnswer:
    """The key's own values as a committed answer."""
    answer = question.answer or {}
    return FinalAnswer(
        numbers=[n["value"] for n in answer["numbers"]],
        names=list(answer["names"]),
        groups={name: value["value"] for name, value in answer["groups"].items()},
    )
