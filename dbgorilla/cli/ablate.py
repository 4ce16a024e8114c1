"""`dbgorilla ablate`: the paper's tool-design ablations in one command, on the same questions."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from agent import AgentConfig
from agent.tooldef import DEFAULT_OPERATIONS, DEFAULT_TOKEN_BUDGET
from dbgorilla.chat import token_counter
from dbgorilla.cli.console import NamespaceOption, connected, design_from_flags, open_model, out, say
from dbgorilla.cli.eval_progress import WarmOption, run_with_progress, warms
from dbgorilla.cli.evaluate_public import evaluate_public, public_file
from dbgorilla.cli.strategy_options import DEFAULT_STRATEGY, check_strategy
from dbgorilla.errors import ConfigError
from evaluation import runner
from evaluation.ablation import (
    BASELINE,
    AblationRow,
    ablation_names,
    ablation_table,
    design_of,
    markdown_table,
    percent,
)
from evaluation.orchestration import Driver, open_executor, run_context, run_repeats
from evaluation.records import EvalRecord
from evaluation.report.public import REPORT_JSON, REPORT_MD, public_report
from evaluation.report.public import render as render_public
from evaluation.runner import RunContext
from evaluation.selection import Chosen, chosen_from_sample, select_questions
from evaluation.strategies import use_strategy
from evaluation.strategy_table import BASELINE_STRATEGY, strategy_markdown, strategy_rows
from fixtures.datasets.cases import operations_needed

TABLE_FILE = "ablation.md"
STRATEGY_TABLE = "strategies.md"
STRATEGY_JSON = "strategies.json"
JSON_FILE = "ablation.json"


def register(app: typer.Typer) -> None:
    app.command("ablate")(ablate)


def ablate(
    model: Annotated[str | None, typer.Option(help="'oracle', a local model, or the endpoint's model name.")] = None,
    base_url: Annotated[str | None, typer.Option(help="Any OpenAI-compatible endpoint (key: OPENAI_API_KEY).")] = None,
    only: Annotated[
        list[str] | None,
        typer.Option("--ablation", help=f"Only these ablations (repeatable): {', '.join(ablation_names()[1:])}."),
    ] = None,
    dataset: Annotated[Path | None, typer.Option(help="A split of ours or a DBGorilla paper-format file.")] = None,
    use_case: Annotated[list[str] | None, typer.Option("--use-case", help="Only these use cases (repeatable).")] = None,
    limit: Annotated[int | None, typer.Option(help="Cases per run; 0 = all. Default: one per collection (15).")] = None,
    case_id: Annotated[list[str] | None, typer.Option("--id", help="Only these case ids (repeatable).")] = None,
    token_budget: Annotated[int, typer.Option(help="Tool description budget in tokens.")] = DEFAULT_TOKEN_BUDGET,
    max_steps: Annotated[int | None, typer.Option(min=1, help="Model turns per question (as for eval).")] = None,
    seed: Annotated[
        int | None, typer.Option(help="Sent to the model as its sampling seed, the same for every run.")
    ] = None,
    temperature: Annotated[float, typer.Option(min=0.0, help="Sampling temperature.")] = 0.0,
    concurrency: Annotated[int, typer.Option(min=1, help="Cases in flight.")] = 1,
    request_timeout: Annotated[float | None, typer.Option(help="Seconds per model request.")] = None,
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="Directory of the runs (one per ablation) and the table.")
    ] = None,
    resume: Annotated[bool, typer.Option("--resume", help="Keep the runs' finished cases; run the rest.")] = False,
    namespace: NamespaceOption = "",
    strategies: Annotated[
        str | None,
        typer.Option(
            "--strategies",
            help="Compare agent strategies instead of tool designs, comma-separated (react,examples,grounded,"
            "examples+grounded); each against --baseline, per kind of question (docs/strategies.md).",
        ),
    ] = None,
    baseline: Annotated[
        str, typer.Option(help="With --strategies: the strategy each is compared with (paired, per question).")
    ] = BASELINE_STRATEGY,
    sample: Annotated[
        Path | None,
        typer.Option(
            help="A committed sample of ids across splits (fixtures/data/samples/strategies.json); --limit N "
            "takes the first N of each kind."
        ),
    ] = None,
    collections: Annotated[
        str | None,
        typer.Option(help="For a question file over your own collections: only the questions over these (A,B)."),
    ] = None,
    warm: WarmOption = True,
) -> None:
    """Run the original tool and each of the paper's tool-design changes on the same questions; write
    the paper's ablation table with a Wilson interval per row and a paired test against the original.
    With --strategies, compare agent strategies the same way."""
    if (public := public_file(dataset)) is not None:
        ablate_own(public, collections, strategies, baseline, only, model, base_url, limit, case_id, token_budget,
                   max_steps, temperature, request_timeout, out_dir, resume, warm)  # fmt: skip
        return
    if collections:
        raise ConfigError("--collections is for a question file over your own collections")
    if strategies is not None:
        compare_strategies(
            strategies, baseline, model, base_url, dataset, sample, use_case, limit, case_id, token_budget, max_steps,
            seed, temperature, concurrency, request_timeout, out_dir, resume, namespace, warm,
        )  # fmt: skip
        return
    compare_designs(only, model, base_url, dataset, use_case, limit, case_id, token_budget, max_steps, seed,
                    temperature, concurrency, request_timeout, out_dir, resume, namespace, warm)  # fmt: skip


def compare_designs(
    only: list[str] | None,
    model: str | None,
    base_url: str | None,
    dataset: Path | None,
    use_case: list[str] | None,
    limit: int | None,
    case_id: list[str] | None,
    token_budget: int,
    max_steps: int | None,
    seed: int | None,
    temperature: float,
    concurrency: int,
    request_timeout: float | None,
    out_dir: Path | None,
    resume: bool,
    namespace: str,
    warm: bool = True,
) -> None:
    """The original tool and each tool-design change named on the same questions; the ablation table."""
    names = [BASELINE, *(only or ablation_names()[1:])]
    unknown = sorted(set(names) - set(ablation_names()))
    if unknown:
        raise ConfigError(f"unknown ablation(s) {unknown}; choose from {ablation_names()[1:]}")
    names = list(dict.fromkeys(names))
    chosen = select_questions(dataset, use_case, limit, case_id, max_steps, echo=say)
    # Every design is the paper's change to the baseline tool: the smallest tool the split's gold is written in.
    operations = operations_needed(chosen.cases).value
    baseline = design_from_flags("unified", False, None, False, token_budget, operations)
    root = out_dir or Path("runs") / f"ablation-{datetime.now():%Y%m%d-%H%M%S}"

    def context_for(name: str, client: Any, executor: Any, driver: Driver) -> RunContext:
        design = design_of(name, baseline)
        say(f"ablation {name}: tool design {design.label()}")
        context = run_context(client, executor, chosen, design, driver, token_counter())
        context.strategy = BASELINE_STRATEGY  # the paper's loop: only the tool design differs between runs
        return context

    runs, driver = run_each(names, root, resume, chosen, namespace, context_for, model, base_url, request_timeout,
                            temperature, seed, concurrency, warm)  # fmt: skip
    rows = ablation_table(runs)
    (root / JSON_FILE).write_text(
        json.dumps({"model": driver.name, "rows": [row.model_dump() for row in rows]}, indent=2)
    )
    (root / TABLE_FILE).write_text(markdown_table(rows, driver.name))
    show(rows, root)


def ablate_own(
    path: Path,
    collections: str | None,
    strategies: str | None,
    baseline: str,
    only: list[str] | None,
    model: str | None,
    base_url: str | None,
    limit: int | None,
    case_id: list[str] | None,
    token_budget: int,
    max_steps: int | None,
    temperature: float,
    request_timeout: float | None,
    out_dir: Path | None,
    resume: bool,
    warm: bool = True,
) -> None:
    """A question file over your own collections: each tool design (or strategy) run on its questions by
    `eval`'s own path, then one report of the runs (`evaluation.report.public`), each paired with the first."""
    named = [name.strip() for name in collections.split(",") if name.strip()] if collections else None
    design = design_from_flags("unified", False, None, False, token_budget, DEFAULT_OPERATIONS.value)
    if strategies is not None:
        runs = {n: (design, n) for n in [check_strategy(baseline), *(check_strategy(n) for n in strategies.split(","))]}
    else:
        unknown = sorted(set(only or []) - set(ablation_names()))
        if unknown:
            raise ConfigError(f"unknown ablation(s) {unknown}; choose from {ablation_names()[1:]}")
        runs = {n: (design_of(n, design), DEFAULT_STRATEGY) for n in [BASELINE, *(only or ablation_names()[1:])]}
    root = out_dir or Path("runs") / f"own-ablation-{datetime.now():%Y%m%d-%H%M%S}"
    driver = open_model(model, base_url, request_timeout, None, temperature)
    config = AgentConfig(max_steps=max_steps or 3)
    for name, (chosen_design, strategy) in runs.items():
        say(f"{name}: tool design {chosen_design.label()}, strategy {strategy}")
        evaluate_public(path, named, limit, case_id, driver, chosen_design, strategy, config, root / name, resume,
                        False, False, warms(warm, model, base_url, driver))  # fmt: skip
    payload = public_report([root / name for name in runs], root)
    out.print(render_public(payload), highlight=False, markup=False)
    say(f"wrote {root / REPORT_MD} and {root / REPORT_JSON}")


