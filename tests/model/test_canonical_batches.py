"""Canonical batches with the test model: a prompt's logits to the last bit, whatever was evaluated before.

`dbgorilla.llm_server.canonical` rests on one property of llama.cpp's CPU kernels: a row computed in a batch
of at least 64 rows whose count is a multiple of 4 comes out alike in every such batch. This checks it on
the CPU library this machine loads, with flash attention as the model server runs it, so CI sees it fail
when an upstream kernel changes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy
import pytest

from dbgorilla.llm_server import canonical
from dbgorilla.local_models import SMOLLM2

pytestmark = pytest.mark.model

TEXT = (
    "Collection Restaurants: name (text), cuisine (text), rating (number), openNow (boolean), priceRange (text). "
    "Collection MenuItems: name (text), course (text), price (number), isVegetarian (boolean). "
) * 6


@pytest.fixture(scope="module")
def served() -> Iterator[Any]:
    """The test model as the server loads it: flash attention, the last position's logits only."""
    from llama_cpp import Llama

    from agent.llama_cpu import load_cpu_backend
    from agent.tokens import quiet_stderr

    load_cpu_backend()
    with quiet_stderr():
        model = Llama(
            model_path=str(SMOLLM2.gguf_path(echo=lambda _: None)),
            n_ctx=1024,
            flash_attn=True,
            logits_all=False,
            verbose=False,
        )
    yield model
    with contextlib.suppress(Exception):
        model.close()


def last_logits(llama: Any) -> Any:
    import llama_cpp

    return numpy.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llama._ctx.ctx, -1), shape=(llama._n_vocab,)).copy()


def after(llama: Any, earlier: list[int] | None, tokens: list[int]) -> Any:
    """The prompt's last logits when the cache held `earlier`'s canonical rows (None: nothing)."""
    llama.reset()
    canonical.mark(llama, 0)
    held = 0
    if earlier is not None:
        canonical.prepare(llama, earlier, held=0)
        held = next((i for i, (a, b) in enumerate(zip(earlier, tokens, strict=False)) if a != b), len(earlier))
    canonical.prepare(llama, tokens, held=held)
    return last_logits(llama)


def test_a_prompt_s_logits_do_not_depend_on_what_the_cache_held(served: Any) -> None:
    tokens = served.tokenize(TEXT.encode())[:298]
    alone = after(served, None, tokens)
    for earlier in (tokens[:100], tokens[:230], tokens[:297], tokens[:200] + served.tokenize(b" Question: which")):
        assert numpy.array_equal(after(served, earlier, tokens), alone), len(earlier)
