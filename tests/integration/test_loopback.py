"""Issue 29 for real: after `up`, every socket our processes listen on is on loopback.

Each backend is started in a private state folder on free ports. The sockets are read from /proc
(each started process and its children), and each must be on 127.0.0.1 or ::1; the set of ports
must be exactly the ones docs/security.md lists, so a new listener (profiling back on, a port of a
newer Weaviate) fails here until it is bound and written down. Each Weaviate port is also dialled
on the machine's own outside addresses: it must refuse.
"""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import Iterator
from dataclasses import replace

import httpx
import pytest

from dbgorilla._process import Listener, ProcessRecord, descendants, listening_sockets
from dbgorilla.cluster import CLUSTER_SIZE, ClusterNode
from dbgorilla.config import WEAVIATE_VERSION, Settings
from dbgorilla.services import EmbedderService, WeaviateService
from tests.conftest import cluster_ports, fresh_settings, run_cli, settings_env

pytestmark = pytest.mark.integration


def outside_addresses() -> list[str]:
    """The addresses this machine sends from on its default routes (no packet leaves: UDP connect only)."""
    found = []
    for family, probe in ((socket.AF_INET, "203.0.113.1"), (socket.AF_INET6, "2001:db8::1")):
        with socket.socket(family, socket.SOCK_DGRAM) as sock:
            try:
                sock.connect((probe, 9))
            except OSError:
                continue
            found.append(sock.getsockname()[0])
    return found


def listeners(records: list[ProcessRecord | None]) -> list[Listener]:
    found: list[Listener] = []
    for record in records:
        assert record is not None and record.is_alive(), "a service `up` reported is not running"
        for pid in descendants(record.pid):
            found += listening_sockets(pid)
    return found


def weaviate_ports(service: WeaviateService) -> set[tuple[str, int]]:
    """What one node listens on: HTTP, gRPC, the data port, Raft and Raft RPC (TCP) and gossip (TCP and UDP)."""
    ports = {("tcp", port) for port in service.ports().values()}
    return ports | {("udp", service.settings.ports.gossip)}


def assert_loopback_only(found: list[Listener], expected: set[tuple[str, int]]) -> None:
    beyond = [str(s) for s in found if not s.is_loopback]
    assert not beyond, f"listening beyond loopback: {beyond}"
    assert {(s.protocol, s.port) for s in found} == expected, "the ports differ from docs/security.md's list"


def assert_refused_from_outside(ports: set[tuple[str, int]]) -> None:
    addresses = outside_addresses()
    if not addresses:
        return  # no outside address to dial: loopback is all this machine has
    for address in addresses:
        for protocol, port in sorted(ports):
            if protocol != "tcp":
                continue
            with pytest.raises(ConnectionRefusedError), socket.create_connection((address, port), timeout=5):
                pass


@pytest.fixture(scope="module")
def binary_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    settings = fresh_settings(tmp_path_factory.mktemp("loopback-binary"))
    env = settings_env(settings)
    up = run_cli("up", "--backend", "binary", "--json", env=env)
    assert up.returncode == 0, up.stderr
    assert json.loads(up.stdout)["index_check"] is not None  # the client reached Weaviate's gRPC on loopback
    try:
        yield settings
    finally:
        run_cli("down", env=env)


def test_the_binary_backend_listens_on_loopback_only(binary_stack: Settings) -> None:
    weaviate, embedder = WeaviateService(binary_stack), EmbedderService(binary_stack)
    found = listeners([weaviate.record(), embedder.record()])
    expected = weaviate_ports(weaviate) | {("tcp", binary_stack.ports.embedder)}
    assert_loopback_only(found, expected)
    assert binary_stack.ports.profiling not in {s.port for s in found}, "profiling is off"
    assert_refused_from_outside(expected)


#: docs/security.md, "Reachable from elsewhere": what a user turns on before binding beyond loopback.
AUTHENTICATION = {
    "AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED": "false",
    "AUTHENTICATION_APIKEY_ENABLED": "true",
    "AUTHENTICATION_APIKEY_ALLOWED_KEYS": "test-key-0123456789",
    "AUTHENTICATION_APIKEY_USERS": "dbgorilla",
    "AUTHORIZATION_ADMINLIST_ENABLED": "true",
    "AUTHORIZATION_ADMINLIST_USERS": "dbgorilla",
}


class AuthenticatedWeaviate(WeaviateService):
    name = "weaviate-authenticated"

    def environment(self) -> dict[str, str]:
        return super().environment() | AUTHENTICATION


