"""Load throughput in objects/s, server-side vectorization included, side by side in one run.

Loads use cases into prefixed collections (`Bench<Name>`, so real data is never touched) at
each requested size, from scratch, once with the loader's previous settings (one collection at
a time, 100-object requests 4 in flight, index re-checked every second) and once with today's
defaults, then the idempotent re-run. Beside them, the machine's limit: the embedding model
in-process on the same objects' text, the rate no load that vectorizes every object can beat.

    .venv/bin/python benchmarks/load_throughput.py                          # 100 per collection, all use cases
    .venv/bin/python benchmarks/load_throughput.py 1000 --use-case restaurants --batch-size 20
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dbgorilla.config import Settings
from dbgorilla.connection import connect
from fixtures.generator import DEFAULT_SEED, ObjectGenerator
from fixtures.loader import BatchOptions, drop_use_cases, load_schemas, resolve_use_case_names
from fixtures.use_cases import UseCase, get_use_cases
from llm.encoder import MiniLMEncoder

#: What `dbgorilla load` did before issue 13: the baseline every ratio is against.
PREVIOUS = BatchOptions(batch_size=100, concurrent_requests=4, collections_at_once=1, index_retry_seconds=1.0)

PREFIX = "Bench"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[100], help="objects per collection (default 100)")
    parser.add_argument("--use-case", action="append", help="use case name (repeatable; default: all)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--batch-size", type=int, default=BatchOptions().batch_size)
    parser.add_argument("--concurrent-requests", type=int, default=BatchOptions().concurrent_requests)
    parser.add_argument("--collections-at-once", type=int, default=BatchOptions().collections_at_once)
    parser.add_argument("--keep", action="store_true", help="leave the Bench* collections in place")
    args = parser.parse_args(argv)

    names = resolve_use_case_names(args.use_case or "all")
    use_cases = [case.with_prefix(PREFIX) for case in get_use_cases(names)]
    now = BatchOptions(
        batch_size=args.batch_size,
        concurrent_requests=args.concurrent_requests,
        collections_at_once=args.collections_at_once,
    )
    print(f"use cases: {', '.join(names)}")
    for label, options in (("previous", PREVIOUS), ("now", now)):
        print(
            f"  {label:>8}: {options.collections_at_once} collection(s) at once, requests of {options.batch_size} "
            f"objects, {options.concurrent_requests} in flight each, "
            f"index re-checked every {options.index_retry_seconds} s"
        )
    print(
        f"{'per coll.':>10} {'objects':>8} {'limit/s':>8} {'previous/s':>11} {'now/s':>8} {'ratio':>6} "
        + f"{'of limit':>9} {'rerun s':>8} ok"
    )
    with connect(Settings(), timeout_seconds=600) as client:
        for size in args.sizes:
            limit = encoder_rate(use_cases, size, args.seed)
            drop_use_cases(client, use_cases)
            before = load_schemas(client, use_cases, size, args.seed, batch=PREVIOUS)
            drop_use_cases(client, use_cases)
            first = load_schemas(client, use_cases, size, args.seed, batch=now)
            again = load_schemas(client, use_cases, size, args.seed, batch=now)
            total = size * sum(len(case.collections) for case in use_cases)
            ratio = first.objects_per_second / before.objects_per_second
            print(
                f"{size:>10} {total:>8} {limit:>8.0f} {before.objects_per_second:>11.1f} "
                f"{first.objects_per_second:>8.1f} "
                f"{ratio:>5.2f}x {first.objects_per_second / limit:>8.0%} {again.seconds:>8.1f} "
                f"{before.ok and first.ok and again.ok}"
            )
            for failure in (before.failed + first.failed)[:5]:
                print(f"  failed {failure.collection}[{failure.index}]: {failure.message}")
        if not args.keep:
            drop_use_cases(client, use_cases)
    return 0


def encoder_rate(use_cases: list[UseCase], size: int, seed: int, limit: int | None = None) -> float:
    """Texts/s of the embedding model in-process, in batches, on the objects' text properties: the
    rate no load that vectorizes every object can beat. `limit` times a sample of at most that many
    texts (taken evenly across the collections), enough for the rate at sizes where all would be slow."""
    texts = [
        " ".join(value for _, value in sorted(obj.properties.items()) if isinstance(value, str))
        for case in use_cases
        for collection in case.collections
        for obj in ObjectGenerator(collection, seed).stream(size)
    ]
    if limit is not None and len(texts) > limit:
        texts = texts[:: math.ceil(len(texts) / limit)]
    encoder = MiniLMEncoder()
    encoder.encode(texts[:64])
    started = time.perf_counter()
    for start in range(0, len(texts), 64):
        encoder.encode(texts[start : start + 64])
    return len(texts) / (time.perf_counter() - started)


if __name__ == "__main__":
    sys.exit(main())
