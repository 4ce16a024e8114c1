"""Build the pinned `weaviate-server` from the Go module proxy into the cache, once.

The build carries one small source patch, applied to a copy of the module's source (the Go
module cache stays untouched). Weaviate v1.39.3 opens its public gRPC port and its cluster data
port with `":%d"`, on every interface, and has no setting to change that (its HTTP port has
`--host`; gossip, Raft and Raft RPC follow `CLUSTER_BIND_ADDR`; profiling has
`GO_PROFILING_DISABLE`). The patch binds those two where the rest already can be bound:

- gRPC on `DBGORILLA_GRPC_BIND_ADDR` (our name, since Weaviate has none),
- the data port (cluster REST and internal gRPC) on `CLUSTER_BIND_ADDR`, beside gossip and Raft.

Unset, both mean every interface, as upstream does, so the docker image made from this binary
(dbgorilla/images.py) behaves as the official one. See docs/security.md.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dbgorilla.config import WEAVIATE_GO_MODULE, WEAVIATE_SERVER_PACKAGE, WEAVIATE_VERSION, weaviate_binary_path
from dbgorilla.errors import BuildFailed, MissingDependency


@dataclass(frozen=True)
class SourcePatch:
    """Replace `old` by `new` in one file of the Weaviate module; `old` must occur exactly once."""

    path: str
    old: str
    new: str


LISTEN_PATCHES: tuple[SourcePatch, ...] = (
    SourcePatch(
        "adapters/handlers/grpc/server.go",
        'net.Listen("tcp", fmt.Sprintf(":%d",\n\t\tstate.ServerConfig.Config.GRPC.Port))',
        'net.Listen("tcp", net.JoinHostPort(os.Getenv("DBGORILLA_GRPC_BIND_ADDR"),\n'
        "\t\tstrconv.Itoa(state.ServerConfig.Config.GRPC.Port)))",
    ),
    SourcePatch("adapters/handlers/grpc/server.go", 'import (\n\t"context"\n', 'import (\n\t"context"\n\t"os"\n'),
    SourcePatch(
        "adapters/handlers/rest/clusterapi/serve.go",
        'Addr:      fmt.Sprintf(":%d", port),',
        "Addr:      net.JoinHostPort(appState.ServerConfig.Config.Cluster.BindAddr, strconv.Itoa(port)),",
    ),
    SourcePatch("adapters/handlers/rest/clusterapi/serve.go", '\t"fmt"\n', '\t"net"\n\t"strconv"\n'),
    SourcePatch(
        "adapters/handlers/rest/clusterapi/grpc/server.go",
        'net.Listen("tcp", fmt.Sprintf(":%d",\n\t\ts.state.ServerConfig.Config.Cluster.DataBindPort))',
        'net.Listen("tcp", net.JoinHostPort(s.state.ServerConfig.Config.Cluster.BindAddr,\n'
        "\t\tstrconv.Itoa(s.state.ServerConfig.Config.Cluster.DataBindPort)))",
    ),
    SourcePatch("adapters/handlers/rest/clusterapi/grpc/server.go", '\t"fmt"\n', '\t"strconv"\n'),
)


def patch_digest(patches: tuple[SourcePatch, ...] = LISTEN_PATCHES) -> str:
    """Names the patch a binary was built with, so a binary built without it (or another) is rebuilt."""
    return hashlib.sha256(json.dumps([[p.path, p.old, p.new] for p in patches]).encode()).hexdigest()[:16]


def marker_path(version: str = WEAVIATE_VERSION) -> Path:
    return weaviate_binary_path(version).with_name("weaviate-server.patch")


def is_current(version: str = WEAVIATE_VERSION) -> bool:
    """The cached binary exists and was built with today's patch."""
    marker = marker_path(version)
    return weaviate_binary_path(version).exists() and marker.exists() and marker.read_text().strip() == patch_digest()


