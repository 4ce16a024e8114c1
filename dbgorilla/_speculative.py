"""Speculative decoding from the prompt for `dbgorilla.llm_server` (`--draft_tokens=N`; see its docstring)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RecentLookup:
    """A draft model for llama-cpp-python's speculative loop: the `tokens` that followed the latest earlier
    occurrence of the last `ngram` (down to `min_ngram`) tokens. The latest, not the first as
    llama-cpp-python's prompt lookup takes: a call's keys and values recur nearest in the solved examples
    and the calls before, not in the tool's schema at the top."""

    tokens: int = 8
    ngram: int = 3
    min_ngram: int = 2

    def __call__(self, input_ids: Any, /, **_: Any) -> Any:
        import numpy as np

        ids = np.asarray(input_ids)
        for size in range(min(self.ngram, len(ids) - 1), self.min_ngram - 1, -1):
            windows = np.lib.stride_tricks.sliding_window_view(ids[:-1], size)
            found = np.flatnonzero((windows == ids[-size:]).all(axis=1))
            if len(found):
                start = int(found[-1]) + size
                return ids[start : start + self.tokens].astype(np.intc)
        return np.array([], dtype=np.intc)


def patch_speculative(llama_class: Any, draft: RecentLookup) -> None:
    """Every model drafts with `draft`; a batch of a sampled token and its draft is decoded with logits at
    each position (the sampler reads them from the context), a prompt the usual way."""
    evaluate, init = llama_class.eval, llama_class.__init__

    def drafting_init(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        if self.draft_model is None and not self._logits_all:
            self.draft_model = draft

    def drafting_eval(self: Any, tokens: Sequence[int]) -> None:
        if self.draft_model is not draft or not 1 < len(tokens) <= draft.tokens + 1:
            evaluate(self, tokens)
            return
        self._ctx.kv_cache_seq_rm(-1, self.n_tokens, -1)
        n_past = self.n_tokens
        self._batch.set_batch(batch=tokens, n_past=n_past, logits_all=True)
        self._ctx.decode(self._batch)
        self.input_ids[n_past : n_past + len(tokens)] = tokens
        self.n_tokens += len(tokens)
        self._requires_eval = False

    llama_class.__init__, llama_class.eval = drafting_init, drafting_eval
