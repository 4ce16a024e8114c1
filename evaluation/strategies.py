"""Agent strategies in evaluation: the query memory wired in, cross-domain, and examples from runs.

In evaluation the `examples` strategy must never show a question its own use case's labels (as
Spider evaluates across databases): `retriever_for(use_case)` gives each case a retriever that
filters them out, and `run.json` says so (`strategy_setup`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent.strategies import ExampleRetriever, SolvedExample, canonical, needs_retriever
from evaluation.public_run import PublicRecord, holds_public_records, read_records
from evaluation.records import EvalRecord, read_jsonl
from evaluation.runner import RunContext
from evaluation.statistics import passed
from fixtures.examples import EXAMPLES_DATASET, ExampleMemory, StoredExample


class MemoryRetriever:
    """The Weaviate query memory as an `ExampleRetriever`, leaving out one use case's examples."""

    def __init__(self, memory: ExampleMemory, exclude_use_case: str | None = None) -> None:
        self.memory = memory
        self.exclude_use_case = exclude_use_case

    def nearest(self, question: str, k: int) -> list[SolvedExample]:
        return [
            SolvedExample(
                question=e.question, arguments=e.arguments, use_case=e.use_case, source=e.source, distance=e.distance
            )
            for e in self.memory.nearest(question, k, self.exclude_use_case)
        ]


def prepare_strategy(
    client: Any,
    strategy: str,
    namespace: str | None = None,
    echo: Callable[[str], None] = print,
    cross_domain: bool = True,
) -> tuple[str, Callable[[str], ExampleRetriever] | None, dict[str, Any]]:
    """The strategy's canonical name, a cross-domain retriever per use case (None if it needs none), and
    what run.json records about it. Seeds the memory from the natural split when it lacks those labels."""
    name = canonical(strategy)
    if not needs_retriever(name):
        return name, None, {"strategy": name}
    memory = ExampleMemory(client, namespace)
    written = memory.ensure_seeded()
    if written:
        echo(f"query memory {memory.name}: seeded {written} solved examples from the natural split")
    setup = {
        "strategy": name,
        "examples": {
            "collection": memory.name,
            "marker": EXAMPLES_DATASET,
            "cross_domain": cross_domain,
            "match": memory.match,
            "note": "each question is shown only examples of other use cases (its own use case's are filtered out)"
            if cross_domain
            else "every example in the memory may be shown",
        },
    }
    return name, lambda use_case: MemoryRetriever(memory, use_case if cross_domain else None), setup


def use_strategy(
    context: RunContext, client: Any, strategy: str, namespace: str | None = None, echo: Callable[[str], None] = print
) -> RunContext:
    """`context` set to run `strategy` (its memory seeded and wired in, cross-domain)."""
    context.strategy, context.retriever_for, context.strategy_setup = prepare_strategy(
        client, strategy, namespace, echo
    )
    return context


def examples_from_run(run_dir: Path) -> list[StoredExample]:
    """A run's passed single-step cases as examples: the question and the call its answer rested on. A run
    of a user's own question file (`eval --dataset public`, records with a `dataset`) gives its passed
    single questions of one call, under the dataset's name, so a cross-domain retriever leaves them out of
    their own dataset's questions."""
    path = run_dir / "results.jsonl" if run_dir.is_dir() else run_dir
    if holds_public_records(path):
        return [example for record in read_records(path) if (example := _own_example(record, path)) is not None]
    records, _ = read_jsonl(path)
    return [example for record in records if (example := _example_of(record, path)) is not None]


def _own_example(record: PublicRecord, path: Path) -> StoredExample | None:
    if not record.correct or record.kind != "single" or record.refused or len(record.calls) != 1:
        return None
    call = record.calls[0]
    if not call or "raw" in call:
        return None
    return StoredExample(record.query, dict(call), record.dataset, f"run/{path.parent.name}/{record.id}")


def _example_of(record: EvalRecord, path: Path) -> StoredExample | None:
    if record.expected != "call" or len(record.chain) > 1 or not passed(record):
        return None
    calls = [c for c in record.predicted_calls if c.ok and c.arguments]
    if not calls:
        return None
    source = f"run/{path.parent.name}/{record.id}"
    return StoredExample(record.query, dict(calls[-1].arguments or {}), record.use_case, source)
