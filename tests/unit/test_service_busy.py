"""A service of ours that is alive but does not answer (busy with another client's requests) is named as such,
not as one that failed to start: an eval beside a busy model server read "not ready after 180s" (2026-12-02)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dbgorilla import _process
from dbgorilla.errors import StartupTimeout
from dbgorilla.services import LocalService
from tests.conftest import fresh_settings


class Silent(LocalService):
    """A server that accepts connections and never replies, as one busy with a long request does."""

    name = "silent"
    ready_path = "/v1/models"
    startup_timeout = 3.0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.settings.ports.model}"

    def ports(self) -> dict[str, int]:
        return {"http": self.settings.ports.model}

    def command(self) -> list[str]:
        port = self.settings.ports.model
        listen = f"import socket,time; s=socket.socket(); s.bind(('127.0.0.1',{port})); s.listen(); time.sleep(60)"
        return [sys.executable, "-c", listen]

    def is_own_process(self, cmdline: list[str]) -> bool:
        return cmdline[:2] == [sys.executable, "-c"]


def test_a_running_service_that_does_not_answer_is_named_busy_and_left_running(tmp_path: Path) -> None:
    service = Silent(fresh_settings(tmp_path))
    service.settings.run_dir.mkdir(parents=True, exist_ok=True)
    record = _process.spawn_detached(
        service.name, service.command(), service.environment(), service.log_path, service.ports(), service.url
    )
    record.save(service.record_path)
    try:
        with pytest.raises(StartupTimeout, match=r"already running .* may be busy with another client"):
            service.start(echo=lambda _: None)
        assert record.is_alive(), "another client's server is not stopped for it"
        assert service.record_path.exists()
    finally:
        _process.terminate(record.pid, record.start_ticks, grace=1)
