"""What every command shares: the two consoles, one-line messages, the Weaviate connection (or a
"Weaviate is not running" error), the model (`open_model`) and progress display (the exit code of each
typed error: `dbgorilla.exit_codes`)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from weaviate.exceptions import WeaviateConnectionError, WeaviateStartUpError

from agent import ORACLE, ToolDesign, ToolVariant
from agent.tooldef import DEFAULT_OPERATIONS
from dbgorilla.chat import resolve_model
from dbgorilla.config import Settings
from dbgorilla.connection import connect
from dbgorilla.errors import ConfigError, ServiceNotRunning
from evaluation.orchestration import Driver, chat_driver, oracle_driver
from executors.ownership import NAMESPACE_ENV, InvalidNamespace, check_namespace
from executors.vocabulary import ToolOperations

#: Width of tables written to a file or a pipe: wide enough that a leaderboard keeps its columns
#: (at the 80 a pipe gets by default they wrapped into columns a few letters wide).
LOG_WIDTH = 200


def _console(**options: Any) -> Console:
    console = Console(**options)
    if console.is_terminal or "COLUMNS" in os.environ:
        return console
    return Console(width=LOG_WIDTH, **options)


out = _console()
err = _console(stderr=True, soft_wrap=True)


def _namespace(value: str | None) -> str:
    try:
        return check_namespace(value)
    except InvalidNamespace as error:
        raise typer.BadParameter(str(error)) from None


#: `--namespace`: where the project's collections live (docs/collections.md), for every command
#: that loads, evaluates on or asks the project's datasets.
NamespaceOption = Annotated[
    str,
    typer.Option(
        "--namespace",
        envvar=NAMESPACE_ENV,
        callback=_namespace,
        help="Keep the project's collections as NAME_<Collection>, beside your own of the same names.",
    ),
]


def say(message: str) -> None:
    """A progress or status line on stderr (stdout stays machine-readable)."""
    err.print(message, highlight=False)


@contextmanager
def connected(settings: Settings | None = None) -> Iterator[Any]:
    """A client for the configured Weaviate, or a one-line 'not running' error."""
    try:
        client = connect(settings or Settings())
    except (WeaviateConnectionError, WeaviateStartUpError) as error:
        raise ServiceNotRunning(f"cannot reach Weaviate ({error}); start it with `dbgorilla up`") from None
    try:
        yield client
    finally:
        client.close()


def open_model(
    model: str | None, base_url: str | None, request_timeout: float | None, max_retries: int | None, temperature: float
) -> Driver:
    """`--model/--base-url` to the model side of a run: the oracle, or a chat model (started and proven)."""
    if model == ORACLE:
        return oracle_driver()
    chat = resolve_model(model, base_url, echo=say, timeout=request_timeout, max_retries=max_retries)
    return chat_driver(chat, temperature)


@contextmanager
def progress_bar(label_width: int = 16) -> Iterator[Callable[[str, int, int], None]]:
    """A rich progress bar per task name (a collection, a validation stage) on stderr, fed by a callback."""
    bar = Progress(
        TextColumn(f"{{task.description:<{label_width}}}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=False,
    )
    tasks: dict[str, TaskID] = {}

    def on_progress(name: str, done: int, total: int) -> None:
        if name not in tasks:
            tasks[name] = bar.add_task(name, total=total)
        bar.update(tasks[name], completed=done, total=total)

    with bar:
        yield on_progress


def design_from_flags(
    variant: str,
    rationale: bool,
    parallel: bool | None,
    structured: bool,
    budget: int,
    operations: str = DEFAULT_OPERATIONS.value,
) -> ToolDesign:
    """The tool design a door was asked for (the paper's ablation flags, and `--operations`: the compound
    tool by default, the paper's tool, or `related`, which adds a reference filter, a date filter and a sort)."""
    try:
        tool_variant = ToolVariant(variant)
    except ValueError:
        raise ConfigError(f"unknown --variant {variant!r}; choose unified or per-collection") from None
    try:
        chosen = ToolOperations(operations)
    except ValueError:
        raise ConfigError(f"unknown --operations {operations!r}; choose paper, related or compound") from None
    return ToolDesign(tool_variant, rationale, parallel, structured, budget, chosen)
