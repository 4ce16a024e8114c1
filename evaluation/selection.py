"""Which cases an eval runs: by use case and id, or the default subset for a quick offline run."""

from __future__ import annotations

from fixtures.datasets import AbstentionCase, Case, Complexity

#: With the offline default model a case takes ~20-60 s on 2 cores (see the README's "Time is
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
