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
from dbgorilla.config import WEAVIATE_VERSION, Ports
from dbgorilla.errors import ConfigError
from dbgorilla.stack import COMPOSE_FILE, docker_engine_available, resolve_backend

REPO = Path(__file__).resolve().parents[2]


def test_compose_file_pins_the_same_weaviate_version() -> None:
    text = COMPOSE_FILE.read_text()
    pinned = re.search(r"semitechnologies/weaviate:\$\{WEAVIATE_VERSION:-([0-9.]+)\}", text)
    assert pinned is not None and pinned.group(1) == WEAVIATE_VERSION
    assert "sentence-transformers-all-MiniLM-L6-v2" in text and "text2vec-transformers" in text


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
