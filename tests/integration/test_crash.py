"""Crash safety of the vector index, on a private binary-backend stack, through the real CLI.

Weaviate 1.39 killed with -9 can come back with an HNSW graph missing some or all of its nodes
while counts, fetches and filters look whole. Two ways in: a real `kill -9` (what a user meets;
how much it breaks varies from run to run) and an index log removed while the server is stopped
(the same symptom, deterministically). After each, `up` must name and rebuild what broke, and the
oracle must answer exactly as on a clean stack.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from dbgorilla import stack as stack_module
from dbgorilla._process import ProcessRecord, process_start_ticks
from dbgorilla.connection import connect
from dbgorilla.errors import ExitCode
from executors.index_health import check_indexes
from fixtures.use_cases import get_use_case
from tests.conftest import REPO, Stack, fresh_settings, run_cli, settings_env

#: Each test starts binary stacks of its own: the binary backend is tested here whatever the session uses.
pytestmark = pytest.mark.integration

USE_CASE = "visual_art"
COLLECTIONS = [c.name for c in get_use_case(USE_CASE).collections]


@pytest.fixture(scope="module")
def crash_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    settings = fresh_settings(tmp_path_factory.mktemp("crash"))
    env = settings_env(settings)
    assert run_cli("up", "--backend", "binary", env=env).returncode == 0
    loaded = run_cli("load", "--use-case", USE_CASE, "--json", env=env)
    assert loaded.returncode == 0, loaded.stderr
    yield Stack(settings, env, "binary")
    run_cli("down", env=env)


def oracle_results(stack: Stack, out: Path, *, said: str = "") -> dict[str, object]:
    """The oracle's execution results on the use case's questions, by case id (`said`: on stderr)."""
    result = run_cli(
        "eval", "--model", "oracle", "--use-case", USE_CASE, "--limit", "0", "--out", str(out), "--overwrite",
        env=stack.env,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert said in result.stderr
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(records) == 63 and all(r["scores"]["first"]["execution_exact"] for r in records)
    return {r["id"]: r["predicted_calls"][0]["result"] for r in records}


def health(stack: Stack) -> dict[str, tuple[int, int]]:
    with connect(stack.settings) as client:
        return {r.collection: (r.found, r.checked) for r in check_indexes(client, COLLECTIONS)}


def kill_weaviate(stack: Stack) -> None:
    record = ProcessRecord.load(stack.settings.run_dir / "weaviate.json")
    assert record is not None
    os.kill(record.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while process_start_ticks(record.pid) is not None and time.monotonic() < deadline:
        time.sleep(0.1)


@pytest.fixture(scope="module")
def clean_results(crash_stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    assert all(found == checked == 100 for found, checked in health(crash_stack).values())
    return oracle_results(crash_stack, tmp_path_factory.mktemp("clean"))


def test_a_lost_index_log_is_found_and_rebuilt_by_up(
    crash_stack: Stack, clean_results: dict[str, object], tmp_path: Path
) -> None:
    assert run_cli("down", env=crash_stack.env).returncode == 0
    shard_logs = list((crash_stack.settings.weaviate_data_dir / "artworks").glob("*/vectors_default.hnsw.commitlog.d"))
    assert shard_logs, "the HNSW log of Artworks is where this test expects it"
    for log in shard_logs:
        shutil.rmtree(log)
    result = run_cli("up", "--backend", "binary", "--json", env=crash_stack.env)
    assert result.returncode == 0, result.stderr
    assert "incomplete vector index, rebuilding it: Artworks: 0/100" in result.stderr
    rebuilt = json.loads(result.stdout)["index_check"]["rebuilt"]
    assert [r["after"]["collection"] for r in rebuilt] == ["Artworks"]
    assert health(crash_stack)["Artworks"] == (100, 100)
    assert oracle_results(crash_stack, tmp_path) == clean_results


def test_weaviate_killed_after_a_load_comes_back_whole(
    crash_stack: Stack, clean_results: dict[str, object], tmp_path: Path
) -> None:
    kill_weaviate(crash_stack)
    result = run_cli("up", "--backend", "binary", "--json", env=crash_stack.env)
    assert result.returncode == 0, result.stderr
    assert "stale state found" in result.stderr
    rebuilt = {r["after"]["collection"] for r in json.loads(result.stdout)["index_check"]["rebuilt"]}
    for name in rebuilt:  # whatever the crash broke was named on stderr
        assert f"rebuilding it: {name}:" in result.stderr
    assert all(found == checked == 100 for found, checked in health(crash_stack).values())
    assert oracle_results(crash_stack, tmp_path) == clean_results


def break_index_offline(stack: Stack, collection: str) -> None:
    """Stop Weaviate, remove the collection's HNSW log, start it again without the CLI's check."""
    assert run_cli("down", env=stack.env).returncode == 0
    logs = list((stack.settings.weaviate_data_dir / collection.lower()).glob("*/vectors_default.hnsw.commitlog.d"))
    assert logs, f"the HNSW log of {collection} is where this test expects it"
    for log in logs:
        shutil.rmtree(log)
    stack_module.up("binary", stack.settings, echo=lambda _: None)
    assert health(stack)[collection][0] == 0, "the index should be empty now"


def test_load_rebuilds_an_index_it_would_have_left_alone(crash_stack: Stack) -> None:
    break_index_offline(crash_stack, "Artists")
    loaded = run_cli("load", "--use-case", USE_CASE, "--json", env=crash_stack.env)
    assert loaded.returncode == 0, loaded.stderr
    report = {c["collection"]: c for c in json.loads(loaded.stdout)["collections"]}
    assert {name: c["action"] for name, c in report.items()} == {
        "Artworks": "up-to-date", "Artists": "repaired", "Exhibitions": "up-to-date",
    }  # fmt: skip
    assert report["Artists"]["repair"]["before"]["found"] == 0
    assert all(c["index"]["found"] == c["index"]["checked"] == 100 for c in report.values())


def test_eval_rebuilds_before_it_scores(crash_stack: Stack, clean_results: dict[str, object], tmp_path: Path) -> None:
    """`eval` (and so `eval --resume` after a crash) never scores against an incomplete index."""
    break_index_offline(crash_stack, "Exhibitions")
    said = "incomplete vector index, rebuilding it: Exhibitions: 0/100"
    assert oracle_results(crash_stack, tmp_path, said=said) == clean_results
    assert health(crash_stack)["Exhibitions"] == (100, 100)


@contextmanager
def replay_model(delay: float) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """A perfect model served by its own process (killable with -9), answering after `delay` s."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.integration._replay_model", str(delay)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    base_url = process.stdout.readline().strip()
    try:
        yield process, base_url
    finally:
        process.kill()
        process.wait()


