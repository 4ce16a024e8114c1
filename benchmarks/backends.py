"""Docker vs binary backend, side by side in one run: `up` to ready, and query latency per operator class.

Starts two private stacks on free loopback ports (a state folder each under a temporary
directory; the docker one is its own compose project), so a running `dbgorilla up` is untouched:

1. `up` to ready, cold (empty data) and warm (after `down`, data kept), alternating which backend
   goes first, `--starts` times each. The docker images must exist already (`up --backend docker`
   builds them once); their build is measured separately (see docs/operations.md).
2. The same sample collection in both, then every operator class's tool call through the executor
   (the same plan on both sides, whatever it is today), the two stacks interleaved call by call so
   both see the same machine load: p50/p95 in ms and the docker/binary ratio.

    .venv/bin/python benchmarks/backends.py --objects 1000 --rounds 100 --starts 2
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from executor_common import OPERATOR_CLASSES, prepare
from stacks_common import cli, private_settings

from dbgorilla.compose import ComposeStack
from dbgorilla.connection import connect
from executors import WeaviateExecutor


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--starts", type=int, default=2, help="cold and warm starts per backend")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    options = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="dbgorilla-backends-"))
    stacks = {"binary": private_settings(root, "binary"), "docker": private_settings(root, "docker")}
    starts: dict[tuple[str, str], list[float]] = {}
    try:
        for attempt in range(options.starts):
            order = list(stacks) if attempt % 2 == 0 else list(reversed(stacks))
            for backend in order:
                settings = stacks[backend]
                if backend == "docker":
                    ComposeStack.for_settings(settings).run("down", "-v")
                else:
                    cli(settings, "down")
                    subprocess.run(["rm", "-rf", str(settings.weaviate_data_dir)])
                starts.setdefault((backend, "cold"), []).append(cli(settings, "up", "--backend", backend)[0])
                cli(settings, "down")
                starts.setdefault((backend, "warm"), []).append(cli(settings, "up", "--backend", backend)[0])
        print("\n`dbgorilla up` to ready, seconds (median of", options.starts, "starts)")
        print(f"{'':8}{'binary':>10}{'docker':>10}{'docker/binary':>16}")
        medians = {key: statistics.median(values) for key, values in starts.items()}
        for kind in ("cold", "warm"):
            b, d = medians[("binary", kind)], medians[("docker", kind)]
            print(f"{kind:8}{b:>10.1f}{d:>10.1f}{d / b:>16.2f}")

        clients = {backend: connect(settings) for backend, settings in stacks.items()}
        names = {backend: prepare(client, options.objects, reuse=True) for backend, client in clients.items()}
        executors = {backend: WeaviateExecutor(client) for backend, client in clients.items()}
        latency: dict[tuple[str, str], tuple[float, float]] = {}
        for operator in OPERATOR_CLASSES:
            samples: dict[str, list[float]] = {backend: [] for backend in stacks}
            calls = {b: json.dumps({"collection_name": names[b], **operator.arguments}) for b in stacks}
            for index in range(options.warmup + options.rounds):
                for backend in stacks if index % 2 == 0 else reversed(list(stacks)):
                    started = time.perf_counter()
                    executors[backend].execute(calls[backend])
                    if index >= options.warmup:
                        samples[backend].append((time.perf_counter() - started) * 1000)
            for backend, values in samples.items():
                latency[(operator.name, backend)] = (statistics.median(values), percentile(values, 0.95))
        for client in clients.values():
            client.close()
        clients = {}
        header = f"query latency through the executor, {options.objects:,} objects, ms (p50 / p95)"
        print(f"\n{header}, {options.rounds} rounds")
        print(f"{'operator class':36}{'binary':>16}{'docker':>16}{'p50 ratio':>11}")
        for operator in OPERATOR_CLASSES:
            (b50, b95), (d50, d95) = latency[(operator.name, "binary")], latency[(operator.name, "docker")]
            print(f"{operator.name:36}{b50:>8.2f} /{b95:>6.2f}{d50:>8.2f} /{d95:>6.2f}{d50 / b50:>11.2f}")
        if options.json:
            options.json.write_text(
                json.dumps(
                    {
                        "starts": {f"{b}/{k}": v for (b, k), v in starts.items()},
                        "latency_ms": {f"{o}/{b}": {"p50": v[0], "p95": v[1]} for (o, b), v in latency.items()},
                    },
                    indent=2,
                )
            )
    finally:
        for backend, settings in stacks.items():
            if backend == "docker":
                ComposeStack.for_settings(settings).run("down", "-v")
            else:
                cli(settings, "down")


if __name__ == "__main__":
    main()
