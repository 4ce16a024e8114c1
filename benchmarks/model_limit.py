"""What this machine can do with the offline model: prompt-processing and generation tokens/s.

Every figure of the eval (seconds per question) is tokens times a cost per token, so this is the
limit the others are read against: new prompt tokens / pp + generated tokens / tg ≈ seconds.
The model runs in-process through llama-cpp-python (no server, no HTTP), once per setting, side by
side in one run; each setting's ratio is to the first (the server's defaults as `dbgorilla model up`
starts it). Prompt processing is timed over `--prompt` tokens of real tool-description text in one
decode, generation as `--generate` single-token decodes after it.

    .venv/bin/python benchmarks/model_limit.py [--model qwen2.5-coder-1.5b] [--prompt 512] [--generate 48]

`--cpu-libraries zen4,haswell,x64` measures the server's settings once per CPU library of the
portable build instead (each in its own process: a process loads one), ratios to the first: what
running on a more basic instruction set costs.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

from agent.llama_cpu import CPU_VARIANT_ENV, load_cpu_backend
from agent.tokens import quiet_stderr
from dbgorilla.local_models import DEFAULT_MODEL, SERVER_OPTIONS, get_model

#: (label, Llama keyword arguments over the server's own): the first is the baseline.
SETTINGS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("server options", {}),
    ("flash attention on", {"flash_attn": True}),
    ("flash attention off", {"flash_attn": False}),
    ("n_batch/n_ubatch 128", {"n_batch": 128, "n_ubatch": 128}),
    ("n_batch/n_ubatch 1024", {"n_batch": 1024, "n_ubatch": 1024}),
    ("KV cache q8_0, flash attention", {"flash_attn": True, "type_k": 8, "type_v": 8}),
    ("1 thread", {"n_threads": 1, "n_threads_batch": 1}),
)


def sample_text() -> str:
    """Tool-description-like text: the kind of tokens the eval sends."""
    import json

    from executors import tool_parameters_schema

    return json.dumps(tool_parameters_schema(["Restaurants", "Menus", "Reservations"]), indent=1) * 4


def measure(path: str, options: dict[str, Any], prompt: int, generate: int) -> tuple[float, float]:
    from llama_cpp import Llama

    load_cpu_backend()
    with quiet_stderr():
        llm = Llama(model_path=path, verbose=False, **options)
    tokens = llm.tokenize(sample_text().encode(), add_bos=False)[:prompt]
    llm.reset()
    started = time.perf_counter()
    llm.eval(tokens)
    pp = len(tokens) / (time.perf_counter() - started)
    token = tokens[-1]
    started = time.perf_counter()
    for _ in range(generate):
        llm.eval([token])
    tg = generate / (time.perf_counter() - started)
    llm.close()
    return pp, tg


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--prompt", type=int, default=512)
    parser.add_argument("--generate", type=int, default=48)
    parser.add_argument("--cpu-libraries", default="", help="comma-separated CPU libraries of the portable build")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # one measurement, as numbers
    args = parser.parse_args()
    model = get_model(args.model)
    path = str(model.gguf_path())
    base = {**SERVER_OPTIONS, "n_ctx": model.context_tokens, "n_threads": os.cpu_count() or 1}
    if args.one:
        print(*measure(path, base, args.prompt, args.generate))
        return
    if args.cpu_libraries:
        compare_cpu_libraries(args.cpu_libraries.split(","), args)
        return
    print(f"{model.name} on {os.cpu_count()} cores: {args.prompt} prompt tokens, {args.generate} generated")
    print(f"{'setting':<52} {'pp tok/s':>9} {'tg tok/s':>9} {'pp ratio':>9} {'tg ratio':>9} {'s / 1k new':>10}")
    first: tuple[float, float] | None = None
    for label, options in SETTINGS:
        pp, tg = measure(path, {**base, **options}, args.prompt, args.generate)
        first = first or (pp, tg)
        print(f"{label:<52} {pp:>9.1f} {tg:>9.2f} {pp / first[0]:>9.2f} {tg / first[1]:>9.2f} {1000 / pp:>10.1f}")


def compare_cpu_libraries(names: list[str], args: argparse.Namespace) -> None:
    """The server's settings under each CPU library, side by side in one run, each in a fresh process."""
    import subprocess
    import sys

    print(f"{args.model} on {os.cpu_count()} cores: {args.prompt} prompt tokens, {args.generate} generated")
    print(f"{'CPU library':<16} {'pp tok/s':>9} {'tg tok/s':>9} {'pp ratio':>9} {'tg ratio':>9}")
    first: tuple[float, float] | None = None
    for name in names:
        command = [sys.executable, __file__, "--one", "--model", args.model, "--prompt", str(args.prompt),
                   "--generate", str(args.generate)]  # fmt: skip
        result = subprocess.run(command, capture_output=True, text=True, env={**os.environ, CPU_VARIANT_ENV: name})
        if result.returncode != 0:
            print(f"{name:<16} failed: exit {result.returncode} {result.stderr.strip().splitlines()[-1:]}")
            continue
        pp, tg = (float(x) for x in result.stdout.split()[-2:])
        first = first or (pp, tg)
        print(f"{name:<16} {pp:>9.1f} {tg:>9.2f} {pp / first[0]:>9.2f} {tg / first[1]:>9.2f}")


if __name__ == "__main__":
    main()
