"""`load` and `drop`: the project's collections into Weaviate and out again, only ever its own
(docs/collections.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from dbgorilla.cli.console import NamespaceOption, connected, err, out, progress_bar, say
from dbgorilla.errors import ExitCode
from fixtures.datasets import read_dataset
from fixtures.loader import LoadReport, drop_use_cases, load_schemas, resolve_use_case_names, targets_of
from fixtures.use_cases import UseCase, get_use_cases


def load(
    use_case: Annotated[
        list[str] | None,
        typer.Option("--use-case", "-u", help="A use case name or 'all' (repeatable). Default: all."),
    ] = None,
    objects_per_collection: Annotated[int, typer.Option(min=0, help="Objects generated per collection.")] = 100,
    seed: Annotated[int, typer.Option(help="Generator seed: same seed, same objects.")] = 42,
    dataset: Annotated[
        Path | None,
        typer.Option(exists=True, dir_okay=False, help="Also (or only) load the schemas of a dataset file."),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Drop and recreate the collections first (only the project's own).")
    ] = False,
    replace: Annotated[
        list[str] | None,
        typer.Option(
            "--replace",
            metavar="NAME",
            help="Delete this collection, though the project did not create it, and load ours in its place "
            "(repeatable; the name as Weaviate has it).",
        ),
    ] = None,
    namespace: NamespaceOption = "",
    replication_factor: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Copies of each shard, on as many nodes (`up --backend cluster` gives 3). "
            "Default: 1 for new collections, existing ones keep theirs.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the load report as JSON.")] = False,
) -> None:
    """Create the use-case collections and load generated objects (idempotent: re-runs converge)."""
    try:
        names = resolve_use_case_names(use_case) if (use_case or dataset is None) else []
    except KeyError as error:
        raise typer.BadParameter(str(error.args[0]), param_hint="--use-case") from None
    schemas = get_use_cases(names) if names else []
    if dataset is not None:
        schemas += _dataset_schemas(dataset)
    targets = {t.physical for t in targets_of(schemas, namespace)}
    unknown = [name for name in replace or [] if name not in targets]
    if unknown:
        raise typer.BadParameter(
            f"{', '.join(unknown)}: this load writes no collection of that name "
            f"(it writes {', '.join(sorted(targets))})",
            param_hint="--replace",
        )
    with connected() as client, progress_bar() as on_progress:
        report = load_schemas(
            client,
            schemas,
            objects_per_collection,
            seed,
            force=force,
            on_progress=on_progress,
            replication_factor=replication_factor,
            namespace=namespace,
            replace=replace or [],
        )
    for replaced in (c for c in report.collections if c.action == "replaced"):
        say(escape(f"replaced {replaced.collection}: {replaced.note}"))
    if as_json:
        out.print_json(json.dumps(report.model_dump(mode="json") | {"ok": report.ok}))
    else:
        _print_report(report)
    for failure in report.failed[:20]:
        err.print(
            f"[red]failed[/] {failure.collection}[{failure.index}] {failure.uuid}: {failure.message}", highlight=False
        )
    if len(report.failed) > 20:
        err.print(f"... and {len(report.failed) - 20} more failed objects", highlight=False)
    for collection in report.collections:
        if collection.difference:  # read back over REST, not what the load wrote
            err.print(f"[red]read back differs[/] {escape(collection.difference)}", highlight=False)
    if not report.ok:
        raise typer.Exit(int(ExitCode.FAILURE))


def drop(
    use_case: Annotated[
        list[str] | None,
        typer.Option("--use-case", "-u", help="A use case name or 'all' (repeatable). Default: all."),
    ] = None,
    dataset: Annotated[
        Path | None,
        typer.Option(exists=True, dir_okay=False, help="Also (or only) drop the collections of a dataset file."),
    ] = None,
    namespace: NamespaceOption = "",
) -> None:
    """Delete the project's collections of these datasets; a collection it did not create stops it (exit 12)."""
    try:
        names = resolve_use_case_names(use_case) if (use_case or dataset is None) else []
    except KeyError as error:
        raise typer.BadParameter(str(error.args[0]), param_hint="--use-case") from None
    schemas = get_use_cases(names) if names else []
    if dataset is not None:
        schemas += read_dataset(dataset).use_cases
    with connected() as client:
        dropped = drop_use_cases(client, schemas, namespace)
    out.print(f"dropped {len(dropped)} collections: {', '.join(dropped) or 'none existed'}", highlight=False)


def _dataset_schemas(path: Path) -> list[UseCase]:
    dataset = read_dataset(path)
    if dataset.invalid:
        err.print(
            f"[yellow]note:[/] {len(dataset.invalid)} of {dataset.size} labels in {path} cannot run as "
            "written; see `dbgorilla lint-dataset`",
            highlight=False,
        )
    return dataset.use_cases


def _print_report(report: LoadReport) -> None:
    table = Table(
        "use case",
        "collection",
        "action",
        "count",
        "expected",
        "trimmed",
        "failed",
        "seconds",
        title=f"seed {report.seed}, {report.objects_per_collection} objects per collection",
    )
    for c in report.collections:
        colour = "green" if c.ok else "red"
        table.add_row(
            c.use_case,
            c.collection,
            c.action + (f" ({escape(c.note)})" if c.note else ""),
            f"[{colour}]{c.count}[/]",
            str(c.expected),
            str(c.trimmed),
            str(len(c.failed)),
            f"{c.seconds:.1f}",
        )
    out.print(table)
    out.print(
        f"sent {report.objects_sent} objects in {report.seconds:.1f}s ({report.objects_per_second:.0f} objects/s)"
    )
