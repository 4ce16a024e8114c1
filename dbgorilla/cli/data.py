"""`use-cases`, `lint-dataset`, `audit-dataset`, `generate` and `compose-split`;
registers `load` and `drop` (`dbgorilla.cli.loading`) too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from dbgorilla.cli.audit_view import finish_abstention_audit, print_audit
from dbgorilla.cli.compose_own import audit_own_file, compose_own
from dbgorilla.cli.console import NamespaceOption, connected, err, out, progress_bar
from dbgorilla.cli.loading import drop, load
from dbgorilla.config import Settings
from dbgorilla.errors import ExitCode, ServiceNotRunning
from dbgorilla.local_models import DEFAULT_MODEL
from evaluation.audit import audit_dataset
from evaluation.audit.report import SizeMismatch
from evaluation.audit.unanswerable import audit_abstentions
from fixtures.authoring import compose
from fixtures.authoring.generate import generate_records
from fixtures.datasets import is_public_file, load_paper_dataset, read_dataset, render
from fixtures.datasets.splits import SPLITS_DIR
from fixtures.loader import resolve_use_case_names
from fixtures.use_cases import get_use_cases
from llm import ModelTimeout, ModelUnavailable, open_model, split_model_name
from llm.encoder import MiniLMEncoder


def register(app: typer.Typer) -> None:
    app.command("load")(load)
    app.command("drop")(drop)
    app.command("use-cases")(use_cases)
    app.command("lint-dataset")(lint_dataset)
    app.command("audit-dataset")(audit)
    app.command("generate")(generate)
    app.command("compose-split")(compose_split)


def use_cases(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """List the built-in use cases, their collections and properties."""
    cases = get_use_cases()
    if as_json:
        out.print_json(json.dumps([c.model_dump(mode="json", exclude_none=True) for c in cases]))
        return
    table = Table("use case", "collection", "properties")
    for case in cases:
        for collection in case.collections:
            props = ", ".join(f"{p.name} ({p.kind.value})" for p in collection.properties)
            table.add_row(case.name, collection.name, props)
    out.print(table)


def lint_dataset(
    path: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="A DBGorilla paper-format JSON file.")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Report every label in a paper-format file that cannot run as written, without a server; exit 1 if any."""
    dataset = load_paper_dataset(path)
    if as_json:
        payload = {
            "records": len(dataset.records),
            "schemas": len(dataset.use_cases),
            "mislabeled": dataset.mislabeled,
            "issues": [issue.model_dump() for issue in dataset.issues],
        }
        out.print_json(json.dumps(payload))
    else:
        table = Table("record", "field", "problem", title=f"{path}: {len(dataset.records)} records")
        for issue in dataset.issues:
            table.add_row(str(issue.record), issue.field, issue.message)
        out.print(table)
        out.print(
            f"{len(dataset.mislabeled)} of {len(dataset.records)} records cannot run as written "
            f"({len(dataset.use_cases)} distinct schemas)."
        )
    if dataset.issues:
        raise typer.Exit(int(ExitCode.FAILURE))


def audit(
    path: Annotated[
        Path | None,
        typer.Argument(
            exists=True,
            dir_okay=False,
            help="A split of ours (default: the default split) or a DBGorilla paper-format JSON file.",
        ),
    ] = None,
    workers: Annotated[int, typer.Option(min=1, max=32, help="Queries in flight.")] = 8,
    namespace: NamespaceOption = "",
    use_case: Annotated[
        list[str] | None, typer.Option("--use-case", help="Only the questions of these use cases (repeatable).")
    ] = None,
    objects_per_collection: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="The size to audit (100, 1000 and 10000 are supported): loaded at it when missing; "
            "collections holding another size stop the audit (exit 10).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON on stdout.")] = False,
    collections: Annotated[
        str | None,
        typer.Option(help="A file `compose-split --collections` wrote: only its questions over these (A,B)."),
    ] = None,
) -> None:
    """Audit the labels: execute each and its single-component mutants on the loaded data; exit 1 if a target is missed.

    Targets: no execution errors, non-vacuous rate >= 0.95, mutation sensitivity >= 0.90, no tie at a
    cut, no search label without a stable cut at this size. Each search label runs at its own cut on
    this data, the one the eval scores it at (docs/scoring.md, "The search cut per size").
    """
    if path is not None and is_public_file(path):  # a composed file over the user's own collections
        audit_own_file(path, collections, as_json)
        return
    abstentions = read_dataset(path).abstentions if path is not None else []
    if abstentions:  # questions the tool cannot answer have evidence and probes, not labels
        with connected() as client:
            checked = audit_abstentions(client, str(path), abstentions, namespace=namespace)
        finish_abstention_audit(checked, as_json)
        return
    try:
        chosen = resolve_use_case_names(use_case) if use_case else None
    except KeyError as error:
        err.print(f"[red]error:[/] {error.args[0]}", highlight=False)
        raise typer.Exit(int(ExitCode.USAGE)) from error
    try:
        with connected() as client, progress_bar(label_width=14) as on_progress:
            report = audit_dataset(
                client,
                path,
                workers=workers,
                on_progress=on_progress,
                namespace=namespace,
                use_cases=chosen,
                objects_per_collection=objects_per_collection,
            )
    except SizeMismatch as error:
        err.print(f"[red]error:[/] {error}", highlight=False)
        raise typer.Exit(int(ExitCode.BAD_INPUT)) from error
    if as_json:
        print(json.dumps(report.model_dump(mode="json")))
    else:
        print_audit(report)
    for failed in report.failed_targets:
        err.print(f"[red]target missed:[/] {failed}", highlight=False)
    if not report.ok:
        raise typer.Exit(int(ExitCode.FAILURE))


