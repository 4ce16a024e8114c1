"""Which batch splits give a prompt's last logits to the last bit: the rule `--canonical=1` rests on.

`dbgorilla.llm_server.canonical` evaluates every prompt row in a batch of at least `MIN_BATCH` rows whose
count is a multiple of `ROWS`. This measures, in process with the server's options, the largest difference
between a prompt's last logits evaluated at once (padded to whole fours) and over other splits: canonical
ones (each part such a batch, the last padded) and others (a short tail, an odd count, one row at a time).
Run it per model and CPU library (`DBGORILLA_GGML_CPU=haswell` forces one) before trusting the rule there.

    .venv/bin/python benchmarks/canonical_batches.py [--model qwen2.5-coder-1.5b] [--gguf PATH]
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy

from agent.llama_cpu import load_cpu_backend
from agent.tokens import quiet_stderr
from dbgorilla.llm_server.canonical import MIN_BATCH, ROWS, decode
from dbgorilla.local_models import DEFAULT_MODEL, SERVER_OPTIONS, get_model

LENGTH = 298  # not a multiple of ROWS: the last batch is padded
#: (label, the batch ends; the last is padded to whole ROWS), canonical ones first.
SPLITS: tuple[tuple[str, tuple[int, ...], bool], ...] = (
    ("232 + 66", (232, LENGTH), True),
    ("200 + 98", (200, LENGTH), True),
    ("100 + 132 + 66", (100, 232, LENGTH), True),
    ("236 + 62 (64 padded)", (236, LENGTH), True),
    ("230 + 68 (230 not whole fours)", (230, LENGTH), False),
    ("242 + 56", (242, LENGTH), False),
    ("266 + 32", (266, LENGTH), False),
    ("294 + 1 + 1 + 1 + 1", (294, 295, 296, 297, LENGTH), False),
)


def logits_after(llama: Any, rows: list[int], n_past: int, pad: int) -> Any:
    """The last of `rows`' logits, decoded in one batch after `n_past` positions with `pad` padding rows."""
    import llama_cpp

    decode(llama, rows + rows[-1:] * pad, n_past, len(rows) - 1)
    logits = llama_cpp.llama_get_logits_ith(llama._ctx.ctx, len(rows) - 1)
    return numpy.ctypeslib.as_array(logits, shape=(llama._n_vocab,))


def last_logits(llama: Any, tokens: list[int], ends: tuple[int, ...], canonical: bool) -> Any:
    llama.reset()
    start = 0
    for end in ends:
        rows = tokens[start:end]
        pad = -len(rows) % ROWS if canonical or end == ends[-1] else 0
        logits = logits_after(llama, rows, start, pad if end == ends[-1] else 0).copy()
        start = end
    return logits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--gguf", help="a GGUF file instead of --model's")
    args = parser.parse_args()
    library = load_cpu_backend()
    from llama_cpp import Llama

    path = args.gguf or str(get_model(args.model).gguf_path())
    with quiet_stderr():
        llama = Llama(model_path=path, n_ctx=1024, verbose=False, **SERVER_OPTIONS)  # type: ignore[arg-type]
    text = Path(__file__).read_text(encoding="utf-8") * 4
    tokens = llama.tokenize(text.encode())[:LENGTH]
    whole = last_logits(llama, tokens, (LENGTH,), True)
    print(f"model {path.rsplit('/', 1)[-1]}, CPU library {library}, rule: >= {MIN_BATCH} rows, whole {ROWS}s")
    print(f"{'split of ' + str(LENGTH) + ' tokens':34} {'canonical':>9} {'max |logit diff|':>17}")
    for label, ends, canonical in SPLITS:
        difference = float(numpy.abs(last_logits(llama, tokens, ends, canonical) - whole).max())
        print(f"{label:34} {'yes' if canonical else 'no':>9} {difference:17.3e}")


if __name__ == "__main__":
    main()
