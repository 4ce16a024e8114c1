"""Token counting for the tool-description budget, with a real tokenizer where one is installed.

The paper kept its description within 1024 tokens because some providers cap tool descriptions.
We measure with the offline default model's own tokenizer (Qwen2.5, loaded vocab-only from the
local GGUF in well under a second). Without it, we fall back to a chars/4 estimate and say so.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
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

        vocab = Llama(model_path=str(QWEN_CODER.gguf_path(echo=lambda _: None)), vocab_only=True, verbose=False)
    except Exception:  # no llama-cpp-python or no model files: estimate instead
        return estimate_counter()

    def count(text: str) -> int:
        return len(vocab.tokenize(text.encode(), add_bos=False, special=False))

    return TokenCounter("qwen2.5 tokenizer", count, exact=True)


def estimate_counter() -> TokenCounter:
    return TokenCounter(
        f"estimate (chars/{CHARS_PER_TOKEN_ESTIMATE:g})",
        lambda text: round(len(text) / CHARS_PER_TOKEN_ESTIMATE),
        False,
    )
