"""`dbgorilla eval` output directories, read back for the report."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluation.records import EvalRecord, read_results
from evaluation.report.errors import ReportError
from evaluation.runner import RESULTS_FILE, RUN_FILE
from evaluation.summary import summarize


@dataclass
class Run:
    """One `dbgorilla eval` output directory, read back."""

    name: str
    path: Path
    records: list[EvalRecord]
    meta: dict[str, Any]
    summary: dict[str, Any]
    skipped_lines: int = 0
    cost_usd: float | None = None
    #: The line numbers of the unreadable lines `skipped_lines` counts.
    unreadable_lines: list[int] = field(default_factory=list)

    @property
    def model(self) -> str:
        return str(self.meta.get("model") or ", ".join(self.summary["models"]))

    @property
    def tool_design(self) -> str:
        design = self.meta.get("tool_design") or ", ".join(self.summary["tool_designs"])
        return design if isinstance(design, str) else json.dumps(design, sort_keys=True)


def load_run(path: Path, name: str | None = None) -> Run:
    """Like the runner's resume: a later line for an id wins, a line cut off by a crash is skipped (and counted)."""
    if not path.is_dir():
        raise ReportError(f"run directory not found: {path}")
    results = path / RESULTS_FILE
    if not results.is_file():
        raise ReportError(f"{path} has no {RESULTS_FILE}: is it a `dbgorilla eval` output directory?")
    read = read_results(results)  # ResultsFileError: no line of it is a result
    by_id = {record.id: record for record in read.records}
    if not by_id:
        detail = f" ({len(read.unreadable_lines)} unreadable lines)" if read.unreadable else ""
        raise ReportError(f"{results} holds no results{detail}")
    records = [by_id[key] for key in sorted(by_id)]
    lines = read.unreadable_lines
    return Run(
        name or path.name, path, records, _read_meta(path / RUN_FILE), summarize(records), len(lines), None, lines
    )


def load_runs(run_dirs: Sequence[Path]) -> list[Run]:
    """Every run of these directories (one `eval --repeats` wrote stands for its repeats), named as the
    report names them; a directory given twice is an error."""
    paths = expand_repeats([Path(p) for p in run_dirs])
    if len({p.resolve() for p in paths}) < len(paths):
        raise ReportError("a run directory is given twice")
    return [load_run(path, name) for path, name in zip(paths, run_names(paths), strict=True)]


def _read_meta(path: Path) -> dict[str, Any]:
    """run.json is optional (older or interrupted runs): without it everything comes from the records."""
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return {}
    return payload if isinstance(payload, dict) else {}


def run_names(paths: Sequence[Path]) -> list[str]:
    """Directory names, lengthened with parents only where two runs would share one; a repeat keeps its
    parent (`qwen/repeat-2`), which is how the report groups repeats."""
    resolved = [p.resolve() for p in paths]
    for depth in range(1, max(len(p.parts) for p in resolved) + 1):
        names = ["/".join(p.parts[-(depth + p.name.startswith("repeat-")) :]) for p in resolved]
        if len(set(names)) == len(names):
            return names
    return [str(p) for p in resolved]  # the same directory twice


def expand_repeats(paths: Sequence[Path]) -> list[Path]:
    """A directory `eval --repeats K` wrote (no results of its own, `repeat-N` inside) stands for its repeats."""
    expanded = []
    for path in paths:
        repeats = sorted(
            path.glob("repeat-*"), key=lambda p: int(p.name.split("-")[1]) if p.name.split("-")[1].isdigit() else 0
        )
        if not (path / RESULTS_FILE).exists() and any((r / RESULTS_FILE).is_file() for r in repeats):
            expanded.extend(r for r in repeats if (r / RESULTS_FILE).is_file())
        else:
            expanded.append(path)
    return expanded
