"""`dbgorilla compose-split --collections A,B --out FILE`: a benchmark of the user's own collections
(`evaluation.own_split`), read-only; the file is written only where none is, or with `--replace`."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from dbgorilla.cli.console import connected, err, out
from dbgorilla.embedding.encoder import MiniLMEncoder
from dbgorilla.errors import ConfigError
from evaluation.own_split import compose_split, render
from executors import WeaviateExecutor
from executors.vocabulary import ToolOperations


def compose_own(collections: str, path: Path, per_shape: int, seed: int, replace: bool) -> None:
    """Compose, verify by execution and write the questions over the named collections."""
    names = [name.strip() for name in collections.split(",") if name.strip()]
    if not names:
        raise ConfigError("--collections names no collection")
    if path.exists() and not replace:
        raise ConfigError(f"{path} exists; pass --replace to write over it")
    with connected() as client:
        executor = WeaviateExecutor(client, operations=ToolOperations.COMPOUND)  # the default tool, sort included
        composition = compose_split(client, executor, names, per_shape, seed, MiniLMEncoder().encode)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(composition.lines), encoding="utf-8")
    for dropped in composition.dropped:
        err.print(f"[yellow]dropped[/] {dropped}", highlight=False)
    shapes = Counter(
        line["forms"][0] if line["kind"] != "unanswerable" else "unanswerable" for line in composition.lines
    )
    kept = ", ".join(f"{name} {count}" for name, count in composition.kept.items())
    out.print(f"wrote {len(composition.lines)} questions to {path} ({kept}; dropped {len(composition.dropped)})")
    out.print("by form: " + ", ".join(f"{form} {n}" for form, n in sorted(shapes.items())), highlight=False)
    out.print(f"score a model on them: dbgorilla eval --dataset {path} --collections {','.join(names)}")
