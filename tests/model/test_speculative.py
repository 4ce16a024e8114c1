"""Drafted tokens checked in one batch: the model's own greedy JSON, in fewer decodes.

`dbgorilla.llm_server.speculative.patch_speculative` must never change what the model chooses, only how many decodes
it takes. What a batch guarantees is less than the same text: llama.cpp's batched kernels do not give a
one-token decode's logits to the last bit, so where two tokens are near a tie a drafted reply can take the
other (on the `haswell` library the test model wrote "Thai" for "Cocktails", 0.06 logits apart, 2026-11-29).
So each test asserts what holds on every CPU library: the drafted reply is the plain one, or it departs
from it where the plain path's own logits put the two tokens within `NEAR_TIE` of each other (a draft taken
unchecked departs where the model rates its token far below), and the drafts did save decodes.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from dbgorilla.llm_server import grammar as llama_grammar
from dbgorilla.llm_server import speculative as _speculative

pytestmark = pytest.mark.model

SCHEMA = {
    "type": "object",
    "properties": {
        "collection_name": {"enum": ["Restaurants", "MenuItems", "Reservations"]},
        "text_property_filter": {
            "type": "object",
            "properties": {
                "property_name": {"enum": ["cuisine", "description"]},
                "operator": {"enum": ["=", "LIKE"]},
                "value": {"type": "string", "maxLength": 40},
            },
            "required": ["property_name", "operator", "value"],
        },
    },
    "required": ["collection_name", "text_property_filter"],
}
EXAMPLE = (
    'Question: Which restaurants serve Thai food?\nCall: {"collection_name": "Restaurants", '
    '"text_property_filter": {"property_name": "cuisine", "operator": "=", "value": "Thai"}}\n\n'
)
PROMPTS = (
    EXAMPLE + "Question: Which restaurants serve Greek food?\nCall:",
    EXAMPLE + "Question: Which menu items mention cocktails?\nCall:",
)


#: The most logits apart two tokens can be where a batch's float differences pick the other of them. Seen
#: on the `haswell` library: 0.06 and 0.65 (2026-11-29); a draft nothing checked departs by several.
NEAR_TIE = 1.5


def write(llama: Any, prompt: str) -> tuple[str, int]:
    from llama_cpp import LlamaGrammar

    grammar = LlamaGrammar.from_json_schema(json.dumps(SCHEMA), verbose=False)
    llama.reset()
    reply = llama.create_chat_completion(
        messages=[{"role": "user", "content": prompt}], grammar=grammar, temperature=0.0, max_tokens=80
    )
    return str(reply["choices"][0]["message"]["content"]), int(reply["usage"]["completion_tokens"])


@dataclass
class Counted:
    """Decodes counted, and each reply's prompt and tokens as the model wrote them."""

    decodes: int = 0
    replies: list[tuple[list[int], list[int]]] = field(default_factory=list)


@contextlib.contextmanager
def counted_decodes(llama: Any) -> Iterator[Counted]:
    """The model's class with the server's grammar sampling, its context's decodes counted (a draft's batch
    is one) and its replies kept; every patch (drafting's too) undone after, and no draft left on it."""
    cls, context = type(llama), llama._ctx
    init, sample, generate, complete, evaluate = cls.__init__, cls.sample, cls.generate, cls.create_completion, cls.eval
    decode = context.decode
    counted = Counted()

    def counting(batch: Any) -> Any:
        counted.decodes += 1
        return decode(batch)

    llama_grammar.patch_grammar_sampling(cls)
    try:
        context.decode = counting
        keep_replies(cls, counted)
        yield counted
    finally:
        cls.eval, cls.__init__, cls.sample, cls.generate = evaluate, init, sample, generate
        cls.create_completion = complete
        del context.decode
        llama.draft_model = None


