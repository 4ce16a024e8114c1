"""Greedy sampling under a grammar, checking the best tokens first: a patch of llama-cpp-python.

llama.cpp's sampler chain checks the grammar against every one of the vocabulary's 151,936 tokens
before it picks one; `greedy_grammar_token` checks only the `GRAMMAR_FIRST` best tokens first (the whole
vocabulary only when it rejects them all), as llama.cpp's own server checks its sampled token first.
Greedy decoding picks the same token either way (tests/model/test_grammar_sampling.py).

A tool call is written compact (`patch_compact_calls`): llama-cpp-python's schema grammars allow one space
after each `{`, `,` and `:`, which this model takes, so a call costs about a token a key more than its compact
form. Held to no space, the main job's tool turns generated 36.6 tokens a call against 45.4, the same 11 of 15
passed (2026-12-01, docs/results). Not a reply held to a `response_format` schema: compact, the check wrote
other words for what is asked, and refused 16 of the abstention split's 20 unanswerable questions, not 18.

Read against llama-cpp-python `READ_AGAINST` (`Llama.sample`, `Llama._sampler`, the chain of penalties,
grammar and greedy; `llama_grammar.SPACE_RULE`, which `SchemaConverter` reads when `create_chat_completion`
builds a call's grammar; `Jinja2ChatFormatter.tojson`, which the chat template's `tojson` filter is taken from);
tests/unit/test_llama_patches.py fails when the installed version moves.
"""

from __future__ import annotations

import functools
from typing import Any

#: The llama-cpp-python version whose `Llama.sample` and sampler chain this patch was read against.
READ_AGAINST = "0.3.36"


def patch_grammar_sampling(llama_class: Any) -> None:
    """Greedy sampling under a grammar checks the unconstrained best token first (`greedy_grammar_token`)."""
    sample = llama_class.sample

    def greedy_first(self: Any, *args: Any, **kwargs: Any) -> Any:
        plain = (
            not args
            and kwargs.get("grammar") is not None
            and kwargs.get("temp", 0.8) == 0.0
            and kwargs.get("logits_processor") is None
            and self._sampler is not None
        )
        token = greedy_grammar_token(self, kwargs.get("idx")) if plain else None
        return token if token is not None else sample(self, *args, **kwargs)

    llama_class.sample = greedy_first


#: The space rule a grammar of a request with tools is built with (upstream's: one optional space).
COMPACT = '""'


def patch_compact_calls(llama_class: Any, grammar_module: Any) -> None:
    """A request with tools has its grammars built with no space between tokens (`COMPACT`); any other
    with upstream's rule. The server answers one request at a time, so the module constant is the request's."""
    chat, spaced = llama_class.create_chat_completion, grammar_module.SPACE_RULE

    @functools.wraps(chat)
    def compact_calls(self: Any, *args: Any, **kwargs: Any) -> Any:
        grammar_module.SPACE_RULE = COMPACT if kwargs.get("tools") else spaced
        try:
            return chat(self, *args, **kwargs)
        finally:
            grammar_module.SPACE_RULE = spaced

    llama_class.create_chat_completion = compact_calls


def compact_json(
    x: Any, ensure_ascii: bool = False, indent: int | None = None, separators: Any = None, sort_keys: bool = False
) -> str:
    """Upstream's `Jinja2ChatFormatter.tojson` with no space after `,` and `:` unless a template asks for one."""
    import json

    if separators is None and indent is None:
        separators = (",", ":")
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def patch_compact_listing(formatter_class: Any) -> None:
    """The chat template renders JSON (the tools in the system turn, a call in an assistant turn) compact, as
    the model writes its calls (`patch_compact_calls`): the default tool turn's system turn is ~290 tokens
    shorter (1,859 -> ~1,570 on a collection of five properties), and the model reads its own call as written.
    Applied before a `Llama` is built: the formatter takes the filter from its class when it is made."""
    formatter_class.tojson = staticmethod(compact_json)


#: Tokens checked against the grammar before the whole vocabulary is: the best ones by logit.
GRAMMAR_FIRST = 64


def greedy_grammar_token(llama: Any, idx: int | None) -> int | None:
    """The token llama.cpp's chain (penalties, grammar, greedy) would pick, found by checking only the
    `GRAMMAR_FIRST` best penalised tokens against the grammar: the best of them it accepts is the best
    it accepts at all. None (nothing accepted, nothing changed) when it rejects them all or the chain
    is not that shape, so the caller samples the usual way."""
    import ctypes

    import llama_cpp
    import numpy as np

    chain = llama._sampler.sampler
    if llama_cpp.llama_sampler_chain_n(chain) != 3:
        return None
    penalties, grammar = llama_cpp.llama_sampler_chain_get(chain, 0), llama_cpp.llama_sampler_chain_get(chain, 1)
    n_vocab = llama._n_vocab
    ridx = idx - llama.n_tokens if idx is not None else -1
    logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llama._ctx.ctx, ridx), shape=(n_vocab,))
    data = np.empty(n_vocab, dtype=_token_data())
    data["id"], data["logit"], data["p"] = np.arange(n_vocab, dtype=np.int32), logits, 0.0
    llama_cpp.llama_sampler_apply(penalties, ctypes.byref(_candidates(data)))
    penalised = data["logit"]
    cut = np.partition(penalised, n_vocab - GRAMMAR_FIRST)[n_vocab - GRAMMAR_FIRST]
    best = data[penalised >= cut]  # ties at the cut kept: greedy takes the first of equal bests
    best = best[np.lexsort((best["id"], -best["logit"]))]
    llama_cpp.llama_sampler_apply(grammar, ctypes.byref(_candidates(best)))
    accepted = np.flatnonzero(np.isfinite(best["logit"]))
    if not len(accepted):
        return None
    token = int(best["id"][accepted[0]])
    llama_cpp.llama_sampler_accept(chain, token)
    return token


@functools.cache
def _token_data() -> Any:
    """llama.cpp's `llama_token_data` (id, logit, p) as a numpy record."""
    import numpy as np

    return np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)])


def _candidates(data: Any) -> Any:
    import llama_cpp

    pointer = data.ctypes.data_as(llama_cpp.llama_token_data_p)
    return llama_cpp.llama_token_data_array(data=pointer, size=len(data), selected=-1, sorted=False)
