"""`dbgorilla examples`: the query memory the `examples` strategy reads (docs/strategies.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from dbgorilla.cli.console import NamespaceOption, connected, out, say
from dbgorilla.errors import BadInput
from evaluation.strategies import examples_from_run
from executors import QueryDatabaseArguments
from fixtures.examples import ExampleMemory, StoredExample

examples_app = typer.Typer(help="The query memory: solved examples (question -> call) the examples strategy shows.")


def register(app: typer.Typer) -> None:
    app.add_typer(examples_app, name="examples")


@examples_app.command("add")
def add(
    question: Annotated[str | None, typer.Option(help="The question the call answers.")] = None,
    call: Annotated[str | None, typer.Option(help="The query_database arguments, as a JSON object.")] = None,
    use_case: Annotated[str, typer.Option(help="The use case (or your own label) the example belongs to.")] = "",
    from_run: Annotated[
        Path | None, typer.Option("--from-run", help="Add a run's passed single-step cases (a run directory).")
    ] = None,
    namespace: NamespaceOption = "",
) -> None:
    """Add one solved example, or every passed single-step case of a run."""
    if from_run is not None:
        if question or call:
            raise BadInput("give --from-run, or --question with --call, not both")
        if not (from_run / "results.jsonl").is_file() and not from_run.is_file():
            raise BadInput(f"{from_run} holds no results.jsonl")
        examples = examples_from_run(from_run)
    else:
        if not question or not call:
            raise BadInput("give --question and --call (a JSON object of query_database arguments), or --from-run")
        examples = [StoredExample(question, _arguments(call), use_case, "user")]
    if not examples:
        say("nothing to add: the run has no passed single-step case")
        return
    with connected() as client:
        memory = ExampleMemory(client, namespace)
        memory.ensure_seeded()
        written = memory.add(examples)
    say(f"added {written} example(s) to {memory.name}")


def _arguments(text: str) -> dict[str, object]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise BadInput(f"--call is not JSON ({error.msg} at {error.pos})") from None
    if not isinstance(value, dict):
        raise BadInput("--call must be a JSON object of query_database arguments")
    try:
        QueryDatabaseArguments.model_validate(value)
    except ValueError as error:
        raise BadInput(f"--call is not query_database arguments: {str(error).splitlines()[0]}") from None
    return value


@examples_app.command("list")
def list_examples(
    namespace: NamespaceOption = "",
    as_json: Annotated[bool, typer.Option("--json", help="Print the examples as JSON lines.")] = False,
) -> None:
    """Every example in the memory (seeded from the natural split on first use)."""
    with connected() as client:
        memory = ExampleMemory(client, namespace)
        memory.ensure_seeded()
        examples = memory.all()
    if as_json:
        for example in examples:
            print(json.dumps({k: v for k, v in example.__dict__.items() if k != "distance"}))
        return
    table = Table("source", "use case", "question", "call", title=f"{memory.name}: {len(examples)} examples")
    for example in examples:
        table.add_row(example.source, example.use_case, example.question, json.dumps(example.arguments))
    out.print(table)
