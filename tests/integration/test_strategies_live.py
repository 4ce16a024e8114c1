"""Agent strategies on a live Weaviate: the query memory (marked, seeded, near_text, cross-domain,
never writing into a collection without its marker) and `ablate --strategies` through the real CLI,
where the oracle passes under every strategy and the run records which strategy ran and how."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from weaviate.classes.config import Configure, DataType, Property

from agent.strategies.examples import DEFAULT_K
from evaluation.strategies import MemoryRetriever
from executors.ownership import NotOurCollection, marker_of
from fixtures.datasets import load_split
from fixtures.examples import EXAMPLES_COLLECTION, ExampleMemory, StoredExample, seed_examples
from tests.conftest import Stack, run_cli

pytestmark = pytest.mark.integration
RESTAURANTS = [r for r in load_split() if r.use_case == "restaurants"]


def test_the_memory_is_marked_seeded_once_and_cross_domain(client: Any) -> None:
    memory = ExampleMemory(client, "Mem")
    assert memory.ensure_seeded() == len(seed_examples()) > 300
    assert memory.ensure_seeded() == 0, "seeding again writes nothing"
    collection = client.collections.use(memory.name)
    assert memory.name == f"Mem_{EXAMPLES_COLLECTION}"
    assert marker_of(collection.config.get().description) == "examples"
    assert collection.aggregate.over_all(total_count=True).total_count == len(seed_examples())
    question = RESTAURANTS[0].query
    own = memory.nearest(question, 4)
    assert own[0].question == question and own[0].source == f"natural/{RESTAURANTS[0].id}"
    other = MemoryRetriever(memory, exclude_use_case="restaurants").nearest(question, 4)
    assert len(other) == 4 and all(e.use_case != "restaurants" for e in other)
    assert all(e.distance is not None and e.distance >= own[0].distance for e in other)
    memory.add([StoredExample("Which galaxies host the most pulsars?", {"collection_name": "Stars"}, "space")])
    [mine] = memory.nearest("Which galaxies host the most pulsars?", 1)
    assert mine.arguments == {"collection_name": "Stars"} and mine.source == "user"


def test_by_form_other_databases_examples_have_the_questions_shape_more_often_than_by_meaning(client: Any) -> None:
    """Across databases the words in common are the question's form; its examples' calls share its shape
    (the same fields) more often than the examples `near_text` finds on the same topic."""
    by_form, by_meaning = ExampleMemory(client, "Mem"), ExampleMemory(client, "Mem", match="meaning")
    by_form.ensure_seeded()

    def same_shape(memory: ExampleMemory) -> int:
        hits = 0
        for case in RESTAURANTS[:20]:
            shape = set(case.ground_truth.to_tool_arguments()) - {"collection_name"}
            [nearest] = memory.nearest(case.query, 1, exclude_use_case="restaurants")
            assert nearest.use_case != "restaurants"
            hits += set(nearest.arguments) - {"collection_name"} == shape
        return hits

    form, meaning = same_shape(by_form), same_shape(by_meaning)
    assert form > meaning and form >= 15, (form, meaning)


def test_the_memory_never_writes_into_a_collection_without_its_marker(client: Any) -> None:
    name = f"Theirs_{EXAMPLES_COLLECTION}"
    client.collections.delete(name)
    client.collections.create(
        name,
        description="a user's own notes",
        vector_config=Configure.Vectors.self_provided(),
        properties=[Property(name="question", data_type=DataType.TEXT)],
    )
    client.collections.use(name).data.insert({"question": "mine"}, vector=[0.1, 0.2])
    memory = ExampleMemory(client, "Theirs")
    for attempt in (memory.ensure_seeded, lambda: memory.add(seed_examples()[:1]), lambda: memory.nearest("q", 2)):
        with pytest.raises(NotOurCollection, match="not created by dbgorilla-live"):
            attempt()
    collection = client.collections.use(name)
    assert collection.config.get().description == "a user's own notes"
    assert collection.aggregate.over_all(total_count=True).total_count == 1


def test_the_oracle_passes_under_every_strategy(restaurants_stack: Stack, tmp_path: Path) -> None:
    args = ["ablate", "--strategies", "examples,grounded,decompose,examples+decompose+grounded", "--model", "oracle"]
    args += ["--use-case", "restaurants", "--limit", "6", "--out", str(tmp_path)]
    result = run_cli(*args, env=restaurants_stack.env)
    assert result.returncode == 0, result.stderr
    table = json.loads((tmp_path / "strategies.json").read_text())
    rows = {(row["strategy"], row["kind"]): row for row in table["rows"]}
    assert {s for s, _ in rows} == {"react", "examples", "grounded", "decompose", "examples+decompose+grounded"}
    for key, row in rows.items():
        assert row["passed"]["rate"] == 1.0, key
        if key[0] != "react":
            assert row["baseline"] == "react" and row["versus_baseline"]["only_a_passed"] == 0, key
    assert "| examples+decompose+grounded | single-step |" in (tmp_path / "strategies.md").read_text()
    run = json.loads((tmp_path / "examples" / "run.json").read_text())
    assert run["strategy"] == "examples" and run["strategy_setup"]["examples"]["cross_domain"] is True
    records = [
        json.loads(line)
        for line in (tmp_path / "examples+decompose+grounded" / "results.jsonl").read_text().splitlines()
    ]
    assert {r["strategy"] for r in records} == {"examples+decompose+grounded"}
    assert all(r["strategy_notes"]["decompose"]["decisions"]["kind"] for r in records)
    shown = [(r["use_case"], e) for r in records for e in r["strategy_notes"]["examples"]]
    assert len(shown) == DEFAULT_K * len(records) and all(e["use_case"] != own for own, e in shown), "cross-domain"
    added = run_cli("examples", "add", "--from-run", str(tmp_path / "react"), env=restaurants_stack.env)
    assert added.returncode == 0 and "added 6 example(s)" in added.stderr, added.stderr
    listed = run_cli("examples", "list", "--json", env=restaurants_stack.env)
    sources = [json.loads(line)["source"] for line in listed.stdout.splitlines()]
    assert sum(s.startswith(f"run/{tmp_path.name}/") for s in sources) == 0  # the run dir is tmp_path/react
    assert sum(s.startswith("run/react/") for s in sources) == 6


def test_the_oracle_passes_multi_step_questions_under_plan(restaurants_stack: Stack, tmp_path: Path) -> None:
    args = ["ablate", "--strategies", "plan,plan+grounded", "--model", "oracle", "--dataset", "multistep"]
    args += ["--use-case", "restaurants", "--limit", "4", "--out", str(tmp_path)]
    result = run_cli(*args, env=restaurants_stack.env)
    assert result.returncode == 0, result.stderr
    rows = {
        (row["strategy"], row["kind"]): row for row in json.loads((tmp_path / "strategies.json").read_text())["rows"]
    }
    assert ("plan", "multi-step") in rows
    for key, row in rows.items():
        assert row["passed"]["rate"] == 1.0, key
    records = [json.loads(line) for line in (tmp_path / "plan" / "results.jsonl").read_text().splitlines()]
    chains = [r for r in records if len(r["chain"]) > 1]
    assert chains and all(len(r["strategy_notes"]["plan"]["filled"]) == len(r["chain"]) for r in chains)
