"""Run shown programs, as written, in this one fresh interpreter; print each one's responses as JSON.

    python _run_snippets.py PROGRAMS.json HOST PORT GRPC_PORT > RESPONSES.json

PROGRAMS.json is a list of `QueryResult.program()` texts. Each is executed whole (its imports, its
`weaviate.connect_to_local(...)`, `client.collections.get`, its calls and prints). The only change
is that the connection is opened once for all of them: `weaviate.connect_to_local` returns one
shared client (whose `close` is deferred to the end) and records the arguments each program gave
it. What each program printed is kept, and every response variable it left (`hits`, `objects`,
`count`, `aggregate`, `groups`, `group_samples`) is written out as plain JSON for the test to read.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import sys
from datetime import date, datetime
from pathlib import Path
from typing import Any

import weaviate

PURPOSES = ("hits", "objects", "count", "aggregate", "groups", "group_samples")


def _metrics(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return {key: item for key, item in vars(value).items() if not key.startswith("_")}


def _object(obj: Any) -> dict[str, Any]:
    references = getattr(obj, "references", None) or {}
    return {
        "uuid": str(obj.uuid),
        "properties": obj.properties or {},
        "metadata": {"distance": obj.metadata.distance, "score": obj.metadata.score},
        "references": {name: [str(t.uuid) for t in ref.objects] for name, ref in references.items()},
    }


def dump(response: Any) -> Any:
    """A response as plain data: objects, or an aggregation (with its groups)."""
    if response is None:
        return None
    if hasattr(response, "objects"):
        return {"objects": [_object(obj) for obj in response.objects]}
    if hasattr(response, "groups"):
        groups = [
            {
                "grouped_by": {"value": group.grouped_by.value},
                "total_count": group.total_count,
                "properties": {name: _metrics(m) for name, m in group.properties.items()},
            }
            for group in response.groups
        ]
        return {"groups": groups}
    return {
        "total_count": response.total_count,
        "properties": {name: _metrics(m) for name, m in response.properties.items()},
    }


def _plain(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime | date) else str(value)


def main(programs_path: str, host: str, port: str, grpc_port: str) -> None:
    programs = json.loads(Path(programs_path).read_text(encoding="utf-8"))
    shared = weaviate.connect_to_local(host=host, port=int(port), grpc_port=int(grpc_port))
    close, connections = shared.close, []
    shared.close = lambda: None  # type: ignore[method-assign]

    def connect_to_local(**kwargs: Any) -> Any:
        connections.append(kwargs)
        return shared

    weaviate.connect_to_local = connect_to_local  # type: ignore[assignment]
    out = []
    try:
        for program in programs:
            namespace: dict[str, Any] = {"__name__": "__main__"}
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                exec(compile(program, "<shown program>", "exec"), namespace)
            responses = {purpose: dump(namespace[purpose]) for purpose in PURPOSES if purpose in namespace}
            out.append({"connection": connections.pop(), "printed": printed.getvalue(), "responses": responses})
    finally:
        close()
    json.dump(out, sys.stdout, default=_plain)


if __name__ == "__main__":
    main(*sys.argv[1:5])
