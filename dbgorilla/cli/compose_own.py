"""`dbgorilla compose-split --collections A,B --out FILE`: a benchmark of the user's own collections
(`evaluation.own_split`), read-only; the file is written only where none is, or with `--replace`. And
`audit-dataset FILE` over such a file (`evaluation.audit.own`)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from dbgorilla.chat import resolve_model
from dbgorilla.cli.audit_view import print_own_audit
from dbgorilla.cli.console import connected, err, out, progress_bar, say
from dbgorilla.errors import ConfigError
from evaluation.audit.own import audit_own
from evaluation.own_split import compose_split, render
from evaluation.paraphrase import Reword
from executors import WeaviateExecutor
from executors.vocabulary import ToolOperations
from fixtures.datasets.public import read_public
from llm import ChatRequest, ModelRequest, UserPromptPart
from llm.encoder import MiniLMEncoder


def compose_own(
    collections: str,
    path: Path,
    per_shape: int,
    seed: int,
    replace: bool,
    paraphrase_model: str | None = None,
    base_url: str | None = None,
) -> None:
    """Compose, verify by execution and write the questions over the named collections (reworded by
    `paraphrase_model` where the check keeps the rewording)."""
    names = [name.strip() for name in collections.split(",") if name.strip()]
    if not names:
        raise ConfigError("--collections names no collection")
    if path.exists() and not replace:
        raise ConfigError(f"{path} exists; pass --replace to write over it")
    reword = _reworder(paraphrase_model, base_url) if paraphrase_model or base_url else None
    with connected() as client:
        executor = WeaviateExecutor(client, operations=ToolOperations.COMPOUND)  # the default tool, sort included
        composition = compose_split(client, executor, names, per_shape, seed, MiniLMEncoder().encode, reword)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(composition.lines), encoding="utf-8")
    for dropped in composition.dropped:
        err.print(f"[yellow]dropped[/] {dropped}", highlight=False)
    shapes = Counter(line["shape"] for line in composition.lines)
    kept = ", ".join(f"{name} {count}" for name, count in composition.kept.items())
    out.print(f"wrote {len(composition.lines)} questions to {path} ({kept}; dropped {len(composition.dropped)})")
    out.print("by shape: " + ", ".join(f"{form} {n}" for form, n in sorted(shapes.items())), highlight=False)
    if reword is not None:
        why = ", ".join(f"{reason} {n}" for reason, n in composition.kept_templates.most_common())
        out.print(f"reworded {composition.reworded}; kept the template for the rest ({why or 'none'})", highlight=False)
    joined = ",".join(names)
    out.print(f"audit them: dbgorilla audit-dataset {path} --collections {joined}")
    out.print(f"score a model on them: dbgorilla eval --dataset {path} --collections {joined}")


def _reworder(model: str | None, base_url: str | None) -> Reword:
    """One greedy turn of the chat model: the instruction and the template in, its text out."""
    chat = resolve_model(model, base_url, echo=say)

    def reword(prompt: str) -> str:
        request = ModelRequest(parts=[UserPromptPart(content=prompt)])
        return chat.complete(ChatRequest(messages=[request], temperature=0.0, max_tokens=96)).content or ""

    return reword


def audit_own_file(path: Path, collections: str | None, as_json: bool) -> None:
    """`audit-dataset FILE` for a composed file: its gold calls on the live collections (`evaluation.audit.own`),
    read-only; exit 1 when a target is missed."""
    names = {name.strip() for name in (collections or "").split(",") if name.strip()}
    questions = [q for q in read_public(path) if not names or set(q.collections) <= names]
    if not questions:
        raise ConfigError(f"no question of {path} is over {', '.join(sorted(names))}")
    with connected() as client, progress_bar(label_width=14) as on_progress:
        missing = sorted({n for q in questions for n in q.collections if not client.collections.exists(n)})
        if missing:
            raise ConfigError(f"no collection named {', '.join(missing)} in this Weaviate; the questions are over it")
        executor = WeaviateExecutor(client, operations=ToolOperations.COMPOUND)
        report = audit_own(client, executor, str(path), questions, on_progress)
    print_own_audit(report, as_json)
