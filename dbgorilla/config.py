"""Pinned versions, ports and folders, each overridable from the environment.

Every process the project starts reads its place in the world from here, so the
CLI, the tests and CI agree on one Weaviate version and one set of folders.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

#: The one Weaviate version used by the binary backend and by docker/docker-compose.yml.
WEAVIATE_VERSION = "1.39.3"
WEAVIATE_GO_MODULE = "github.com/weaviate/weaviate"
WEAVIATE_SERVER_PACKAGE = f"{WEAVIATE_GO_MODULE}/cmd/weaviate-server"
WEAVIATE_NODE_NAME = "dbgorilla-node1"


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    return int(raw) if raw else default


def _env_path(name: str, default: Path) -> Path:
    raw = os.environ.get(name)
    return Path(raw).expanduser() if raw else default


def cache_dir() -> Path:
    """Built binaries and joined model files: shared by every state folder, kept across runs."""
    xdg = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return _env_path("DBGORILLA_CACHE", xdg / "dbgorilla")


def weaviate_binary_path(version: str = WEAVIATE_VERSION) -> Path:
    return cache_dir() / "weaviate" / f"v{version}" / "weaviate-server"


@dataclass(frozen=True)
class Ports:
    """Loopback ports of the services `dbgorilla up` and `dbgorilla model up` start (every one on
    127.0.0.1: docs/security.md)."""

    weaviate_http: int = 8080
    weaviate_grpc: int = 50051
    embedder: int = 8086
    model: int = 8012
    # Weaviate's internal cluster ports, set explicitly so two instances never collide. A single
    # node only elects itself leader when data = gossip + 1 and raft-rpc = raft + 1 (measured on
    # v1.39.3), so those two are derived, never configured.
    gossip: int = 7946
    raft: int = 8300
    # Go profiling is off (GO_PROFILING_DISABLE, docs/security.md), so nothing binds this port; kept
    # so DBGORILLA_PROFILING_PORT and existing callers go on working.
    profiling: int = 6060

    @property
    def data(self) -> int:
        return self.gossip + 1

    @property
    def raft_rpc(self) -> int:
        return self.raft + 1

    @classmethod
    def from_env(cls) -> Ports:
        base = cls()
        return cls(
            weaviate_http=_env_int("DBGORILLA_WEAVIATE_PORT", base.weaviate_http),
            weaviate_grpc=_env_int("DBGORILLA_WEAVIATE_GRPC_PORT", base.weaviate_grpc),
            embedder=_env_int("DBGORILLA_EMBEDDER_PORT", base.embedder),
            model=_env_int("DBGORILLA_MODEL_PORT", base.model),
            gossip=_env_int("DBGORILLA_GOSSIP_PORT", base.gossip),
            raft=_env_int("DBGORILLA_RAFT_PORT", base.raft),
            profiling=_env_int("DBGORILLA_PROFILING_PORT", base.profiling),
        )


#: (service, port role) -> the variable that moves the port (a cluster's nodes derive theirs from these).
PORT_VARIABLES = {
    ("weaviate", "http"): "DBGORILLA_WEAVIATE_PORT",
    ("weaviate", "grpc"): "DBGORILLA_WEAVIATE_GRPC_PORT",
    ("weaviate", "gossip"): "DBGORILLA_GOSSIP_PORT",
    ("weaviate", "data"): "DBGORILLA_GOSSIP_PORT (data is gossip + 1)",
    ("weaviate", "raft"): "DBGORILLA_RAFT_PORT",
    ("weaviate", "raft-rpc"): "DBGORILLA_RAFT_PORT (raft-rpc is raft + 1)",
    ("embedder", "http"): "DBGORILLA_EMBEDDER_PORT",
    ("model", "http"): "DBGORILLA_MODEL_PORT",
}


@dataclass(frozen=True)
class Settings:
    """Where one running stack lives: its state folder (pids, logs, data) and its ports."""

    state_dir: Path = field(
        default_factory=lambda: _env_path("DBGORILLA_STATE", Path.home() / ".local" / "state" / "dbgorilla")
    )
    ports: Ports = field(default_factory=Ports.from_env)
    host: str = "127.0.0.1"

    @property
    def run_dir(self) -> Path:
        return self.state_dir / "run"

    @property
    def log_dir(self) -> Path:
        return self.state_dir / "logs"

    @property
    def weaviate_data_dir(self) -> Path:
        return self.state_dir / "weaviate-data"

    @property
    def weaviate_http_url(self) -> str:
        return f"http://{self.host}:{self.ports.weaviate_http}"

    @property
    def embedder_url(self) -> str:
        return f"http://{self.host}:{self.ports.embedder}"

    @property
    def model_base_url(self) -> str:
        return f"http://{self.host}:{self.ports.model}/v1"