def test_with_the_documented_authentication_anonymous_requests_are_refused(
    binary_stack: Settings, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The settings docs/security.md gives for a Weaviate reachable from elsewhere (tried here on
    loopback): no key, no data, over REST or through the project's client; with it, everything works."""
    own = fresh_settings(tmp_path_factory.mktemp("loopback-auth"))
    settings = replace(own, ports=replace(own.ports, embedder=binary_stack.ports.embedder))  # the stack's embedder
    server = AuthenticatedWeaviate(settings)
    server.start(echo=lambda _: None)
    try:
        url, key = server.url, AUTHENTICATION["AUTHENTICATION_APIKEY_ALLOWED_KEYS"]
        assert httpx.get(f"{url}/v1/schema", timeout=10).status_code == 401
        assert httpx.get(f"{url}/v1/schema", headers={"Authorization": "Bearer wrong"}, timeout=10).status_code == 401
        meta = httpx.get(f"{url}/v1/meta", headers={"Authorization": f"Bearer {key}"}, timeout=10)
        assert meta.status_code == 200 and meta.json()["version"] == WEAVIATE_VERSION
        remote = settings_env(settings) | {"WEAVIATE_URL": url, "WEAVIATE_GRPC_PORT": str(settings.ports.weaviate_grpc)}
        refused = run_cli("smoke", "--json", env=remote)
        assert refused.returncode != 0 and "401" in refused.stderr + refused.stdout, refused.stderr[-500:]
        smoke = run_cli("smoke", "--json", env=remote | {"WEAVIATE_API_KEY": key})  # REST and gRPC with the key
        assert smoke.returncode == 0, smoke.stderr[-2000:]
    finally:
        server.stop(echo=lambda _: None)


@pytest.mark.slow
def test_the_cluster_backend_listens_on_loopback_only(tmp_path_factory: pytest.TempPathFactory) -> None:
    settings = Settings(state_dir=tmp_path_factory.mktemp("loopback-cluster"), ports=cluster_ports())
    env = settings_env(settings)
    up = run_cli("up", "--backend", "cluster", env=env, timeout=300)  # waits for three healthy members
    assert up.returncode == 0, up.stderr
    try:
        nodes = [ClusterNode(settings, index) for index in range(CLUSTER_SIZE)]
        embedder = EmbedderService(settings)
        found = listeners([*(node.record() for node in nodes), embedder.record()])
        expected = {("tcp", settings.ports.embedder)}
        for node in nodes:
            expected |= weaviate_ports(node)
        assert_loopback_only(found, expected)
        assert_refused_from_outside(expected)
    finally:
        run_cli("down", env=env)


@pytest.mark.model
def test_the_model_server_listens_on_loopback_only(tmp_path_factory: pytest.TempPathFactory) -> None:
    from dbgorilla.local_models import TEST_MODEL, ModelService

    settings = fresh_settings(tmp_path_factory.mktemp("loopback-model"))
    env = settings_env(settings)
    up = run_cli("model", "up", "--model", TEST_MODEL, env=env, timeout=300)
    assert up.returncode == 0, up.stderr
    try:
        expected = {("tcp", settings.ports.model)}
        assert_loopback_only(listeners([ModelService(settings).record()]), expected)
        assert_refused_from_outside(expected)
    finally:
        run_cli("model", "down", env=env)


def _docker_problem() -> str | None:
    from dbgorilla.stack import docker_engine_problem

    return docker_engine_problem()


@pytest.mark.docker
def test_the_docker_backend_publishes_on_loopback_only(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Docker's proxy holds the published ports on the host; inside the container, only HTTP and gRPC
    (which the proxy must reach) are beyond the container's loopback. 7947, the data port, too with the
    official image, which lacks our build's patch: the bridge alone reaches it."""
    problem = _docker_problem()
    if problem is not None:
        pytest.skip(f"no Docker engine: {problem}")
    from dbgorilla.compose import ComposeStack

    settings = fresh_settings(tmp_path_factory.mktemp("loopback-docker"))
    env = settings_env(settings)
    up = run_cli("up", "--backend", "docker", env=env, timeout=900)
    assert up.returncode == 0, up.stderr
    compose = ComposeStack.for_settings(settings)
    try:
        published = {settings.ports.weaviate_http, settings.ports.weaviate_grpc, settings.ports.embedder}
        containers = compose.containers()
        for container in containers.values():
            bindings = container.attrs["NetworkSettings"]["Ports"]  # type: ignore[attr-defined]
            hosts = [b["HostIp"] for spec in bindings.values() if spec for b in spec]
            assert hosts and set(hosts) == {"127.0.0.1"}, bindings
        from dbgorilla._process import pids_listening_on

        for port in published:  # docker-proxy, where the engine uses it (else iptables alone forwards)
            for pid in pids_listening_on(port):
                assert all(s.is_loopback for s in listening_sockets(pid) if s.port == port), port
        assert_refused_from_outside({("tcp", port) for port in published})
        inside = containers["weaviate"].attrs["State"]["Pid"]  # type: ignore[attr-defined]
        beyond = {s.port for s in listening_sockets(inside) if not s.is_loopback}
        assert beyond <= {8080, 50051, 7947}, beyond
        assert 6060 not in {s.port for s in listening_sockets(inside)}, "profiling is off"
    finally:
        with contextlib.suppress(Exception):
            compose.down(volumes=True)
