"""Three Weaviate nodes on loopback as one cluster (`up --backend cluster`), for real.

A replicated load, the oracle at 100% through any node's URL, a node killed with -9 in the middle
of an eval (reads go on at QUORUM; at ALL they fail, and the run counts them), and the node coming
back and catching up on what was written while it was down.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from agent.testing import MockOpenAIServer, Reply, call, text
from dbgorilla._process import wait_until
from dbgorilla.cluster import ClusterNode, cluster_members, node_settings
from dbgorilla.config import Settings
from dbgorilla.connection import connect
from dbgorilla.errors import ExitCode
from evaluation.records import EvalRecord, Outcome
from fixtures.datasets import load_split
from tests.conftest import cluster_ports, run_cli, settings_env

pytestmark = [pytest.mark.integration, pytest.mark.slow]
USE_CASE = "restaurants"
CASES = [r for r in load_split() if r.use_case == USE_CASE]
TRUTH_BY_QUERY = {r.query: r.ground_truth.to_tool_arguments() for r in CASES}


@dataclass
class Cluster:
    settings: Settings
    env: dict[str, str]

    def node(self, index: int) -> ClusterNode:
        return ClusterNode(self.settings, index)

    def node_env(self, index: int) -> dict[str, str]:
        """`WEAVIATE_URL` at node `index`, as a user of a remote cluster would set it."""
        ports = node_settings(self.settings, index).ports
        return self.env | {
            "WEAVIATE_URL": f"http://127.0.0.1:{ports.weaviate_http}",
            "WEAVIATE_GRPC_PORT": str(ports.weaviate_grpc),
        }


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    settings = Settings(state_dir=tmp_path_factory.mktemp("cluster"), ports=cluster_ports())
    env = settings_env(settings)
    up = run_cli("up", "--backend", "cluster", "--json", env=env, timeout=300)
    assert up.returncode == 0, up.stderr
    try:
        load = run_cli("load", "--use-case", USE_CASE, "--replication-factor", "3", "--json", env=env, timeout=300)
        assert load.returncode == 0, load.stderr
        yield Cluster(settings, env)
    finally:
        run_cli("down", env=env)


def oracle_script(kill: ClusterNode | None = None, at: int = 8):  # type: ignore[no-untyped-def]
    """The ground-truth call, then an answer; optionally kill a node with -9 at request `at`."""

    def script(body: dict[str, Any], index: int) -> Reply:
        if kill is not None and index == at:
            record = kill.record()
            assert record is not None
            os.kill(record.pid, signal.SIGKILL)
        question = next(m["content"] for m in body["messages"] if m["role"] == "user")
        if any(m["role"] == "tool" for m in body["messages"]):
            return text("answer")
        return call("query_database", TRUTH_BY_QUERY[question])

    return script


def records_of(out: Path) -> list[EvalRecord]:
    return [EvalRecord.model_validate_json(line) for line in (out / "results.jsonl").read_text().splitlines()]


def object_ids(url: str, collection: str) -> list[str]:
    body = httpx.get(f"{url}/v1/objects", params={"class": collection, "limit": 1000}, timeout=10).json()
    return [obj["id"] for obj in body["objects"]]


def missing_on(url: str, node: str, collection: str, ids: list[str]) -> int:
    """How many of `ids` node `node`'s own replica lacks (`node_name` asks that node alone)."""
    with httpx.Client(timeout=10) as http:
        return sum(
            http.get(f"{url}/v1/objects/{collection}/{uuid}", params={"node_name": node}).status_code != 200
            for uuid in ids
        )


def test_three_nodes_form_one_cluster_with_replicated_shards(cluster: Cluster) -> None:
    status = run_cli("status", "--json", env=cluster.env)
    assert status.returncode == 0, status.stdout
    body = json.loads(status.stdout)
    assert body["backend"] == "cluster"
    states = [body["weaviate"]["state"], *(s["state"] for s in body["services"])]
    assert states == ["running"] * 4  # node 1, the embedder, nodes 2 and 3
    for index in range(3):
        members = cluster_members(cluster.node(index).url)
        assert members == {f"dbgorilla-node{i}": "HEALTHY" for i in (1, 2, 3)}
    collection = CASES[0].ground_truth.collection_name
    config = httpx.get(f"{cluster.node(1).url}/v1/schema/{collection}", timeout=10).json()
    assert config["replicationConfig"]["factor"] == 3
    assert config["shardingConfig"]["desiredCount"] == 3
    ids = object_ids(cluster.node(0).url, collection)
    assert len(ids) == 100
    for index in range(3):  # every node holds all 100
        assert missing_on(cluster.node(0).url, f"dbgorilla-node{index + 1}", collection, ids) == 0