def generate(
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the accepted records (JSONL).")],
    use_case: Annotated[
        list[str] | None, typer.Option("--use-case", "-u", help="Use case (repeatable; default all).")
    ] = None,
    model: Annotated[str | None, typer.Option(help="Model name at the endpoint (default: the local model).")] = None,
    base_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible base URL (default: the local `dbgorilla model up` server).")
    ] = None,
    attempts: Annotated[int, typer.Option(min=1, help="Proposals per combination before giving up.")] = 3,
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N of the 63 combinations.")] = None,
    json_mode: Annotated[bool, typer.Option(help="Ask for response_format json_object.")] = True,
) -> None:
    """Have an LLM write benchmark queries; keep only labels that check out on the default data."""
    try:
        names = resolve_use_case_names(use_case)
    except KeyError as error:
        raise typer.BadParameter(str(error.args[0]), param_hint="--use-case") from None
    provider, name = split_model_name(model or DEFAULT_MODEL)
    endpoint = base_url or (None if provider else Settings().model_base_url)  # a bare name: the local server's URL
    where = {"base_url": endpoint} if endpoint else {}
    # No bound on the reply (max_tokens=None) and the client's own 600 s timeout, as before the seam.
    chat = open_model(provider or "openai", name, max_retries=2, timeout=600.0, max_tokens=None, **where)
    accepted = rejected = 0
    with output.open("w") as sink:
        for case in get_use_cases(names):
            outcomes = generate_records(chat, case, attempts=attempts, limit=limit, json_mode=json_mode)
            try:
                for outcome in outcomes:
                    if outcome.record is not None:
                        accepted += 1
                        sink.write(outcome.record.to_json_line() + "\n")
                    else:
                        rejected += 1
                        err.print(f"[yellow]rejected[/] {outcome.collection} {outcome.combination}: {outcome.problems}")
            except (ModelUnavailable, ModelTimeout) as error:
                raise ServiceNotRunning(f"cannot reach {endpoint} ({error}); try `dbgorilla model up`") from None
    out.print(f"accepted {accepted}, rejected {rejected}; wrote {output}")
    if accepted == 0:
        raise typer.Exit(int(ExitCode.FAILURE))


def compose_split(
    check: Annotated[
        bool, typer.Option("--check", help="Exit 1 if the committed split differs from a fresh one.")
    ] = False,
    split: Annotated[str, typer.Option("--split", help=f"Which split: {' or '.join(compose.SPLITS)}.")] = compose.SPLIT,
    collections: Annotated[
        str | None,
        typer.Option(help="Compose over these collections of your own (read-only), with gold verified by execution."),
    ] = None,
    output: Annotated[Path | None, typer.Option("--out", help="With --collections: the file to write.")] = None,
    per_shape: Annotated[int, typer.Option(min=1, help="With --collections: questions of each shape.")] = 2,
    seed: Annotated[int, typer.Option(help="With --collections: which properties and values are asked first.")] = 42,
    replace: Annotated[bool, typer.Option(help="With --collections: write over an existing --out file.")] = False,
    paraphrase_model: Annotated[
        str | None,
        typer.Option(
            help="With --collections: reword each question with this model (a local one, or the endpoint's "
            "model name), kept only where a check shows it asks the same thing (docs/benchmark.md)."
        ),
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="With --paraphrase-model: an OpenAI-compatible endpoint (key: OPENAI_API_KEY).")
    ] = None,
) -> None:
    """Compose a split from its templates (searches are vetted with the embedding model, offline), or with
    --collections a benchmark of your own collections."""
    if collections is not None:
        if output is None:
            raise typer.BadParameter("--collections needs --out FILE")
        compose_own(collections, output, per_shape, seed, replace, paraphrase_model, base_url)
        return
    if split not in compose.SPLITS:
        raise typer.BadParameter(f"unknown split {split!r}; known: {', '.join(compose.SPLITS)}")
    encoder = MiniLMEncoder()
    path = SPLITS_DIR / f"{split}.jsonl"
    if check:
        if not path.is_file() or path.read_text() != render(compose.compose(encoder.encode, split=split)):
            err.print(f"{path} is stale: run `dbgorilla compose-split`", highlight=False)
            raise typer.Exit(int(ExitCode.FAILURE))
        out.print(f"{path}: up to date")
        return
    meta = compose.write(encoder.encode, path, split)
    out.print(f"wrote {meta.records} cases to {path} (version {meta.version}, sha256 {meta.sha256[:12]})")
