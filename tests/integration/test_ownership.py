"""Collections the project did not create are never touched, and its datasets never collide.

A user's `Instructors` (the name of a collection of the `courses` use case), made with
weaviate-client as a user would, with its own vectors, must come out of `load`, `up`, `eval`,
`audit-dataset`, `ask`, `drop` and `score` exactly as it went in, each command refusing with
exit 12 and the way out; a namespace puts ours beside it, and `load --replace` replaces it. The
paper's format (`Restaurants`, `Menus`) and the `restaurants` use case load side by side and
score the same together as alone.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from weaviate.classes.config import Configure, DataType, Property

from agent.tooldef import ToolDesign, build_tools
from dbgorilla.errors import ExitCode
from executors import WeaviateExecutor
from executors.ownership import marker_of
from fixtures.datasets import PAPER_EXAMPLE_PATH
from fixtures.use_cases import get_use_case
from tests.conftest import Stack, run_cli

pytestmark = pytest.mark.integration

FOREIGN = "Instructors"
USER_OBJECTS = [
    ("0b7a3c1e-1d5b-4f7e-9a51-6a2f0c1d0001", {"fullName": "Ada Byron", "salary": 91000.0}, [0.9, 0.1, 0.0, 0.2]),
    ("0b7a3c1e-1d5b-4f7e-9a51-6a2f0c1d0002", {"fullName": "Alan Turing", "salary": 88000.0}, [0.1, 0.8, 0.3, 0.0]),
    ("0b7a3c1e-1d5b-4f7e-9a51-6a2f0c1d0003", {"fullName": "Grace Hopper", "salary": 95000.0}, [0.0, 0.2, 0.9, 0.4]),
]
COURSES = [c.name for c in get_use_case("courses").collections]


def create_user_collection(client: Any) -> None:
    """What a user would write: their own properties, their own vectors, a description of theirs."""
    collection = client.collections.create(
        FOREIGN,
        description="Instructors at my school",
        vector_config=Configure.Vectors.self_provided(),
        properties=[
            Property(name="fullName", data_type=DataType.TEXT),
            Property(name="salary", data_type=DataType.NUMBER),
        ],
    )
    with collection.batch.fixed_size(batch_size=10) as batch:
        for uid, properties, vector in USER_OBJECTS:
            batch.add_object(properties=properties, uuid=uid, vector=vector)
    assert not collection.batch.failed_objects


def snapshot(client: Any, name: str) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any], Any]]]:
    """Schema, objects and vectors: what must not change."""
    config = client.collections.export_config(name).to_dict()
    objects = [
        (str(o.uuid), dict(o.properties), o.vector) for o in client.collections.use(name).iterator(include_vector=True)
    ]
    return config, sorted(objects, key=lambda item: item[0])


def delete_all(client: Any, names: list[str]) -> None:
    """Test set-up on the private test Weaviate only."""
    for name in names:
        if client.collections.exists(name):
            client.collections.delete(name)


def refused(result: Any, *collections: str) -> None:
    assert result.returncode == 12, (result.returncode, result.stdout[-500:], result.stderr[-2000:])
    message = " ".join(result.stderr.split())
    for name in collections:
        assert name in message, message
    assert "--namespace" in message and f"--replace {collections[0]}" in message, message


def test_a_collection_of_a_user_survives_every_command(weaviate_stack: Stack, client: Any, tmp_path: Path) -> None:
    env = weaviate_stack.env
    ours = COURSES + [f"Bench_{name}" for name in COURSES]
    delete_all(client, ours)
    create_user_collection(client)
    before = snapshot(client, FOREIGN)
    try:
        load = run_cli("load", "--use-case", "courses", "--objects-per-collection", "5", env=env)
        refused(load, FOREIGN)
        assert "not created by dbgorilla-live" in load.stderr and "3 objects" in load.stderr
        assert not client.collections.exists("Courses"), "nothing is written before every target is checked"

        if weaviate_stack.backend == "binary":
            up = run_cli("up", "--backend", "binary", env=env)
        else:  # pytest-docker started it, not `dbgorilla up`: `up` meets it as a Weaviate at a URL
            url = weaviate_stack.settings.weaviate_http_url
            grpc = str(weaviate_stack.settings.ports.weaviate_grpc)  # not the default 50051: another stack's
            up_env = {**env, "DBGORILLA_STATE": str(tmp_path / "url"), "WEAVIATE_URL": url, "WEAVIATE_GRPC_PORT": grpc}
            up = run_cli("up", "--backend", "url", env=up_env)
        assert up.returncode == 0, up.stderr
        assert f"note: {FOREIGN} (3 objects) was not created by dbgorilla-live" in " ".join(up.stderr.split())

        out = tmp_path / "refused"
        refused(
            run_cli("eval", "--model", "oracle", "--use-case", "courses", "--limit", "2", "--out", str(out), env=env),
            FOREIGN,
        )
        refused(run_cli("audit-dataset", env=env), FOREIGN)
        asked = run_cli(
            "ask", "Who earns most?", "--use-case", "courses", "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
            env=env,
        )  # fmt: skip
        refused(asked, FOREIGN)
        dropped = run_cli("drop", "--use-case", "courses", env=env)
        assert dropped.returncode == 12 and "Nothing was dropped" in dropped.stderr, dropped.stderr
        assert snapshot(client, FOREIGN) == before

        # a namespace puts ours beside theirs: eval loads the use case on first use and scores the oracle fully
        run = tmp_path / "bench"
        args = ("eval", "--model", "oracle", "--use-case", "courses", "--limit", "3", "--json", "--out", str(run))
        evaluated = run_cli(*args, "--namespace", "bench", env=env)
        assert evaluated.returncode == 0, evaluated.stderr
        summary = json.loads(evaluated.stdout)
        assert summary["protocols"]["final"]["execution_match_exact"] == 1.0 and summary["ground_truth_errors"] == 0
        assert marker_of(client.collections.use("Bench_Instructors").config.get().description) == "usecase/courses"
        predictions = str(run / "results.jsonl")
        refused(run_cli("score", "--predictions", predictions, "--execute", env=env), FOREIGN)
        scored = run_cli(
            "score", "--predictions", predictions, "--execute", "--json", env=env | {"DBGORILLA_NAMESPACE": "Bench"}
        )
        assert scored.returncode == 0, scored.stderr
        assert json.loads(scored.stdout)["protocols"]["final"]["execution_match_exact"] == 1.0
        assert snapshot(client, FOREIGN) == before

        unknown = run_cli("load", "--use-case", "courses", "--replace", "Instructor", env=env)
        assert unknown.returncode == 2 and "Instructor" in unknown.stderr
        assert snapshot(client, FOREIGN) == before

        # the explicit way out: --replace names what it deletes, and says so
        args = ("load", "--use-case", "courses", "--objects-per-collection", "5", "--json")
        replaced = run_cli(*args, "--replace", FOREIGN, env=env)
        assert replaced.returncode == 0, replaced.stderr
        assert f"replaced {FOREIGN}: deleted as --replace asked: {FOREIGN} (3 objects) was not created" in " ".join(
            replaced.stderr.split()
        )
        actions = {c["collection"]: c["action"] for c in json.loads(replaced.stdout)["collections"]}
        assert actions == {"Courses": "created", FOREIGN: "replaced", "Enrollments": "created"}
        config = client.collections.use(FOREIGN).config.get()
        assert marker_of(config.description) == "usecase/courses" and len(client.collections.use(FOREIGN)) == 5
        again = run_cli(*args, env=env)  # ours now: an ordinary idempotent load
        assert again.returncode == 0 and {c["action"] for c in json.loads(again.stdout)["collections"]} == {
            "up-to-date"
        }
    finally:
        delete_all(client, ours)


def paper_predictions(path: Path) -> Path:
    """A DBGorilla result file for the example's records: half the ground truth, half a bare listing."""
    records = json.loads(PAPER_EXAMPLE_PATH.read_text())
    results = []
    for index, record in enumerate(records):
        truth = dict(record["query"])
        predicted = truth if index % 2 == 0 else {"target_collection": truth["target_collection"]}
        results.append(
            {
                "query_index": index,
                "natural_language_query": truth["corresponding_natural_language_query"],
                "ground_truth_query": {**truth, "database_schema": record["database_schema"]},
                "predicted_query": predicted,
                "ast_score": 0.0,
                "error": None,
            }
        )
    path.write_text(json.dumps({"model_name": "example", "detailed_results": results}))
    return path


