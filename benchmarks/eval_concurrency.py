"""How well `dbgorilla eval` overlaps slow model calls: speedup against ideal at several concurrencies.

A scripted OpenAI-compatible server answers every request after a fixed delay (default 300 ms):
the ground-truth call first, then a short answer, so each case costs two model round trips plus
real Weaviate execution and scoring. The same cases run at each concurrency in one process; the
ideal speedup at concurrency c is c (the model delay dominates), and efficiency = speedup / c.

Needs a running stack (`dbgorilla up`); loads missing use cases itself.

    .venv/bin/python benchmarks/eval_concurrency.py [--cases 315] [--latency 0.3] [--levels 1 4 16 64]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from agent import AgentConfig, OpenAIChatModel, ToolDesign
from agent.testing import MockOpenAIServer, Reply, call, text
from dbgorilla.connection import connect
from evaluation import runner
from evaluation.selection import select_cases
from executors import WeaviateExecutor
from fixtures import ensure_loaded, read_dataset


class DelayedReplay(MockOpenAIServer):
    """Replays ground truth after `latency` seconds, without blocking other requests."""

    def __init__(self, truths: dict[str, dict[str, Any]], latency: float) -> None:
        super().__init__(self._reply)
        self.truths, self.latency = truths, latency

    def _reply(self, body: dict[str, Any], index: int) -> Reply:
        question = next(m["content"] for m in body["messages"] if m["role"] == "user")
        reply = (
            text("answer")
            if any(m["role"] == "tool" for m in body["messages"])
            else call("query_database", self.truths[question])
        )
        reply.hang_seconds = self.latency
        return reply


def run_level(cases: list[Any], context: runner.RunContext, concurrency: int) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        written = runner.run_cases(cases, context, Path(out), concurrency)
        return time.perf_counter() - started, written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=315)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 4, 16, 64])
    args = parser.parse_args()
    dataset = read_dataset()
    cases = select_cases(dataset.cases, limit=0)[: args.cases]
    truths = {c.query: c.ground_truth.to_tool_arguments() for c in cases}
    needed = [u for u in dataset.use_cases if u.name in {case.use_case for case in cases}]
    collections = {u.name: [c.name for c in u.collections] for u in needed}
    with connect() as client, DelayedReplay(truths, args.latency) as server:
        ensure_loaded(client, needed)
        executor = WeaviateExecutor(client)
        model = OpenAIChatModel("replay", base_url=server.base_url, timeout=60, max_retries=0)
        # One OpenAI client per in-flight case would hide connection-pool limits: share one, as eval does.
        context = runner.RunContext(
            client=client,
            executor=executor,
            scoring=runner.scoring_executor(client, executor),
            tools_for=runner.tools_by_use_case(executor.schema, collections, ToolDesign()),
            model_for=lambda _case: model,
            model_name="replay",
            config=AgentConfig(max_steps=3),
            design=ToolDesign(),
            strategy="react",  # the loop alone: a replayed model, and no query memory
        )
        run_level(cases[:8], context, 4)  # warm caches: ground truths, schema, connections
        baseline = None
        print(f"{len(cases)} cases, {args.latency * 1000:.0f} ms per model call, 2 calls per case")
        print(f"{'concurrency':>11} {'wall s':>8} {'cases/s':>8} {'speedup':>8} {'ideal':>6} {'efficiency':>10}")
        for level in args.levels:
            wall, written = run_level(cases, context, level)
            assert written == len(cases)
            baseline = baseline or wall * args.levels[0]
            speedup = baseline / wall
            rate = len(cases) / wall
            print(f"{level:>11} {wall:>8.1f} {rate:>8.1f} {speedup:>8.2f} {level:>6} {speedup / level:>10.0%}")


if __name__ == "__main__":
    asyncio.set_event_loop_policy(None)
    main()
