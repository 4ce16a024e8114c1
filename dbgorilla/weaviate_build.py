"""Build the pinned `weaviate-server` from the Go module proxy into the cache, once."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from dbgorilla.config import WEAVIATE_SERVER_PACKAGE, WEAVIATE_VERSION, weaviate_binary_path
from dbgorilla.errors import BuildFailed, MissingDependency


def build_weaviate(
    version: str = WEAVIATE_VERSION,
    force: bool = False,
    echo: Callable[[str], None] = print,
) -> Path:
    """Return the cached binary, building it with the machine's Go first if it is missing."""
    target = weaviate_binary_path(version)
    if target.exists() and not force:
        return target
    go = shutil.which("go")
    if go is None:
        raise MissingDependency("`go` is not on PATH: the binary backend builds weaviate-server from source")
    target.parent.mkdir(parents=True, exist_ok=True)
    echo(f"building weaviate-server v{version} with {_go_version(go)} (a few minutes on 2 cores)...")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(dir=target.parent) as gobin:
        env = {**os.environ, "GOBIN": gobin, "CGO_ENABLED": os.environ.get("CGO_ENABLED", "1")}
        command = [go, "install", "-trimpath", "-ldflags=-s -w", f"{WEAVIATE_SERVER_PACKAGE}@v{version}"]
        result = subprocess.run(command, env=env, capture_output=True, text=True)
        built = Path(gobin) / "weaviate-server"
        if result.returncode != 0 or not built.exists():
            raise BuildFailed(f"`{' '.join(command)}` failed:\n{result.stderr[-3000:]}")
        built.replace(target)
    echo(f"built {target} in {time.monotonic() - started:.0f}s")
    return target


def _go_version(go: str) -> str:
    return subprocess.run([go, "version"], capture_output=True, text=True).stdout.strip()
