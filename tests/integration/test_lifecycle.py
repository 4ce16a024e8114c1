"""`dbgorilla up/down/status` on the binary backend, through the real CLI, on a private stack.

One module-scoped stack is started, restarted, killed and recovered here; the session's shared
stack is never touched.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dbgorilla._process import ProcessRecord, pids_listening_on, process_start_ticks
from dbgorilla.connection import connect
from tests.conftest import Stack, fresh_settings, run_cli, settings_env

#: Each test starts binary stacks of its own: the binary backend is tested here whatever the session uses.
pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def private_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    settings = fresh_settings(tmp_path_factory.mktemp("lifecycle"))
    env = settings_env(settings)
    result = run_cli("up", "--backend", "binary", env=env)
    assert result.returncode == 0, result.stderr
    # the detached servers outlive the command: no interpreter warnings about them reach the user
    assert "Warning" not in result.stderr, result.stderr
    yield Stack(settings, env, "binary")
    run_cli("down", env=env)


def weaviate_record(stack: Stack) -> ProcessRecord:
    record = ProcessRecord.load(stack.settings.run_dir / "weaviate.json")
    assert record is not None
    return record


def status_json(stack: Stack) -> tuple[int, dict]:
    result = run_cli("status", "--json", env=stack.env)
    return result.returncode, json.loads(result.stdout)


def test_status_reports_running(private_stack: Stack) -> None:
    code, payload = status_json(private_stack)
    assert code == 0
    assert payload["ready"] is True and payload["backend"] == "binary"
    assert payload["weaviate_version"].startswith("1.")
    assert [s["state"] for s in payload["services"]] == ["running"]


def test_second_up_reuses_the_running_server(private_stack: Stack) -> None:
    before = weaviate_record(private_stack)
    result = run_cli("up", "--backend", "binary", env=private_stack.env)
    assert result.returncode == 0, result.stderr
    assert "already running" in result.stderr
    after = weaviate_record(private_stack)
    assert (after.pid, after.start_ticks) == (before.pid, before.start_ticks)
    assert pids_listening_on(private_stack.settings.ports.weaviate_http) == [before.pid]


def test_data_persists_across_restart(private_stack: Stack) -> None:
    from dbgorilla.smoke import SMOKE_OBJECTS, create_smoke_collection

    with connect(private_stack.settings) as client:
        create_smoke_collection(client, "PersistCheck")
    assert run_cli("down", env=private_stack.env).returncode == 0
    code, payload = status_json(private_stack)
    assert code == 3 and payload["ready"] is False
    assert run_cli("up", "--backend", "binary", env=private_stack.env).returncode == 0
    with connect(private_stack.settings) as client:
        collection = client.collections.get("PersistCheck")
        assert collection.aggregate.over_all(total_count=True).total_count == len(SMOKE_OBJECTS)
        assert collection.query.near_text("raw fish", limit=1).objects[0].properties["name"] == "Sakura Bar"
        client.collections.delete("PersistCheck")


def test_killed_server_is_detected_and_recovered(private_stack: Stack) -> None:
    record = weaviate_record(private_stack)
    os.kill(record.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while process_start_ticks(record.pid) is not None and time.monotonic() < deadline:
        time.sleep(0.1)
    code, payload = status_json(private_stack)
    assert code == 4
    assert payload["weaviate"]["state"] == "stale"
    assert "gone" in payload["weaviate"]["detail"]
    result = run_cli("up", "--backend", "binary", env=private_stack.env)
    assert result.returncode == 0, result.stderr
    assert "stale state found" in result.stderr
    assert status_json(private_stack)[0] == 0


def test_orphan_without_state_file_is_reclaimed(private_stack: Stack) -> None:
    orphan = weaviate_record(private_stack)
    (private_stack.settings.run_dir / "weaviate.json").unlink()
    result = run_cli("up", "--backend", "binary", env=private_stack.env)
    assert result.returncode == 0, result.stderr
    assert f"orphaned weaviate (pid {orphan.pid})" in result.stderr
    assert process_start_ticks(orphan.pid) is None
    assert weaviate_record(private_stack).pid != orphan.pid


def test_another_stacks_weaviate_is_never_stopped(private_stack: Stack, tmp_path: Path) -> None:
    """A second stack with its own state directory whose gossip port is the running one's: refused, naming
    the holder's state directory and the variable that moves the port; the running stack is untouched."""
    running = weaviate_record(private_stack)
    other = fresh_settings(tmp_path)
    env = {**settings_env(other), "DBGORILLA_GOSSIP_PORT": str(private_stack.settings.ports.gossip)}
    try:
        result = run_cli("up", "--backend", "binary", env=env)
        assert result.returncode == 5, result.stderr
        assert f"port {private_stack.settings.ports.gossip} (gossip)" in result.stderr
        assert f"another stack's (state directory {private_stack.settings.state_dir.resolve()})" in result.stderr
        assert "DBGORILLA_GOSSIP_PORT" in result.stderr and "orphaned" not in result.stderr
    finally:
        run_cli("down", env=env)
    assert process_start_ticks(running.pid) == running.start_ticks  # the same process, still running
    assert status_json(private_stack)[0] == 0


def test_foreign_process_on_the_port_is_reported(tmp_path: Path) -> None:
    settings = fresh_settings(tmp_path)
    env = settings_env(settings)
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", settings.ports.embedder))
        squatter.listen()
        result = run_cli("up", "--backend", "binary", env=env)
    assert result.returncode == 5, result.stderr
    assert f"port {settings.ports.embedder}" in result.stderr
    assert f"pid {os.getpid()}" in result.stderr


def test_a_port_taken_by_a_connection_is_explained(tmp_path: Path) -> None:
    """No process listens there: the port is some connection's source port. Say so, and why."""
    env = settings_env(fresh_settings(tmp_path))
    with socket.socket() as server, socket.socket() as outgoing:
        server.bind(("127.0.0.1", 0))
        server.listen()
        outgoing.bind(("127.0.0.1", 0))  # a port the kernel hands out: in its range for outgoing connections
        port = outgoing.getsockname()[1]
        outgoing.connect(server.getsockname())
        accepted, _ = server.accept()
        with accepted:
            result = run_cli("up", "--backend", "binary", env=env | {"DBGORILLA_EMBEDDER_PORT": str(port)})
    assert result.returncode == 5, result.stderr
    assert f"port {port}" in result.stderr
    assert "ESTABLISHED to port" in result.stderr
    assert "range for outgoing connections" in result.stderr
