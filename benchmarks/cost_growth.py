"""What each size costs, in one run: load, audit, a query_database call, an eval question, and memory.

Issue 38 asks where the cost curve bends between 100, 1,000 and 10,000 objects per collection. For
each size, one use case (default restaurants) is loaded from scratch under its own namespace
(`Bench_<Collection>`, so no real data is touched), then, in order:

- the embedding model's own rate, in-process on a sample of that size's object texts, measured
  alone before the load (`load_throughput.encoder_rate`): the limit no vectorizing load can beat;
- the load (`fixtures.loader.load_use_cases`, today's batch settings), its objects/s beside that limit;
- the label audit of the use case's questions (`evaluation.audit.audit_dataset`, natural split), its
  wall time and what it found (ties, unstable questions, mutants);
- every gold call of those questions through the project's executor (`WeaviateExecutor.execute`,
  what the agent's `query_database` runs), `--query-rounds` times after one warm-up round: p50, p90;
- `--questions N` questions of the use case through `dbgorilla eval` itself (the local model,
  the default strategy): seconds per question from the records, and the command's wall time;
- the resident memory (RSS of the process and its children, from /proc) of Weaviate and the
  embedder, as `dbgorilla status` finds them: before the load, after the size's work, and the peak.

Weaviate's RSS is the whole server's: collections loaded by others count too, so the growth over
"before" is what this size added. On a shared machine every time here is an upper bound.

    .venv/bin/python benchmarks/cost_growth.py 100 1000 10000 --questions 3 --out cost.md

Needs `dbgorilla up` and (for `--questions`) the local model server; drops its Bench collections
at the end unless `--keep`.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.load_throughput import encoder_rate
from dbgorilla.config import Settings
from dbgorilla.connection import connect
from dbgorilla.stack import status as stack_status
from evaluation.audit import audit_dataset
from evaluation.runner import RESULTS_FILE, read_records
from evaluation.statistics import passed
from executors import ExecutorError, WeaviateExecutor
from fixtures.datasets import read_dataset
from fixtures.datasets.cases import operations_needed
from fixtures.examples import EXAMPLES_COLLECTION
from fixtures.generator import DEFAULT_SEED
from fixtures.loader import drop_use_cases, load_use_cases, names_of
from fixtures.use_cases import get_use_cases

NAMESPACE = "Bench"
#: Object texts the in-process encoder is timed on per size: enough for a steady rate, cheap at 10,000.
ENCODER_SAMPLE = 1500
#: `dbgorilla eval` runs tried per size (a shared model server can be busy past its readiness wait).
EVAL_ATTEMPTS = 3
#: Seconds between memory samples (the peak is the highest seen).
SAMPLE_EVERY = 0.5


@dataclass
class SizeRow:
    """One size's measurements; `None` where a stage was skipped or failed."""

    size: int
    objects: int = 0
    encoder_per_s: float | None = None
    load_s: float | None = None
    load_per_s: float | None = None
    load_ok: bool | None = None
    audit_s: float | None = None
    audit: dict[str, Any] = field(default_factory=dict)
    query_calls: int = 0
    query_errors: int = 0
    query_p50_ms: float | None = None
    query_p90_ms: float | None = None
    eval_questions: int = 0
    eval_passed: int | None = None
    eval_p50_s: float | None = None
    eval_mean_s: float | None = None
    eval_wall_s: float | None = None
    eval_attempts: int = 0
    memory_mib: dict[str, dict[str, float | None]] = field(default_factory=dict)


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0-100) by linear interpolation between closest ranks; None without values."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _number(value: float | None, digits: int = 1) -> str:
    return "n/a" if value is None else f"{value:,.{digits}f}"


def markdown_table(rows: Sequence[SizeRow]) -> str:
    """The committed table: one row per size, the columns issue 38 asks for."""
    header = [
        "| per collection | objects | load s | load obj/s | encoder alone obj/s | load / encoder | audit s "
        "| audit: executed / unstable / ties | query p50 ms | query p90 ms | eval s per question (p50 / mean) "
        "| Weaviate RSS MiB (before → after, peak) | embedder RSS MiB (after, peak) |",
        "|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---|---|---|",
    ]
    lines = []
    for row in rows:
        share = (
            f"{row.load_per_s / row.encoder_per_s:.0%}" if row.load_per_s is not None and row.encoder_per_s else "n/a"
        )
        audit = row.audit
        audited = (
            f"{audit['executed']}/{audit['queries']} / {len(audit['unstable'])} / {len(audit['ties'])}"
            if audit
            else "n/a"
        )
        weaviate, embedder = row.memory_mib.get("weaviate", {}), row.memory_mib.get("embedder", {})
        lines.append(
            f"| {row.size:,} | {row.objects:,} | {_number(row.load_s)} | {_number(row.load_per_s)} "
            f"| {_number(row.encoder_per_s)} | {share} | {_number(row.audit_s)} | {audited} "
            f"| {_number(row.query_p50_ms)} | {_number(row.query_p90_ms)} "
            f"| {_number(row.eval_p50_s)} / {_number(row.eval_mean_s)} ({row.eval_questions} q) "
            f"| {_number(weaviate.get('before'), 0)} → {_number(weaviate.get('after'), 0)}, "
            f"{_number(weaviate.get('peak'), 0)} "
            f"| {_number(embedder.get('after'), 0)}, {_number(embedder.get('peak'), 0)} |"
        )
    return "\n".join(header + lines)


