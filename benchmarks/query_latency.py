"""Query latency through the executor, p50/p95 per operator class, at several collection sizes.

Each size gets its own `BenchExec<size>` collection of sample restaurants (vectorized by the
local text2vec-transformers service, so large sizes take a while to load; `--reuse` keeps them
between runs). Latency is the wall time of `WeaviateExecutor.execute` on a JSON tool call.

    .venv/bin/python benchmarks/query_latency.py                       # 1000 objects
    .venv/bin/python benchmarks/query_latency.py 1000 10000 100000 --rounds 200 --reuse --keep
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from executor_common import OPERATOR_CLASSES, check_plans, open_client, prepare

from executors import WeaviateExecutor


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sizes", type=int, nargs="*", default=[1000], help="objects per collection")
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--reuse", action="store_true", help="keep existing collections of the right size")
    parser.add_argument("--keep", action="store_true", help="do not delete the collections afterwards")
    options = parser.parse_args()

    table: dict[tuple[str, int], tuple[float, float]] = {}
    with open_client() as client:
        for size in options.sizes:
            name = prepare(client, size, reuse=options.reuse)
            try:
                executor = WeaviateExecutor(client)
                check_plans(executor, name)
                for operator in OPERATOR_CLASSES:
                    raw = json.dumps({"collection_name": name, **operator.arguments})
                    samples = []
                    for index in range(options.warmup + options.rounds):
                        started = time.perf_counter()
                        executor.execute(raw)
                        if index >= options.warmup:
                            samples.append((time.perf_counter() - started) * 1000)
                    table[(operator.name, size)] = (statistics.median(samples), percentile(samples, 0.95))
            finally:
                if not options.keep:
                    client.collections.delete(name)

    print(f"\nquery latency through the executor, ms (p50 / p95), {options.rounds} rounds")
    header = f"{'operator class':36}" + "".join(f"{f'{size:,} objects':>20}" for size in options.sizes)
    print(header)
    for operator in OPERATOR_CLASSES:
        cells = "".join(
            f"{f'{table[(operator.name, s)][0]:.2f} / {table[(operator.name, s)][1]:.2f}':>20}" for s in options.sizes
        )
        print(f"{operator.name:36}{cells}")


if __name__ == "__main__":
    main()
