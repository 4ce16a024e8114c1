"""`compose-split --collections`: a benchmark composed over a collection of a user's own (the public suite's
iris data under a name of the test's), on a live Weaviate, through the real CLI: every gold answer is the
rows' and the executed call's at once, the gold answers score 100% and a probe that games the score does
not, and a file composed on other data than the collection now holds is refused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.answer import FinalAnswer
from dbgorilla.cli.evaluate_public import prepare_collections
from dbgorilla.connection import connect
from dbgorilla.embedding.encoder import MiniLMEncoder
from dbgorilla.errors import ConfigError
from evaluation.own_split import OwnSplitError, compose_split, stored_rows
from evaluation.public_run import grade
from executors import WeaviateExecutor
from executors.vocabulary import ToolOperations
from fixtures.authoring.own import SHAPES
from fixtures.datasets.public import PublicQuestion, read_public
from fixtures.public_suite import DATASETS, create_public_collection
from tests.conftest import Stack, run_cli

pytestmark = pytest.mark.integration
NAME = "OwnSplitIris"
IRIS = next(d for d in DATASETS if d.name == "iris")


@pytest.fixture(scope="module")
def own(weaviate_stack: Stack) -> Iterator[Stack]:
    with connect(weaviate_stack.settings) as client:
        if client.collections.exists(NAME):
            client.collections.delete(NAME)
        assert create_public_collection(client, IRIS, NAME) == len(IRIS.rows())
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
    assert any("how_many_different" in q.forms for q in questions) and any("break_down" in q.forms for q in questions)
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
        added = collection.data.insert(dict(IRIS.rows()[0]))
        try:
            with pytest.raises(ConfigError, match="composed on other data"):
                prepare_collections(client, questions, allow_other_data=False)
            prepare_collections(client, questions, allow_other_data=True)
            assert len(stored_rows(client, NAME)) == len(IRIS.rows()) + 1
        finally:
            collection.data.delete_by_id(added)
        with pytest.raises(OwnSplitError, match="no collection named Nowhere"):
            compose_split(client, WeaviateExecutor(client, operations=ToolOperations.COMPOUND), ["Nowhere"])


def _as_answer(question: PublicQuestion) -> FinalAnswer:
    """The key's own values as a committed answer."""
    answer = question.answer or {}
    return FinalAnswer(
        numbers=[n["value"] for n in answer["numbers"]],
        names=list(answer["names"]),
        groups={name: value["value"] for name, value in answer["groups"].items()},
    )
