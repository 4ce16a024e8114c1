"""`dbgorilla eval --dataset public` (or any file of questions over named collections): the agent over a
user's own collections, graded on the answers a user reads (`evaluation.public_run`)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rich.markup import escape

from agent import AgentConfig, ToolDesign
from agent.session import AgentSession
from dbgorilla.chat import token_counter
from dbgorilla.cli.console import connected, err, say
from dbgorilla.cli.eval_progress import warm_openings
from dbgorilla.errors import ConfigError
from evaluation.orchestration import Driver, default_run_dir
from evaluation.own_split import rows_hash, stored_rows
from evaluation.public_calls import oracle_of
from evaluation.public_run import PublicRecord, run_public, run_question, summarize_public, write_summary
from evaluation.strategies import prepare_strategy
from executors import WeaviateExecutor
from executors.vocabulary import ToolOperations
from fixtures.datasets.public import PublicQuestion, is_public_file, read_public
from fixtures.datasets.splits import split_path
from fixtures.public_suite import DATASETS, data_hash, ensure_public_collection


def public_file(dataset: Path | None) -> Path | None:
    """The file `--dataset` names when it holds questions over named collections (`public`), else None."""
    if dataset is None:
        return None
    path = dataset
    if not path.exists() and not path.suffix and len(path.parts) == 1:
        try:
            path = split_path(str(dataset))
        except KeyError:
            return None
    return path if path.is_file() and is_public_file(path) else None


def format_rate(rate: dict[str, Any]) -> str:
    """A rate as "0.62 (31/50, 95% CI 0.48-0.74)"."""
    if not rate.get("n"):
        return "n/a"
    low, high = rate["interval"]
    right = round(rate["rate"] * rate["n"])
    return f"{rate['rate']:.2f} ({right}/{rate['n']}, 95% CI {low:.2f}-{high:.2f})"


def select_public(
    questions: list[PublicQuestion], collections: list[str] | None, limit: int | None, ids: list[str] | None
) -> list[PublicQuestion]:
    """By id, by the collections offered (a question is kept when all its collections are), and a limit
    (None or 0: all)."""
    chosen = [q for q in questions if (not ids or q.id in ids)]
    if collections:
        chosen = [q for q in chosen if set(q.collections) <= set(collections)]
    return chosen[:limit] if limit else chosen


def prepare_collections(client: Any, questions: list[PublicQuestion], allow_other_data: bool) -> dict[str, str]:
    """The public suite's own datasets are loaded when missing (a user's collection of the same name stops
    it, untouched); any other file's collections must exist. Gold computed on other data is refused: a
    composed file's (`compose-split --collections`) against the rows its collection holds now. Returns the
    hash of the data each collection's questions were composed on."""
    suite = {d.collection: d for d in DATASETS}
    needed = sorted({name for q in questions for name in q.collections})
    composed_on: dict[str, str] = {}
    for name in needed:
        dataset = suite.get(name)
        hashes = {q.data for q in questions if name in q.collections and q.data}
        composed_on.update({name: ", ".join(sorted(hashes))} if hashes else {})
        if dataset is None:
            if not client.collections.exists(name):
                raise ConfigError(f"no collection named {name} in this Weaviate; the questions are asked over it")
            if hashes and not allow_other_data and hashes != {now := rows_hash(stored_rows(client, name))}:
                raise ConfigError(
                    f"the questions over {name} were composed on other data ({', '.join(sorted(hashes))}) than it "
                    f"holds now ({now}); compose them again, or pass --allow-other-data to run them anyway"
                )
            continue
        if hashes and hashes != {data_hash(dataset.rows())} and not allow_other_data:
            raise ConfigError(
                f"the questions over {name} were composed on other data than vega_datasets now ships "
                f"({', '.join(sorted(hashes))}); pass --allow-other-data to run them anyway"
            )
        if ensure_public_collection(client, dataset):
            say(f"loaded the public dataset {dataset.name} into {name} (a collection of your own: no marker)")
    return composed_on