def keep_replies(cls: Any, counted: Counted) -> None:
    """Each reply the class writes from now on is kept in `counted.replies`, with its prompt."""
    generate = cls.generate

    def keeping(self: Any, tokens: Any, *args: Any, **kwargs: Any) -> Iterator[int]:
        written: list[int] = []
        counted.replies.append(([int(t) for t in tokens], written))
        for token in generate(self, tokens, *args, **kwargs):
            written.append(int(token))
            yield token

    cls.generate = keeping


def drafting(llama: Any, draft: _speculative.RecentLookup) -> None:
    """The model drafts with `draft` from now on (the drafting wraps the keeping of replies)."""
    _speculative.patch_speculative(type(llama), draft)
    llama.draft_model = draft


def departure(llama: Any, plain: tuple[list[int], list[int]], drafted: list[int]) -> float:
    """How far apart, in the plain path's own logits, the plain reply's token and the drafted reply's are
    where the drafted reply first departs from the plain one (0.0 where it never does): the prompt in one
    batch, then one decode per token, as the plain path evaluates them."""
    import numpy as np

    prompt, written = plain
    at = next((i for i, (a, b) in enumerate(zip(written, drafted, strict=False)) if a != b), None)
    if at is None:
        return 0.0
    llama.draft_model = None
    llama.reset()
    llama.eval(prompt)
    for token in written[:at]:
        llama.eval([token])
    logits = np.ctypeslib.as_array(llama._ctx.get_logits(), shape=(llama.n_vocab(),))
    return float(logits[written[at]] - logits[drafted[at]])


def test_drafted_replies_are_the_model_s_own_choices_in_fewer_decodes(llama: Any) -> None:
    with counted_decodes(llama) as counted:
        plain = [write(llama, prompt) for prompt in PROMPTS]
        one_each, plain_replies = counted.decodes, list(counted.replies)
        drafting(llama, _speculative.RecentLookup())
        counted.decodes = 0
        drafted = [write(llama, prompt) for prompt in PROMPTS]
        drafted_replies = counted.replies[len(plain_replies) :]
    apart = [departure(llama, p, d) for p, (_, d) in zip(plain_replies, drafted_replies, strict=True)]
    assert all(-1e-3 <= a < NEAR_TIE for a in apart), apart
    generated, written = sum(n for _, n in plain), sum(n for _, n in drafted)
    assert one_each >= generated  # a decode per token (and the prompt's)
    print(f"decodes: {one_each} for {generated} tokens one each, {counted.decodes} for {written} with drafts")
    print(f"departures (logits apart): {apart}, texts the same: {[t for t, _ in drafted] == [t for t, _ in plain]}")
    assert counted.decodes / written < 0.8 * one_each / generated, (counted.decodes, written, one_each, generated)


def test_a_reply_with_no_example_in_its_prompt_is_drafted_from_the_last_reply(llama: Any) -> None:
    """The check's decision has no example in its prompt: its keys and punctuation come from the replies
    before. With the first reply remembered, the second is written in fewer decodes than with a draft
    that has no reply to look up, and departs from the plain replies at near-ties alone."""
    bare = tuple(prompt.removeprefix(EXAMPLE) for prompt in PROMPTS)
    with counted_decodes(llama) as counted:
        for prompt in bare:
            write(llama, prompt)
        plain = list(counted.replies)
        draft = _speculative.RecentLookup(tokens=3)
        drafting(llama, draft)
        counted.decodes = 0
        alone = write(llama, bare[1])  # no reply to look up yet
        without = counted.decodes
        draft.history.clear()
        first = write(llama, bare[0])
        counted.decodes = 0
        second = write(llama, bare[1])
        drafted = [reply for _, reply in counted.replies[len(plain) :]]
    assert len(draft.history) == 2  # each reply kept, with the template's last tokens before it
    apart = [departure(llama, plain[i], reply) for i, reply in zip((1, 0, 1), drafted, strict=True)]
    assert all(-1e-3 <= a < NEAR_TIE for a in apart), apart
    print(f"second reply: {second[1]} tokens, {counted.decodes} decodes after the first reply, {without} alone")
    print(f"departures (logits apart): {apart}; first {first[1]} tokens, alone {alone[1]}")
    if second[1] == alone[1]:  # the same reply: drafting from the first one saved decodes
        assert counted.decodes < without, f"{counted.decodes} decodes after the first reply, {without} alone"