def test_the_oracle_scores_100_percent_through_any_node(cluster: Cluster, tmp_path: Path) -> None:
    for index in (0, 2):
        out = tmp_path / f"node{index}"
        args = ["eval", "--model", "oracle", "--use-case", USE_CASE, "--limit", "0", "--out", str(out), "--json"]
        result = run_cli(*args, env=cluster.node_env(index))
        assert result.returncode == 0, result.stderr
        summary = json.loads(result.stdout)
        assert summary["cases"] == 63 and summary["outcomes"] == {"ok": 63}
        assert summary["protocols"]["final"]["execution_match_exact"] == 1.0


def test_a_node_killed_mid_eval_loses_no_case_and_catches_up(cluster: Cluster, tmp_path: Path) -> None:
    victim = cluster.node(2)
    args = ["eval", "--model", "mock", "--use-case", USE_CASE, "--limit", "20", "--json", "--strategy", "react"]
    env = cluster.env | {"DBGORILLA_CONSISTENCY_LEVEL": "QUORUM"}
    with MockOpenAIServer(oracle_script(kill=victim)) as server:
        quorum = run_cli(*args, "--out", str(tmp_path / "quorum"), "--base-url", server.base_url, env=env)
    assert quorum.returncode == 0, quorum.stderr
    assert victim.status().state == "stale", "the node was killed during the run"
    status = run_cli("status", "--json", env=cluster.env)
    assert status.returncode == ExitCode.STALE, status.stdout  # one node of three is enough to say so
    records = records_of(tmp_path / "quorum")
    assert len(records) == 20 and len({r.id for r in records}) == 20, "no case lost or run twice"
    failed = [r for r in records if not (r.outcome is Outcome.OK and r.scores.final.execution_exact)]
    outcomes = json.loads(quorum.stdout)["outcomes"]
    # every outcome is counted; a read caught by the death may also leave an ok call unscored or unmatched
    ok = sum(r.outcome is Outcome.OK for r in records)
    assert sum(outcomes.values()) == 20 and outcomes.get("ok", 0) == ok, "failures are counted"
    # Two replicas of three answer a QUORUM read. A read caught while the cluster notices the death can
    # wait out its timeout (seen once by hand: an aggregate, 60 s); the rest go on.
    assert len(failed) <= 2, [(r.id, r.outcome, r.error) for r in failed]

    # Written while the node is down (at QUORUM), once the others have noticed, then the node comes
    # back and catches up. (Right after the kill a first aggregate can wait out its 60 s timeout.)
    def noticed() -> bool:
        members = cluster_members(cluster.node(0).url)  # empty while /v1/nodes itself waits on the dead node
        return bool(members) and members.get("dbgorilla-node3") != "HEALTHY"

    wait_until(noticed, 120, "the cluster noticing node 3 is gone")
    with connect(cluster.settings, timeout_seconds=150) as client:  # the first aggregate after a death waits
        for case in {c.ground_truth.collection_name for c in CASES}:
            assert client.collections.use(case).aggregate.over_all(total_count=True).total_count == 100
    collection = CASES[0].ground_truth.collection_name
    more = run_cli("load", "--use-case", USE_CASE, "--objects-per-collection", "110", "--json", env=env)
    assert more.returncode == 0, more.stderr
    ids = object_ids(cluster.node(0).url, collection)
    assert len(ids) == 110
    assert run_cli("up", "--backend", "cluster", env=cluster.env, timeout=300).returncode == 0
    deadline = time.monotonic() + 180
    missing = missing_on(cluster.node(0).url, "dbgorilla-node3", collection, ids)
    assert missing > 0, "the node came back without what was written while it was down"
    while time.monotonic() < deadline and missing:
        time.sleep(2)
        missing = missing_on(cluster.node(0).url, "dbgorilla-node3", collection, ids)
    assert missing == 0, f"node 3 still lacks {missing} of {len(ids)} objects after 180 s"
