"""Canonical batches: the same prompt gives the same reply whatever the server evaluated before it.

llama.cpp's CPU kernels compute a row (one position's KV, its logits) one way in a batch of at least 64
rows whose count is a multiple of 4, and other ways in a smaller batch, in one of another count (its last
rows), or alone. Measured in process with this model on the `zen4` and `haswell` libraries (2026-11-30):
the logits of one prompt's last row were bit for bit alike over every split into such batches (232+68,
100+68+132, 64x3+108 against 300 at once) and differed by up to 0.6 over any other (250+50, 299+1, 16s,
four rows one by one against four at once). Greedy decoding flips where two tokens are nearly tied, and
the server reuses whatever prefix its KV cache shares with a request, so a prompt was evaluated from
wherever the last request or a stored state ended: on one server the main job run twice wrote one reply of
58 differently with drafting off, one of 72 with it on. A score depended on the questions before it.

With `--canonical=1` every prompt row is computed the one way (`prepare`): the new rows in batches of whole
fours, at least 64 (the start moved back over rows already held when fewer are new; the last batch padded
with copies of the prompt's last token, whose rows are dropped), after a prefix computed so too (`upto`: how
far the KV cache holds such rows; a reply's tokens never are). The reply is then decoded from the prompt
alone: drafts come from its own tokens, not from earlier replies, and no opening is drafted in the prompt's
batch, so the batches the reply is decoded in are the same each time too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: `--canonical=1`: evaluate every prompt in canonical batches (0: as llama-cpp-python does).
CANONICAL = "--canonical="
#: The smallest batch, and the multiple of rows, that compute each row alike (see above).
MIN_BATCH = 64
ROWS = 4


def upto(llama: Any) -> int:
    """How many leading KV positions hold rows computed in canonical batches (0 for a model never so)."""
    return min(getattr(llama, "_dbgorilla_canonical", 0), llama.n_tokens)


def mark(llama: Any, rows: int) -> None:
    llama._dbgorilla_canonical = rows


def decode(llama: Any, batch: Sequence[int], n_past: int, logits_at: int) -> None:
    """One decode of `batch` after `n_past` positions, with logits at `logits_at` only (-1: none)."""
    llama._ctx.kv_cache_seq_rm(-1, n_past, -1)
    llama._batch.set_batch(batch=batch, n_past=n_past, logits_all=False)
    for index in range(len(batch)):
        llama._batch.batch.logits[index] = index == logits_at
    llama._ctx.decode(llama._batch)


def evaluate(llama: Any, prompt: Sequence[int], start: int, end: int, logits: bool = False) -> None:
    """Evaluate `prompt[start:end]` after `start` canonical positions, in canonical batches (the caller
    gives at least `MIN_BATCH` rows, or starts at 0); with `logits`, the last row's are the ones sampled."""
    limit = (llama.n_batch - ROWS) // ROWS * ROWS  # room for the last batch's padding
    position = start
    while end - position > limit:  # whole batches, the rest left at least MIN_BATCH rows
        size = limit if end - position - limit >= MIN_BATCH else (end - position - MIN_BATCH) // ROWS * ROWS
        decode(llama, prompt[position : position + size], position, -1)
        position += size
    rows = list(prompt[position:end])
    pad = max(MIN_BATCH - len(rows), -len(rows) % ROWS)
    pad = min(pad, llama._n_ctx - end)  # a prompt at the context's end: no room for it
    decode(llama, rows + rows[-1:] * pad, position, len(rows) - 1 if logits else -1)
    llama.input_ids[start:end] = prompt[start:end]
    llama.n_tokens = end
    mark(llama, end)
    truncate(llama)  # the padding's rows
    llama._requires_eval = not logits  # with logits: llama-cpp-python samples from them, evaluating nothing


def truncate(llama: Any) -> None:
    """Drop the KV positions after the canonical ones (the padding's, a reply's), as a stored state must."""
    llama.n_tokens = upto(llama)
    llama._ctx.kv_cache_seq_rm(-1, llama.n_tokens, -1)


def prepare(llama: Any, prompt: Sequence[int], held: int) -> int:
    """Evaluate the whole prompt canonically, reusing at most `held` positions (those that are canonical),
    the last row's logits ready to sample; returns how many positions were reused."""
    start = max(0, min(held, upto(llama), len(prompt) - MIN_BATCH))
    evaluate(llama, prompt, start, len(prompt), logits=True)
    return start


def option(argv: list[str]) -> tuple[bool, list[str]]:
    """`--canonical=1` from the server's arguments, and the arguments without it."""
    asked = [a.split("=", 1)[1] for a in argv if a.startswith(CANONICAL)]
    rest = [a for a in argv if not a.startswith(CANONICAL)]
    if asked and asked[-1] not in ("0", "1"):
        raise SystemExit(f"{CANONICAL}{asked[-1]}: expected 1 (on) or 0 (off)")
    return bool(asked) and asked[-1] == "1", rest
