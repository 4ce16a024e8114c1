"""How a benchmark run shows its progress: a bar with the running scores on a terminal, a line per
case in a log, and one warning per kind of infrastructure failure (`eval` and `ablate` pass
`run_with_progress` to `evaluation.orchestration.run_repeats`)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from dbgorilla.cli.console import err
from evaluation import runner
from evaluation.protocols import ScoringProtocol
from evaluation.records import EvalRecord
from evaluation.summary import core


def _running_scores(records: list[EvalRecord]) -> str:
    answerable = [r for r in records if r.expected == "call"]
    unanswerable = [r for r in records if r.expected == "abstain"]
    parts = []
    if answerable:
        first, final = core(answerable, ScoringProtocol.FIRST), core(answerable, ScoringProtocol.FINAL)
        parts.append(f"EM(first) {first['exact_match']:.2f}  AST(first) {first['ast_score']:.2f}")
        if final["execution_match_exact"] is not None:
            parts.append(f"EX(final) {final['execution_match_exact']:.2f}")
    if unanswerable:
        said = sum(bool(r.scores.abstained) for r in unanswerable)
        parts.append(f"said it cannot {said}/{len(unanswerable)}")
    return "  ".join(parts)


def run_with_progress(todo: list[Any], context: runner.RunContext, run_dir: Path, concurrency: int) -> None:
    """Run the cases with a progress bar (a line per case when stderr is not a terminal)."""
    started = time.time()
    finished: list[EvalRecord] = []
    with Progress(
        TextColumn("[bold]eval[/]"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[scores]}"),
        console=err,
        transient=False,
    ) as progress:
        task = progress.add_task("eval", total=len(todo), scores="")
        warned: set[str] = set()

        def on_record(record: EvalRecord) -> None:
            finished.append(record)
            progress.update(task, advance=1, scores=_running_scores(finished))
            if not err.is_terminal:  # a bar in a log file or a pipe stays silent until the end
                err.print(
                    f"eval {len(finished)}/{len(todo)} {record.id} {record.outcome.value} "
                    f"{time.time() - started:.0f}s  {_running_scores(finished)}",
                    highlight=False,
                )
            kind = _retried_because(record)
            if kind and kind not in warned:  # once per kind, not once per case
                warned.add(kind)
                progress.console.print(
                    f"[yellow]{kind}[/] from case {record.id} on: such cases are kept and marked, and "
                    f"`dbgorilla eval --out {run_dir} --resume` runs them again once it is back "
                    "(`dbgorilla up` restarts Weaviate)",
                    highlight=False,
                )

        runner.run_cases(todo, context, run_dir, concurrency, on_record)


def _retried_because(record: EvalRecord) -> str | None:
    """What went wrong outside the model's control, if this record will be re-run on resume."""
    if not runner.needs_rerun(record):
        return None
    if record.outcome.value in ("model_error", "timeout"):
        return "the model server is failing"
    return "Weaviate is not answering"
