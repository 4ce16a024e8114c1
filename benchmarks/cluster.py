"""One node vs a three-node cluster, side by side in one run: load throughput and the oracle eval.

Starts a private single-node stack (`--backend binary`) and a private cluster (`--backend cluster`),
loads every use case into each (replication factor 1 vs `--replication-factor`), then runs the
oracle over every natural-split question on each (`--consistency` for the cluster's reads). Both
stacks run at once on the same cores, so the steps alternate: load single, load cluster, eval
single, eval cluster. Finally it kills node 3 with -9, times the first aggregate after the death and
a second one, and runs the oracle again through node 1.

    .venv/bin/python benchmarks/cluster.py --objects 100 --replication-factor 3
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import tempfile
import time
from pathlib import Path

from stacks_common import cli, private_settings

from dbgorilla.cluster import ClusterNode
from dbgorilla.connection import connect
from tests.conftest import cluster_ports


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--objects", type=int, default=100, help="objects per collection")
    parser.add_argument("--replication-factor", type=int, default=3)
    parser.add_argument("--consistency", default="QUORUM", choices=["ONE", "QUORUM", "ALL"])
    options = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="dbgorilla-cluster-bench-"))
    single = private_settings(root, "single")
    cluster = private_settings(root, "cluster", cluster_ports())
    consistency = {"DBGORILLA_CONSISTENCY_LEVEL": options.consistency}
    results: dict[str, dict[str, float]] = {"single": {}, "cluster": {}}
    try:
        results["single"]["up_s"] = cli(single, "up", "--backend", "binary")[0]
        results["cluster"]["up_s"] = cli(cluster, "up", "--backend", "cluster")[0]
        load = ["load", "--use-case", "all", "--objects-per-collection", str(options.objects), "--force", "--json"]
        for name, settings, extra in (
            ("single", single, []),
            ("cluster", cluster, ["--replication-factor", str(options.replication_factor)]),
        ):
            seconds, out = cli(settings, *load, *extra)
            report = json.loads(out)
            sent = sum(c["sent"] for c in report["collections"])
            results[name] |= {"load_s": seconds, "objects": sent, "objects_per_s": sent / report["seconds"]}
        evaluate = ["eval", "--model", "oracle", "--limit", "0", "--overwrite", "--json"]
        for name, settings in (("single", single), ("cluster", cluster)):
            seconds, out = cli(settings, *evaluate, "--out", str(root / f"eval-{name}"), env=consistency)
            summary = json.loads(out)
            results[name] |= {
                "eval_s": seconds,
                "eval_cases": summary["cases"],
                "eval_exec_exact": summary["protocols"]["final"]["execution_match_exact"],
            }

        victim = ClusterNode(cluster, 2).record()
        assert victim is not None
        os.kill(victim.pid, signal.SIGKILL)
        killed_at = time.perf_counter()
        with connect(cluster, timeout_seconds=180) as client:
            for attempt in ("first", "second"):
                started = time.perf_counter()
                client.collections.use("Restaurants").aggregate.over_all(total_count=True)
                results["cluster"][f"aggregate_after_kill_{attempt}_s"] = time.perf_counter() - started
        results["cluster"]["since_kill_s"] = time.perf_counter() - killed_at
        seconds, out = cli(cluster, *evaluate, "--out", str(root / "eval-killed"), env=consistency)
        summary = json.loads(out)
        results["cluster"] |= {
            "eval_node_down_s": seconds,
            "eval_node_down_outcomes": summary["outcomes"],
            "eval_node_down_exec_exact": summary["protocols"]["final"]["execution_match_exact"],
        }
    finally:
        cli(single, "down")
        cli(cluster, "down")

    s, c = results["single"], results["cluster"]
    rf, objects = options.replication_factor, options.objects
    print(f"\none node vs a cluster of 3 nodes (replication factor {rf}), {objects} objects per collection")
    print(f"{'':34}{'one node':>12}{'cluster':>12}{'cluster/one':>13}")
    for key, label in (("up_s", "up to ready, s"), ("objects_per_s", "load, objects/s"), ("eval_s", "oracle eval, s")):
        print(f"{label:34}{s[key]:>12.1f}{c[key]:>12.1f}{c[key] / s[key]:>13.2f}")
    print(f"{'oracle execution exact':34}{s['eval_exec_exact']:>12.3f}{c['eval_exec_exact']:>12.3f}")
    print(
        f"node 3 killed: first aggregate {c['aggregate_after_kill_first_s']:.1f} s, "
        f"second {c['aggregate_after_kill_second_s']:.2f} s; oracle with the node down: "
        f"{c['eval_node_down_exec_exact']:.3f} exact in {c['eval_node_down_s']:.1f} s, outcomes "
        f"{c['eval_node_down_outcomes']}"
    )
    print(json.dumps(results))


if __name__ == "__main__":
    main()
