"""The report `build_report` makes and `html` renders: in a module of its own, so the page's renderer
does not import the package that calls it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evaluation.report.runs import Run
from evaluation.report.tables import Table


@dataclass
class Report:
    runs: list[Run]
    tables: list[Table]
    images: dict[str, bytes]
    files: list[Path]
    generated: str

    def table(self, name: str) -> Table:
        return next(t for t in self.tables if t.name == name)
