"""Session fixtures: one live Weaviate (binary backend here, Docker where an engine works).

Every test stack lives in its own temporary state folder on free ports, so a developer's own
`dbgorilla up` on the default ports is never touched.
"""

from __future__ import annotations

import os
import random
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from dbgorilla.config import Ports, Settings

REPO = Path(__file__).resolve().parents[1]


#: Test stacks take ports below the kernel's range for outgoing connections (32768 and up on
#: Linux): a port from that range can be taken as some client's source port before the server
#: binds it, which made a first `up` fail now and then.
TEST_PORTS = range(20000, 32000)


def free_port_pairs(count: int) -> list[int]:
    """`count` free ports p such that p + 1 is free too (Weaviate derives two ports that way)."""
    held, found = [], []
    while len(found) < count:
        first = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        port = random.choice(TEST_PORTS)
        try:
            first.bind(("127.0.0.1", port))
        except OSError:
            first.close()
            continue
        second = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            second.bind(("127.0.0.1", port + 1))
        except OSError:
            first.close()
            second.close()
            continue
        held += [first, second]
        found.append(port)
    for sock in held:
        sock.close()
    return found


def free_port_block(size: int) -> int:
    """The first of `size` consecutive free loopback ports (a cluster offsets its ports per node)."""
    for _ in range(200):
        start = TEST_PORTS.start + (os.urandom(2)[0] * 256 + os.urandom(1)[0]) % (len(TEST_PORTS) - size)
        held = []
        try:
            for port in range(start, start + size):
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                held.append(sock)
                sock.bind(("127.0.0.1", port))
            return start
        except OSError:
            continue
        finally:
            for sock in held:
                sock.close()
    raise RuntimeError(f"no block of {size} free ports")


def cluster_ports() -> Ports:
    """Ports for a three-node cluster: each node offsets HTTP and gRPC by its index, gossip and Raft
    by twice it (each also uses the next port), so they come from one block of free ports."""
    b = free_port_block(24)
    return Ports(
        weaviate_http=b, weaviate_grpc=b + 3, gossip=b + 6, raft=b + 12, profiling=b + 18, embedder=b + 21, model=b + 22
    )


def fresh_settings(state_dir: Path) -> Settings:
    """Settings on ports nobody else uses: every test stack is private."""
    p = free_port_pairs(7)
    ports = Ports(
        weaviate_http=p[0],
        weaviate_grpc=p[1],
        embedder=p[2],
        model=p[3],
        gossip=p[4],
        raft=p[5],
        profiling=p[6],
    )
    return Settings(state_dir=state_dir, ports=ports)


def settings_env(settings: Settings) -> dict[str, str]:
    """Environment that makes a `dbgorilla` subprocess use exactly these settings."""
    p = settings.ports
    env = {k: v for k, v in os.environ.items() if k not in ("WEAVIATE_URL", "WEAVIATE_API_KEY")}
    env.update(
        {
            "DBGORILLA_STATE": str(settings.state_dir),
            "DBGORILLA_WEAVIATE_PORT": str(p.weaviate_http),
            "DBGORILLA_WEAVIATE_GRPC_PORT": str(p.weaviate_grpc),
            "DBGORILLA_EMBEDDER_PORT": str(p.embedder),
            "DBGORILLA_MODEL_PORT": str(p.model),
            "DBGORILLA_GOSSIP_PORT": str(p.gossip),
            "DBGORILLA_RAFT_PORT": str(p.raft),
            "DBGORILLA_PROFILING_PORT": str(p.profiling),
        }
    )
    return env


