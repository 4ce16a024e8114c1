"""Local services the CLI starts and later finds again: the embedder, Weaviate, the model server.

Each is a detached child process with a state file. `start` reuses a healthy one, reports and
clears a stale record, stops an orphan of our own that still holds a port, and refuses (with
the holder's pid and command line) when a foreign process holds one.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from dbgorilla import _process
from dbgorilla.config import PORT_VARIABLES, WEAVIATE_NODE_NAME, Settings, cache_dir, weaviate_binary_path
from dbgorilla.errors import PortInUse, StartupTimeout

#: How long a port held by a closing connection is waited for before `up` gives up.
PORT_GRACE_SECONDS = 5.0
#: Set in every service's environment: the state directory that started it. Only a process this state
#: directory started is ever stopped as an orphan; another stack's, with its own state directory, is not.
OWNER_VARIABLE = "DBGORILLA_OWNER_STATE"

Echo = Callable[[str], None]


@dataclass
class ServiceStatus:
    name: str
    state: str  # running | starting | stopped | stale
    url: str
    pid: int | None = None
    detail: str = ""

    @property
    def running(self) -> bool:
        return self.state == "running"

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


class LocalService:
    """One detached process: how to start it, how to tell it is ready, how to recognise it."""

    name: str = "service"
    ready_path: str = "/"
    startup_timeout: float = 120.0

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    # -- what each service defines -------------------------------------------------------
    @property
    def url(self) -> str:
        raise NotImplementedError

    def ports(self) -> dict[str, int]:
        raise NotImplementedError

    def command(self) -> list[str]:
        raise NotImplementedError

    def environment(self) -> dict[str, str]:
        return dict(os.environ)

    def is_own_process(self, cmdline: list[str]) -> bool:
        """True when a process with this command line was started by us (an orphan to reclaim)."""
        raise NotImplementedError

    # -- shared lifecycle ----------------------------------------------------------------
    @property
    def owner(self) -> str:
        """This state directory, as every process it starts is marked (`OWNER_VARIABLE`)."""
        return str(self.settings.state_dir.resolve())

    @property
    def record_path(self) -> Path:
        return self.settings.run_dir / f"{self.name}.json"

    @property
    def log_path(self) -> Path:
        return self.settings.log_dir / f"{self.name}.log"

    def record(self) -> _process.ProcessRecord | None:
        return _process.ProcessRecord.load(self.record_path)

    def is_ready(self) -> bool:
        return _process.http_ok(self.url + self.ready_path)

    def status(self) -> ServiceStatus:
        record = self.record()
        if record is None:
            return ServiceStatus(self.name, "stopped", self.url)
        if not record.is_alive():
            return ServiceStatus(
                self.name,
                "stale",
                record.url,
                record.pid,
                f"pid {record.pid} recorded in {self.record_path} is gone (killed or crashed); see {record.log_path}",
            )
        if self.is_ready():
            return ServiceStatus(self.name, "running", record.url, record.pid)
        return ServiceStatus(self.name, "starting", record.url, record.pid, "process alive, not ready yet")

    def start(self, echo: Echo = print) -> tuple[ServiceStatus, bool]:
        """Start (or reuse) the service; returns its status and whether it was already running."""
        current = self.status()
        if current.state in ("running", "starting"):
            record = self.record()
            assert record is not None
            try:
                self._wait_ready(record)
            except StartupTimeout as error:  # ours, alive, and silent: busy with another client, most often
                raise StartupTimeout(
                    f"{self.name}: already running (pid {record.pid}) at {record.url}, but it did not answer "
                    f"{self.ready_path} within {self.startup_timeout:.0f}s; it may be busy with another client's "
                    "requests (another eval?): wait for them, or stop it (`dbgorilla down`; the model: "
                    f"`dbgorilla model down`). {error}"
                ) from error
            echo(f"{self.name}: already running (pid {record.pid}) at {record.url}; reusing it")
            return self.status(), True
        if current.state == "stale":
            echo(f"{self.name}: stale state found: {current.detail}; clearing it")
            self.record_path.unlink(missing_ok=True)
        self._free_ports(echo)
        record = _process.spawn_detached(
            self.name,
            self.command(),
            {**self.environment(), OWNER_VARIABLE: self.owner},
            self.log_path,
            self.ports(),
            self.url,
        )
        record.save(self.record_path)
        try:
            self._wait_ready(record)
        except StartupTimeout:
            _process.terminate(record.pid, record.start_ticks, grace=5)
            self.record_path.unlink(missing_ok=True)
            raise
        echo(f"{self.name}: started (pid {record.pid}) at {self.url}")
        return self.status(), False

    def stop(self, echo: Echo = print) -> bool:
        record = self.record()
        if record is None:
            echo(f"{self.name}: not running")
            return False
        if record.is_alive():
            _process.terminate(record.pid, record.start_ticks)
            echo(f"{self.name}: stopped (pid {record.pid})")
        else:
            echo(f"{self.name}: was not running (stale pid {record.pid}); state cleared")
        self.record_path.unlink(missing_ok=True)
        return True

    def _wait_ready(self, record: _process.ProcessRecord) -> None:
        _process.wait_until(
            self.is_ready,
            self.startup_timeout,
            f"{self.name} at {self.url}",
            alive=record.is_alive,
            log_path=record.log_path,
        )

    def _free_ports(self, echo: Echo) -> None:
        for role, port in self.ports().items():
            if _process.port_is_free(self.settings.host, port):
                continue
            holders = _process.pids_listening_on(port)
            for pid in holders:
                cmdline = _process.process_cmdline(pid)
                owner = _process.process_environ(pid).get(OWNER_VARIABLE)
                if self.is_own_process(cmdline) and owner == self.owner:
                    echo(f"{self.name}: an orphaned {self.name} (pid {pid}) holds port {port}; stopping it")
                    _process.terminate(pid)
                    continue
                variable = PORT_VARIABLES.get((self.name.split("-")[0], role), "the DBGORILLA_*_PORT variables")
                whose = f"another stack's (state directory {owner})" if owner else "not started by this state directory"
                raise PortInUse(
                    f"{self.name}: port {port} ({role}) is held by pid {pid}, {whose}: {' '.join(cmdline)[:200]}. "
                    f"Stop that process or move this stack's port with {variable}."
                )
            if not holders and not self._wait_for_port(port):
                raise PortInUse(self._unseen_holder(port, role))

    def _wait_for_port(self, port: int, seconds: float = PORT_GRACE_SECONDS) -> bool:
        """A closing connection frees its port within seconds: wait that long before giving up."""
        deadline = time.monotonic() + seconds
        while not _process.port_is_free(self.settings.host, port):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.25)
        return True

    def _unseen_holder(self, port: int, role: str) -> str:
        """Nobody listens there, so the port is the local end of a connection: say which, and why."""
        message = f"{self.name}: port {port} ({role}) is in use by no listening process"
        connections = _process.connections_on(port)
        if connections:
            message += f" but by a connection ({', '.join(connections[:3])})"
        ephemeral = _process.ephemeral_port_range()
        if ephemeral and ephemeral[0] <= port <= ephemeral[1]:
            message += (
                f". The port is in the kernel's range for outgoing connections ({ephemeral[0]}-{ephemeral[1]}), "
                "so any client can take it: choose DBGORILLA_*_PORT values below it"
            )
        return message


class EmbedderService(LocalService):
    """The text2vec-transformers inference API on ONNX MiniLM (see dbgorilla.embedding)."""

    name = "embedder"
    ready_path = "/.well-known/ready"
    startup_timeout = 60.0

    @property
    def url(self) -> str:
        return self.settings.embedder_url

    def ports(self) -> dict[str, int]:
        return {"http": self.settings.ports.embedder}

    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "dbgorilla.embedding",
            "--host",
            self.settings.host,
            "--port",
            str(self.settings.ports.embedder),
        ]

    def environment(self) -> dict[str, str]:
        return {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", str(os.cpu_count() or 1))}

    def is_own_process(self, cmdline: list[str]) -> bool:
        return "dbgorilla.embedding" in cmdline


class WeaviateService(LocalService):
    """The pinned weaviate-server binary as a single-node cluster, every port on loopback."""

    name = "weaviate"
    ready_path = "/v1/.well-known/ready"
    startup_timeout = 120.0

    node_name: str = WEAVIATE_NODE_NAME

    def __init__(self, settings: Settings, binary: Path | None = None) -> None:
        super().__init__(settings)
        self.binary = binary or weaviate_binary_path()

    def cluster_environment(self) -> dict[str, str]:
        """A single node that elects itself; a cluster node (dbgorilla.cluster) names its peers."""
        return {"RAFT_BOOTSTRAP_EXPECT": "1"}

    def loopback_environment(self) -> dict[str, str]:
        """Every port on the settings' host (loopback), since nothing else guards them (docs/security.md).

        HTTP takes `--host`. CLUSTER_BIND_ADDR binds gossip (TCP and UDP), Raft and Raft RPC, and, in
        our build (dbgorilla/weaviate_build.py), the data port; memberlist then advertises that
        address, so Raft does too. DBGORILLA_GRPC_BIND_ADDR is our build's setting for gRPC, which
        upstream v1.39.3 binds on every interface. Profiling is off: upstream binds it on every
        interface too, and serves nothing there unless DEBUG_ENDPOINTS_ENABLED.
        """
        return {
            "CLUSTER_BIND_ADDR": self.settings.host,
            "DBGORILLA_GRPC_BIND_ADDR": self.settings.host,
            "GO_PROFILING_DISABLE": "true",
        }

    @property
    def url(self) -> str:
        return self.settings.weaviate_http_url

    def ports(self) -> dict[str, int]:
        p = self.settings.ports
        return {
            "http": p.weaviate_http,
            "grpc": p.weaviate_grpc,
            "gossip": p.gossip,
            "data": p.data,
            "raft": p.raft,
            "raft-rpc": p.raft_rpc,
        }

    def command(self) -> list[str]:
        return [
            str(self.binary),
            "--host",
            self.settings.host,
            "--port",
            str(self.settings.ports.weaviate_http),
            "--scheme",
            "http",
        ]

    def environment(self) -> dict[str, str]:
        p = self.settings.ports
        self.settings.weaviate_data_dir.mkdir(parents=True, exist_ok=True)
        return {
            **os.environ,
            "AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED": "true",
            "PERSISTENCE_DATA_PATH": str(self.settings.weaviate_data_dir),
            "QUERY_DEFAULTS_LIMIT": "25",
            "DEFAULT_VECTORIZER_MODULE": "none",
            "ENABLE_MODULES": "text2vec-transformers",
            "TRANSFORMERS_INFERENCE_API": self.settings.embedder_url,
            "CLUSTER_HOSTNAME": self.node_name,
            "CLUSTER_IN_LOCALHOST": "true",
            "CLUSTER_GOSSIP_BIND_PORT": str(p.gossip),
            "CLUSTER_DATA_BIND_PORT": str(p.data),
            "RAFT_PORT": str(p.raft),
            "RAFT_INTERNAL_RPC_PORT": str(p.raft_rpc),
            "GRPC_PORT": str(p.weaviate_grpc),
            **self.loopback_environment(),
            "DISABLE_TELEMETRY": "true",
            "LIMIT_RESOURCES": "true",
            # Measured: after kill -9 the synchronous HNSW came back with 0-98 of 100 objects per
            # collection in 6 of 6 trials; with the asynchronous queue, whole in 4 of 4 (it re-indexes
            # from its last checkpoint). Searches lag an import by about a second: see index_health.
            "ASYNC_INDEXING": os.environ.get("ASYNC_INDEXING", "true"),
            "LOG_LEVEL": os.environ.get("LOG_LEVEL", "warning"),
            **self.cluster_environment(),
        }

    def is_own_process(self, cmdline: list[str]) -> bool:
        return bool(cmdline) and cmdline[0].endswith("weaviate-server") and str(cache_dir()) in cmdline[0]
