"""`dbgorilla ablate`: the paper's tool-design ablations in one command, on the same questions."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from agent.tooldef import DEFAULT_TOKEN_BUDGET
from dbgorilla.cli.console import NamespaceOption, connected, design_from_flags, out, say
from dbgorilla.cli.evaluate import open_model, run_context, run_repeats, select_questions
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
from executors import WeaviateExecutor
from fixtures.loader import ensure_loaded, names_of

TABLE_FILE = "ablation.md"
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
) -> None:
    """Run the original tool and each of the paper's tool-design changes on the same questions; write
    the paper's ablation table with a Wilson interval per row and a paired test against the original."""
    names = [BASELINE, *(only or ablation_names()[1:])]
    unknown = sorted(set(names) - set(ablation_names()))
    if unknown:
        raise ConfigError(f"unknown ablation(s) {unknown}; choose from {ablation_names()[1:]}")
    names = list(dict.fromkeys(names))
    baseline = design_from_flags("unified", False, None, False, token_budget)
    chosen = select_questions(dataset, use_case, limit, case_id, max_steps)
    root = out_dir or Path("runs") / f"ablation-{datetime.now():%Y%m%d-%H%M%S}"
    directories = {name: root / name for name in names}
    done = {name: runner.prepare_run_dir(path, resume, overwrite=False) for name, path in directories.items()}
    runs = {}
    with connected() as client:
        ensure_loaded(client, chosen.needed, echo=say, namespace=namespace)
        executor = WeaviateExecutor(client, names=names_of(chosen.needed, namespace))
        driver = open_model(model, base_url, request_timeout, None, temperature)
        for name in names:
            design = design_of(name, baseline)
            say(f"ablation {name}: tool design {design.label()}")
            context = run_context(client, executor, chosen, design, driver)
            _, records = run_repeats(
                context, chosen, driver, [(directories[name], done[name])], seed, base_url, concurrency
            )
            runs[name] = records[0]
    rows = ablation_table(runs)
    (root / JSON_FILE).write_text(
        json.dumps({"model": driver.name, "rows": [row.model_dump() for row in rows]}, indent=2)
    )
    (root / TABLE_FILE).write_text(markdown_table(rows, driver.name))
    show(rows, root)


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