def test_only_a_model_that_keeps_the_last_logits_alone_drafts(llama: Any) -> None:
    """llama-cpp-python's speculative loop runs for a model with `logits_all` off; its server turns it on
    by default, and until 2026-11-27 no draft was ever checked. The server's own options turn it off."""
    import argparse

    from llama_cpp import Llama
    from llama_cpp.server.cli import add_args_from_model, parse_model_from_args
    from llama_cpp.server.settings import ModelSettings

    from agent.tokens import quiet_stderr
    from dbgorilla.local_models import SERVER_OPTIONS

    parser = argparse.ArgumentParser()
    add_args_from_model(parser, ModelSettings)
    options = [f"--{name}={value}" for name, value in SERVER_OPTIONS.items()]
    settings = parse_model_from_args(ModelSettings, parser.parse_args([*options, "--model", "m.gguf"]))
    assert settings.logits_all is False
    assert ModelSettings(model="m.gguf").logits_all is True  # the server's default, which drafts nothing

    cls = type(llama)
    init, evaluate, generate, complete = cls.__init__, cls.eval, cls.generate, cls.create_completion
    draft = _speculative.RecentLookup(tokens=3)
    try:
        _speculative.patch_speculative(cls, draft)
        made = {}
        for logits_all in (False, True):
            with quiet_stderr():
                made[logits_all] = Llama(model_path=llama.model_path, n_ctx=256, logits_all=logits_all, verbose=False)
    finally:
        cls.__init__, cls.eval, cls.generate, cls.create_completion = init, evaluate, generate, complete
    try:
        assert made[False].draft_model is draft
        assert made[True].draft_model is None
    finally:
        for model in made.values():
            model.close()


def test_a_reply_s_opening_is_drafted_in_its_prompt_s_batch(llama: Any) -> None:
    """Replies to one schema begin alike (`{"collection_name": "`): a third reply's opening, what the two
    before began with alike, is evaluated in its prompt's batch. The reply departs from the plain one at
    near-ties alone, in fewer decodes than with no opening drafted; a one-token reply (a warming) drafts
    no opening."""
    questions = ("Which restaurants serve Greek food?", "Which menu items mention cocktails?")
    third = "Question: Which reservations are for a birthday?\nCall:"
    with counted_decodes(llama) as counted:
        write(llama, third)
        plain = counted.replies[-1]
        draft = _speculative.RecentLookup(tokens=3)
        drafting(llama, draft)
        counts, replies = {}, {}
        for opening in (0, 16):
            draft.history.clear()
            draft.answered.clear()
            draft.opening_tokens = opening
            for question in questions:
                write(llama, f"Question: {question}\nCall:")
            counted.decodes = 0
            write(llama, third)
            counts[opening], replies[opening] = counted.decodes, counted.replies[-1][1]
        assert len(draft.answered) == 3
        llama.reset()  # a warming: one token asked, the prompt evaluated and nothing after it
        llama.create_chat_completion(messages=[{"role": "user", "content": third}], max_tokens=1, temperature=0.0)
        assert llama.detokenize(list(llama.input_ids[: llama.n_tokens])).endswith(b"assistant\n")
        assert len(draft.answered) == 3
    apart = {opening: departure(llama, plain, reply) for opening, reply in replies.items()}
    assert all(-1e-3 <= a < NEAR_TIE for a in apart.values()), apart
    print(f"third reply: {len(plain[1])} tokens, {counts[16]} decodes with its opening drafted, {counts[0]} without")
    print(f"departures (logits apart): {apart}")
    if replies[0] == replies[16]:  # the same reply: its opening drafted in the prompt's batch saved decodes
        assert counts[16] < counts[0], counts
