"""Executor overhead: `WeaviateExecutor.execute` versus the same weaviate-client calls by hand.

Both sides run the identical requests (checked against the executor's plan first), interleaved
in one run and alternating which goes first, so server and cache state are shared. The executor
side includes everything a tool call costs: parsing the raw JSON arguments, validation against
the cached schema, translation, and normalising the response into a `QueryResult`. Overhead is
the median executor time over the median hand-written time, minus one (target <= 5%).

    .venv/bin/python benchmarks/executor_overhead.py                  # 1000 objects, 200 rounds
    .venv/bin/python benchmarks/executor_overhead.py --size 10000 --rounds 500 --reuse
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

from executor_common import OPERATOR_CLASSES, check_plans, open_client, prepare

from executors import WeaviateExecutor


def measure(executor: WeaviateExecutor, collection: Any, name: str, rounds: int, warmup: int) -> list[dict[str, Any]]:
    rows = []
    for operator in OPERATOR_CLASSES:
        raw = json.dumps({"collection_name": name, **operator.arguments})  # what a model sends
        executed: list[float] = []
        by_hand: list[float] = []
        for index in range(warmup + rounds):
            pair = [
                ("executor", lambda raw=raw: executor.execute(raw)),
                ("by_hand", lambda by_hand=operator.by_hand: by_hand(collection)),
            ]
            if index % 2:
                pair.reverse()
            for label, call in pair:
                started = time.perf_counter()
                call()
                elapsed = time.perf_counter() - started
                if index >= warmup:
                    (executed if label == "executor" else by_hand).append(elapsed)
        exec_p50, hand_p50 = statistics.median(executed), statistics.median(by_hand)
        rows.append(
            {
                "class": operator.name,
                "by_hand_ms": hand_p50 * 1000,
                "executor_ms": exec_p50 * 1000,
                "added_us": (exec_p50 - hand_p50) * 1e6,
                "overhead": exec_p50 / hand_p50 - 1,
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=1000, help="objects in the benchmark collection")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--reuse", action="store_true", help="keep an existing collection of the right size")
    parser.add_argument("--keep", action="store_true", help="do not delete the collection afterwards")
    options = parser.parse_args()

    with open_client() as client:
        name = prepare(client, options.size, reuse=options.reuse)
        try:
            executor = WeaviateExecutor(client)
            check_plans(executor, name)
            # The same handle settings as the executor's, so only the executor's own work differs.
            collection = client.collections.use(name, skip_argument_validation=True)
            rows = measure(executor, collection, name, options.rounds, options.warmup)
        finally:
            if not options.keep:
                client.collections.delete(name)

    print(f"\nexecutor overhead, {options.size} objects, {options.rounds} interleaved rounds (p50)")
    print(f"{'operator class':36} {'by hand ms':>11} {'executor ms':>12} {'added us':>9} {'overhead':>9}")
    for row in rows:
        print(
            f"{row['class']:36} {row['by_hand_ms']:11.3f} {row['executor_ms']:12.3f} "
            f"{row['added_us']:9.0f} {row['overhead']:9.1%}"
        )
    print(f"{'median over classes':36} {'':11} {'':12} {'':9} {statistics.median(r['overhead'] for r in rows):9.1%}")


if __name__ == "__main__":
    main()
