"""The orchestration of a benchmark run, below the CLI (`dbgorilla eval` and `ablate` are thin leaves over it).

    chosen = select_questions(dataset, use_cases, limit, ids, max_steps)     # evaluation.selection
    driver = oracle_driver() if model == ORACLE else chat_driver(chat, temperature)
    executor = open_executor(client, chosen, namespace)                    # loads what they need
    context = run_context(client, executor, chosen, design, driver, counter)
    summaries, runs = run_repeats(context, chosen, driver, prepared_directories(dirs, resume, overwrite), ...)

Each repeat goes into its own directory with its results.jsonl, run.json and summary.json; how a
case runs and is scored is `evaluation.runner`; the progress display is the caller's (`run_cases`).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from agent import ORACLE, AgentConfig, ToolDesign
from agent.tokens import TokenCounter
from evaluation import runner
from evaluation.records import EvalRecord
from evaluation.selection import Chosen
from evaluation.statistics import pass_rate, repeat_summary
from evaluation.summary import summarize
from executors import WeaviateExecutor
from fixtures.loader import ensure_loaded, names_of

#: Runs the cases of one repeat into its directory: (cases, context, directory, concurrency).
CaseRunner = Callable[[list[Any], runner.RunContext, Path, int], Any]


class NothingScored(runner.InfrastructureStopped):
    """Every case of a run failed on the infrastructure (model server, Weaviate or scoring): nothing
    was scored, so the run is a failure to report, not a summary of zeros."""


@dataclass
class Driver:
    """The model side of a run: its name, the model each case gets, and the chat client (None: oracle)."""

    name: str
    model_for: Callable[[Any], Any]
    chat: Any = None  # a `ChatModel`; its temperature and seed are set per run


def oracle_driver() -> Driver:
    """The oracle: each case's label replayed (or, for a question the tool cannot answer, a refusal)."""
    return Driver(ORACLE, runner.oracle_for)


def chat_driver(chat: Any, temperature: float) -> Driver:
    """One chat model answers every case, at `temperature`."""
    chat.temperature = temperature
    return Driver(chat.name, lambda _case: chat, chat)


def default_run_dir(label: str) -> Path:
    """runs/<label>-<time>, the label made safe for a file name."""
    return Path("runs") / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', label)}-{datetime.now():%Y%m%d-%H%M%S}"


def repeat_directories(run_dir: Path, repeats: int) -> list[Path]:
    """The run directory itself for one run, else run_dir/repeat-N for each of them."""
    return [run_dir] if repeats == 1 else [run_dir / f"repeat-{i + 1}" for i in range(repeats)]


def prepared_directories(directories: list[Path], resume: bool, overwrite: bool) -> list[tuple[Path, set[str]]]:
    """Each directory with the ids already done there (`runner.prepare_run_dir`)."""
    return [(d, runner.prepare_run_dir(d, resume, overwrite)) for d in directories]


def open_executor(
    client: Any, chosen: Chosen, namespace: str | None, echo: Callable[[str], None] = print
) -> WeaviateExecutor:
    """Load what the questions need (if missing; a broken vector index is rebuilt) and an executor over it."""
    ensure_loaded(client, chosen.needed, echo=echo, namespace=namespace)
    return WeaviateExecutor(client, names=names_of(chosen.needed, namespace))


def run_context(
    client: Any,
    executor: WeaviateExecutor,
    chosen: Chosen,
    design: ToolDesign,
    driver: Driver,
    counter: TokenCounter | None = None,
) -> runner.RunContext:
    """What every case of the run shares: the executors, the tools per use case, the model, the limits.
    The executor offers the design's operations (the paper's tool, or `related`)."""
    executor = executor.with_operations(design.operations)
    return runner.RunContext(
        client=client,
        executor=executor,
        scoring=runner.scoring_executor(client, executor),
        tools_for=runner.tools_by_use_case(executor.schema, chosen.collections, design, counter),
        model_for=driver.model_for,
        model_name=driver.name,
        config=AgentConfig(max_steps=chosen.max_steps),
        design=design,
    )


def _run_plainly(todo: list[Any], context: runner.RunContext, directory: Path, concurrency: int) -> None:
    runner.run_cases(todo, context, directory, concurrency)


def run_repeats(
    context: runner.RunContext,
    chosen: Chosen,
    driver: Driver,
    directories: list[tuple[Path, set[str]]],
    seed: int | None,
    base_url: str | None,
    concurrency: int,
    echo: Callable[[str], None] = print,
    run_cases: CaseRunner = _run_plainly,
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
        echo(f"{label}{len(todo)} cases to run ({len(already)} already done) → {directory / runner.RESULTS_FILE}")
        stopped: runner.InfrastructureStopped | None = None
        try:
            run_cases(todo, context, directory, concurrency)
        except runner.InfrastructureStopped as error:
            stopped = error  # the summary below is still written; it says what failed
        records = [r for r in runner.read_records(directory / runner.RESULTS_FILE) if r.id in wanted]
        summary = summarize(records)
        summary["pass"] = pass_rate(records)
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
            raise NothingScored(
                f"every case in {directory} failed on the infrastructure (model server, Weaviate or scoring), "
                f"so nothing was scored; see `error` in {directory / runner.RESULTS_FILE}, then run again with "
                f"`--out {directory} --resume`"
            )
        summaries.append(summary)
        runs.append(records)
    return summaries, runs


def write_repeats(run_dir: Path, runs: list[list[EvalRecord]]) -> dict[str, Any]:
    """pass@1, pass^k and the flaky questions of repeated runs, written to run_dir/repeats.json."""
    repeated = repeat_summary(runs)
    (run_dir / "repeats.json").write_text(json.dumps(repeated, indent=2))
    return repeated
