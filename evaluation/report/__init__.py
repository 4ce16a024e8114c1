"""`dbgorilla report`: run directories to a leaderboard, per-slice tables, plots and one HTML page.

    from evaluation.report import build_report
    report = build_report([Path("runs/a"), Path("runs/b")], Path("reports/ab"))

`runs` reads the directories, `prices` prices them, `tables` lays out the numbers `metrics`
computed, `plots` draws them and `html` renders the page from `templates/`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from evaluation.report import html, plots
from evaluation.report.built import Report
from evaluation.report.errors import ReportError
from evaluation.report.prices import Price, cost_usd, find_price, load_prices
from evaluation.report.runs import Run, load_run, load_runs
from evaluation.report.tables import (
    Column,
    Table,
    comparison_table,
    complexity_table,
    component_table,
    component_values,
    failure_reasons,
    kind_table,
    leaderboard,
    repeats_table,
    use_case_table,
)


def build_report(run_dirs: Sequence[Path], out_dir: Path, prices_path: Path | None = None) -> Report:
    """Read every run, write the tables (md + csv), the plots (png), report.json and index.html into `out_dir`."""
    if not run_dirs:
        raise ReportError("give at least one run directory")
    prices = load_prices(prices_path)
    runs = load_runs(run_dirs)
    for run in runs:
        run.cost_usd = cost_usd(run.records, prices)
    board = leaderboard(runs)
    order = {row["run"]: i for i, row in enumerate(board.rows)}
    runs.sort(key=lambda run: order[run.name])
    kinds = kind_table(runs)
    tables = [board, use_case_table(runs), complexity_table(runs), component_table(runs), kinds]
    if len(runs) > 1:
        tables.append(comparison_table(runs))
    repeated = repeats_table(runs)
    if repeated.rows:
        tables.append(repeated)
    images = {
        "radar.png": plots.radar_png({run.name: component_values(run) for run in runs}),
        "use_cases.png": plots.use_case_png(tables[1].rows, [run.name for run in runs]),
        "pass_rates.png": plots.pass_rate_png(kinds.rows),
    }
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")

    out_dir.mkdir(parents=True, exist_ok=True)
    files = []
    for table in tables:
        files.append(_write(out_dir / f"{table.name}.md", table.markdown()))
        files.append(_write(out_dir / f"{table.name}.csv", table.csv()))
    for name, png in images.items():
        (out_dir / name).write_bytes(png)
        files.append(out_dir / name)
    report = Report(runs, tables, images, files, generated)
    files.append(_write(out_dir / "report.json", json.dumps(_json_payload(report), indent=2, default=str)))
    files.append(_write(out_dir / "index.html", html.render(report)))
    return report


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _json_payload(report: Report) -> dict[str, Any]:
    """The same numbers for scripts: every table's raw rows and each run's full summary."""
    return {
        "generated": report.generated,
        "tables": {t.name: t.rows for t in report.tables},
        "runs": [
            {"name": r.name, "path": str(r.path), "meta": r.meta, "cost_usd": r.cost_usd, "summary": r.summary}
            for r in report.runs
        ],
    }


__all__ = [
    "Column",
    "Price",
    "Report",
    "ReportError",
    "Run",
    "Table",
    "build_report",
    "cost_usd",
    "failure_reasons",
    "find_price",
    "load_prices",
    "load_run",
    "load_runs",
]