def rss_mib(pid: int) -> float | None:
    """Resident memory of a process and its descendants, in MiB (None: the process is gone or unreadable)."""
    total_kib, found = 0, False
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text()
        except OSError:
            continue
        found = True
        total_kib += next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), 0)
        for task in Path(f"/proc/{current}/task").glob("*/children"):
            try:
                pending.extend(int(child) for child in task.read_text().split())
            except OSError:
                continue
    return total_kib / 1024 if found else None


def service_pids(settings: Settings) -> dict[str, int]:
    """Weaviate's and the embedder's host pids, as `dbgorilla status` reports them."""
    stack = stack_status(settings)
    pids = {"weaviate": stack.weaviate.pid, "embedder": stack.services[0].pid if stack.services else None}
    return {name: pid for name, pid in pids.items() if pid}


class MemorySampler:
    """The RSS of each service now and the highest seen since `start` (sampled on a thread)."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = pids
        self.peak: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def now(self) -> dict[str, float | None]:
        return {name: rss_mib(pid) for name, pid in self.pids.items()}

    @contextmanager
    def sampling(self) -> Iterator[None]:
        self.peak = {}
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        try:
            yield
        finally:
            self._stop.set()
            self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            for name, value in self.now().items():
                if value is not None:
                    self.peak[name] = max(self.peak.get(name, 0.0), value)
            self._stop.wait(SAMPLE_EVERY)


def query_latencies(executor: WeaviateExecutor, calls: list[dict[str, Any]], rounds: int) -> tuple[list[float], int]:
    """Milliseconds of each gold call through the executor, `rounds` times after a warm-up round; and
    how many calls failed (left out of the latencies)."""
    errors = 0
    for call in calls:  # warm-up: first-touch costs (schema reads, caches) are not what a user waits for
        try:
            executor.execute(call)
        except ExecutorError:
            errors += 1
    timings: list[float] = []
    for _ in range(rounds):
        for call in calls:
            started = time.perf_counter()
            try:
                executor.execute(call)
            except ExecutorError:
                continue
            timings.append(1000 * (time.perf_counter() - started))
    return timings, errors


def eval_questions(use_case: str, questions: int, namespace: str) -> dict[str, Any]:
    """`questions` of the use case through `dbgorilla eval` (the local model, its defaults): per-question
    seconds from its records, its pass count, and the last attempt's wall time. A model server busy
    with someone else's run can miss `eval`'s readiness wait: that attempt is retried, and counted."""
    for attempt in range(1, EVAL_ATTEMPTS + 1):
        with tempfile.TemporaryDirectory() as out:
            command = [sys.executable, "-m", "dbgorilla", "eval", "--use-case", use_case, "--namespace", namespace]
            command += ["--limit", str(questions), "--out", out, "--overwrite", "--json"]
            started = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True)
            wall = time.perf_counter() - started
            if done.returncode == 0:
                records = read_records(Path(out) / RESULTS_FILE)
                break
        first_line = (done.stderr.strip().splitlines() or [""])[0]
        print(f"  eval attempt {attempt} failed (exit {done.returncode}): {first_line[:300]}", file=sys.stderr)
    else:
        return {"wall_s": wall, "attempts": EVAL_ATTEMPTS}
    seconds = [r.latency_s for r in records]
    return {
        "attempts": attempt,
        "wall_s": wall,
        "questions": len(records),
        "passed": sum(passed(r) for r in records),
        "p50_s": statistics.median(seconds) if seconds else None,
        "mean_s": statistics.mean(seconds) if seconds else None,
    }


def measure_size(
    client: Any, size: int, use_case: str, args: argparse.Namespace, sampler: MemorySampler, say: Callable[[str], None]
) -> SizeRow:
    """Every stage at one size, from a fresh load."""
    (case,) = get_use_cases([use_case])
    row = SizeRow(size=size, objects=size * len(case.collections))
    drop_use_cases(client, [case], namespace=NAMESPACE)
    row.encoder_per_s = encoder_rate([case], size, args.seed, limit=ENCODER_SAMPLE)
    say(f"[{size}] encoder alone: {row.encoder_per_s:.1f} texts/s")
    before = sampler.now()
    with sampler.sampling():
        last = [0.0]

        def progress(collection: str, done: int, total: int) -> None:
            if time.perf_counter() - last[0] > 10 or done == total:
                last[0] = time.perf_counter()
                say(f"[{size}] load {collection}: {done}/{total}")

        report = load_use_cases(client, [use_case], size, args.seed, on_progress=progress, namespace=NAMESPACE)
        row.load_s, row.load_per_s, row.load_ok = report.seconds, report.objects_per_second, report.ok
        say(f"[{size}] loaded {report.objects_sent} objects in {report.seconds:.1f} s, ok {report.ok}")

        started = time.perf_counter()
        audit = audit_dataset(client, use_cases=[use_case], namespace=NAMESPACE, objects_per_collection=size)
        row.audit_s = time.perf_counter() - started
        row.audit = {
            "queries": audit.queries,
            "executed": audit.executed,
            "execution_errors": audit.execution_errors,
            "non_vacuous_rate": audit.non_vacuous_rate,
            "mutants": audit.mutants,
            "killed": audit.killed,
            "ties": [t.model_dump() for t in audit.ties],
            "unstable": [u.model_dump() for u in audit.unstable],
            "search_cuts_moved": len(audit.search_cuts),
            "failed_targets": audit.failed_targets,
        }
        say(
            f"[{size}] audit {row.audit_s:.1f} s: executed {audit.executed}/{audit.queries}, unstable "
            f"{len(audit.unstable)}, ties {len(audit.ties)}, failed targets {audit.failed_targets or 'none'}"
        )

        dataset = read_dataset(None)
        cases = [c for c in dataset.cases if c.use_case == use_case]
        operations = operations_needed(cases)
        executor = WeaviateExecutor(client, names=names_of([case], NAMESPACE), operations=operations)
        timings, row.query_errors = query_latencies(
            executor, [c.ground_truth.to_tool_arguments() for c in cases], args.query_rounds
        )
        row.query_calls = len(timings)
        row.query_p50_ms, row.query_p90_ms = percentile(timings, 50), percentile(timings, 90)
        say(f"[{size}] query_database p50 {_number(row.query_p50_ms)} ms, p90 {_number(row.query_p90_ms)} ms")

        if args.questions:
            measured = eval_questions(use_case, args.questions, NAMESPACE)
            row.eval_wall_s, row.eval_attempts = measured["wall_s"], measured.get("attempts", 1)
            row.eval_questions = measured.get("questions", 0)
            row.eval_passed = measured.get("passed")
            row.eval_p50_s, row.eval_mean_s = measured.get("p50_s"), measured.get("mean_s")
            say(f"[{size}] eval: {row.eval_questions} questions, p50 {_number(row.eval_p50_s)} s each")
        after = sampler.now()
    row.memory_mib = {
        name: {"before": before.get(name), "after": after.get(name), "peak": sampler.peak.get(name)}
        for name in sampler.pids
    }
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sizes", nargs="*", type=int, default=[100, 1000, 10000], help="objects per collection")
    parser.add_argument("--use-case", default="restaurants")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--questions", type=int, default=3, help="eval questions per size (0: skip the eval)")
    parser.add_argument("--query-rounds", type=int, default=5, help="timed rounds over the gold calls")
    parser.add_argument("--out", type=Path, default=None, help="also write the table (and JSON beside it) here")
    parser.add_argument("--keep", action="store_true", help="leave the Bench collections in place")
    args = parser.parse_args(argv)

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    settings = Settings()
    sampler = MemorySampler(service_pids(settings))
    say(f"services measured: {sampler.pids}")
    rows: list[SizeRow] = []
    with connect(settings, timeout_seconds=600) as client:
        had_examples = client.collections.exists(f"{NAMESPACE}_{EXAMPLES_COLLECTION}")
        try:
            for size in args.sizes:
                rows.append(measure_size(client, size, args.use_case, args, sampler, say))
        finally:
            if not args.keep:
                drop_use_cases(client, get_use_cases([args.use_case]), namespace=NAMESPACE)
                if not had_examples:  # the eval's example memory under our namespace: ours to drop
                    client.collections.delete(f"{NAMESPACE}_{EXAMPLES_COLLECTION}")
    table = markdown_table(rows)
    print(table)
    if args.out is not None:
        args.out.write_text(table + "\n")
        args.out.with_suffix(".json").write_text(json.dumps([asdict(r) for r in rows], indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
