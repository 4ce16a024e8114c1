"""Drafted tokens checked in one batch: the same JSON as one decode per token, in fewer decodes.

`dbgorilla._speculative.patch_speculative` must never change what the model writes, only how many
decodes it takes: the small test model writes the same replies to a JSON schema with and without
drafts (greedy, the fast grammar path on, as the server runs), and the drafts did save decodes.
"""

from __future__ import annotations

import json
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


def test_drafted_tokens_write_what_one_decode_per_token_writes_in_fewer_decodes(llama: Any) -> None:
    cls = type(llama)
    evaluate, init, sample = cls.eval, cls.__init__, cls.sample
    decodes = [0]

    def counting(self: Any, tokens: Any) -> None:
        decodes[0] += 1
        evaluate(self, tokens)

    llm_server.patch_grammar_sampling(cls)
    try:
        cls.eval = counting
        plain = [write(llama, prompt) for prompt in PROMPTS]
        one_each = decodes[0]
        draft = _speculative.RecentLookup()
        _speculative.patch_speculative(cls, draft)
        llama.draft_model = draft
        decodes[0] = 0
        drafted = [write(llama, prompt) for prompt in PROMPTS]
    finally:
        cls.eval, cls.__init__, cls.sample = evaluate, init, sample
        llama.draft_model = None
    assert [text for text, _ in drafted] == [text for text, _ in plain]
    assert all(json.loads(text)["collection_name"] for text, _ in drafted)
    generated = sum(n for _, n in plain)
    assert one_each >= generated  # a decode per token (and the prompt's)
    print(f"decodes: {one_each} one token each, {decodes[0]} with drafts, {generated} tokens")
    assert decodes[0] < one_each * 0.8, f"{decodes[0]} decodes with drafts, {one_each} without"
