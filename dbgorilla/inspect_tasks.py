"""inspect_ai entry points: one `@task` per split, over the Weaviate `dbgorilla up` runs (or `WEAVIATE_URL`).

    inspect eval dbgorilla/inspect_tasks.py@natural --model openai/gpt-4o-mini -T use_case=restaurants
    inspect eval dbgorilla/inspect_tasks.py@multistep --model anthropic/claude-sonnet-4-0 --epochs 3
    inspect eval dbgorilla/inspect_tasks.py@natural --model openai/gpt-4o-mini -T strategy=react   # the paper's loop
    python -m dbgorilla.inspect_tasks natural --oracle --limit 5      # our oracle through inspect's mockllm

The tasks are built by `evaluation.inspect_benchmark`; this module only opens the connection (the top
layer's job) and loads the use cases a split needs on first use, as `dbgorilla eval` does.
"""

from __future__ import annotations

import argparse
import atexit
import sys
from typing import Any

from inspect_ai import Task, task

from agent.strategies import DEFAULT_STRATEGY
from dbgorilla.config import Settings
from dbgorilla.connection import connect
from dbgorilla.errors import ServiceNotRunning
from evaluation.inspect_benchmark import Benchmark, benchmark, oracle_outputs, task_for

_clients: list[Any] = []


def client() -> Any:
    """One connection per process, closed at exit (inspect builds tasks and runs them in one process)."""
    if not _clients:
        try:
            opened = connect(Settings())
        except Exception as error:
            raise ServiceNotRunning(f"cannot reach Weaviate ({error}); start it with `dbgorilla up`") from None
        atexit.register(opened.close)
        _clients.append(opened)
    return _clients[0]


def _listed(value: str | list[str] | None) -> list[str] | None:
    if value is None or isinstance(value, list):
        return value
    return [part.strip() for part in value.split(",") if part.strip()]


def split_benchmark(
    split: str,
    use_case: str | list[str] | None = None,
    ids: str | list[str] | None = None,
    limit: int | None = None,
    strategy: str = DEFAULT_STRATEGY,
) -> Benchmark:
    return benchmark(split, client(), use_cases=_listed(use_case), ids=_listed(ids), limit=limit, strategy=strategy)


def split_task(
    split: str,
    use_case: str | list[str] | None = None,
    ids: str | list[str] | None = None,
    limit: int | None = None,
    max_steps: int | None = None,
    epochs: int = 1,
    force_first_call: bool = False,
    strategy: str = DEFAULT_STRATEGY,
) -> Task:
    return task_for(split_benchmark(split, use_case, ids, limit, strategy), max_steps, epochs, force_first_call)


@task
def natural(
    use_case: str | None = None,
    ids: str | None = None,
    limit: int | None = None,
    max_steps: int | None = None,
    epochs: int = 1,
    force_first_call: bool = False,
    strategy: str = DEFAULT_STRATEGY,
) -> Task:
    """Single-step questions in plain words (the default split)."""
    return split_task("natural", use_case, ids, limit, max_steps, epochs, force_first_call, strategy)


@task
def explicit(
    use_case: str | None = None,
    ids: str | None = None,
    limit: int | None = None,
    max_steps: int | None = None,
    epochs: int = 1,
    force_first_call: bool = False,
    strategy: str = DEFAULT_STRATEGY,
) -> Task:
    """Single-step questions that name the properties and operators (the paper's style)."""
    return split_task("explicit", use_case, ids, limit, max_steps, epochs, force_first_call, strategy)


@task
def multistep(
    use_case: str | None = None,
    ids: str | None = None,
    limit: int | None = None,
    max_steps: int | None = None,
    epochs: int = 1,
    force_first_call: bool = False,
    strategy: str = DEFAULT_STRATEGY,
) -> Task:
    """Questions that need a chain of calls, each using a value the one before found."""
    return split_task("multistep", use_case, ids, limit, max_steps, epochs, force_first_call, strategy)


@task
def related(
    use_case: str | None = None,
    ids: str | None = None,
    limit: int | None = None,
    max_steps: int | None = None,
    epochs: int = 1,
    force_first_call: bool = False,
    strategy: str = DEFAULT_STRATEGY,
) -> Task:
    """Questions through references, on dates, sorted, and chains across collections (the related tool)."""
    return split_task("related", use_case, ids, limit, max_steps, epochs, force_first_call, strategy)


@task
def abstention(
    use_case: str | None = None,
    ids: str | None = None,
    limit: int | None = None,
    max_steps: int | None = None,
    epochs: int = 1,
    force_first_call: bool = False,
    strategy: str = DEFAULT_STRATEGY,
) -> Task:
    """Questions the tool cannot answer: saying so is right."""
    return split_task("abstention", use_case, ids, limit, max_steps, epochs, force_first_call, strategy)


@task
def dbgorilla_split(
    split: str = "natural",
    use_case: str | None = None,
    ids: str | None = None,
    limit: int | None = None,
    max_steps: int | None = None,
    epochs: int = 1,
    force_first_call: bool = False,
    strategy: str = DEFAULT_STRATEGY,
) -> Task:
    """Any split by name, or a split file of your own (`-T split=path/to/file.jsonl`)."""
    return split_task(split, use_case, ids, limit, max_steps, epochs, force_first_call, strategy)


def main(argv: list[str] | None = None) -> int:
    """Run a split through inspect with our oracle (mockllm replaying the gold calls) or any inspect model."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    parser = argparse.ArgumentParser(prog="python -m dbgorilla.inspect_tasks", description=main.__doc__)
    parser.add_argument("split")
    parser.add_argument("--oracle", action="store_true", help="our oracle through inspect's mockllm")
    parser.add_argument("--model", help="any inspect model, e.g. openai/gpt-4o-mini (instead of --oracle)")
    parser.add_argument("--use-case")
    parser.add_argument("--ids")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--strategy", default=DEFAULT_STRATEGY, help="the agent strategy (docs/strategies.md)")
    parser.add_argument("--log-dir", default="logs/inspect")
    args = parser.parse_args(argv)
    if args.oracle == bool(args.model):
        parser.error("pass --oracle or --model")
    bench = split_benchmark(args.split, args.use_case, args.ids, args.limit, args.strategy)
    model: Any = get_model("mockllm/model", custom_outputs=oracle_outputs(bench)) if args.oracle else args.model
    logs = inspect_eval(task_for(bench, epochs=args.epochs), model=model, log_dir=args.log_dir, display="plain")
    for log in logs:
        for result in log.results.scores if log.results else []:
            shown = ", ".join(f"{name} {metric.value:.3f}" for name, metric in result.metrics.items())
            print(f"{log.eval.task} {result.name}/{result.reducer or 'mean'}: {shown}")
        samples = log.results.completed_samples if log.results else 0
        print(f"log: {log.location}  status: {log.status}  samples: {samples}")
    return 0 if all(log.status == "success" for log in logs) else 1


if __name__ == "__main__":
    sys.exit(main())
