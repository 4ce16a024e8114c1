"""How a benchmark run shows its progress: a bar with the running scores on a terminal, a line per
case in a log, and one warning per kind of infrastructure failure (`eval` and `ablate` pass
`run_with_progress` to `evaluation.orchestration.run_repeats`)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from agent.session import Warmed, warm_one
from dbgorilla.chat import LOCAL, model_provider
from dbgorilla.cli.console import err
from evaluation import runner
from evaluation.orchestration import Driver
from evaluation.protocols import ScoringProtocol
from evaluation.records import EvalRecord
from evaluation.summary import core
from llm import ChatRequest, ModelError

WarmOption = Annotated[
    bool,
    typer.Option(
        "--warm/--no-warm",
        help="The local model evaluates each use case's prompt prefixes once before the questions (an endpoint "
        "is never warmed).",
    ),
]


def warms(warm: bool, model: str | None, base_url: str | None, driver: Driver) -> bool:
    """Whether the run warms its model first: asked, a chat model, and a local one (an endpoint's tokens cost)."""
    return warm and driver.chat is not None and model_provider(model, base_url)[0] == LOCAL


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
    """Run the cases with a progress bar (a line per case when stderr is not a terminal), the local model
    warmed first where the run asks for it (`RunContext.warm`)."""
    if context.warm and todo:
        warm_with_progress(todo, context)
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


def warm_with_progress(todo: list[Any], context: runner.RunContext) -> list[Warmed]:
    """Each use case's prompt prefixes evaluated once before the cases (`runner.openings_of`), with a bar
    that says what is prepared and, after the first, how long the rest will take. Cold, the first question
    of each collection paid its system turn inside its own latency; now every question is timed warm. A
    model error here is said and the run goes on: the cases record their own."""
    openings = runner.openings_of(todo, context)
    use_cases = len({case.use_case for case in todo if case.use_case in context.tools_for})
    return warm_openings(openings, f"{len(openings)} prompt prefixes of {use_cases} use case{'s' * (use_cases != 1)}")


def warm_openings(openings: list[tuple[Any, ChatRequest]], what: str) -> list[Warmed]:
    """The openings sent once each (`warm_one`) under a bar that says `what` they are and how long the rest
    takes; a model error is said and ends the warming, as the questions record their own."""
    started, warmed = time.time(), []
    with Progress(
        TextColumn("[bold]warm[/]"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
        TextColumn(what),
        console=err,
        transient=False,
    ) as progress:
        task = progress.add_task("warm", total=len(openings))
        if not err.is_terminal:
            err.print(f"warm: {what}, evaluated once so each question starts from them", highlight=False)
        for model, opening in openings:
            try:
                warmed.append(warm_one(model, opening))
            except ModelError as error:
                progress.console.print(f"[yellow]not warmed[/]: {error}", highlight=False)
                break
            progress.update(task, advance=1)
    new = sum(w.prompt_tokens - (w.cached_tokens or 0) for w in warmed)
    err.print(
        f"warm: {len(warmed)} of {len(openings)} prefixes in {time.time() - started:.0f} s, "
        f"{new:,} of {sum(w.prompt_tokens for w in warmed):,} prompt tokens evaluated now",
        highlight=False,
    )
    return warmed
