"""`dbgorilla report`: the CLI over `report.build_report`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from dbgorilla.evaluation.report import build_report

console = Console()
err = Console(stderr=True, soft_wrap=True)
TERMINAL_COLUMNS = (
    "run", "model", "exact_match", "ast_score", "routing_accuracy", "no_tool_rate",
    "execution_match_exact", "execution_match_subset", "cost_usd", "cases",
)  # fmt: skip


def register(app: typer.Typer) -> None:
    app.command("report")(report)


def report(
    run_dirs: Annotated[list[Path], typer.Argument(help="`dbgorilla eval` output directories (results.jsonl inside).")],
    out: Annotated[Path, typer.Option(help="Where to write the report.")] = Path("reports"),
    prices: Annotated[
        Path | None, typer.Option(help="JSON price table (USD per 1M tokens) whose models override the shipped one.")
    ] = None,
) -> None:
    """Leaderboard (md, csv), per use case/complexity/component tables, radar plot and one HTML page."""
    result = build_report(run_dirs, out, prices)
    for run in result.runs:
        if run.skipped_lines:
            err.print(
                f"[yellow]warning:[/] {run.path}: skipped {run.skipped_lines} unreadable line(s)", highlight=False
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
    console.print(table)
    err.print(f"wrote {len(result.files)} files to {out}/ (open {out / 'index.html'})", highlight=False)
