"""Issue 29 without a server: the socket reader, the compose file's publishing, the build's patch."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from dbgorilla import weaviate_build
from dbgorilla._process import listening_sockets
from dbgorilla.compose import COMPOSE_FILE
from dbgorilla.config import WEAVIATE_GO_MODULE, WEAVIATE_VERSION, weaviate_binary_path
from dbgorilla.errors import BuildFailed


def test_the_reader_tells_loopback_from_every_interface() -> None:
    """The live tests rely on this reader; here it must see an open socket as open, or they prove nothing."""
    opened = [
        (socket.AF_INET, socket.SOCK_STREAM, "127.0.0.1"),
        (socket.AF_INET, socket.SOCK_STREAM, "0.0.0.0"),
        (socket.AF_INET6, socket.SOCK_STREAM, "::1"),
        (socket.AF_INET6, socket.SOCK_STREAM, "::"),
        (socket.AF_INET, socket.SOCK_DGRAM, "127.0.0.1"),
        (socket.AF_INET, socket.SOCK_DGRAM, "0.0.0.0"),
    ]
    sockets, expected = [], {}
    try:
        for family, kind, host in opened:
            sock = socket.socket(family, kind)
            sockets.append(sock)
            sock.bind((host, 0))
            if kind == socket.SOCK_STREAM:
                sock.listen()
            protocol = "tcp" if kind == socket.SOCK_STREAM else "udp"
            expected[(protocol, sock.getsockname()[1])] = (host, host in ("127.0.0.1", "::1"))
        seen = {(s.protocol, s.port): (s.address, s.is_loopback) for s in listening_sockets(os.getpid())}
        assert {key: seen.get(key) for key in expected} == expected
    finally:
        for sock in sockets:
            sock.close()


def test_a_connected_udp_socket_is_not_a_listener() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.connect(("127.0.0.1", 9))  # a DNS lookup's socket looks like this: it only hears its peer
        port = sock.getsockname()[1]
        assert ("udp", port) not in {(s.protocol, s.port) for s in listening_sockets(os.getpid())}


def test_compose_publishes_http_and_grpc_on_loopback_and_nothing_of_the_cluster() -> None:
    import yaml

    services = yaml.safe_load(COMPOSE_FILE.read_text())["services"]
    published = {name: service.get("ports", []) for name, service in services.items()}
    assert all(port.startswith("127.0.0.1:") for ports in published.values() for port in ports), published
    targets = {name: sorted(port.rsplit(":", 1)[1] for port in ports) for name, ports in published.items()}
    assert targets == {"weaviate": ["50051", "8080"], "t2v-transformers": ["8080"]}, "gossip, Raft, profiling stay in"
    assert not any("network_mode" in service for service in services.values()), "host networking publishes all"
    env = services["weaviate"]["environment"]
    assert env["CLUSTER_BIND_ADDR"] == "127.0.0.1" and env["GO_PROFILING_DISABLE"] == "true"


def _pinned_module() -> Path:
    go = shutil.which("go")
    if go is None:
        pytest.skip("no `go` on PATH")
    result = subprocess.run([go, "env", "GOMODCACHE"], capture_output=True, text=True)
    source = Path(result.stdout.strip()) / f"{WEAVIATE_GO_MODULE}@v{WEAVIATE_VERSION}"
    if not source.is_dir():
        pytest.skip(f"Weaviate v{WEAVIATE_VERSION} is not in the Go module cache yet ({source})")
    return source


def test_the_listen_patch_applies_to_the_pinned_source_and_leaves_no_wildcard_listener() -> None:
    source = _pinned_module()
    patched = weaviate_build.patched_sources(source)
    assert sorted(patched) == [
        "adapters/handlers/grpc/server.go",
        "adapters/handlers/rest/clusterapi/grpc/server.go",
        "adapters/handlers/rest/clusterapi/serve.go",
    ]
    for path, text in patched.items():
        assert 'Sprintf(":%d"' not in text, path
        assert "net.JoinHostPort(" in text, path
    assert 'os.Getenv("DBGORILLA_GRPC_BIND_ADDR")' in patched["adapters/handlers/grpc/server.go"]


def test_a_changed_source_fails_the_build_with_the_reason(tmp_path: Path) -> None:
    source = _pinned_module()
    copy = tmp_path / "adapters/handlers/grpc"
    copy.mkdir(parents=True)
    text = (source / "adapters/handlers/grpc/server.go").read_text()
    (copy / "server.go").write_text(text.replace('fmt.Sprintf(":%d"', 'fmt.Sprintf("0.0.0.0:%d"'))
    with pytest.raises(BuildFailed, match="LISTEN_PATCHES needs updating"):
        weaviate_build.patched_sources(tmp_path)


def test_a_binary_built_without_the_patch_is_built_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DBGORILLA_CACHE", str(tmp_path))
    binary = weaviate_binary_path()
    binary.parent.mkdir(parents=True)
    binary.write_bytes(b"an upstream build")
    assert not weaviate_build.is_current(), "no marker: built before the patch"
    weaviate_build.marker_path().write_text("0123456789abcdef\n")
    assert not weaviate_build.is_current(), "another patch"
    weaviate_build.marker_path().write_text(weaviate_build.patch_digest() + "\n")
    assert weaviate_build.is_current()
