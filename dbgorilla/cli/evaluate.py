"""`dbgorilla eval` and `dbgorilla score`: options and output over `evaluation.orchestration` (the progress
display is `eval_progress`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from agent import AgentConfig
from agent.tooldef import DEFAULT_OPERATIONS, DEFAULT_TOKEN_BUDGET, ToolDesign
from dbgorilla.chat import token_counter
from dbgorilla.cli.console import NamespaceOption, connected, design_from_flags, err, open_model, say
from dbgorilla.cli.eval_output import show_repeats, show_summary
from dbgorilla.cli.eval_progress import WarmOption, run_with_progress, warms
from dbgorilla.cli.evaluate_public import evaluate_public, public_file
from dbgorilla.cli.strategy_options import DEFAULT_STRATEGY, StrategyOption, check_strategy
from dbgorilla.errors import ConfigError
from evaluation.orchestration import (
    Driver,
    default_run_dir,
    open_executor,
    prepared_directories,
    repeat_directories,
    run_context,
    run_repeats,
    write_repeats,
)
from evaluation.predictions import collection_names, read_predictions, rescore, unknown_schemas
from evaluation.selection import select_questions
from evaluation.strategies import use_strategy
from evaluation.summary import summarize
from fixtures.datasets import read_dataset
from fixtures.index_repair import repair_broken
from fixtures.loader import check_ours, names_of
from fixtures.use_cases import database_schema_of, get_use_cases

LimitOption = Annotated[
    int | None, typer.Option(help="Cases to run; 0 = all. Default: one per collection (15), a few minutes offline.")
]


def register(app: typer.Typer) -> None:
    app.command("eval")(evaluate)
    app.command("score")(score)


def evaluate(
    dataset: Annotated[
        Path | None, typer.Option(help="A split of ours (default: the default split) or a DBGorilla paper-format file.")
    ] = None,
    use_case: Annotated[list[str] | None, typer.Option("--use-case", help="Only these use cases (repeatable).")] = None,
    limit: LimitOption = None,
    case_id: Annotated[list[str] | None, typer.Option("--id", help="Only these case ids (repeatable).")] = None,
    model: Annotated[str | None, typer.Option(help="'oracle', a local model, or the endpoint's model name.")] = None,
    base_url: Annotated[str | None, typer.Option(help="Any OpenAI-compatible endpoint (key: OPENAI_API_KEY).")] = None,
    variant: Annotated[str, typer.Option(help="unified | per-collection")] = "unified",
    rationale: Annotated[bool, typer.Option(help="Require a rationale argument.")] = False,
    parallel: Annotated[bool | None, typer.Option("--parallel/--sequential", help="Send parallel_tool_calls.")] = None,
    structured: Annotated[bool, typer.Option(help="ResponseOrToolCall via response_format.")] = False,
    token_budget: Annotated[int, typer.Option(help="Tool description budget in tokens.")] = DEFAULT_TOKEN_BUDGET,
    operations: Annotated[
        str | None,
        typer.Option(
            help="compound (the default, the agent's tool at every door): any number of conditions joined by "
            "and/or, dates and a sort; paper: the paper's tool exactly; related: the paper's plus a reference "
            "filter, a date filter and a sort."
        ),
    ] = None,
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
    collections: Annotated[
        str | None,
        typer.Option(
            help="For a question file over your own collections (--dataset public): offer these collections, "
            "comma-separated, to every question, and ask only the questions over them."
        ),
    ] = None,
    allow_other_data: Annotated[
        bool, typer.Option("--allow-other-data", help="Run questions whose gold was computed on other data.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON on stdout.")] = False,
    warm: WarmOption = True,
) -> None:
    """Run a model over the benchmark through the live loop; score by arguments and by execution."""
    if resume and overwrite:
        raise ConfigError("choose --resume or --overwrite, not both")
    check_strategy(strategy)
    make_design = partial(design_from_flags, variant, rationale, parallel, structured, token_budget,
                          operations or DEFAULT_OPERATIONS.value)  # fmt: skip
    open_driver = partial(open_model, model, base_url, request_timeout, max_retries, temperature)
    if (public := public_file(dataset)) is not None:
        return _evaluate_public_file(public, collections, limit, case_id, make_design, open_driver, max_steps, commit,
                                     strategy, out_dir, resume, allow_other_data, as_json,
                                     partial(warms, warm, model, base_url))  # fmt: skip
    _evaluate_split(dataset, collections, use_case, limit, case_id, model, base_url, make_design, open_driver,
                    max_steps, out_dir, resume, overwrite, repeats, seed, concurrency, namespace, commit, strategy,
                    as_json, warm)  # fmt: skip


def _evaluate_public_file(
    public: Path,
    collections: str | None,
    limit: int | None,
    case_id: list[str] | None,
    make_design: Callable[[], ToolDesign],
    open_driver: Callable[[], Driver],
    max_steps: int | None,
    commit: bool,
    strategy: str,
    out_dir: Path | None,
    resume: bool,
    allow_other_data: bool,
    as_json: bool,
    warms: Callable[[Driver], bool],
) -> None:
    """A question file over your own collections: run and reported by `evaluate_public`, not the splits' path.
    The flags' tool design and model are made here, in the order this path has always checked them."""
    design = make_design()
    named = [name.strip() for name in collections.split(",") if name.strip()] if collections else None
    config = AgentConfig(max_steps=max_steps or 3, commit_answer=commit)
    driver = open_driver()
    chosen = (limit, case_id, driver, design, strategy, config)
    evaluate_public(public, named, *chosen, out_dir, resume, allow_other_data, as_json, warms(driver))