def show(rows: list[AblationRow], root: Path) -> None:
    table = Table(
        "experiment",
        "exact match",
        "routing",
        "answer right",
        "pass (95% CI)",
        "vs original",
        title=f"ablations in {root}",
    )
    for row in rows:
        low, high = row.passed["interval"] or (0.0, 0.0)
        versus = row.versus_baseline
        verdict = (
            "baseline"
            if versus is None
            else f"{versus['only_a_passed']}/{versus['only_b_passed']} discordant, p={versus['p_value']:.3f}, "
            + ("outside the noise" if versus["outside_noise"] else "within the noise")
        )
        if row.model_errors:
            verdict += f"; {row.model_errors} of {row.questions} ended in a model error"
        table.add_row(
            row.title,
            percent(row.exact_match),
            percent(row.routing_accuracy),
            percent(row.answer_accuracy),
            f"{percent(row.passed['rate'])} [{100 * low:.1f}, {100 * high:.1f}]",
            verdict,
        )
    out.print(table)
    say(f"wrote {root / TABLE_FILE} and {root / JSON_FILE}; `dbgorilla report {root}/*` compares the runs in full")


def compare_strategies(
    strategies: str,
    baseline: str,
    model: str | None,
    base_url: str | None,
    dataset: Path | None,
    sample: Path | None,
    use_case: list[str] | None,
    limit: int | None,
    case_id: list[str] | None,
    token_budget: int,
    max_steps: int | None,
    seed: int | None,
    temperature: float,
    concurrency: int,
    request_timeout: float | None,
    out_dir: Path | None,
    resume: bool,
    namespace: str,
    warm: bool = True,
) -> None:
    """Every strategy named against the baseline on the same questions; a table per kind of question."""
    baseline = check_strategy(baseline)
    names = list(dict.fromkeys([baseline, *(check_strategy(n) for n in strategies.split(",") if n.strip())]))
    if sample is not None:
        chosen = chosen_from_sample(sample, limit, max_steps)
    else:
        chosen = select_questions(dataset, use_case, limit, case_id, max_steps, echo=say)
    operations = operations_needed(chosen.cases).value
    design = design_from_flags("unified", False, None, False, token_budget, operations)
    root = out_dir or Path("runs") / f"strategies-{datetime.now():%Y%m%d-%H%M%S}"

    def context_for(name: str, client: Any, executor: Any, driver: Driver) -> RunContext:
        say(f"strategy {name}")
        context = run_context(client, executor, chosen, design, driver, token_counter())
        return use_strategy(context, client, name, namespace, say)

    runs, driver = run_each(names, root, resume, chosen, namespace, context_for, model, base_url, request_timeout,
                            temperature, seed, concurrency, warm)  # fmt: skip
    rows = strategy_rows(runs, baseline)
    command = "dbgorilla " + " ".join(sys.argv[1:])
    date = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    payload = {"model": driver.name, "command": command, "date": date, "rows": [r.model_dump() for r in rows]}
    (root / STRATEGY_JSON).write_text(json.dumps(payload, indent=2))
    (root / STRATEGY_TABLE).write_text(strategy_markdown(rows, driver.name, command, date))
    out.print((root / STRATEGY_TABLE).read_text(), highlight=False, markup=False)
    say(f"wrote {root / STRATEGY_TABLE} and {root / STRATEGY_JSON}")


