"""Load throughput in objects/s, server-side vectorization included.

Loads one or more use cases into prefixed collections (`Bench<Name>`, so real data is never
touched) at each requested size, from scratch, then once more to time the idempotent re-run,
and prints a table. Generation alone is timed too, to show where the time goes.

    .venv/bin/python benchmarks/load_throughput.py                     # 1000 per collection
    .venv/bin/python benchmarks/load_throughput.py 100 1000 --use-case restaurants --batch-size 200
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dbgorilla.config import Settings
from dbgorilla.connection import connect
from fixtures.generator import DEFAULT_SEED, ObjectGenerator
from fixtures.loader import BatchOptions, drop_use_cases, load_schemas, resolve_use_case_names
from fixtures.use_cases import get_use_cases

PREFIX = "Bench"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[1000], help="objects per collection (default 1000)")
    parser.add_argument("--use-case", action="append", help="use case name (repeatable; default: restaurants)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--batch-size", type=int, default=BatchOptions().batch_size)
    parser.add_argument("--concurrent-requests", type=int, default=BatchOptions().concurrent_requests)
    parser.add_argument("--keep", action="store_true", help="leave the Bench* collections in place")
    args = parser.parse_args(argv)

    names = resolve_use_case_names(args.use_case or ["restaurants"])
    use_cases = [case.with_prefix(PREFIX) for case in get_use_cases(names)]
    batch = BatchOptions(batch_size=args.batch_size, concurrent_requests=args.concurrent_requests)
    print(f"use cases {', '.join(names)}; batch size {batch.batch_size}, {batch.concurrent_requests} concurrent")
    print(f"{'per coll.':>10} {'objects':>8} {'generate/s':>11} {'load s':>8} {'load obj/s':>11} {'rerun s':>8} ok")
    with connect(Settings(), timeout_seconds=600) as client:
        for size in args.sizes:
            generated = _generation_rate(use_cases, size, args.seed)
            drop_use_cases(client, use_cases)
            first = load_schemas(client, use_cases, size, args.seed, batch=batch)
            again = load_schemas(client, use_cases, size, args.seed, batch=batch)
            total = size * sum(len(case.collections) for case in use_cases)
            print(
                f"{size:>10} {total:>8} {generated:>11.0f} {first.seconds:>8.1f} {first.objects_per_second:>11.1f} "
                f"{again.seconds:>8.1f} {first.ok and again.ok}"
            )
            for failure in first.failed[:5]:
                print(f"  failed {failure.collection}[{failure.index}]: {failure.message}")
        if not args.keep:
            drop_use_cases(client, use_cases)
    return 0


def _generation_rate(use_cases: list, size: int, seed: int) -> float:
    started = time.perf_counter()
    count = 0
    for case in use_cases:
        for collection in case.collections:
            for _ in ObjectGenerator(collection, seed).stream(size):
                count += 1
    return count / (time.perf_counter() - started)


if __name__ == "__main__":
    sys.exit(main())