def _evaluate_split(
    dataset: Path | None,
    collections: str | None,
    use_case: list[str] | None,
    limit: int | None,
    case_id: list[str] | None,
    model: str | None,
    base_url: str | None,
    make_design: Callable[[], ToolDesign],
    open_driver: Callable[[], Driver],
    max_steps: int | None,
    out_dir: Path | None,
    resume: bool,
    overwrite: bool,
    repeats: int,
    seed: int | None,
    concurrency: int,
    namespace: str,
    commit: bool,
    strategy: str,
    as_json: bool,
    warm: bool = False,
) -> None:
    """A split of ours or a paper-format file: the chosen questions run `repeats` times over one connection and
    one model, then the summary (or, repeated, the pass rates) shown. The flags' tool design and model are made
    here, after the questions are chosen, in the order this path has always checked them."""
    if collections:
        raise ConfigError("--collections is for a question file over your own collections (--dataset public)")
    chosen = select_questions(dataset, use_case, limit, case_id, max_steps, echo=say)
    # The paper's tool unless asked, or unless the questions' gold calls need the related slots.
    design = make_design()
    run_dir = out_dir or default_run_dir(model or "offline-default")
    directories = prepared_directories(repeat_directories(run_dir, repeats), resume, overwrite)
    # The model first: one that cannot answer a token stops here, before any data is loaded.
    driver = open_driver()
    with connected() as client:
        executor = open_executor(client, chosen, namespace, echo=say)
        context = run_context(client, executor, chosen, design, driver, token_counter())
        context.config = context.config.model_copy(update={"commit_answer": commit})
        context.warm = warms(warm, model, base_url, driver)
        use_strategy(context, client, strategy, namespace, echo=say)
        summaries, runs = run_repeats(
            context, chosen, driver, directories, seed, base_url, concurrency, echo=say, run_cases=run_with_progress
        )
    if repeats > 1:
        repeated = write_repeats(run_dir, runs)
        if as_json:
            print(json.dumps({"repeats": repeated, "summaries": summaries}, default=str))
        else:
            show_repeats(repeated, run_dir)
    elif as_json:
        print(json.dumps(summaries[0], default=str))
    else:
        show_summary(summaries[0], run_dir)


def score(
    predictions: Annotated[
        Path, typer.Option(exists=True, dir_okay=False, help="Our results.jsonl or a DBGorilla result JSON.")
    ],
    dataset: Annotated[
        Path | None,
        typer.Option(
            help="The dataset the predictions answer: its schema checks the labels and calls, and --execute scores "
            "on its collections (default: the paper set, and the schema a DBGorilla result file carries; our use "
            "cases for results.jsonl)."
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
    given = None
    if dataset is not None:
        try:
            given = read_dataset(dataset).use_cases
        except (FileNotFoundError, KeyError) as error:
            raise ConfigError(str(error).strip('"')) from None
    if execute:
        used = [u for u in get_use_cases() if u.name in {r.use_case for r in records}]
        names = collection_names(records, namespace)  # a DBGorilla file answers the paper set; --dataset says
        if given is not None:
            used, names = given, names_of(given, namespace)
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
        # Offline, labels and calls are checked against the schema --execute would read: the dataset's,
        # the one the file carries, or the use case's.
        schemas = read.schemas if given is None else dict.fromkeys((r.id for r in records), database_schema_of(given))
        guessed = unknown_schemas(records, schemas)
        if guessed:
            err.print(
                f"[yellow]warning:[/] no schema for {len(guessed)} predictions (e.g. {escape(guessed[0])}): their "
                "labels are checked against one read off the calls; name their dataset with --dataset to score "
                "them as eval and --execute do",
                highlight=False,
            )
        records = rescore(records, None, schemas=schemas)
    summary = summarize(records, executed_scoring=execute)
    if as_json:
        print(json.dumps(summary, default=str))
    else:
        show_summary(summary)
