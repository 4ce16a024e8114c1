"""`dbgorilla up/down/status`: Weaviate with text2vec-transformers, on any of four backends.

- url:    an existing Weaviate (`WEAVIATE_URL`, `WEAVIATE_API_KEY`): a cluster or Weaviate Cloud.
- docker: docker/docker-compose.yml, Weaviate plus the t2v-transformers inference container
          (dbgorilla/compose.py), on images built here when the official ones are not present.
- binary: the pinned weaviate-server built from the Go module proxy, plus our ONNX embedder.
- cluster: three such servers on loopback forming one cluster, sharing the embedder (dbgorilla/cluster.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from dbgorilla import cluster
from dbgorilla._process import pids_listening_on, port_is_free, process_cmdline, wait_until
from dbgorilla.compose import ComposeStack
from dbgorilla.config import WEAVIATE_VERSION, Settings
from dbgorilla.errors import ConfigError, MissingDependency, PortInUse, StartupTimeout
from dbgorilla.services import Echo, EmbedderService, ServiceStatus, WeaviateService
from dbgorilla.weaviate_build import build_weaviate

BACKENDS = ("auto", "url", "docker", "binary", "cluster")


@dataclass
class StackStatus:
    backend: str | None
    weaviate: ServiceStatus
    services: list[ServiceStatus] = field(default_factory=list)
    weaviate_version: str | None = None

    @property
    def ready(self) -> bool:
        return self.weaviate.running

    @property
    def stale(self) -> bool:
        """Weaviate's record (or, for a cluster, any node's) points at a process that is gone."""
        nodes = [self.weaviate, *(s for s in self.services if s.name.startswith("weaviate"))]
        return any(node.state == "stale" for node in nodes)

    def to_dict(self) -> dict[str, object]:
        return {
            "backend": self.backend,
            "ready": self.ready,
            "weaviate": self.weaviate.to_dict(),
            "weaviate_version": self.weaviate_version,
            "services": [service.to_dict() for service in self.services],
        }


def docker_engine_problem() -> str | None:
    """None where a Docker engine answers; otherwise why not, in one line."""
    if shutil.which("docker") is None:
        return "the `docker` command is not installed"
    try:
        result = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=10)
    except (subprocess.TimeoutExpired, OSError) as error:
        return f"`docker info` failed: {error}"
    if result.returncode != 0:
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        return f"`docker info` failed: {lines[-1] if lines else 'exit ' + str(result.returncode)}"
    return None


def docker_engine_available() -> bool:
    return docker_engine_problem() is None


def resolve_backend(name: str) -> str:
    if name not in BACKENDS:
        raise ConfigError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
    if name != "auto":
        return name
    if os.environ.get("WEAVIATE_URL"):
        return "url"
    return "docker" if docker_engine_available() else "binary"


def _stack_file(settings: Settings) -> Path:
    return settings.run_dir / "stack.json"


def _remember(settings: Settings, backend: str, url: str, **extra: str) -> None:
    settings.run_dir.mkdir(parents=True, exist_ok=True)
    _stack_file(settings).write_text(json.dumps({"backend": backend, "url": url, **extra}))


def _remembered_backend(settings: Settings) -> str | None:
    try:
        return json.loads(_stack_file(settings).read_text())["backend"]
    except (FileNotFoundError, json.JSONDecodeError, KeyError):
        return None


def remote_url() -> str:
    url = os.environ.get("WEAVIATE_URL", "").rstrip("/")
    if not url:
        raise ConfigError("the url backend needs WEAVIATE_URL (and WEAVIATE_API_KEY for an authenticated cluster)")
    return url if "://" in url else f"https://{url}"


def _auth_headers() -> dict[str, str]:
    key = os.environ.get("WEAVIATE_API_KEY")
    return {"Authorization": f"Bearer {key}"} if key else {}


def _probe(url: str) -> ServiceStatus:
    try:
        response = httpx.get(f"{url}/v1/.well-known/ready", headers=_auth_headers(), timeout=5)
        if response.status_code < 300:
            return ServiceStatus("weaviate", "running", url)
        return ServiceStatus("weaviate", "stopped", url, detail=f"ready check answered {response.status_code}")
    except httpx.HTTPError as error:
        return ServiceStatus("weaviate", "stopped", url, detail=f"unreachable: {error}")


def server_version(url: str) -> str | None:
    try:
        return httpx.get(f"{url}/v1/meta", headers=_auth_headers(), timeout=5).json().get("version")
    except (httpx.HTTPError, ValueError):
        return None


def up(
    backend: str = "auto", settings: Settings | None = None, echo: Echo = print, images: str = "auto"
) -> StackStatus:
    settings = settings or Settings()
    chosen = _reusable_backend(backend, settings, echo) or resolve_backend(backend)
    echo(f"backend: {chosen}")
    if chosen == "url":
        url = remote_url()
        weaviate = _probe(url)
        if not weaviate.running:
            raise StartupTimeout(f"Weaviate at {url} is not ready: {weaviate.detail}")
        _remember(settings, "url", url)
        return StackStatus("url", weaviate, [], server_version(url))
    if chosen == "docker":
        return _docker_up(settings, echo, images)
    build_weaviate(echo=echo)
    embedder, _ = EmbedderService(settings).start(echo)
    if chosen == "cluster":
        first, *others = cluster.start(settings, echo)
        _remember(settings, "cluster", first.url)
        return StackStatus("cluster", first, [embedder, *others], server_version(first.url))
    weaviate, _ = WeaviateService(settings).start(echo)
    _remember(settings, "binary", weaviate.url)
    return StackStatus("binary", weaviate, [embedder], server_version(weaviate.url))


def _reusable_backend(backend: str, settings: Settings, echo: Echo) -> str | None:
    """The backend of a local stack already running for this state folder, which `up` reuses.

    `auto` takes whichever backend started it: a Docker engine installed since must not make `up`
    start a second stack on the same ports. Naming another backend while one runs is an error that
    says how to switch, raised before anything is started."""
    if backend == "url":
        return None
    remembered = _remembered_backend(settings)
    if remembered in (None, "url"):
        return None
    current = status(settings)
    if not current.ready:
        return None
    if backend not in ("auto", remembered):
        raise ConfigError(
            f"a {remembered} stack is already running for {settings.state_dir} at {current.weaviate.url}; "
            f"`dbgorilla down` stops it, then `dbgorilla up --backend {backend}` starts the other"
        )
    if backend == "auto":
        echo(f"{remembered} stack already running at {current.weaviate.url}; reusing it")
    return remembered


def down(settings: Settings | None = None, echo: Echo = print) -> None:
    settings = settings or Settings()
    backend = _remembered_backend(settings)
    if backend == "docker":
        compose = ComposeStack.for_settings(settings)
        compose.down()
        echo(f"docker: stack {compose.project} stopped (its volume keeps the data)")
    elif backend == "url":
        echo("url backend: the remote Weaviate is not ours to stop; forgetting it")
    elif backend == "cluster":
        cluster.stop(settings, echo)
        EmbedderService(settings).stop(echo)
    else:
        WeaviateService(settings).stop(echo)
        EmbedderService(settings).stop(echo)
    _stack_file(settings).unlink(missing_ok=True)


def status(settings: Settings | None = None) -> StackStatus:
    settings = settings or Settings()
    backend = _remembered_backend(settings)
    if backend == "url" or (backend is None and os.environ.get("WEAVIATE_URL")):
        url = remote_url()
        weaviate = _probe(url)
        return StackStatus("url", weaviate, [], server_version(url) if weaviate.running else None)
    if backend == "docker":
        weaviate, embedder = ComposeStack.for_settings(settings).status()
        if weaviate.running and not _probe(weaviate.url).running:
            weaviate = ServiceStatus("weaviate", "starting", weaviate.url, weaviate.pid, "container up, not ready")
        version = server_version(weaviate.url) if weaviate.running else None
        return StackStatus("docker", weaviate, [embedder], version)
    if backend == "cluster":
        first, *others = cluster.status(settings)
        version = server_version(first.url) if first.running else None
        return StackStatus("cluster", first, [EmbedderService(settings).status(), *others], version)
    weaviate = WeaviateService(settings).status()
    embedder = EmbedderService(settings).status()
    version = server_version(weaviate.url) if weaviate.running else None
    return StackStatus("binary" if backend or weaviate.state != "stopped" else None, weaviate, [embedder], version)


def _require_free_ports(settings: Settings) -> None:
    """The compose stack's host ports are free, or a typed error names who holds them, before any
    container, network or volume is created."""
    ports = {
        "weaviate http": settings.ports.weaviate_http,
        "weaviate grpc": settings.ports.weaviate_grpc,
        "embedder": settings.ports.embedder,
    }
    for role, port in ports.items():
        if port_is_free(settings.host, port):
            continue
        holders = [f"pid {pid}: {' '.join(process_cmdline(pid))[:120]}" for pid in pids_listening_on(port)]
        raise PortInUse(
            f"docker: port {port} ({role}) is already in use ({'; '.join(holders) or 'by a connection'}); "
            "`dbgorilla status` shows a stack of ours, `dbgorilla down` stops it, or choose other ports "
            "with the DBGORILLA_*_PORT variables"
        )


def _docker_up(settings: Settings, echo: Echo, images: str) -> StackStatus:
    if not docker_engine_available():
        raise MissingDependency("no working Docker engine (`docker info` failed); use --backend binary")
    compose = ComposeStack.for_settings(settings)
    before = compose.status()
    for service in before:
        if service.state == "stale":
            echo(f"docker: stale container found: {service.detail.split(';')[0]}; starting it again")
    if all(service.state == "stopped" for service in before):
        _require_free_ports(settings)
    had_volume = compose.has_volume()
    url = settings.weaviate_http_url
    try:
        compose.up(images, echo)
        wait_until(lambda: _probe(url).running, 60, f"weaviate (docker) at {url}")
    except Exception:
        # Leave nothing of this attempt behind; a volume from an earlier, working stack keeps its data.
        with contextlib.suppress(Exception):
            compose.down(volumes=not had_volume)
        raise
    _remember(settings, "docker", url, project=compose.project)
    echo(f"docker: Weaviate v{WEAVIATE_VERSION} ready at {url} (project {compose.project})")
    weaviate, embedder = compose.status()
    return StackStatus("docker", weaviate, [embedder], server_version(url))