def run_cli(*args: str, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dbgorilla", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@dataclass
class Stack:
    settings: Settings
    env: dict[str, str]
    backend: str


def docker_works() -> bool:
    from dbgorilla.stack import docker_engine_available

    return docker_engine_available()


@pytest.fixture(scope="session")
def weaviate_stack(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[Stack]:
    """A live Weaviate with text2vec-transformers for the whole session."""
    if docker_works() and os.environ.get("DBGORILLA_TEST_BACKEND", "docker") == "docker":
        yield request.getfixturevalue("docker_stack")
        return
    settings = fresh_settings(tmp_path_factory.mktemp("stack"))
    env = settings_env(settings)
    result = run_cli("up", "--backend", "binary", env=env)
    assert result.returncode == 0, result.stderr
    try:
        yield Stack(settings, env, "binary")
    finally:
        run_cli("down", env=env)


@pytest.fixture(scope="module")
def restaurants_stack(weaviate_stack: Stack) -> Stack:
    """The session's Weaviate with the restaurants use case loaded (idempotent: a second load skips)."""
    from dbgorilla.connection import connect
    from fixtures.loader import load_use_cases

    with connect(weaviate_stack.settings) as client:
        assert load_use_cases(client, ["restaurants"]).ok
    return weaviate_stack


def restaurant_truths() -> dict[str, dict[str, object]]:
    """Question -> its ground truth as tool arguments, for scripted models that answer perfectly."""
    from fixtures.datasets import load_split

    return {r.query: r.ground_truth.to_tool_arguments() for r in load_split() if r.use_case == "restaurants"}


@pytest.fixture(scope="session")
def docker_compose_command() -> str:
    """pytest-docker runs the compose that is installed (`docker compose`, else docker-compose 1.29)."""
    from dbgorilla.compose import compose_command

    return " ".join(compose_command())


@pytest.fixture(scope="session")
def docker_setup() -> list[str]:
    return ["up -d"]


@pytest.fixture(scope="session")
def docker_environment() -> dict[str, str]:
    """Images built here (or the official ones, if present) and free loopback ports for the stack."""
    from dbgorilla.compose import image_names

    http, grpc, embedder = free_port_pairs(3)
    chosen = image_names("auto", echo=lambda line: print(line, file=sys.stderr))
    chosen |= {
        "DBGORILLA_WEAVIATE_PORT": str(http),
        "DBGORILLA_WEAVIATE_GRPC_PORT": str(grpc),
        "DBGORILLA_EMBEDDER_PORT": str(embedder),
    }
    os.environ.update(chosen)  # pytest-docker's compose calls inherit the environment
    return chosen


@pytest.fixture(scope="session")
def docker_compose_file(docker_environment: dict[str, str]) -> str:
    return str(REPO / "docker" / "docker-compose.yml")


@pytest.fixture(scope="session")
def docker_stack(docker_services, docker_ip: str, tmp_path_factory: pytest.TempPathFactory) -> Stack:  # type: ignore[no-untyped-def]
    """pytest-docker path: the compose file's Weaviate and embedder, used where `docker info` works."""
    from dbgorilla._process import http_ok

    port = docker_services.port_for("weaviate", 8080)
    grpc = docker_services.port_for("weaviate", 50051)
    embedder = docker_services.port_for("t2v-transformers", 8080)
    url = f"http://{docker_ip}:{port}"
    docker_services.wait_until_responsive(lambda: http_ok(url + "/v1/.well-known/ready"), timeout=300, pause=1)
    base = fresh_settings(tmp_path_factory.mktemp("docker"))
    settings = Settings(
        state_dir=base.state_dir,
        ports=replace(base.ports, weaviate_http=port, weaviate_grpc=grpc, embedder=embedder),
        host=docker_ip,
    )
    return Stack(settings, settings_env(settings), "docker")


@pytest.fixture()
def client(weaviate_stack: Stack) -> Iterator[object]:
    from dbgorilla.connection import connect

    with connect(weaviate_stack.settings) as live:
        yield live


@contextmanager
def door_process(arguments: list[str], env: dict[str, str], ready: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """`dbgorilla <arguments>` started as a user starts a server, once it says `ready` on stderr (that line
    is returned: it holds the address); stopped afterwards."""
    command = [sys.executable, "-m", "dbgorilla", *arguments]
    process = subprocess.Popen(command, env=env, cwd=REPO, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    line, deadline = "", time.monotonic() + 60
    while ready not in line and time.monotonic() < deadline and process.poll() is None:
        line = process.stderr.readline()
    try:
        yield process, line
    finally:
        process.terminate()
        process.wait(timeout=30)
