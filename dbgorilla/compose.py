"""The docker backend: docker/docker-compose.yml run by whichever compose is installed.

`docker compose` (the v2 plugin) is used where it answers, `docker-compose` (1.29, Debian's)
otherwise. The images are the official ones when the engine already has them, else the ones
dbgorilla/images.py builds here. Containers are found again through the `docker` package by
their compose labels, so `status` can tell a stack that runs from one whose containers exited
(killed, crashed) and say which.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from dbgorilla._process import wait_until
from dbgorilla.config import WEAVIATE_VERSION, Settings
from dbgorilla.errors import MissingDependency, StartupTimeout
from dbgorilla.images import (
    EMBEDDER_IMAGE,
    OFFICIAL_EMBEDDER_IMAGE,
    OFFICIAL_WEAVIATE_IMAGE,
    WEAVIATE_IMAGE,
    Echo,
    build_images,
    docker_client,
    official_images_present,
)
from dbgorilla.services import ServiceStatus

COMPOSE_FILE = Path(__file__).resolve().parents[1] / "docker" / "docker-compose.yml"
DEFAULT_PROJECT = "dbgorilla"
SERVICES = ("weaviate", "t2v-transformers")
IMAGE_CHOICES = ("auto", "local", "official")


def compose_command() -> list[str]:
    """`docker compose` where the plugin answers, else `docker-compose`; a typed error if neither."""
    if shutil.which("docker") is not None:
        probe = subprocess.run(["docker", "compose", "version"], capture_output=True)
        if probe.returncode == 0:
            return ["docker", "compose"]
    if shutil.which("docker-compose") is not None:
        return ["docker-compose"]
    raise MissingDependency("the docker backend needs `docker compose` or `docker-compose`")


def project_name(settings: Settings) -> str:
    """One compose project per state folder, so a test stack never touches the user's."""
    default = Path.home() / ".local" / "state" / "dbgorilla"
    if settings.state_dir.resolve() == default.resolve():
        return DEFAULT_PROJECT
    return f"{DEFAULT_PROJECT}-{hashlib.sha256(str(settings.state_dir.resolve()).encode()).hexdigest()[:10]}"


def image_names(choice: str = "auto", echo: Echo = print) -> dict[str, str]:
    """The compose file's image variables: official images if present (or asked for), else built here."""
    if choice not in IMAGE_CHOICES:
        raise ValueError(f"unknown image choice {choice!r}; choose one of {', '.join(IMAGE_CHOICES)}")
    explicit = {
        key: os.environ[key] for key in ("DBGORILLA_WEAVIATE_IMAGE", "DBGORILLA_EMBEDDER_IMAGE") if key in os.environ
    }
    if len(explicit) == 2:
        return explicit
    if choice == "official" or (choice == "auto" and official_images_present()):
        return {
            "DBGORILLA_WEAVIATE_IMAGE": OFFICIAL_WEAVIATE_IMAGE,
            "DBGORILLA_EMBEDDER_IMAGE": OFFICIAL_EMBEDDER_IMAGE,
        }
    build_images(echo)
    return {"DBGORILLA_WEAVIATE_IMAGE": WEAVIATE_IMAGE, "DBGORILLA_EMBEDDER_IMAGE": EMBEDDER_IMAGE} | explicit


@dataclass
class ComposeStack:
    settings: Settings
    project: str

    @classmethod
    def for_settings(cls, settings: Settings) -> ComposeStack:
        return cls(settings, project_name(settings))

    def environment(self, images: dict[str, str] | None = None) -> dict[str, str]:
        return {
            **os.environ,
            **(images or {}),
            "WEAVIATE_VERSION": WEAVIATE_VERSION,
            "DBGORILLA_WEAVIATE_PORT": str(self.settings.ports.weaviate_http),
            "DBGORILLA_WEAVIATE_GRPC_PORT": str(self.settings.ports.weaviate_grpc),
            "DBGORILLA_EMBEDDER_PORT": str(self.settings.ports.embedder),
        }

    def run(self, *args: str, images: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        command = [*compose_command(), "-f", str(COMPOSE_FILE), "-p", self.project, *args]
        result = subprocess.run(command, env=self.environment(images), capture_output=True, text=True)
        if result.returncode != 0:
            raise StartupTimeout(f"`{' '.join(command)}` failed: {result.stderr[-2000:]}")
        return result

    def containers(self) -> dict[str, object]:
        """This project's containers by service name, running or not."""
        client = docker_client()
        found = client.containers.list(all=True, filters={"label": f"com.docker.compose.project={self.project}"})
        return {container.labels.get("com.docker.compose.service", container.name): container for container in found}

    def up(self, images: str = "auto", echo: Echo = print, timeout: float = 300) -> None:
        names = image_names(images, echo)
        echo(f"docker: images {names['DBGORILLA_WEAVIATE_IMAGE']} and {names['DBGORILLA_EMBEDDER_IMAGE']}")
        self.run("up", "-d", images=names)
        wait_until(self._healthy, timeout, f"docker stack {self.project} (healthchecks)")

    def _healthy(self) -> bool:
        states = self.status()
        stale = [state for state in states if state.state == "stale"]
        if stale:
            raise StartupTimeout(f"docker: {stale[0].name} stopped during start-up: {stale[0].detail}")
        return all(state.running for state in states)

    def down(self, volumes: bool = False) -> None:
        self.run("down", "--remove-orphans", *(["-v"] if volumes else []))

    def has_volume(self) -> bool:
        """True when this project's data volume exists (it holds the data of an earlier stack)."""
        client = docker_client()
        return bool(client.volumes.list(filters={"label": f"com.docker.compose.project={self.project}"}))

    def service_status(self, service: str, container: object | None) -> ServiceStatus:
        """running (healthy), starting, stopped (no container) or stale (exited, with its code)."""
        url = self.settings.weaviate_http_url if service == "weaviate" else self.settings.embedder_url
        if container is None:
            return ServiceStatus(service, "stopped", url)
        state = container.attrs["State"]  # type: ignore[attr-defined]
        name = container.name  # type: ignore[attr-defined]
        if state.get("Status") != "running":
            detail = f"container {name} is {state.get('Status')} (exit code {state.get('ExitCode')}"
            detail += ", killed)" if state.get("ExitCode") == 137 else ")"
            return ServiceStatus(service, "stale", url, detail=detail + "; run `dbgorilla up` again")
        health = state.get("Health", {}).get("Status", "healthy")
        if health == "healthy":
            return ServiceStatus(service, "running", url, state.get("Pid"), f"container {name}")
        return ServiceStatus(service, "starting", url, state.get("Pid"), f"container {name}: {health}")

    def status(self) -> list[ServiceStatus]:
        """Every service's state from one listing of the project's containers (one engine round trip)."""
        containers = self.containers()
        return [self.service_status(name, containers.get(name)) for name in SERVICES]
