"""Process tracking, backend choice and version pins: the parts of `up` that need no server."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from dbgorilla import _process
from dbgorilla.cluster import ClusterNode, node_settings
from dbgorilla.compose import COMPOSE_FILE, project_name
from dbgorilla.config import WEAVIATE_VERSION, Ports, Settings
from dbgorilla.errors import ConfigError
from dbgorilla.images import WEAVIATE_IMAGE
from dbgorilla.stack import docker_engine_available, docker_engine_problem, resolve_backend

REPO = Path(__file__).resolve().parents[2]


def test_compose_file_pins_the_same_weaviate_version() -> None:
    text = COMPOSE_FILE.read_text()
    pinned = re.search(r"\$\{DBGORILLA_WEAVIATE_IMAGE:-cr.weaviate.io/semitechnologies/weaviate:([0-9.]+)\}", text)
    assert pinned is not None and pinned.group(1) == WEAVIATE_VERSION
    assert WEAVIATE_IMAGE.endswith(f":{WEAVIATE_VERSION}")
    assert "sentence-transformers-all-MiniLM-L6-v2" in text and "text2vec-transformers" in text


def test_compose_publishes_on_loopback_only_and_checks_health() -> None:
    import yaml

    services = yaml.safe_load(COMPOSE_FILE.read_text())["services"]
    published = [port for service in services.values() for port in service.get("ports", [])]
    assert published and all(port.startswith("127.0.0.1:") for port in published), published
    assert all("healthcheck" in service for service in services.values())
    assert services["weaviate"]["depends_on"]["t2v-transformers"]["condition"] == "service_healthy"


def test_each_state_folder_is_its_own_compose_project(tmp_path: Path) -> None:
    first, second = Settings(state_dir=tmp_path / "a"), Settings(state_dir=tmp_path / "b")
    assert project_name(first) != project_name(second)
    assert project_name(first) == project_name(Settings(state_dir=tmp_path / "a"))
    assert project_name(Settings(state_dir=Path.home() / ".local" / "state" / "dbgorilla")) == "dbgorilla"


def test_a_missing_docker_command_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert docker_engine_problem() == "the `docker` command is not installed"
    assert resolve_backend("auto") == "binary"


def test_cluster_nodes_take_distinct_ports_and_name_each_other(tmp_path: Path) -> None:
    settings = Settings(
        state_dir=tmp_path, ports=Ports(weaviate_http=21000, weaviate_grpc=21010, gossip=21020, raft=21030)
    )
    used: list[int] = []
    for index in range(3):
        p = node_settings(settings, index).ports
        used += [p.weaviate_http, p.weaviate_grpc, p.gossip, p.data, p.raft, p.raft_rpc, p.profiling]
    assert len(used) == len(set(used)), "two nodes share a port"
    env = ClusterNode(settings, 2).environment()
    assert env["RAFT_JOIN"] == "dbgorilla-node1:21030,dbgorilla-node2:21032,dbgorilla-node3:21034"
    assert env["RAFT_BOOTSTRAP_EXPECT"] == "3" and env["CLUSTER_JOIN"] == "127.0.0.1:21020"
    assert env["CLUSTER_HOSTNAME"] == "dbgorilla-node3" and env["GRPC_PORT"] == "21012"
    assert "CLUSTER_JOIN" not in ClusterNode(settings, 0).environment()
    assert node_settings(settings, 1).state_dir != node_settings(settings, 2).state_dir


def test_auto_backend_prefers_url_then_docker_then_binary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEAVIATE_URL", "https://example.invalid")
    assert resolve_backend("auto") == "url"
    monkeypatch.delenv("WEAVIATE_URL")
    assert resolve_backend("auto") == ("docker" if docker_engine_available() else "binary")
    assert resolve_backend("binary") == "binary"
    with pytest.raises(ConfigError, match="unknown backend"):
        resolve_backend("kubernetes")


def test_derived_weaviate_ports_follow_their_base() -> None:
    ports = Ports(gossip=20000, raft=21000)
    assert (ports.data, ports.raft_rpc) == (20001, 21001)


def test_a_reused_pid_is_not_mistaken_for_our_process(tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        ticks = _process.process_start_ticks(child.pid)
        assert ticks is not None
        record = _process.ProcessRecord("x", child.pid, ticks, [], "", {}, "", 0.0)
        assert record.is_alive()
        impostor = _process.ProcessRecord("x", child.pid, ticks + 1, [], "", {}, "", 0.0)
        assert not impostor.is_alive(), "same pid, different start time: a different process"
        record.save(tmp_path / "x.json")
        assert _process.ProcessRecord.load(tmp_path / "x.json") == record
    finally:
        assert _process.terminate(child.pid, grace=5)
    assert not record.is_alive()


def test_listening_pids_are_found_from_proc() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        assert os.getpid() in _process.pids_listening_on(port)
        assert not _process.port_is_free("127.0.0.1", port)
    assert _process.port_is_free("127.0.0.1", port)


def test_a_corrupt_state_file_reads_as_no_record(tmp_path: Path) -> None:
    (tmp_path / "weaviate.json").write_text("{not json")
    assert _process.ProcessRecord.load(tmp_path / "weaviate.json") is None


def test_ci_runs_exactly_the_readme_test_command() -> None:
    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text()
    assert "bash scripts/test.sh" in readme and "exec bash scripts/test.sh" in ci


def test_the_test_command_runs_every_tier() -> None:
    """test.sh names its tiers to run them side by side: a new tier folder it does not name would go unrun."""
    script = (REPO / "scripts" / "test.sh").read_text()
    tiers = {p.parent.name for p in (REPO / "tests").glob("*/test_*.py")}
    assert tiers == {"unit", "integration", "model"}
    assert not list((REPO / "tests").glob("test_*.py"))
    assert all(f"tests/{tier}" in script for tier in tiers)
