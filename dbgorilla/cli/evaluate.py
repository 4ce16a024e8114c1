"""`dbgorilla eval` and `dbgorilla score`."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from agent import ORACLE, AgentConfig, OpenAIChatModel, ToolDesign
from agent.tooldef import DEFAULT_TOKEN_BUDGET
from dbgorilla.chat import resolve_model, token_counter
from dbgorilla.cli.console import NamespaceOption, connected, design_from_flags, err, say
from dbgorilla.cli.eval_output import show_repeats, show_summary
from dbgorilla.cli.strategy_options import DEFAULT_STRATEGY, StrategyOption, check_strategy
from dbgorilla.errors import ConfigError, InfrastructureFailure
from evaluation import runner
from evaluation.protocols import Protocol
from evaluation.records import EvalRecord
from evaluation.scoring import collection_names, read_predictions, rescore
from evaluation.selection import select_abstentions, select_cases
from evaluation.statistics import passed, rate_with_interval, repeat_summary
from evaluation.strategies import use_strategy
from evaluation.summary import core, summarize
from executors import WeaviateExecutor
from fixtures.datasets import Dataset, read_dataset
from fixtures.index_repair import repair_broken
from fixtures.loader import check_ours, ensure_loaded, names_of
from fixtures.use_cases import UseCase, get_use_cases


def register(app: typer.Typer) -> None:
    app.command("eval")(evaluate)
    app.command("score")(score)


def _running_scores(records: list[EvalRecord]) -> str:
    answerable = [r for r in records if r.expected == "call"]
    unanswerable = [r for r in records if r.expected == "abstain"]
    parts = []
    if answerable:
        first, final = core(answerable, Protocol.FIRST), core(answerable, Protocol.FINAL)
        parts.append(f"EM(first) {first['exact_match']:.2f}  AST(first) {first['ast_score']:.2f}")
        if final["execution_match_exact"] is not None:
            parts.append(f"EX(final) {final['execution_match_exact']:.2f}")
    if unanswerable:
        said = sum(bool(r.scores.abstained) for r in unanswerable)
        parts.append(f"said it cannot {said}/{len(unanswerable)}")
    return "  ".join(parts)


def evaluate(
    dataset: Annotated[
        Path | None, typer.Option(help="A split of ours (default: the default split) or a DBGorilla paper-format file.")
    ] = None,
    use_case: Annotated[list[str] | None, typer.Option("--use-case", help="Only these use cases (repeatable).")] = None,
    limit: Annotated[
        int | None, typer.Option(help="Cases to run; 0 = all. Default: one per collection (15), a few minutes offline.")
    ] = None,
    case_id: Annotated[list[str] | None, typer.Option("--id", help="Only these case ids (repeatable).")] = None,
    model: Annotated[str | None, typer.Option(help="'oracle', a local model, or the endpoint's model name.")] = None,
    base_url: Annotated[str | None, typer.Option(help="Any OpenAI-compatible endpoint (key: OPENAI_API_KEY).")] = None,
    variant: Annotated[str, typer.Option(help="unified | per-collection")] = "unified",
    rationale: Annotated[bool, typer.Option(help="Require a rationale argument.")] = False,
    parallel: Annotated[bool | None, typer.Option("--parallel/--sequential", help="Send parallel_tool_calls.")] = None,
    structured: Annotated[bool, typer.Option(help="ResponseOrToolCall via response_format.")] = False,
    token_budget: Annotated[int, typer.Option(help="Tool description budget in tokens.")] = DEFAULT_TOKEN_BUDGET,
    max_steps: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Model turns per question (default: 3, or one more than the longest gold chain); 1 = the "
            "one-step protocol: the first call only, no answer turn.",
        ),
    ] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Cases in flight.")] = 1,
    request_timeout: Annotated[
        float | None, typer.Option(help="Seconds per model request (default 120; local 300).")
    ] = None,
    max_retries: Annotated[
        int | None, typer.Option(help="Retries on 429/5xx/timeouts, with backoff (default 3).")
    ] = None,
    out_dir: Annotated[Path | None, typer.Option("--out", help="Run directory (default runs/<model>-<time>).")] = None,
    resume: Annotated[bool, typer.Option("--resume", help="Skip the ids already done in --out.")] = False,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Discard earlier results in --out.")] = False,
    repeats: Annotated[
        int, typer.Option(min=1, help="Run every question K times (into --out/repeat-N); report pass@1 and pass^k.")
    ] = 1,
    seed: Annotated[
        int | None, typer.Option(help="Sent to the model as its sampling seed; repeat N gets seed + N - 1.")
    ] = None,
    temperature: Annotated[
        float, typer.Option(min=0.0, help="Sampling temperature (repeats differ only above 0).")
    ] = 0.0,
    namespace: NamespaceOption = "",
    commit: Annotated[bool, typer.Option("--commit/--no-commit", help="Commit a typed answer after the prose.")] = True,
    strategy: StrategyOption = DEFAULT_STRATEGY,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON on stdout.")] = False,
) -> None:
    """Run a model over the benchmark through the live loop; score by arguments and by execution."""
    if resume and overwrite:
        raise ConfigError("choose --resume or --overwrite, not both")
    design = design_from_flags(variant, rationale, parallel, structured, token_budget)
    check_strategy(strategy)
    chosen = select_questions(dataset, use_case, limit, case_id, max_steps)
    model_label = model or "offline-default"
    run_dir = out_dir or Path("runs") / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', model_label)}-{datetime.now():%Y%m%d-%H%M%S}"
    repeat_dirs = [run_dir] if repeats == 1 else [run_dir / f"repeat-{i + 1}" for i in range(repeats)]
    done = [runner.prepare_run_dir(d, resume, overwrite) for d in repeat_dirs]
    # The model first: one that cannot answer a token stops here, before any data is loaded.
    driver = open_model(model, base_url, request_timeout, max_retries, temperature)
    with connected() as client:
        ensure_loaded(client, chosen.needed, echo=say, namespace=namespace)
        executor = WeaviateExecutor(client, names=names_of(chosen.needed, namespace))
        context = run_context(client, executor, chosen, design, driver)
        context.config = context.config.model_copy(update={"commit_answer": commit})
        use_strategy(context, client, strategy, namespace, echo=say)
        summaries, runs = run_repeats(
            context, chosen, driver, list(zip(repeat_dirs, done, strict=True)), seed, base_url, concurrency
        )
    if repeats > 1:
        repeated = repeat_summary(runs)
        (run_dir / "repeats.json").write_text(json.dumps(repeated, indent=2))
        if as_json:
            print(json.dumps({"repeats": repeated, "summaries": summaries}, default=str))
        else:
            show_repeats(repeated, run_dir)
    elif as_json:
        print(json.dumps(summaries[0], default=str))
    else:
        show_summary(summaries[0], run_dir)


@dataclass
class Chosen:
    """The questions a run asks, and what they need loaded."""

    source: Dataset
    cases: list[Any]
    needed: list[UseCase]
    collections: dict[str, list[str]]
    max_steps: int


def select_questions(
    dataset: Path | None,
    use_case: list[str] | None,
    limit: int | None,
    case_id: list[str] | None,
    max_steps: int | None,
) -> Chosen:
    try:
        source = read_dataset(dataset)
    except (FileNotFoundError, KeyError) as error:
        raise ConfigError(str(error).strip('"')) from None
    cases: list[Any] = [
        *select_cases(source.cases, use_case, limit, case_id),
        *select_abstentions(source.abstentions, use_case, limit, case_id),
    ]
    if not cases:
        raise ConfigError("no benchmark cases selected")
    steps = max_steps or max(3, 1 + max(len(c.chain) for c in cases))
    if steps == 1:
        say(
            "one-step protocol (--max-steps 1): each question gets one model turn, its call runs and is "
            "scored under `first`; no answer turn is generated, so the final-answer scores do not apply"
        )
    needed = [u for u in source.use_cases if u.name in {c.use_case for c in cases}]
    return Chosen(source, cases, needed, {u.name: [c.name for c in u.collections] for u in needed}, steps)


@dataclass
class Driver:
    """The model side of a run: its name, the model each case gets, and the chat client (None: oracle)."""

    name: str
    model_for: Callable[[Any], Any]
    chat: OpenAIChatModel | None = None


def open_model(
    model: str | None, base_url: str | None, request_timeout: float | None, max_retries: int | None, temperature: float
) -> Driver:
    if model == ORACLE:
        return Driver(ORACLE, runner.oracle_for)
    chat = resolve_model(model, base_url, echo=say, timeout=request_timeout, max_retries=max_retries)
    chat.temperature = temperature
    return Driver(chat.name, lambda _case: chat, chat)


def run_context(
    client: Any, executor: WeaviateExecutor, chosen: Chosen, design: ToolDesign, driver: Driver
) -> runner.RunContext:
    return runner.RunContext(
        client=client,
        executor=executor,
        scoring=runner.scoring_executor(client, executor),
        tools_for=runner.tools_by_use_case(executor.schema, chosen.collections, design, token_counter()),
        model_for=driver.model_for,
        model_name=driver.name,
        config=AgentConfig(max_steps=chosen.max_steps),
        design=design,
    )


def run_repeats(
    context: runner.RunContext,
    chosen: Chosen,
    driver: Driver,
    directories: list[tuple[Path, set[str]]],
    seed: int | None,
    base_url: str | None,
    concurrency: int,
) -> tuple[list[dict[str, Any]], list[list[EvalRecord]]]:
    """Each repeat into its directory (ids already there skipped), seed + N - 1 for repeat N; returns
    each repeat's summary and records."""
    summaries, runs = [], []
    wanted = {c.id for c in chosen.cases}
    for index, (directory, already) in enumerate(directories):
        run_seed = None if seed is None else seed + index
        if driver.chat is not None:
            driver.chat.seed = run_seed
        started = time.time()
        todo = [c for c in chosen.cases if c.id not in already]
        label = f"repeat {index + 1}/{len(directories)}: " if len(directories) > 1 else ""
        say(f"{label}{len(todo)} cases to run ({len(already)} already done) → {directory / runner.RESULTS_FILE}")
        stopped: runner.InfrastructureStopped | None = None
        try:
            _run_with_progress(todo, context, directory, concurrency)
        except runner.InfrastructureStopped as error:
            stopped = error  # the summary below is still written; it says what failed
        records = [r for r in runner.read_records(directory / runner.RESULTS_FILE) if r.id in wanted]
        summary = summarize(records)
        summary["pass"] = rate_with_interval([passed(r) for r in records])
        runner.write_run_file(
            directory,
            {
                "model": driver.name,
                "base_url": base_url,
                "tool_design": context.design.label(),
                "strategy": context.strategy,
                "strategy_setup": context.strategy_setup,
                "dataset": chosen.source.source,
                "cases": len(chosen.cases),
                "concurrency": concurrency,
                "max_steps": chosen.max_steps,
                "seed": run_seed,
                "temperature": None if driver.chat is None else driver.chat.temperature,
                "started": datetime.fromtimestamp(started, timezone.utc).isoformat(),
                "wall_time_s": round(time.time() - started, 2),
            },
        )
        (directory / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
        if stopped is not None:
            raise stopped
        if summary["infrastructure_failure"]:
            raise InfrastructureFailure(
                f"every case in {directory} failed on the infrastructure (model server, Weaviate or scoring), "
                f"so nothing was scored; see `error` in {directory / runner.RESULTS_FILE}, then run again with "
                f"`--out {directory} --resume`"
            )
        summaries.append(summary)
        runs.append(records)
    return summaries, runs


def _run_with_progress(todo: list[Any], context: runner.RunContext, run_dir: Path, concurrency: int) -> None:
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


def score(
    predictions: Annotated[
        Path, typer.Option(exists=True, dir_okay=False, help="Our results.jsonl or a DBGorilla result JSON.")
    ],
    dataset: Annotated[
        Path | None,
        typer.Option(
            help="The dataset the predictions answer, whose collections --execute scores on (default: the paper "
            "set for a DBGorilla result file, our use cases for results.jsonl)."
        ),
    ] = None,
    execute: Annotated[bool, typer.Option("--execute", help="Also score execution match on the loaded data.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON on stdout.")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="A line that is not a prediction is an error.")] = False,
    namespace: NamespaceOption = "",
) -> None:
    """Score predictions without calling a model."""
    read = read_predictions(predictions, strict)  # nothing readable (or, --strict, a bad line): exit 10, named
    if read.skipped_count:
        err.print(f"[yellow]warning:[/] {escape(read.skipped_message(predictions))}", highlight=False)
    records = read.records
    if execute:
        used = [u for u in get_use_cases() if u.name in {r.use_case for r in records}]
        names = collection_names(records, namespace)  # a DBGorilla file answers the paper set; --dataset says
        if dataset is not None:
            try:
                used = read_dataset(dataset).use_cases
            except (FileNotFoundError, KeyError) as error:
                raise ConfigError(str(error).strip('"')) from None
            names = names_of(used, namespace)
        with connected() as client:
            check_ours(client, used, namespace)
            repair_broken(client, [names.physical(c.name) for u in used for c in u.collections], echo=say)
            records = rescore(records, client, names)
        failed = [r for r in records if r.ground_truth_error]
        if records and len(failed) == len(records):  # nothing was executed: scores would be a column of zeros
            raise ConfigError(
                f"no ground truth of the {len(records)} predictions ran ({failed[0].ground_truth_error}); "
                "load the dataset they answer first (`dbgorilla load --dataset FILE`), or name it with --dataset"
            )
    else:
        records = rescore(records, None)
    summary = summarize(records, executed_scoring=execute)
    if as_json:
        print(json.dumps(summary, default=str))
    else:
        show_summary(summary)
