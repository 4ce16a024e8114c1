"""Detached child processes tracked by a JSON state file, so a later command can find them.

`dbgorilla up` exits while Weaviate keeps running; `status` and `down` find the server again
through the state file, and tell a live server from a stale record by the pid *and* the
process start time (pids get reused).
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import httpx

from dbgorilla.errors import StartupTimeout


@dataclass
class ProcessRecord:
    name: str
    pid: int
    start_ticks: int
    command: list[str]
    log_path: str
    ports: dict[str, int]
    url: str
    started_at: float

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2))
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> ProcessRecord | None:
        try:
            return cls(**json.loads(path.read_text()))
        except (FileNotFoundError, json.JSONDecodeError, TypeError):
            return None

    def is_alive(self) -> bool:
        return process_start_ticks(self.pid) == self.start_ticks


def process_start_ticks(pid: int) -> int | None:
    """The kernel's start time of `pid`, or None if no such (non-zombie) process exists."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    fields = stat.rsplit(")", 1)[1].split()
    if fields[0] == "Z":
        return None
    return int(fields[19])


def process_cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (FileNotFoundError, PermissionError):
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def process_environ(pid: int) -> dict[str, str]:
    """A process's environment as it started ({} when it cannot be read: gone, or another user's)."""
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except (FileNotFoundError, PermissionError, ProcessLookupError):
        return {}
    pairs = (part.decode(errors="replace").partition("=") for part in raw.split(b"\0") if part)
    return {key: value for key, _, value in pairs}


LISTEN = "0A"
TCP_STATES = {
    "01": "ESTABLISHED", "02": "SYN_SENT", "03": "SYN_RECV", "04": "FIN_WAIT1", "05": "FIN_WAIT2",
    "06": "TIME_WAIT", "07": "CLOSE", "08": "CLOSE_WAIT", "09": "LAST_ACK", "0A": "LISTEN", "0B": "CLOSING",
}  # fmt: skip


def _tcp_sockets(port: int) -> Iterator[tuple[str, int, str]]:
    """(state code, remote port, inode) of every TCP socket whose local port is `port`, from /proc."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except FileNotFoundError:
            continue
        for line in lines:
            parts = line.split()
            if int(parts[1].rsplit(":", 1)[1], 16) == port:
                yield parts[3], int(parts[2].rsplit(":", 1)[1], 16), parts[9]


def pids_listening_on(port: int) -> list[int]:
    """Pids holding a listening TCP socket on `port` (any address), read from /proc."""
    inodes = {inode for state, _, inode in _tcp_sockets(port) if state == LISTEN}
    if not inodes:
        return []
    owners: list[int] = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            for fd in (proc / "fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:[") and target[8:-1] in inodes:
                    owners.append(int(proc.name))
                    break
        except (FileNotFoundError, PermissionError, ProcessLookupError):
            continue
    return owners


#: UDP has no LISTEN state: a socket that receives from anyone is unconnected, which /proc shows as CLOSE.
UDP_UNCONNECTED = "07"


@dataclass(frozen=True)
class Listener:
    """One socket a process accepts connections or datagrams on, as the kernel reports it."""

    protocol: str  # "tcp" or "udp"
    address: str
    port: int
    pid: int

    @property
    def is_loopback(self) -> bool:
        ip = ipaddress.ip_address(self.address)
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        return ip.is_loopback

    def __str__(self) -> str:
        host = f"[{self.address}]" if ":" in self.address else self.address
        return f"{self.protocol} {host}:{self.port} (pid {self.pid}: {' '.join(process_cmdline(self.pid))[:60]})"


def _proc_address(hex_address: str) -> str:
    """/proc/net/{tcp,udp}[6] write an address as 32-bit words in host (little-endian) order."""
    raw = bytes.fromhex(hex_address)
    ordered = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    return str(ipaddress.ip_address(ordered))


def listening_sockets(pid: int) -> list[Listener]:
    """Every TCP socket in LISTEN and every unconnected bound UDP socket that `pid` holds.

    The socket inodes come from /proc/<pid>/fd, their addresses from the process's own network
    namespace (/proc/<pid>/net/...), so a server in a container is read where it really listens.
    """
    try:
        fds = list(Path(f"/proc/{pid}/fd").iterdir())
    except (FileNotFoundError, PermissionError, ProcessLookupError):
        return []
    inodes = set()
    for fd in fds:
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    found: list[Listener] = []
    for protocol, wanted in (("tcp", LISTEN), ("udp", UDP_UNCONNECTED)):
        for table in (f"/proc/{pid}/net/{protocol}", f"/proc/{pid}/net/{protocol}6"):
            try:
                lines = Path(table).read_text().splitlines()[1:]
            except (FileNotFoundError, PermissionError, ProcessLookupError):
                continue
            for line in lines:
                parts = line.split()
                address, port = parts[1].rsplit(":", 1)
                if parts[3] == wanted and parts[9] in inodes:
                    found.append(Listener(protocol, _proc_address(address), int(port, 16), pid))
    return sorted(set(found), key=lambda s: (s.port, s.protocol, s.address))


def descendants(pid: int) -> list[int]:
    """`pid` and every process below it (a server's worker processes hold sockets too)."""
    children: dict[int, list[int]] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            parent = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(proc.name))
    found, queue = [], [pid]
    while queue:
        current = queue.pop()
        found.append(current)
        queue.extend(children.get(current, []))
    return found


