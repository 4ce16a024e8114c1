"""The docker backend for real: images built here, `up`/`status`/`down`, a killed container, persistence.

Skipped, with the reason, where no Docker engine answers (`.ci/run` starts one where it is root
and apt is there). The session stack of the other integration tests runs on the same compose
file through pytest-docker; these tests start stacks of their own on other ports.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from dbgorilla.compose import ComposeStack
from dbgorilla.errors import ExitCode
from dbgorilla.stack import docker_engine_problem, resolve_backend
from tests.conftest import Stack, fresh_settings, run_cli, settings_env

PROBLEM = docker_engine_problem()
pytestmark = [
    pytest.mark.integration,
    pytest.mark.docker,
    pytest.mark.skipif(PROBLEM is not None, reason=f"no Docker engine: {PROBLEM}"),
]


@pytest.fixture()
def docker_private(tmp_path) -> Iterator[Stack]:  # type: ignore[no-untyped-def]
    settings = fresh_settings(tmp_path)
    stack = Stack(settings, settings_env(settings), "docker")
    try:
        yield stack
    finally:
        ComposeStack.for_settings(settings).down(volumes=True)


def test_images_are_built_here_once_and_then_reused() -> None:
    from dbgorilla.images import INPUTS_LABEL, build_images, docker_client

    first = build_images(echo=lambda _: None)
    again = build_images(echo=lambda _: None)
    assert [image.name for image in again] == ["base", "weaviate", "embedder"]
    assert not any(image.built for image in again), "unchanged inputs must not rebuild"
    client = docker_client()
    for image in first:
        labels = client.images.get(image.tag).labels or {}
        assert len(labels.get(INPUTS_LABEL, "")) == 64
        assert image.size_bytes > 10_000_000


def test_auto_picks_docker_where_an_engine_works(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WEAVIATE_URL", raising=False)
    assert resolve_backend("auto") == "docker"


def test_up_status_kill_up_down_keeps_the_data(docker_private: Stack) -> None:
    env = docker_private.env
    up = run_cli("up", "--backend", "docker", "--json", env=env, timeout=900)
    assert up.returncode == 0, up.stderr
    status = json.loads(up.stdout)
    assert status["backend"] == "docker" and status["ready"] and status["weaviate_version"] == "1.39.3"
    assert [service["state"] for service in status["services"]] == ["running"]
    assert status["services"][0]["url"] == docker_private.settings.embedder_url

    compose = ComposeStack.for_settings(docker_private.settings)
    containers = compose.containers()
    assert set(containers) == {"weaviate", "t2v-transformers"}
    for container in containers.values():
        bindings = container.attrs["HostConfig"]["PortBindings"]  # type: ignore[attr-defined]
        assert bindings and all(b["HostIp"] == "127.0.0.1" for spec in bindings.values() for b in spec)

    load = run_cli("load", "--use-case", "visual_art", "--objects-per-collection", "20", "--json", env=env)
    assert load.returncode == 0, load.stderr
    assert run_cli("smoke", "--json", env=env).returncode == 0

    containers["weaviate"].kill()  # type: ignore[attr-defined]  # SIGKILL, as a crash would
    stale = run_cli("status", "--json", env=env)
    assert stale.returncode == ExitCode.STALE, stale.stdout
    assert "killed" in json.loads(stale.stdout)["weaviate"]["detail"]

    again = run_cli("up", "--backend", "docker", "--json", env=env, timeout=300)
    assert again.returncode == 0, again.stderr
    assert "stale container found" in again.stderr
    assert json.loads(again.stdout)["index_check"]["collections_checked"] == 3

    assert run_cli("down", env=env).returncode == 0
    assert compose.containers() == {}
    assert run_cli("status", env=env).returncode == ExitCode.NOT_RUNNING

    assert run_cli("up", "--backend", "docker", env=env, timeout=300).returncode == 0
    reload = run_cli("load", "--use-case", "visual_art", "--objects-per-collection", "20", "--json", env=env)
    assert reload.returncode == 0, reload.stderr
    actions = {c["collection"]: c["action"] for c in json.loads(reload.stdout)["collections"]}
    assert set(actions.values()) == {"up-to-date"}, actions  # the named volume kept every object


def _leftovers(project: str) -> dict[str, list[str]]:
    """Containers, networks and volumes of a compose project: what a failed `up` must not leave."""
    from dbgorilla.images import docker_client

    client = docker_client()
    label = {"label": f"com.docker.compose.project={project}"}
    return {
        "containers": [c.name for c in client.containers.list(all=True, filters=label)],
        "networks": [n.name for n in client.networks.list(filters=label)],
        "volumes": [v.name for v in client.volumes.list(filters=label)],
    }


def test_auto_up_reuses_a_running_binary_stack_once_docker_works(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A binary stack runs; then a Docker engine answers (it does here): `up` must reuse the binary
    stack, not start compose on the same ports, and naming docker says how to switch."""
    settings = fresh_settings(tmp_path)
    env = settings_env(settings)
    project = ComposeStack.for_settings(settings).project
    first = run_cli("up", "--backend", "binary", env=env, timeout=600)
    assert first.returncode == 0, first.stderr
    try:
        assert resolve_backend("auto") == "docker", "this test needs auto to pick docker when nothing runs"
        again = run_cli("up", "--json", env=env, timeout=300)
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout)["backend"] == "binary"
        assert "reusing" in again.stderr
        switch = run_cli("up", "--backend", "docker", env=env, timeout=300)
        assert switch.returncode == ExitCode.CONFIG, switch.stderr
        assert "dbgorilla down" in switch.stderr
        assert _leftovers(project) == {"containers": [], "networks": [], "volumes": []}
    finally:
        run_cli("down", env=env)


def test_a_docker_up_on_a_taken_port_leaves_nothing_behind(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import socket

    settings = fresh_settings(tmp_path)
    env = settings_env(settings)
    project = ComposeStack.for_settings(settings).project
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.bind(("127.0.0.1", settings.ports.weaviate_grpc))
    holder.listen()
    try:
        result = run_cli("up", "--backend", "docker", env=env, timeout=900)
    finally:
        holder.close()
    assert result.returncode == ExitCode.PORT_IN_USE, result.stderr
    assert str(settings.ports.weaviate_grpc) in result.stderr
    assert _leftovers(project) == {"containers": [], "networks": [], "volumes": []}