def eval_command(out: Path, base_url: str) -> list[str]:
    return [
        "eval", "--model", "mock", "--base-url", base_url, "--use-case", USE_CASE, "--limit", "0",
        "--out", str(out), "--max-retries", "0", "--request-timeout", "10", "--strategy", "react",
    ]  # fmt: skip


def wait_for_records(results: Path, count: int, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if results.exists() and len(results.read_text().splitlines()) >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"{results} did not reach {count} records")


def eval_in_background(stack: Stack, out: Path, base_url: str) -> subprocess.Popen[str]:
    """`dbgorilla eval` started in its own process, returned once five records are written."""
    run = subprocess.Popen(
        [sys.executable, "-m", "dbgorilla", *eval_command(out, base_url)],
        env=stack.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    wait_for_records(out / "results.jsonl", 5)
    return run


def results_by_id(out: Path) -> tuple[list[str], dict[str, object]]:
    """(every id in file order, the first call's result by id) of a finished run."""
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert all(r["outcome"] == "ok" and r["scores"]["final"]["execution_exact"] for r in records)
    return [r["id"] for r in records], {r["id"]: r["predicted_calls"][0]["result"] for r in records}


def test_the_eval_killed_mid_write_resumes_with_every_case_once(
    crash_stack: Stack, clean_results: dict[str, object], tmp_path: Path
) -> None:
    results = tmp_path / "results.jsonl"
    with replay_model(0.2) as (_model, base_url):
        run = eval_in_background(crash_stack, tmp_path, base_url)
        run.send_signal(signal.SIGKILL)
        run.wait()
        done = len(results.read_text().splitlines())
        assert 5 <= done < 63
        with results.open("a") as torn:  # a write cut off by the kill
            torn.write('{"id": "visual_art-5')
        resumed = run_cli(*eval_command(tmp_path, base_url), "--resume", env=crash_stack.env)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{63 - done} cases to run ({done} already done)" in resumed.stderr
    ids, by_id = results_by_id(tmp_path)
    assert len(ids) == len(set(ids)) == 63, "no case lost or duplicated"
    assert by_id == clean_results


def test_the_model_server_killed_during_an_eval_is_retried_on_resume(
    crash_stack: Stack, clean_results: dict[str, object], tmp_path: Path
) -> None:
    results = tmp_path / "results.jsonl"
    with replay_model(0.2) as (model, base_url):
        run = eval_in_background(crash_stack, tmp_path, base_url)
        model.send_signal(signal.SIGKILL)
        _, stderr = run.communicate(timeout=300)
    # The run stops once the last 3 cases failed on the dead server: exit 11, not a run of zeros.
    assert run.returncode == ExitCode.INFRASTRUCTURE, stderr
    assert "failed on the infrastructure" in stderr and "--resume" in stderr, stderr
    first = [json.loads(line) for line in results.read_text().splitlines()]
    failed = [r for r in first if r["outcome"] != "ok"]
    assert len(failed) == 3 and len(first) < 63, "it stops after 3 failures in a row"
    assert {r["outcome"] for r in failed} == {"model_error"}
    with replay_model(0.0) as (_model, base_url):
        resumed = run_cli(*eval_command(tmp_path, base_url), "--resume", env=crash_stack.env)
    assert resumed.returncode == 0, resumed.stderr
    done = len(first) - len(failed)
    assert f"{63 - done} cases to run ({done} already done)" in resumed.stderr
    ids, by_id = results_by_id(tmp_path)
    assert len(ids) == len(set(ids)) == 63
    assert by_id == clean_results


#: Big enough that a load is still sending when it is caught mid-way, on a fast machine too (1,200
#: objects once loaded in 5.4 s, before a fixed 6 s wait ran out).
MIDWAY_PER_COLLECTION = 1500


def count_of(client: Any, name: str) -> int:
    """Objects in a collection, 0 while the load has it deleted or half-created."""
    try:
        return int(client.collections.get(name).aggregate.over_all(total_count=True).total_count or 0)
    except Exception:  # the load recreates collections under us
        return 0


def load_caught_midway(stack: Stack, **popen: object) -> subprocess.Popen[str]:
    """Start `load --objects-per-collection 1500` and return once it has written new objects (more than
    the 300 the stack holds) while still running: the moment to kill a server under it."""
    load = [sys.executable, "-m", "dbgorilla", "load", "--use-case", USE_CASE, "--objects-per-collection",
            str(MIDWAY_PER_COLLECTION), "--json"]  # fmt: skip
    run = subprocess.Popen(load, env=stack.env, text=True, **popen)  # type: ignore[call-overload]
    deadline = time.monotonic() + 120
    with connect(stack.settings) as client:
        while time.monotonic() < deadline and run.poll() is None:
            if sum(count_of(client, name) for name in COLLECTIONS) > 3 * 100:
                break
            time.sleep(0.2)
    assert run.poll() is None, "the load finished (or failed) before it could be caught mid-way"
    return run


def test_weaviate_killed_during_a_load_then_load_completes(crash_stack: Stack) -> None:
    env = crash_stack.env
    run = load_caught_midway(crash_stack, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    kill_weaviate(crash_stack)
    assert run.wait(timeout=300) != 0, "a load whose server died must not report success"
    assert run_cli("up", "--backend", "binary", env=env).returncode == 0
    again = run_cli("load", "--use-case", USE_CASE, "--objects-per-collection", "400", "--json", env=env)
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert all(c["count"] == 400 and c["index"]["found"] == c["index"]["checked"] == 400 for c in report["collections"])
    back = run_cli("load", "--use-case", USE_CASE, "--json", env=env)  # the default size again, for the next tests
    assert back.returncode == 0 and all(c["count"] == 100 for c in json.loads(back.stdout)["collections"])


def test_the_embedder_killed_during_a_load_is_reported_then_load_completes(crash_stack: Stack) -> None:
    env = crash_stack.env
    embedder = ProcessRecord.load(crash_stack.settings.run_dir / "embedder.json")
    assert embedder is not None
    run = load_caught_midway(crash_stack, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.kill(embedder.pid, signal.SIGKILL)
    stdout, stderr = run.communicate(timeout=600)
    assert run.returncode != 0, "objects the vectorizer could not embed must fail the load"
    report = json.loads(stdout)
    assert not report["ok"] and any(c["failed"] for c in report["collections"])
    assert "failed" in stderr
    assert "Failed to send" not in stderr, "the client's raw batch log is not shown; the failures are, one per line"
    assert run_cli("up", "--backend", "binary", env=env).returncode == 0
    again = run_cli("load", "--use-case", USE_CASE, "--objects-per-collection", "400", "--json", env=env)
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert all(c["count"] == 400 and c["index"]["found"] == c["index"]["checked"] == 400 for c in report["collections"])
    back = run_cli("load", "--use-case", USE_CASE, "--json", env=env)
    assert back.returncode == 0 and all(c["count"] == 100 for c in json.loads(back.stdout)["collections"])


def test_a_door_open_across_a_restart_answers_its_first_call(crash_stack: Stack) -> None:
    """A long-running door's executor (the MCP server's, `serve`'s) keeps its client while Weaviate is killed
    and started again: its first call after the restart succeeds (on a fresh connection, once, if the old
    one broke: `WeaviateExecutor._again`) and gives what it gave before."""
    from executors import WeaviateExecutor, compare_results

    call = {
        "collection_name": "Artworks",
        "boolean_property_filter": {"property_name": "onDisplay", "operator": "=", "value": True},
    }
    with connect(crash_stack.settings) as client:
        executor = WeaviateExecutor(client)
        before = executor.execute(call)
        kill_weaviate(crash_stack)
        assert run_cli("up", "--backend", "binary", env=crash_stack.env).returncode == 0
        after = executor.execute(call)  # the first call after the restart
        assert compare_results(before, after) == []