def run_each(
    names: list[str],
    root: Path,
    resume: bool,
    chosen: Chosen,
    namespace: str,
    context_for: Callable[[str, Any, Any, Driver], RunContext],
    model: str | None,
    base_url: str | None,
    request_timeout: float | None,
    temperature: float,
    seed: int | None,
    concurrency: int,
    warm: bool = True,
) -> tuple[dict[str, list[EvalRecord]], Driver]:
    """Each named run on the same questions, one run directory each (`root/<name>`, resumable), over one
    connection and one model: the loop both comparisons share; `context_for` says what differs."""
    directories = {name: root / name for name in names}
    done = {name: runner.prepare_run_dir(path, resume, overwrite=False) for name, path in directories.items()}
    runs = {}
    with connected() as client:
        executor = open_executor(client, chosen, namespace, echo=say)
        driver = open_model(model, base_url, request_timeout, None, temperature)
        for name in names:
            context = context_for(name, client, executor, driver)
            # each run warmed as `eval` warms: its questions are timed as eval's are, not paying the prefixes
            context.warm = warms(warm, model, base_url, driver)
            _, records = run_repeats(
                context,
                chosen,
                driver,
                [(directories[name], done[name])],
                seed,
                base_url,
                concurrency,
                echo=say,
                run_cases=run_with_progress,
            )
            runs[name] = records[0]
    return runs, driver
