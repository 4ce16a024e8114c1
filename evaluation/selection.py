"""Which cases an eval runs: by use case and id, or the default subset for a quick offline run, and
what they need loaded (`Chosen`: from a split by `select_questions`, from a sample by `chosen_from_sample`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluation.runner import RunError
from evaluation.samples import read_sample
from fixtures.datasets import AbstentionCase, Case, Complexity, Dataset, read_dataset
from fixtures.use_cases import UseCase, get_use_cases

#: With the offline default model a case takes ~20-60 s on 2 cores (see docs/performance.md, "Time is
#: tokens"), so `dbgorilla eval` without --limit runs one case per collection (15): about 10 minutes.
#: `--limit 0` runs everything.
DEFAULT_SUBSET_PER_COLLECTION = 1


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
    levels = tuple(Complexity)
    subset = []
    for position, group in enumerate(by_collection.values()):
        for k in range(min(DEFAULT_SUBSET_PER_COLLECTION, len(group))):
            wanted = levels[(position + k) % len(levels)]
            candidates = [c for c in group if c.complexity is wanted] or group
            subset.append(candidates[(position * 5 + k) % len(candidates)])
    return subset


def select_abstentions(
    cases: list[AbstentionCase],
    use_cases: list[str] | None = None,
    limit: int | None = None,
    ids: list[str] | None = None,
) -> list[AbstentionCase]:
    """Filter by use case and id; all of them by default (a split of 20), the first `limit` if given."""
    chosen = [c for c in cases if (not use_cases or c.use_case in use_cases) and (not ids or c.id in ids)]
    return chosen if not limit or ids else chosen[:limit]


@dataclass
class Chosen:
    """The questions a run asks, and what they need loaded."""

    source: Dataset
    cases: list[Any]
    needed: list[UseCase]
    collections: dict[str, list[str]]
    max_steps: int


def select_questions(
    dataset: Path | None,
    use_case: list[str] | None,
    limit: int | None,
    case_id: list[str] | None,
    max_steps: int | None,
    echo: Callable[[str], None] = print,
) -> Chosen:
    """The questions of a split (or a paper-format file) by use case, id and limit; `RunError` when
    the file cannot be read or nothing is selected."""
    try:
        source = read_dataset(dataset)
    except (FileNotFoundError, KeyError) as error:
        raise RunError(str(error).strip('"')) from None
    cases: list[Any] = [
        *select_cases(source.cases, use_case, limit, case_id),
        *select_abstentions(source.abstentions, use_case, limit, case_id),
    ]
    if not cases:
        raise RunError("no benchmark cases selected")
    steps = max_steps or max(3, 1 + max(len(c.chain) for c in cases))
    if steps == 1:
        echo(
            "one-step protocol (--max-steps 1): each question gets one model turn, its call runs and is "
            "scored under `first`; no answer turn is generated, so the final-answer scores do not apply"
        )
    needed = [u for u in source.use_cases if u.name in {c.use_case for c in cases}]
    return Chosen(source, cases, needed, {u.name: [c.name for c in u.collections] for u in needed}, steps)


def chosen_from_sample(path: Path, limit: int | None, max_steps: int | None) -> Chosen:
    """The questions of a committed sample (several splits), as `select_questions` gives one split's."""
    try:
        cases = read_sample(path, limit or None)
    except (FileNotFoundError, KeyError, ValueError) as error:
        raise RunError(f"sample {path}: {error}") from None
    answerable = [c for c in cases if isinstance(c, Case)]
    refusals = [c for c in cases if isinstance(c, AbstentionCase)]
    needed = get_use_cases(sorted({c.use_case for c in cases}))
    source = Dataset(str(path), "split", answerable, needed, abstentions=refusals)
    steps = max_steps or max(3, 1 + max(len(c.chain) for c in answerable))
    return Chosen(source, cases, needed, {u.name: [c.name for c in u.collections] for u in needed}, steps)