def patched_sources(module_dir: Path, patches: tuple[SourcePatch, ...] = LISTEN_PATCHES) -> dict[str, str]:
    """Each patched file's new text, by path in the module; BuildFailed when the source is not as expected."""
    texts: dict[str, str] = {}
    for patch in patches:
        text = texts.get(patch.path)
        if text is None:
            try:
                text = (module_dir / patch.path).read_text()
            except FileNotFoundError as error:
                raise BuildFailed(f"the listen-address patch expects {patch.path} in {module_dir}") from error
        count = text.count(patch.old)
        if count != 1:
            raise BuildFailed(
                f"the listen-address patch expects {patch.old!r} once in {patch.path}, found it {count} times: "
                "the Weaviate version changed, so dbgorilla/weaviate_build.py LISTEN_PATCHES needs updating"
            )
        texts[patch.path] = text.replace(patch.old, patch.new)
    return texts


def module_dir(go: str, version: str = WEAVIATE_VERSION) -> Path:
    """The Weaviate module's source in the Go module cache, downloaded through the proxy if absent."""
    command = [go, "mod", "download", "-json", f"{WEAVIATE_GO_MODULE}@v{version}"]
    result = subprocess.run(command, capture_output=True, text=True, cwd=tempfile.gettempdir())
    try:
        return Path(json.loads(result.stdout)["Dir"])
    except (ValueError, KeyError) as error:
        raise BuildFailed(f"`{' '.join(command)}` failed:\n{(result.stderr or result.stdout)[-3000:]}") from error


def build_weaviate(
    version: str = WEAVIATE_VERSION,
    force: bool = False,
    echo: Callable[[str], None] = print,
) -> Path:
    """Return the cached binary, building it with the machine's Go first if it is missing or unpatched."""
    target = weaviate_binary_path(version)
    if is_current(version) and not force:
        return target
    go = shutil.which("go")
    if go is None:
        raise MissingDependency("`go` is not on PATH: the binary backend builds weaviate-server from source")
    target.parent.mkdir(parents=True, exist_ok=True)
    why = "with the listen-address patch" if target.exists() else "(a few minutes on 2 cores)"
    echo(f"building weaviate-server v{version} with {_go_version(go)} {why}...")
    started = time.monotonic()
    source_dir = module_dir(go, version)
    sources = patched_sources(source_dir)
    with tempfile.TemporaryDirectory(dir=target.parent) as work:
        # `go build -overlay` refuses files in the module cache, so the module is built from a copy.
        tree = Path(work) / "weaviate"
        shutil.copytree(source_dir, tree, copy_function=shutil.copyfile)
        for folder, _, _ in os.walk(tree):
            os.chmod(folder, 0o755)
        for path, text in sources.items():
            (tree / path).write_text(text)
        built = Path(work) / "weaviate-server"
        env = {**os.environ, "CGO_ENABLED": os.environ.get("CGO_ENABLED", "1")}
        command = [
            go,
            "build",
            "-trimpath",
            "-buildvcs=false",
            "-ldflags=-s -w",
            "-o",
            str(built),
            "." + WEAVIATE_SERVER_PACKAGE.removeprefix(WEAVIATE_GO_MODULE),
        ]
        result = subprocess.run(command, env=env, cwd=tree, capture_output=True, text=True)
        if result.returncode != 0 or not built.exists():
            raise BuildFailed(f"`{' '.join(command)}` in a copy of {source_dir} failed:\n{result.stderr[-3000:]}")
        built.replace(target)
    marker_path(version).write_text(patch_digest() + "\n")
    echo(f"built {target} in {time.monotonic() - started:.0f}s")
    return target


def _go_version(go: str) -> str:
    return subprocess.run([go, "version"], capture_output=True, text=True).stdout.strip()


if __name__ == "__main__":  # `python3 -m dbgorilla.weaviate_build`: the standard library alone, before any venv
    import sys

    try:
        print(f"weaviate-server v{WEAVIATE_VERSION}: {build_weaviate()}")
    except (BuildFailed, MissingDependency) as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(1)
