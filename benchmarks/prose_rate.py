"""Generated tokens/s on prose: the model server under option sets side by side, and in-process beside them.

The server's rate is read against the machine's (`model_limit.py`), on the replies where drafting pays least:
prose (the answer's sentence) repeats short runs of tokens, seldom what followed them. Each option set gets a
server of its own (`dbgorilla model up`'s command, the prefix store in memory, the options named in place of
its own); the same prompts go to each in the same order, server by server, each prompt sent first for one token
(its prompt evaluated) and then timed for `--tokens`. Then the same prompts in this process through
llama-cpp-python's own chat completion (no server, no HTTP, no draft, the server's context and threads). Each
server's tokens/s is printed with its ratio to the in-process rate and to the first option set.

    .venv/bin/python benchmarks/prose_rate.py [--options "--draft_tokens=0" "--draft_misses=0" ""] [--tokens 96]

`DBGORILLA_GGML_CPU=haswell` measures the AVX2 library on a machine that could run a better one. No stack
needed; the memory for one more copy of the model per option set (~1.5 GB each for the default model).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))

from server_options import free_port, start, with_options

from agent.llama_cpu import load_cpu_backend
from dbgorilla.config import Settings
from dbgorilla.local_models import DEFAULT_MODEL, ModelService, get_model

#: Prose asked for at length, none of it in the other's words; written before any run.
PROMPTS = (
    "Write a long story about a cat who travels the world, with many details about each city.",
    "Explain in detail how a bicycle works, part by part, for a curious child.",
    "Describe the history of the printing press and its effects on Europe, at length.",
    "Give a detailed account of how bread is made, from the field to the table.",
    "Tell a long tale about a lighthouse keeper and a storm that lasted a week.",
    "Describe a walk through a busy market in Marrakesh, with all the sounds and smells.",
)
OPTIONS = ("--draft_tokens=0", "--draft_misses=0", "")
#: Sends a chat for at most N tokens; returns how many were generated.
Send = Callable[[list[dict[str, str]], int], int]


def timed(send: Send, prompt: str, tokens: int) -> tuple[int, float]:
    """The prompt evaluated first (one token), then `tokens` generated: how many, and their seconds."""
    messages = [{"role": "user", "content": prompt}]
    send(messages, 1)
    started = time.perf_counter()
    generated = send(messages, tokens)
    return generated, time.perf_counter() - started


def over_http(port: int) -> Send:
    def send(messages: list[dict[str, str]], tokens: int) -> int:
        body = {"model": "m", "messages": messages, "max_tokens": tokens, "temperature": 0}
        response = httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", json=body, timeout=600)
        response.raise_for_status()
        return int(response.json()["usage"]["completion_tokens"])

    return send


def in_process(path: str, threads: int, context: int) -> Send:
    load_cpu_backend()
    from llama_cpp import Llama

    llm = Llama(model_path=path, n_ctx=context, n_threads=threads, flash_attn=True, verbose=False)

    def send(messages: list[dict[str, str]], tokens: int) -> int:
        reply = llm.create_chat_completion(messages=messages, max_tokens=tokens, temperature=0)  # type: ignore[arg-type]
        return int(reply["usage"]["completion_tokens"])

    return send


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--options", nargs="+", default=list(OPTIONS), help="one server per option set ('' = today's)")
    parser.add_argument("--tokens", type=int, default=96, help="tokens generated per prompt")
    args = parser.parse_args()
    command = ModelService(Settings(), get_model(DEFAULT_MODEL)).command()
    ports = [free_port() for _ in args.options]
    servers = []
    totals = {label: [0, 0.0] for label in [*args.options, "in-process"]}
    try:
        for index, (options, port) in enumerate(zip(args.options, ports, strict=True)):
            log = Path(f"/tmp/dbgorilla-prose-rate-{index}.log")
            servers.append(start(with_options(command, shlex.split(options), port), log))
        for prompt in PROMPTS:
            for options, port in zip(args.options, ports, strict=True):
                generated, seconds = timed(over_http(port), prompt, args.tokens)
                totals[options][0] += generated
                totals[options][1] += seconds
    finally:
        for server in servers:
            server.terminate()
            server.wait(timeout=30)
    path = command[command.index("--model") + 1]
    local = in_process(path, int(command[command.index("--n_threads") + 1]), int(command[command.index("--n_ctx") + 1]))
    for prompt in PROMPTS:
        generated, seconds = timed(local, prompt, args.tokens)
        totals["in-process"][0] += generated
        totals["in-process"][1] += seconds
    rate = {label: tokens / seconds for label, (tokens, seconds) in totals.items()}
    print(f"{len(PROMPTS)} prose prompts, {args.tokens} tokens each")
    print("| server options | tokens | s | tok/s | of in-process | of the first |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, (tokens, seconds) in totals.items():
        shown = label if label == "in-process" else f"`{label or '(dbgorilla model up)'}`"
        print(
            f"| {shown} | {tokens} | {seconds:.1f} | {rate[label]:.2f} | {rate[label] / rate['in-process']:.2f} "
            f"| {rate[label] / rate[args.options[0]]:.2f} |"
        )


if __name__ == "__main__":
    main()