def evaluate_public(
    path: Path,
    collections: list[str] | None,
    limit: int | None,
    ids: list[str] | None,
    driver: Driver,
    design: ToolDesign,
    strategy: str,
    config: AgentConfig,
    out_dir: Path | None,
    resume: bool,
    allow_other_data: bool,
    as_json: bool,
    warm: bool = False,
) -> None:
    """The questions of a file over your own collections, run and summarized; with `warm`, each dataset's
    prompt prefixes are evaluated first, once (`warm_openings`), so every question is timed warm."""
    questions = select_public(read_public(path), collections, limit, ids)
    if not questions:
        raise ConfigError("no questions selected")
    if driver.chat is None and (uncalled := [q.id for q in questions if q.kind != "unanswerable" and not q.gold_calls]):
        raise ConfigError(
            f"--model oracle replays gold calls, and {len(uncalled)} questions have none ({', '.join(uncalled[:3])}, "
            "...): only a file `compose-split --collections` wrote has them"
        )
    run_dir = out_dir or default_run_dir(driver.name)
    started = time.time()
    with connected() as client:
        composed_on = prepare_collections(client, questions, allow_other_data)
        name, retriever_for, setup = prepare_strategy(client, strategy, echo=say)
        executor = WeaviateExecutor(client, operations=design.operations)
        scoring = WeaviateExecutor(client, operations=ToolOperations.COMPOUND)  # runs every gold call
        counter = token_counter()

        def ask(question: PublicQuestion) -> PublicRecord:
            retriever = retriever_for(question.dataset) if retriever_for is not None else None
            model = driver.chat if driver.chat is not None else oracle_of(question)
            return run_question(
                question, executor, model, name, design, config, retriever, collections, counter, scoring
            )

        if warm and driver.chat is not None:
            _warm(questions, executor, design, driver.chat, name, config, retriever_for, collections)
        total = len(questions)
        seen = [0]

        def shown(record: PublicRecord) -> None:
            seen[0] += 1
            verdict = "[green]right[/]" if record.correct else "[red]wrong[/]"
            err.print(
                f"{seen[0]}/{total} {record.id} {verdict} {record.latency_s:.1f}s {escape(record.reason[:80])}",
                highlight=False,
            )

        records = run_public(questions, ask, run_dir, resume, on_record=shown)
    summary = summarize_public(records)
    write_summary(
        run_dir,
        summary,
        {
            "model": driver.name,
            "strategy": name,
            "strategy_setup": setup,
            "tool_design": design.label(),
            "dataset": str(path),
            "collections": collections,
            "data": composed_on,
            "questions": len(questions),
            "started": datetime.fromtimestamp(started, timezone.utc).isoformat(),
            "wall_time_s": round(time.time() - started, 2),
        },
    )
    if as_json:
        print(json.dumps(summary, default=str))
        return
    _show_public(summary, len(records), run_dir)


def _warm(
    questions: list[PublicQuestion],
    executor: WeaviateExecutor,
    design: ToolDesign,
    model: Any,
    strategy: str,
    config: AgentConfig,
    retriever_for: Callable[[str], Any] | None,
    collections: list[str] | None,
) -> None:
    """Each dataset's openings, in the order its first question comes, warmed under a bar."""
    openings: list[tuple[Any, Any]] = []
    for dataset in dict.fromkeys(q.dataset for q in questions):
        first = next(q for q in questions if q.dataset == dataset)
        retriever = retriever_for(dataset) if retriever_for is not None else None
        offered = list(collections or first.collections)
        session = AgentSession.over(executor, offered, design, model, strategy, config, retriever)
        openings += [(model, opening) for opening in session.openings()]
    datasets = len({q.dataset for q in questions})
    warm_openings(openings, f"{len(openings)} prompt prefixes of {datasets} dataset{'s' * (datasets != 1)}")


def _show_public(summary: dict[str, Any], count: int, run_dir: Path) -> None:
    """The run's pass rate, by kind, dataset and shape, and its calls' scores, as the terminal shows them."""
    say(f"{count} questions → {run_dir}")
    say(f"pass {format_rate(summary['pass'])}")
    for kind, rate in summary["by_kind"].items():
        say(f"  {kind:<13} {format_rate(rate)}")
    say(f"answerable refused {format_rate(summary['answerable_refused'])}")
    for dataset, rate in summary["by_dataset"].items():
        say(f"  {dataset:<13} {format_rate(rate)}")
    for shape, rate in summary["by_shape"].items():
        say(f"  {shape:<18} {format_rate(rate)}")
    calls = summary["calls"]
    if calls["scored"]:
        say(
            f"calls of {calls['scored']} composed questions: arguments exact {format_rate(calls['exact_match'])}, "
            f"AST {calls['ast_score']:.3f}, execution exact {format_rate(calls['execution_exact'])}"
        )
