"""Where each second of a question goes: the main job's questions under a strategy, every model
request timed and its tokens counted, beside what those tokens alone cost at this run's own rates.

Time is tokens (docs/performance.md): a request costs its new prompt tokens / pp + its generated
tokens / tg. The rates are measured here, in the same run and through the same server, before and
after the questions (a fresh prompt of `--calibrate` tokens; a free-running generation), so the
ratio measured / token cost says how far the agent is from the machine's limit, whatever the
machine. Each request is labelled by what asked it (the check turns, the tool turns, a commit).

    .venv/bin/python benchmarks/question_time.py [--strategy S] [--limit 15] [--out FILE.md]

S is the agent's default strategy (`agent.strategies.DEFAULT_STRATEGY`) unless named.

Needs `dbgorilla up`; starts (or reuses) the local model server as `dbgorilla eval` does, and loads
the five use cases if missing. Prints one line per question and a table per request kind.
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.strategies import DEFAULT_STRATEGY
from dbgorilla.chat import local_model
from dbgorilla.connection import connect
from evaluation.orchestration import Driver, open_executor, run_context
from evaluation.runner import run_case
from evaluation.selection import select_questions
from evaluation.statistics import passed
from evaluation.strategies import use_strategy
from llm import ChatRequest, ModelRequest


@dataclass
class Request:
    """One model request as the server answered it."""

    kind: str
    prompt: int
    cached: int
    completion: int
    seconds: float

    @property
    def new(self) -> int:
        return self.prompt - self.cached


def kind_of(request: ChatRequest) -> str:
    """What asked: a structured turn by its schema's name, a tool turn, or a prose turn."""
    if request.response_format is not None:
        return request.response_format.name
    if request.tools:
        return "tool turn"
    return "prose turn"


@dataclass
class Recording:
    """A chat model that keeps every request's tokens and seconds (the label of the current question)."""

    model: Any
    requests: dict[str, list[Request]] = field(default_factory=dict)
    question: str = ""

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)

    def complete(self, request: ChatRequest) -> Any:
        started = time.perf_counter()
        reply = self.model.complete(request)
        seconds = time.perf_counter() - started
        usage = reply.usage
        self.requests.setdefault(self.question, []).append(
            Request(kind_of(request), usage.prompt_tokens, usage.cached_tokens or 0, usage.completion_tokens, seconds)
        )
        return reply


@dataclass(frozen=True)
class Rates:
    prompt_per_s: float
    generated_per_s: float

    def cost(self, request: Request) -> float:
        return request.new / self.prompt_per_s + request.completion / self.generated_per_s


def measure_rates(model: Any, calibrate: int) -> Rates:
    """Prompt tokens/s from a fresh prompt (one token generated), generated tokens/s from a long
    free-running reply, each through the server the questions use."""
    words = " ".join(f"w{time.time_ns() % 100000 + i}" for i in range(calibrate // 3))
    started = time.perf_counter()
    reply = model.complete(
        ChatRequest(messages=[ModelRequest.prompt("Repeat nothing.", words)], max_tokens=1, temperature=0.0)
    )
    prompt_s = time.perf_counter() - started
    new = reply.usage.prompt_tokens - (reply.usage.cached_tokens or 0)
    ask = "Count from 1 to 300, the numbers separated by commas, nothing else."
    started = time.perf_counter()
    reply = model.complete(ChatRequest(messages=[ModelRequest.prompt("", ask)], max_tokens=160, temperature=0.0))
    generate_s = time.perf_counter() - started
    pp = new / prompt_s
    # the generation's own short prompt is taken off at the prompt rate just measured
    gen_new = reply.usage.prompt_tokens - (reply.usage.cached_tokens or 0)
    tg = reply.usage.completion_tokens / max(generate_s - gen_new / pp, 1e-6)
    return Rates(pp, tg)


def table(rows: list[tuple[str, list[Request]]], rates: Rates) -> list[str]:
    lines = [
        "| what | requests | prompt | cached | new | generated | seconds | token cost s | ratio |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for label, requests in rows:
        if not requests:
            continue
        seconds = sum(r.seconds for r in requests)
        cost = sum(rates.cost(r) for r in requests)
        lines.append(
            f"| {label} | {len(requests)} | {sum(r.prompt for r in requests)} | {sum(r.cached for r in requests)} | "
            f"{sum(r.new for r in requests)} | {sum(r.completion for r in requests)} | {seconds:.1f} | {cost:.1f} | "
            f"{seconds / cost if cost else float('nan'):.2f} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--strategy", default=DEFAULT_STRATEGY, help=f"default: {DEFAULT_STRATEGY}")
    parser.add_argument("--limit", type=int, default=None, help="questions (default: the main job's 15)")
    parser.add_argument("--calibrate", type=int, default=600, help="prompt tokens of the rate measurement")
    parser.add_argument("--out", type=Path, default=None, help="also write the tables to this markdown file")
    args = parser.parse_args()

    chosen = select_questions(None, None, args.limit, None, None)
    client = connect()
    try:
        executor = open_executor(client, chosen, None)
        chat = Recording(local_model())
        context = run_context(client, executor, chosen, tool_design(), Driver(chat.name, lambda _case: chat, chat))
        context = use_strategy(context, client, args.strategy, echo=lambda _line: None)  # its memory, cross-domain
        before = measure_rates(chat.model, args.calibrate)
        per_question: list[tuple[str, float, bool]] = []
        for case in chosen.cases:
            chat.question = case.id
            started = time.perf_counter()
            record = run_case(case, context)
            seconds = time.perf_counter() - started
            per_question.append((case.id, seconds, passed(record)))
            mine = chat.requests.get(case.id, [])
            print(
                f"{case.id:24} {seconds:6.1f} s  pass={int(passed(record))}  requests={len(mine)}  "
                f"new={sum(r.new for r in mine)}  generated={sum(r.completion for r in mine)}"
                + (f"  error: {record.error}" if record.error else ""),
                flush=True,
            )
        after = measure_rates(chat.model, args.calibrate)
    finally:
        client.close()
    rates = Rates(
        statistics.mean([before.prompt_per_s, after.prompt_per_s]),
        statistics.mean([before.generated_per_s, after.generated_per_s]),
    )
    every = [r for requests in chat.requests.values() for r in requests]
    kinds = sorted({r.kind for r in every})
    seconds = [s for _, s, _ in per_question]
    lines = [
        f"strategy {args.strategy}, {len(per_question)} questions, passed {sum(p for *_, p in per_question)}; "
        f"rates before {before.prompt_per_s:.1f}/{before.generated_per_s:.1f}, after {after.prompt_per_s:.1f}/"
        f"{after.generated_per_s:.1f} prompt/generated tokens/s",
        f"per question: p50 {statistics.median(seconds):.1f} s, total {sum(seconds):.1f} s; "
        f"cache hit rate {sum(r.cached for r in every) / max(1, sum(r.prompt for r in every)):.3f}",
        "",
        *table([(kind, [r for r in every if r.kind == kind]) for kind in kinds] + [("all", every)], rates),
        "",
        *table([(qid, chat.requests.get(qid, [])) for qid, _, _ in per_question], rates),
    ]
    print("\n".join(lines))
    if args.out is not None:
        args.out.write_text("\n".join(lines) + "\n")


def tool_design() -> Any:
    from agent import ToolDesign

    return ToolDesign()


if __name__ == "__main__":
    main()
