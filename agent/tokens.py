"""Token counting for the tool-description budget, with a real tokenizer where one is installed.

The paper kept its description within 1024 tokens because some providers cap tool descriptions.
We measure with the offline default model's own tokenizer (Qwen2.5, loaded vocab-only from the
local GGUF in well under a second). Without it, we fall back to a chars/4 estimate and say so.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass

CHARS_PER_TOKEN_ESTIMATE = 4.0


@dataclass(frozen=True)
class TokenCounter:
    name: str
    count: Callable[[str], int]
    exact: bool


@functools.cache
def default_counter() -> TokenCounter:
    try:
        from llama_cpp import Llama

        from dbgorilla.model_server import QWEN_CODER

        with _quiet_stderr():
            vocab = Llama(model_path=str(QWEN_CODER.gguf_path(echo=lambda _: None)), vocab_only=True, verbose=False)
    except Exception:  # no llama-cpp-python or no model files: estimate instead
        return estimate_counter()

    def count(text: str) -> int:
        return len(vocab.tokenize(text.encode(), add_bos=False, special=False))

    return TokenCounter("qwen2.5 tokenizer", count, exact=True)


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
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
