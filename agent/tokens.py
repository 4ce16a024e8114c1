"""Token counting for the tool-description budget, with a real tokenizer where one is installed.

The paper kept its description within 1024 tokens because some providers cap tool descriptions.
The caller passes the tokenizer of the model it will talk to (`gguf_counter` loads one vocab-only
from a local GGUF in well under a second); without one, a chars/4 estimate is used and says so.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from agent.llama_cpu import load_cpu_backend

CHARS_PER_TOKEN_ESTIMATE = 4.0


@dataclass(frozen=True)
class TokenCounter:
    name: str
    count: Callable[[str], int]
    exact: bool


@functools.cache
def gguf_counter(path: Path, name: str) -> TokenCounter:
    """The exact tokenizer of a local GGUF model, or the estimate when it cannot be loaded."""
    try:
        from llama_cpp import Llama  # optional: installed with the `local` extra

        load_cpu_backend()
        with quiet_stderr():
            vocab = Llama(model_path=str(path), vocab_only=True, verbose=False)
    except Exception:  # no llama-cpp-python or no model file: estimate instead
        return estimate_counter()
    # kept for the process's life: freed at exit while llama_cpp can still free it (its own __del__
    # at interpreter shutdown finds llama_cpp's functions gone and prints a TypeError)
    atexit.register(vocab.close)

    def count(text: str) -> int:
        return len(vocab.tokenize(text.encode(), add_bos=False, special=False))

    return TokenCounter(f"{name} tokenizer", count, exact=True)


@contextlib.contextmanager
def quiet_stderr() -> Iterator[None]:
    """llama.cpp logs a context-size warning from C even with verbose=False."""
    saved = os.dup(2)
    with open(os.devnull, "wb") as devnull:
        os.dup2(devnull.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def estimate_counter() -> TokenCounter:
    return TokenCounter(
        f"estimate (chars/{CHARS_PER_TOKEN_ESTIMATE:g})",
        lambda text: round(len(text) / CHARS_PER_TOKEN_ESTIMATE),
        False,
    )
