"""The fixed, stratified sample strategies are compared on (`fixtures/data/samples/strategies.json`).

The rule, seeded so anyone can rebuild the same ids (`python -m evaluation.samples`):
- single-step (60): the natural split's one-call questions. Each component's questions are shuffled
  with `random.Random(seed)`; then components are visited round-robin in sorted order, each taking its
  next question not taken yet, until 60 are taken; so every component is covered and the rare ones
  are not crowded out by the common ones.
- multi-step (30): the multistep split's chains, shuffled per use case, taken round-robin over the
  use cases in sorted order.
- abstention (20): the abstention split, shuffled, the first 20.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

from fixtures.datasets import AbstentionCase, Case, read_split, split_path

SAMPLE_PATH = Path(__file__).resolve().parents[1] / "fixtures" / "data" / "samples" / "strategies.json"
SEED = 25
SIZES = {"single-step": 60, "multi-step": 30, "abstention": 20}
#: Which split each kind is drawn from.
SPLITS = {"single-step": "natural", "multi-step": "multistep", "abstention": "abstention"}


def _round_robin(buckets: dict[str, list[str]], size: int) -> list[str]:
    taken: list[str] = []
    queues = {key: list(ids) for key, ids in sorted(buckets.items())}
    while len(taken) < size and any(queues.values()):
        for key in sorted(queues):
            while queues[key] and queues[key][0] in taken:
                queues[key].pop(0)
            if queues[key] and len(taken) < size:
                taken.append(queues[key].pop(0))
    return taken


def build_sample(seed: int = SEED) -> dict[str, Any]:
    rng = random.Random(seed)
    natural, _ = read_split(split_path(SPLITS["single-step"]))
    single = [c for c in natural if len(c.chain) <= 1]
    by_component: dict[str, list[str]] = {}
    for case in sorted(single, key=lambda c: c.id):
        for component in case.components:
            by_component.setdefault(str(getattr(component, "value", component)), []).append(case.id)
    for ids in by_component.values():
        rng.shuffle(ids)
    multistep, _ = read_split(split_path(SPLITS["multi-step"]))
    by_use_case: dict[str, list[str]] = {}
    for case in sorted(multistep, key=lambda c: c.id):
        by_use_case.setdefault(case.use_case, []).append(case.id)
    for ids in by_use_case.values():
        rng.shuffle(ids)
    _, abstentions = read_split(split_path(SPLITS["abstention"]))
    refusals = sorted(a.id for a in abstentions)
    rng.shuffle(refusals)
    return {
        "seed": seed,
        "rule": __doc__.split("\n\n", 1)[1].strip() if __doc__ else "",
        "splits": SPLITS,
        "ids": {
            "single-step": _round_robin(by_component, SIZES["single-step"]),
            "multi-step": _round_robin(by_use_case, SIZES["multi-step"]),
            "abstention": refusals[: SIZES["abstention"]],
        },
    }


def read_sample(path: Path = SAMPLE_PATH, limit: int | None = None) -> list[Case | AbstentionCase]:
    """The sample's questions, typed, in order (the first `limit` of each kind when given)."""
    sample = json.loads(path.read_text())
    chosen: list[Case | AbstentionCase] = []
    for kind, ids in sample["ids"].items():
        cases, abstentions = read_split(split_path(sample["splits"][kind]))
        by_id: dict[str, Case | AbstentionCase] = {c.id: c for c in [*cases, *abstentions]}
        missing = [i for i in ids if i not in by_id]
        if missing:
            raise KeyError(f"{path}: ids not in the {sample['splits'][kind]} split: {', '.join(missing[:5])}")
        chosen += [by_id[i] for i in (ids[:limit] if limit else ids)]
    return chosen


if __name__ == "__main__":
    SAMPLE_PATH.parent.mkdir(parents=True, exist_ok=True)
    SAMPLE_PATH.write_text(json.dumps(build_sample(), indent=2) + "\n")
    print(f"wrote {SAMPLE_PATH}", file=sys.stderr)
