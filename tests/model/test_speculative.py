"""Drafted tokens checked in one batch: the same JSON as one decode per token, in fewer decodes.

`dbgorilla._speculative.patch_speculative` must never change what the model writes, only how many
decodes it takes: the small test model writes the same replies to a JSON schema with and without
drafts (greedy, the fast grammar path on, as the server runs), and the drafts did save decodes.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

import pytest

from dbgorilla import _speculative, llm_server

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


def write(llama: Any, prompt: str) -> tuple[str, int]:
    from llama_cpp import LlamaGrammar

    grammar = LlamaGrammar.from_json_schema(json.dumps(SCHEMA), verbose=False)
    llama.reset()
    reply = llama.create_chat_completion(
        messages=[{"role": "user", "content": prompt}], grammar=grammar, temperature=0.0, max_tokens=80
    )
    return str(reply["choices"][0]["message"]["content"]), int(reply["usage"]["completion_tokens"])


@contextlib.contextmanager
def counted_decodes(llama: Any) -> Iterator[list[int]]:
    """The model's class with the server's grammar sampling and its decodes counted (in the list yielded);
    every patch (drafting's too) undone after, and no draft left on the model."""
    cls = type(llama)
    evaluate, init, sample, generate, complete = cls.eval, cls.__init__, cls.sample, cls.generate, cls.create_completion
    decodes = [0]

    def counting(self: Any, tokens: Any) -> None:
        decodes[0] += 1
        evaluate(self, tokens)

    llm_server.patch_grammar_sampling(cls)
    try:
        cls.eval = counting
        yield decodes
    finally:
        cls.eval, cls.__init__, cls.sample, cls.generate = evaluate, init, sample, generate
        cls.create_completion = complete
        llama.draft_model = None


def test_drafted_tokens_write_what_one_decode_per_token_writes_in_fewer_decodes(llama: Any) -> None:
    with counted_decodes(llama) as decodes:
        plain = [write(llama, prompt) for prompt in PROMPTS]
        one_each = decodes[0]
        draft = _speculative.RecentLookup()
        _speculative.patch_speculative(type(llama), draft)
        llama.draft_model = draft
        decodes[0] = 0
        drafted = [write(llama, prompt) for prompt in PROMPTS]
    assert [text for text, _ in drafted] == [text for text, _ in plain]
    assert all(json.loads(text)["collection_name"] for text, _ in drafted)
    generated = sum(n for _, n in plain)
    assert one_each >= generated  # a decode per token (and the prompt's)
    print(f"decodes: {one_each} one token each, {decodes[0]} with drafts, {generated} tokens")
    assert decodes[0] < one_each * 0.8, f"{decodes[0]} decodes with drafts, {one_each} without"


def test_a_reply_with_no_example_in_its_prompt_is_drafted_from_the_last_reply(llama: Any) -> None:
    """The check's decision has no example in its prompt: its keys and punctuation come from the replies
    before. With the first reply remembered, the second is written in fewer decodes than with a draft
    that has no reply to look up, and the same as without drafts."""
    bare = tuple(prompt.removeprefix(EXAMPLE) for prompt in PROMPTS)
    with counted_decodes(llama) as decodes:
        plain = [write(llama, prompt) for prompt in bare]
        draft = _speculative.RecentLookup(tokens=3)
        _speculative.patch_speculative(type(llama), draft)
        llama.draft_model = draft
        decodes[0] = 0
        alone = write(llama, bare[1])  # no reply to look up yet
        without = decodes[0]
        draft.history.clear()
        first = write(llama, bare[0])
        decodes[0] = 0
        second = write(llama, bare[1])
    assert [first, second] == plain
    assert alone == plain[1]
    assert len(draft.history) == 2  # each reply kept, with the template's last tokens before it
    print(f"second reply: {second[1]} tokens, {decodes[0]} decodes after the first reply, {without} alone")
    assert decodes[0] < without, f"{decodes[0]} decodes after the first reply, {without} with no reply to look up"


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
    before began with alike, is evaluated in its prompt's batch. The reply is the same as without drafts,
    in fewer decodes than with no opening drafted; a one-token reply (a warming) drafts no opening."""
    questions = ("Which restaurants serve Greek food?", "Which menu items mention cocktails?")
    third = "Question: Which reservations are for a birthday?\nCall:"
    with counted_decodes(llama) as decodes:
        plain = write(llama, third)
        draft = _speculative.RecentLookup(tokens=3)
        _speculative.patch_speculative(type(llama), draft)
        llama.draft_model = draft
        counts = {}
        for opening in (0, 16):
            draft.history.clear()
            draft.answered.clear()
            draft.opening_tokens = opening
            for question in questions:
                write(llama, f"Question: {question}\nCall:")
            decodes[0] = 0
            assert write(llama, third) == plain
            counts[opening] = decodes[0]
        assert len(draft.answered) == 3
        llama.reset()  # a warming: one token asked, the prompt evaluated and nothing after it
        llama.create_chat_completion(messages=[{"role": "user", "content": third}], max_tokens=1, temperature=0.0)
        assert llama.detokenize(list(llama.input_ids[: llama.n_tokens])).endswith(b"assistant\n")
        assert len(draft.answered) == 3
    print(f"third reply: {plain[1]} tokens, {counts[16]} decodes with its opening drafted, {counts[0]} without")
    assert counts[16] < counts[0], counts
