"""The model server's options side by side: the same model requests sent to two servers in turn.

The two servers run `dbgorilla model up`'s own command, on ports of their own and with the prefix store
in memory (the user's on-disk store is not touched), and differ only in the options named: by default
`--before` is the server as it ran until 2026-11-27 (every position's logits kept, no draft) and the
other is today's. The requests are the main job's, recorded as the agent sends them to the running model
server; each is sent to both servers twice, one server after the other, and the second pass is timed (the
first evaluates each system turn once on each server, as a warm server has it). Printed per request kind:
seconds on each, their ratio, and how many replies were the same on both.

    .venv/bin/python benchmarks/server_options.py [--limit 15] [--before "--logits_all=True --draft_tokens=0"]
        [--after ""] [--out FILE.md]

Needs `dbgorilla up` (the questions run against Weaviate to record their requests), and the memory for
two more copies of the model (~1.5 GB each for the default model).
"""

from __future__ import annotations

import argparse
import json
import shlex
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))

from question_time import kind_of, tool_design

from agent.strategies import DEFAULT_STRATEGY
from dbgorilla.chat import local_model
from dbgorilla.config import Settings
from dbgorilla.connection import connect
from dbgorilla.local_models import DEFAULT_MODEL, ModelService, get_model
from evaluation.orchestration import Driver, open_executor, run_context
from evaluation.runner import run_case
from evaluation.selection import select_questions
from evaluation.strategies import use_strategy
from llm import ChatRequest
from llm.providers.openai_compatible import schema_format

BEFORE = "--logits_all=True --draft_tokens=0"


@dataclass
class Keeping:
    """A chat model that keeps each request it is sent, with the body its endpoint received."""

    model: Any
    bodies: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    question: str = ""

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)

    def complete(self, request: ChatRequest) -> Any:
        body = self.model.body(request)
        wanted = request.response_format
        if wanted is not None and wanted.json_schema is not None:  # the form llama-cpp-python's server takes
            body["response_format"] = schema_format("json_object", wanted.name, wanted.json_schema)
        self.bodies.append((self.question, kind_of(request), body))
        return self.model.complete(request)


def record(limit: int | None) -> list[tuple[str, str, dict[str, Any]]]:
    """The main job's requests under the default strategy, as the running model server was sent them."""
    chosen = select_questions(None, None, limit, None, None)
    client = connect()
    try:
        executor = open_executor(client, chosen, None)
        chat = Keeping(local_model())
        context = run_context(client, executor, chosen, tool_design(), Driver(chat.name, lambda _case: chat, chat))
        context = use_strategy(context, client, DEFAULT_STRATEGY, echo=lambda _line: None)
        for case in chosen.cases:
            chat.question = case.id
            run_case(case, context)
    finally:
        client.close()
    return chat.bodies


def with_options(command: list[str], options: list[str], port: int) -> list[str]:
    """`command` on `port`, its prefix store in memory, each `--name=value` of `options` in place of its own."""
    named = {option.split("=", 1)[0]: option for option in options}
    out = [named.pop(a.split("=", 1)[0], a) for a in command if not a.startswith("--prompt_cache_dir=")]
    out[out.index("--port") + 1] = str(port)
    return out + list(named.values())


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start(command: list[str], log: Path) -> subprocess.Popen[bytes]:
    """One server, ready when it answers `/v1/models` (its log: `log`)."""
    port = command[command.index("--port") + 1]
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server on port {port} exited ({process.returncode}); see {log}")
        try:
            httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=2).raise_for_status()
            return process
        except httpx.HTTPError:
            time.sleep(1)
    process.kill()
    raise SystemExit(f"the server on port {port} did not answer within 300 s; see {log}")


def send(port: int, body: dict[str, Any]) -> tuple[float, str]:
    """Seconds, and the reply's message as text (to compare the two servers' replies)."""
    started = time.perf_counter()
    response = httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", json=body, timeout=600)
    seconds = time.perf_counter() - started
    response.raise_for_status()
    message = response.json()["choices"][0]["message"]
    calls = [call["function"] for call in message.get("tool_calls") or []]
    return seconds, json.dumps([calls, message.get("content")])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=None, help="questions (default: the main job's 15)")
    parser.add_argument("--before", default=BEFORE, help=f"options of the first server (default: {BEFORE!r})")
    parser.add_argument("--after", default="", help="options of the second (default: none, today's command)")
    parser.add_argument("--out", type=Path, default=None, help="also write the table to this markdown file")
    args = parser.parse_args()

    bodies = record(args.limit)
    print(f"recorded {len(bodies)} requests", flush=True)
    command = ModelService(Settings(), get_model(DEFAULT_MODEL)).command()
    labels = ("before", "after")
    ports = {label: free_port() for label in labels}
    options = {"before": shlex.split(args.before), "after": shlex.split(args.after)}
    commands = {label: with_options(command, options[label], ports[label]) for label in labels}
    servers = {}
    try:
        for label in labels:
            servers[label] = start(commands[label], Path(f"/tmp/dbgorilla-server-options-{label}.log"))
        seconds: dict[str, dict[str, float]] = {label: {} for label in labels}
        same: dict[str, list[bool]] = {}
        for timed in (False, True):
            for question, kind, body in bodies:
                replies = {}
                for label in labels:
                    took, replies[label] = send(ports[label], body)
                    if timed:
                        seconds[label][kind] = seconds[label].get(kind, 0.0) + took
                if timed:
                    same.setdefault(kind, []).append(replies["before"] == replies["after"])
                    if replies["before"] != replies["after"]:
                        print(f"{question} {kind}: before {replies['before'][:300]}", flush=True)
                        print(f"{question} {kind}: after  {replies['after'][:300]}", flush=True)
    finally:
        for server in servers.values():
            server.terminate()
            server.wait(timeout=30)
    kinds = sorted(same)
    lines = [
        f"before: `{args.before}`; after: `{args.after or '(dbgorilla model up)'}`; {len(bodies)} requests of "
        f"{len({q for q, _, _ in bodies})} questions, the second of two passes",
        "",
        "| what | requests | before s | after s | after / before | same reply |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for kind in [*kinds, "all"]:
        chosen = kinds if kind == "all" else [kind]
        b = sum(seconds["before"][k] for k in chosen)
        a = sum(seconds["after"][k] for k in chosen)
        flags = [flag for k in chosen for flag in same[k]]
        lines.append(f"| {kind} | {len(flags)} | {b:.1f} | {a:.1f} | {a / b:.2f} | {sum(flags)}/{len(flags)} |")
    print("\n".join(lines))
    if args.out is not None:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