def connections_on(port: int) -> list[str]:
    """Non-listening sockets whose local end is `port` (say, a client's source port), from /proc."""
    return [
        f"{TCP_STATES.get(state, state)} to port {remote}" for state, remote, _ in _tcp_sockets(port) if state != LISTEN
    ]


def ephemeral_port_range() -> tuple[int, int] | None:
    """The kernel's range for outgoing connections' source ports (a server port there can be taken)."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
    except (FileNotFoundError, ValueError):
        return None
    return int(low), int(high)


def port_is_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def spawn_detached(
    name: str,
    command: Sequence[str],
    env: Mapping[str, str],
    log_path: Path,
    ports: dict[str, int],
    url: str,
    cwd: Path | None = None,
) -> ProcessRecord:
    """Start `command` in its own session so it outlives the CLI, logging to `log_path`."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            list(command),
            env=dict(env),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            cwd=cwd,
        )
    ticks = None
    for _ in range(50):
        ticks = process_start_ticks(proc.pid)
        if ticks is not None:
            break
        time.sleep(0.01)
    return ProcessRecord(
        name=name,
        pid=proc.pid,
        start_ticks=ticks or -1,
        command=list(command),
        log_path=str(log_path),
        ports=ports,
        url=url,
        started_at=time.time(),
    )


def http_ok(url: str, timeout: float = 2.0) -> bool:
    try:
        return httpx.get(url, timeout=timeout).status_code < 300
    except httpx.HTTPError:
        return False


def wait_until(
    predicate: Callable[[], bool],
    timeout: float,
    what: str,
    alive: Callable[[], bool] | None = None,
    log_path: str | None = None,
) -> None:
    """Poll `predicate` until true; fail fast if the watched process dies meanwhile."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        if alive is not None and not alive():
            raise StartupTimeout(f"{what}: the process exited during start-up{_log_tail(log_path)}")
        time.sleep(0.25)
    raise StartupTimeout(f"{what}: not ready after {timeout:.0f}s{_log_tail(log_path)}")


def _log_tail(log_path: str | None, lines: int = 15) -> str:
    if not log_path:
        return ""
    try:
        tail = Path(log_path).read_text(errors="replace").splitlines()[-lines:]
    except FileNotFoundError:
        return ""
    return f"\n--- last lines of {log_path} ---\n" + "\n".join(tail)


def terminate(pid: int, start_ticks: int | None = None, grace: float = 30.0) -> bool:
    """SIGTERM then, after `grace` seconds, SIGKILL. Returns True if the process is gone."""

    def same_process() -> bool:
        ticks = process_start_ticks(pid)
        return ticks is not None and (start_ticks is None or ticks == start_ticks)

    if not same_process():
        return True
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return True
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        _reap(pid)
        if not same_process():
            return True
        time.sleep(0.1)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return True
    for _ in range(50):
        _reap(pid)
        if not same_process():
            return True
        time.sleep(0.1)
    return False


def _reap(pid: int) -> None:
    """Collect our own exited child so it does not linger as a zombie."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
