"""Shared by the backend benchmarks: private stacks on free loopback ports, driven through the CLI."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dbgorilla.config import Ports, Settings
from tests.conftest import free_port_pairs, settings_env


def private_settings(root: Path, name: str, ports: Ports | None = None) -> Settings:
    """A state folder of its own and free ports, so a running `dbgorilla up` is never touched."""
    if ports is None:
        p = free_port_pairs(7)
        ports = Ports(
            weaviate_http=p[0], weaviate_grpc=p[1], embedder=p[2], model=p[3], gossip=p[4], raft=p[5], profiling=p[6]
        )
    return Settings(state_dir=root / name, ports=ports)


def cli(settings: Settings, *args: str, env: dict[str, str] | None = None) -> tuple[float, str]:
    """Run `dbgorilla ARGS` against `settings`; (seconds, stdout), or exit with its stderr."""
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "dbgorilla", *args],
        env=settings_env(settings) | (env or {}),
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise SystemExit(f"dbgorilla {' '.join(args)} failed: {result.stderr[-1500:]}")
    return time.perf_counter() - started, result.stdout