def scores(env: dict[str, str], predictions: Path) -> dict[str, Any]:
    result = run_cli("score", "--predictions", str(predictions), "--execute", "--json", env=env)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    return {"ground_truth_errors": summary["ground_truth_errors"], "protocols": summary["protocols"]}


def test_the_paper_set_and_the_use_cases_load_side_by_side(weaviate_stack: Stack, client: Any, tmp_path: Path) -> None:
    env = weaviate_stack.env
    paper, restaurants = ["--dataset", str(PAPER_EXAMPLE_PATH)], ["--use-case", "restaurants"]
    assert run_cli("drop", *paper, *restaurants, env=env).returncode == 0
    # Not loaded: scoring against it runs no ground truth, and says so instead of printing zeros.
    unloaded = run_cli("score", "--predictions", str(paper_predictions(tmp_path / "early.json")), "--execute", env=env)
    assert unloaded.returncode == ExitCode.CONFIG and "no ground truth of the" in unloaded.stderr, unloaded.stderr
    try:
        loaded = run_cli("load", *paper, "--objects-per-collection", "30", env=env)
        assert loaded.returncode == 0, loaded.stderr
        predictions = paper_predictions(tmp_path / "paper.json")
        paper_alone = scores(env, predictions)
        # six records are mislabeled; the rest run, on the paper's own Restaurants and Menus
        assert (
            paper_alone["ground_truth_errors"] < 10 and paper_alone["protocols"]["first"]["execution_match_exact"] > 0
        )

        loaded = run_cli("load", *restaurants, "--objects-per-collection", "30", env=env)
        assert loaded.returncode == 0, loaded.stderr
        assert {"Restaurants", "Paper_Restaurants", "MenuItems", "Paper_Menus"} <= set(client.collections.list_all())
        run = tmp_path / "oracle"
        evaluated = run_cli("eval", "--model", "oracle", *restaurants, "--limit", "4", "--out", str(run), env=env)
        assert evaluated.returncode == 0, evaluated.stderr
        assert scores(env, predictions) == paper_alone
        restaurants_together = scores(env, run / "results.jsonl")
        assert restaurants_together["protocols"]["final"]["execution_match_exact"] == 1.0

        # the model sees the logical names and the descriptions as written, never the marker
        executor = WeaviateExecutor(client, names=get_use_case("restaurants").names())
        paper_executor = WeaviateExecutor(client, names=executor.names.for_dataset("paper/paper_example.json"))
        for shown in (executor.schema.only(["Restaurants"]), paper_executor.schema.only(["Restaurants", "Menus"])):
            description = build_tools(shown, ToolDesign()).description
            assert "Restaurants" in description and "dbgorilla-live" not in description
            assert "Paper_" not in description
        assert paper_executor.schema.get("Restaurants") != executor.schema.get("Restaurants")

        assert run_cli("drop", *paper, env=env).returncode == 0
        assert scores(env, run / "results.jsonl") == restaurants_together
    finally:
        run_cli("drop", *paper, *restaurants, env=env)
