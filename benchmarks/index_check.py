"""What the vector-index check and its rebuild cost, per collection, at each size.

Loads use cases into prefixed collections (`Bench<Name>`, real data is never touched), then times
`check_index` (every object searched with its own vector, up to `FULL_CHECK_LIMIT`) and
`rebuild_index` (export, recreate, re-import with the stored vectors). The machine's own limit
is printed beside it: one near_vector query with limit 10, timed alone.

    .venv/bin/python benchmarks/index_check.py                 # 100 and 1000 per collection
    .venv/bin/python benchmarks/index_check.py 100 1000 10000 --use-case visual_art
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dbgorilla.config import Settings
from dbgorilla.connection import connect
from executors.index_health import check_index
from fixtures.generator import DEFAULT_SEED
from fixtures.index_repair import rebuild_index
from fixtures.loader import drop_use_cases, load_schemas, resolve_use_case_names
from fixtures.use_cases import get_use_cases

PREFIX = "Bench"


def one_query_ms(collection: object, repeats: int = 50) -> float:
    """Median time of a single near_vector query (limit 10): the floor under a per-object check."""
    vector = next(iter(collection.iterator(include_vector=True))).vector  # type: ignore[attr-defined]
    vector = next(iter(vector.values()))
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        collection.query.near_vector(vector, limit=10, return_properties=[])  # type: ignore[attr-defined]
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[100, 1000], help="objects per collection")
    parser.add_argument("--use-case", action="append", help="use case name (repeatable; default: visual_art)")
    parser.add_argument("--keep", action="store_true", help="leave the Bench* collections in place")
    args = parser.parse_args(argv)
    use_cases = [c.with_prefix(PREFIX) for c in get_use_cases(resolve_use_case_names(args.use_case or ["visual_art"]))]
    names = [c.name for u in use_cases for c in u.collections]
    print(f"{'per coll.':>10} {'collection':<18} {'checked':>8} {'check s':>8} {'ms/object':>10} "
          f"{'1 query ms':>11} {'rebuild s':>10} ok")  # fmt: skip
    with connect(Settings(), timeout_seconds=600) as client:
        for size in args.sizes:
            drop_use_cases(client, use_cases)
            load_schemas(client, use_cases, size, DEFAULT_SEED)
            for name in names:
                collection = client.collections.use(name)
                report = check_index(collection)
                floor = one_query_ms(collection)
                repair = rebuild_index(client, name, report)
                print(
                    f"{size:>10} {name:<18} {report.checked:>8} {report.seconds:>8.2f} "
                    f"{1000 * report.seconds / max(1, report.checked):>10.2f} {floor:>11.2f} "
                    f"{repair.seconds:>10.2f} {report.ok and repair.after.ok}"
                )
        if not args.keep:
            drop_use_cases(client, use_cases)
    return 0


if __name__ == "__main__":
    sys.exit(main())
