"""`dbgorilla report`: the CLI over `report.build_report`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from dbgorilla.cli.console import err, out
from evaluation.report import build_report
from evaluation.report.errors import ReportError
from evaluation.report.public import REPORT_JSON, REPORT_MD, is_public_run, public_report
from evaluation.report.public import render as render_public

TERMINAL_COLUMNS = (
    "run", "model", "first.exact_match", "first.ast_score", "first.routing_accuracy", "no_tool_rate",
    "first.execution_match_exact", "final.execution_match_exact", "final.execution_f1", "answer_accuracy",
    "cost_usd", "cases",
)  # fmt: skip


def register(app: typer.Typer) -> None:
    app.command("report")(report)


def report(
    run_dirs: Annotated[list[Path], typer.Argument(help="`dbgorilla eval` output directories (results.jsonl inside).")],
    out_dir: Annotated[Path, typer.Option("--out", help="Where to write the report.")] = Path("reports"),
    prices: Annotated[
        Path | None, typer.Option(help="JSON price table (USD per 1M tokens) whose models override the shipped one.")
    ] = None,
) -> None:
    """Leaderboard (md, csv), per use case/complexity/component tables, radar plot and one HTML page; for runs
    over a question file of your own collections, pass rates by kind and shape, paired, with cost and time."""
    public = [is_public_run(path) for path in run_dirs]
    if any(public):
        if not all(public):
            raise ReportError("runs over your own collections and runs of our splits cannot share one report")
        payload = public_report(run_dirs, out_dir, prices)
        out.print(render_public(payload), highlight=False, markup=False)
        err.print(f"wrote {out_dir / REPORT_MD} and {out_dir / REPORT_JSON}", highlight=False)
        return
    result = build_report(run_dirs, out_dir, prices)
    for run in result.runs:
        if run.skipped_lines:
            numbers = ", ".join(map(str, run.unreadable_lines[:10])) + (", ..." if run.skipped_lines > 10 else "")
            err.print(
                f"[yellow]warning:[/] {run.path}: skipped {run.skipped_lines} unreadable line(s) of "
                f"results.jsonl (line {numbers})",
                highlight=False,
            )
        if run.cost_usd is None:
            err.print(f"[yellow]note:[/] no price for model {run.model!r}: cost n/a (see --prices)", highlight=False)
    board = result.table("leaderboard")
    columns = [c for c in board.columns if c.key in TERMINAL_COLUMNS]
    table = Table(title="leaderboard")
    for column in columns:
        table.add_column(column.header, justify="left" if column.kind == "text" else "right", overflow="fold")
    for row in board.rows:
        table.add_row(*(c.show(row.get(c.key)) for c in columns))
    out.print(table)
    err.print(f"wrote {len(result.files)} files to {out_dir}/ (open {out_dir / 'index.html'})", highlight=False)
