"""Benchmark cases from either dataset format, and the default subset for a quick offline run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from fixtures.benchmark import complexity_of, components_of, load_benchmark

#: With the offline default model a case takes ~10-40 s on 2 cores, so `dbgorilla eval` without
#: --limit runs one case per collection (15): a few minutes. `--limit 0` runs everything.
DEFAULT_SUBSET_PER_COLLECTION = 1


class Case(BaseModel):
    id: str
    use_case: str
    query: str
    ground_truth: dict[str, Any]
    complexity: str
    components: list[str]

    @property
    def collection(self) -> str:
        return self.ground_truth["collection_name"]

    def fields(self) -> dict[str, Any]:
        """The case's fields as an `EvalRecord` carries them."""
        return self.model_dump()

    @classmethod
    def of(cls, record: Any) -> Case:
        """The case an `EvalRecord` (or anything with the same fields) answers."""
        return cls(**{name: getattr(record, name) for name in cls.model_fields})


def is_dbgorilla_file(path: Path) -> bool:
    with open(path) as handle:
        return handle.read(1) == "["


def load_cases(path: str | Path | None = None) -> list[Case]:
    """Our JSONL benchmark (default), or a DBGorilla-format JSON list (runnable labels only)."""
    if path is not None and is_dbgorilla_file(Path(path)):
        from fixtures.dbgorilla_format import load_dbgorilla

        dataset = load_dbgorilla(path)
        return [
            Case(
                id=f"dbgorilla-{record.index:04d}",
                use_case=record.use_case,
                query=record.query,
                ground_truth=record.arguments.to_tool_arguments(),
                complexity=complexity_of(record.arguments).value,
                components=[c.value for c in components_of(record.arguments)],
            )
            for record in dataset.records
            if record.arguments is not None
        ]
    return [
        Case(
            id=record.id,
            use_case=record.use_case,
            query=record.query,
            ground_truth=json.loads(record.model_dump_json())["ground_truth"],
            complexity=record.complexity.value,
            components=[c.value for c in record.components],
        )
        for record in load_benchmark(path)
    ]


def select_cases(
    cases: list[Case], use_cases: list[str] | None = None, limit: int | None = None, ids: list[str] | None = None
) -> list[Case]:
    """Filter by use case and id; `limit=None` takes the default subset, `limit=0` takes all."""
    chosen = [c for c in cases if (not use_cases or c.use_case in use_cases) and (not ids or c.id in ids)]
    if limit == 0 or ids:
        return chosen
    if limit is None:
        return default_subset(chosen)
    return chosen[:limit]


def default_subset(cases: list[Case]) -> list[Case]:
    """One case per collection, rotating the complexity (simple, moderate, complex) and, within
    it, the position, so a 15-case run still touches every collection, level and most components."""
    by_collection: dict[str, list[Case]] = {}
    for case in cases:
        by_collection.setdefault(case.collection, []).append(case)
    levels = ("simple", "moderate", "complex")
    subset = []
    for position, group in enumerate(by_collection.values()):
        for k in range(min(DEFAULT_SUBSET_PER_COLLECTION, len(group))):
            wanted = levels[(position + k) % len(levels)]
            candidates = [c for c in group if c.complexity == wanted] or group
            subset.append(candidates[(position * 5 + k) % len(candidates)])
    return subset
