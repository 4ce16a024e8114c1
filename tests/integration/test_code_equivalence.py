"""The query as code, run: for every gold call of every split, the program a result shows runs in a
fresh interpreter against the live Weaviate and its calls return what the executor's calls returned.

One subprocess per split executes every program of the split as written (`_run_snippets.py`: the
connection is opened once and shared) and hands back each call's response as JSON. The test turns
those responses into a `QueryResult` with the executor's own assembly (the Python post-processing
the programs describe in comments) and compares it with the executor's result, exactly
(`compare_results`). Multi-step gold chains run with their picked values resolved; the related split
runs the related tool over the linked data. A split of abstention questions has no gold call.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from dbgorilla.connection import connect
from executors import QueryResult, WeaviateExecutor, compare_results
from executors._assemble import assemble_result
from fixtures.datasets.cases import operations_needed
from fixtures.datasets.chains import run_chain
from fixtures.datasets.splits import SPLITS_DIR, read_split, use_case_splits
from fixtures.loader import load_use_cases
from tests.conftest import Stack

pytestmark = pytest.mark.integration
RUNNER = Path(__file__).with_name("_run_snippets.py")
SPLITS = use_case_splits()  # the splits labelled on our use cases' data (not the public split)


@pytest.fixture(scope="module")
def loaded(weaviate_stack: Stack) -> Stack:
    with connect(weaviate_stack.settings) as client:
        assert load_use_cases(client, "all").ok  # idempotent: the default data every split is labelled on
    return weaviate_stack


def gold_calls(executor: WeaviateExecutor, split: str) -> list[tuple[dict[str, Any], QueryResult]]:
    """Every gold call of the split with the executor's result: a case's ground truth and accepted
    alternatives, or its whole chain (later steps resolved with the values earlier ones picked)."""
    cases, _ = read_split(SPLITS_DIR / f"{split}.jsonl")
    made: list[tuple[dict[str, Any], QueryResult]] = []

    def execute(arguments: dict[str, Any]) -> QueryResult:
        result = executor.execute(arguments)
        made.append((arguments, result))
        return result

    for case in cases:
        if case.chain:  # its first step is the ground truth
            assert run_chain(case.chain, execute).ok, case.id
        for arguments in case.alternatives if case.chain else case.accepted:
            execute(arguments.to_tool_arguments())
    return made


def as_namespace(value: Any) -> Any:
    if isinstance(value, dict):
        return SimpleNamespace(**{key: as_namespace(item) for key, item in value.items()})
    if isinstance(value, list):
        return [as_namespace(item) for item in value]
    return value


def responses_of(dumped: dict[str, Any]) -> dict[str, Any]:
    """Each purpose's response as the executor's assembly reads it."""
    out: dict[str, Any] = {}
    for purpose, response in dumped.items():
        if response is None or "objects" not in response:
            out[purpose] = None if response is None else _aggregate(response)
            continue
        objects = [
            SimpleNamespace(
                uuid=obj["uuid"],
                properties=obj["properties"],
                metadata=SimpleNamespace(**obj["metadata"]),
                references={
                    k: SimpleNamespace(objects=[SimpleNamespace(uuid=u) for u in v])
                    for k, v in obj["references"].items()
                },
            )
            for obj in response["objects"]
        ]
        out[purpose] = SimpleNamespace(objects=objects)
    return out


def _metrics(properties: dict[str, Any]) -> dict[str, Any]:
    return {name: as_namespace(metrics) for name, metrics in properties.items()}


def _aggregate(response: dict[str, Any]) -> Any:
    if "groups" in response:
        groups = [
            SimpleNamespace(
                grouped_by=SimpleNamespace(value=g["grouped_by"]["value"]),
                total_count=g["total_count"],
                properties=_metrics(g["properties"]),
            )
            for g in response["groups"]
        ]
        return SimpleNamespace(groups=groups)
    return SimpleNamespace(total_count=response["total_count"], properties=_metrics(response["properties"]))


@pytest.mark.parametrize("split", SPLITS)
def test_every_gold_call_runs_as_shown_code_with_the_executors_results(
    loaded: Stack, split: str, tmp_path: Path
) -> None:
    cases, abstentions = read_split(SPLITS_DIR / f"{split}.jsonl")
    if not cases:  # said, not skipped: such a split has nothing for a program to run
        assert abstentions, split
        print(f"\n{split}: {len(abstentions)} abstention questions, no gold calls")
        return
    started = time.perf_counter()
    settings = loaded.settings
    operations = operations_needed(cases)
    with connect(settings) as client:
        executor = WeaviateExecutor(client, operations=operations)
        made = gold_calls(executor, split)
        programs = [result.program() for _, result in made]
        assert all(programs), "every live result has a program"
        source = tmp_path / "programs.json"
        source.write_text(json.dumps(programs))
        host, ports = settings.host, settings.ports
        command = [sys.executable, str(RUNNER), str(source), host, str(ports.weaviate_http), str(ports.weaviate_grpc)]
        ran = subprocess.run(command, capture_output=True, text=True, timeout=600)
        assert ran.returncode == 0, ran.stderr[-3000:]
        shown = json.loads(ran.stdout)
        assert len(shown) == len(made)
        equal = 0
        for (arguments, result), program, run in zip(made, programs, shown, strict=True):
            assert run["connection"] == {"host": host, "port": ports.weaviate_http, "grpc_port": ports.weaviate_grpc}
            assert run["printed"].strip(), program
            assert set(run["responses"]) == {call.purpose for call in executor.plan(arguments).calls}, program
            from_code = assemble_result(executor.plan(arguments), responses_of(run["responses"]))
            assert compare_results(result, from_code) == [], (arguments, program)
            assert [o.uuid for o in from_code.objects] == [o.uuid for o in result.objects], arguments
            equal += 1
    print(
        f"\n{split}: {equal} of {len(made)} gold calls run as shown code, results equal ({time.perf_counter() - started:.1f} s)"
    )
    assert equal == len(made) > 0
