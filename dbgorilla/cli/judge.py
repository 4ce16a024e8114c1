"""`dbgorilla judge`: an LLM ranks several runs' predictions per question (the paper's Table 5)."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from dbgorilla.chat import resolve_model
from dbgorilla.cli.console import err, out, say
from dbgorilla.errors import DbGorillaError
from evaluation.judge import (
    LINES_FILE,
    POINTS,
    JudgeLine,
    Judgement,
    common_questions,
    judge_runs,
    write_judgement,
)
from evaluation.judge_reply import ChatJudge
from evaluation.report import load_runs

#: Completion tokens per judgement: an explanation and a ranking of 8 labels fit in ~150; the local
#: server's default of 200 a turn would cut some replies off mid-JSON.
JUDGE_MAX_TOKENS = 512


class NothingJudged(DbGorillaError):
    """Every question failed (each recorded in judge.jsonl): the scores would be empty, not zero."""


def register(app: typer.Typer) -> None:
    app.command("judge")(judge)


def judge(
    run_dirs: Annotated[
        list[Path], typer.Argument(help="Two or more `dbgorilla eval` output directories (results.jsonl inside).")
    ],
    model: Annotated[str | None, typer.Option(help="The judge: a local model, or the endpoint's model name.")] = None,
    base_url: Annotated[str | None, typer.Option(help="Any OpenAI-compatible endpoint (key: OPENAI_API_KEY).")] = None,
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="Output directory (default judgements/<model>-<time>).")
    ] = None,
    limit: Annotated[int | None, typer.Option(min=0, help="Judge the first N shared questions; 0 = all.")] = None,
    case_id: Annotated[list[str] | None, typer.Option("--id", help="Only these question ids (repeatable).")] = None,
    seed: Annotated[int, typer.Option(help="Shuffles the order of the runs per question; the judge's seed too.")] = 0,
    temperature: Annotated[float, typer.Option(min=0.0, help="The judge's sampling temperature.")] = 0.0,
    request_timeout: Annotated[float | None, typer.Option(help="Seconds per judge request.")] = None,
) -> None:
    """Rank the runs' predictions per question with an LLM judge (anonymous, shuffled, identical ones
    merged); report the paper's weighted rank score (100, 70, 50, ... points) and the share ranked 1st."""
    runs = load_runs(run_dirs)
    if len(runs) < 2:
        raise typer.BadParameter(
            f"a ranking needs at least two runs, got {len(runs)}: give two or more run directories",
            param_hint="RUN_DIRS",
        )
    common_questions(runs, limit, case_id)  # an unknown --id fails here, before a local model starts
    chat = resolve_model(model, base_url, echo=say, timeout=request_timeout)
    chat.temperature, chat.seed, chat.max_tokens = temperature, seed, max(chat.max_tokens, JUDGE_MAX_TOKENS)
    asker = ChatJudge(chat)
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", chat.name)
    target = out_dir or Path("judgements") / f"{stem}-{datetime.now():%Y%m%d-%H%M%S}"
    say(f"judge {chat.name}: {len(runs)} runs ({', '.join(run.name for run in runs)}) → {target}/")
    target.mkdir(parents=True, exist_ok=True)
    with (target / LINES_FILE).open("w", encoding="utf-8") as partial:  # each line as it comes: a crash keeps them

        def on_line(line: JudgeLine) -> None:
            _progress(line)
            partial.write(line.model_dump_json() + "\n")
            partial.flush()

        judgement = judge_runs(
            runs, asker, chat.name, seed=seed, limit=limit, ids=case_id, temperature=temperature, on_line=on_line
        )
    judgement.summary.response_format = asker.response_format
    files = write_judgement(judgement, target)
    show(judgement)
    say(f"wrote {', '.join(str(f) for f in files)}")
    if judgement.summary.judged == 0:
        raise NothingJudged(f"no question was judged ({judgement.summary.questions} failed; see {files[0]})")


def _progress(line: JudgeLine) -> None:
    if line.error:
        say(f"{line.id}: {line.error_kind} error: {line.error}")
    else:
        ranks = ", ".join(f"{label}={rank}" for label, rank in (line.ranking or {}).items())
        say(f"{line.id}: {len(line.labels)} distinct predictions, {ranks} ({line.latency_s:.1f} s)")


def show(judgement: Judgement) -> None:
    """The paper's Table 5, with the mean per question and what could not be judged."""
    summary = judgement.summary
    table = Table(title=f"preference ranking by {summary.judge_model} ({summary.questions} questions)")
    for header in ("run", "model", "weighted rank score", "mean / question", "ranked 1st", "judged", "errors"):
        table.add_column(header, justify="left" if header in ("run", "model") else "right", overflow="fold")
    for score in summary.runs:
        share = "n/a" if score.ranked_first_share is None else f"{score.ranked_first_share:.1%}"
        mean = "n/a" if score.mean_score is None else f"{score.mean_score:.1f}"
        table.add_row(
            score.run, score.model, str(score.weighted_score), mean, share, str(score.judged), str(score.errors)
        )
    out.print(table)
    err.print(
        f"points per rank {', '.join(map(str, POINTS))}, 0 beyond; parse errors {summary.parse_errors}, "
        f"endpoint errors {summary.endpoint_errors}; all runs identical on {summary.all_identical}, "
        f"{summary.unique_predictions_mean} distinct predictions per question",
        highlight=False,
    )
    contested = summary.judged - summary.all_identical
    if contested:
        err.print(
            f"position bias: the first prediction shown was ranked 1st in {summary.first_label_ranked_first} of "
            f"{contested} questions ({summary.first_label_expected:.1f} by chance); the shuffle spreads it over "
            "the runs",
            highlight=False,
        )
