"""JSON Schemas of what the project writes, generated from the models that write it.

    python -m dbgorilla.schemas            # (re)write docs/schemas/*.schema.json
    python -m dbgorilla.schemas --check    # exit 1, naming each file that is not current

A consumer of `results.jsonl` or of a `--json` summary validates against these (or generates
types from them) instead of reading our code; tests check that the committed files are current and
that real outputs of the commands validate against them. See docs/schemas/README.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter

from agent import AgentRun
from dbgorilla.doors import mcp_server
from evaluation.audit.report import AuditReport
from evaluation.audit.unanswerable import AbstentionAudit
from evaluation.formats import RepeatedEval, RepeatSummary, RunSummary
from evaluation.records import EvalRecord
from fixtures.loader import LoadReport
from fixtures.use_cases import UseCase

SCHEMA_DIR = Path(__file__).resolve().parents[1] / "docs" / "schemas"
DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _model(model: Any) -> dict[str, Any]:
    """The schema of what `model_dump(mode="json")` (or `json.dumps` of such a dump) writes."""
    if isinstance(model, type) and issubclass(model, BaseModel):
        return model.model_json_schema(mode="serialization")
    return TypeAdapter(model).json_schema(mode="serialization")


def _with_ok(model: type[BaseModel]) -> dict[str, Any]:
    """Reports the CLI prints as `model_dump() | {"ok": report.ok}`."""
    schema = _model(model)
    schema["properties"]["ok"] = {"type": "boolean", "description": "Every target met / every object written."}
    schema["required"] = [*schema.get("required", []), "ok"]
    return schema


def _any_of(*schemas: dict[str, Any]) -> dict[str, Any]:
    """One of several schemas, their `$defs` hoisted to the root where `#/$defs/...` points."""
    definitions: dict[str, Any] = {}
    for schema in schemas:
        definitions |= schema.pop("$defs", {})
    return {"anyOf": list(schemas), **({"$defs": definitions} if definitions else {})}


def _audit() -> dict[str, Any]:
    return _any_of(_model(AuditReport), _with_ok(AbstentionAudit))


#: file stem -> (what writes it, the schema).
FORMATS: dict[str, tuple[str, Callable[[], dict[str, Any]]]] = {
    "results-record": ("One line of RUN_DIR/results.jsonl (`dbgorilla eval`)", lambda: _model(EvalRecord)),
    "eval": (
        "`dbgorilla eval --json`: one run's summary, or with --repeats K > 1 the repeats and each summary",
        lambda: _model(RunSummary | RepeatedEval),
    ),
    "score": ("`dbgorilla score --json` and RUN_DIR/summary.json", lambda: _model(RunSummary)),
    "repeats": ("RUN_DIR/repeats.json (`dbgorilla eval --repeats K`)", lambda: _model(RepeatSummary)),
    "ask": ("`dbgorilla ask --json`: the whole trace of one question", lambda: _model(AgentRun)),
    "audit-dataset": (
        "`dbgorilla audit-dataset --json`: a split's label audit, or an abstention split's audit",
        _audit,
    ),
    "load": ("`dbgorilla load --json`", lambda: _with_ok(LoadReport)),
    "use-cases": ("`dbgorilla use-cases --json`", lambda: _model(list[UseCase])),
    "mcp-ask": ("`dbgorilla mcp`: the structured content of an `ask` result", mcp_server.ask_output_schema),
    "mcp-search": (
        "`dbgorilla mcp`: the structured content of a `search` result",
        lambda: _model(mcp_server.SearchResult),
    ),
    "mcp-query-database": (
        "`dbgorilla mcp`: the structured content of a `query_database` result",
        lambda: _model(mcp_server.QueryDatabaseResult),
    ),
}


def schema_of(name: str) -> dict[str, Any]:
    description, build = FORMATS[name]
    body = build()
    model = body.pop("title", None)
    about = " ".join(body.pop("description", "").split())
    described = f"{description}. {model}: {about}" if model and about else description
    schema = {"$schema": DIALECT, "$id": f"{name}.schema.json", "title": name, "description": described, **body}
    return open_schema(schema)


def open_schema(node: Any) -> Any:
    """The schema without `additionalProperties: false`: a consumer validating today's output keeps
    validating a later version's, which may add keys (our models forbid unknown keys; tests use them)."""
    if isinstance(node, dict):
        return {k: open_schema(v) for k, v in node.items() if not (k == "additionalProperties" and v is False)}
    if isinstance(node, list):
        return [open_schema(v) for v in node]
    return node


def render(name: str) -> str:
    return json.dumps(schema_of(name), indent=2, ensure_ascii=False) + "\n"


def stale(directory: Path = SCHEMA_DIR) -> list[str]:
    """The files that are missing, differ from what the models generate, or have no format any more."""
    wrong = [f"{name}.schema.json" for name in FORMATS if _read(directory / f"{name}.schema.json") != render(name)]
    extra = sorted(p.name for p in directory.glob("*.schema.json") if p.name[: -len(".schema.json")] not in FORMATS)
    return wrong + extra


def _read(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.exists() else None


def write(directory: Path = SCHEMA_DIR) -> list[str]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name in FORMATS:
        path = directory / f"{name}.schema.json"
        if _read(path) != render(name):
            path.write_text(render(name), encoding="utf-8")
            written.append(path.name)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dbgorilla.schemas", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a committed schema is not current")
    parser.add_argument("--out", type=Path, default=SCHEMA_DIR)
    args = parser.parse_args(argv)
    if args.check:
        wrong = stale(args.out)
        for name in wrong:
            print(f"not current: {args.out / name} (run `python -m dbgorilla.schemas`)", file=sys.stderr)
        return 1 if wrong else 0
    written = write(args.out)
    print(f"{len(written)} schemas written to {args.out}: {', '.join(written) or 'all were current'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
