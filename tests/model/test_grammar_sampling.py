"""Greedy sampling under a grammar, best token checked first: the same tokens as llama.cpp's chain.

The fast path (`dbgorilla.llm_server.grammar.greedy_grammar_token`) must never change what the model writes,
only how long it takes: the small test model writes the same JSON with and without it, for a schema
of enums and free text, and the fast path did decide most tokens (else it saves nothing).
"""

from __future__ import annotations

from typing import Any

import pytest

from dbgorilla.llm_server import grammar as llama_grammar

pytestmark = pytest.mark.model

SCHEMA = {
    "type": "object",
    "properties": {
        "collection": {"enum": ["Restaurants", "Menus", "Reservations"]},
        "asks_for": {"type": "string", "maxLength": 60},
        "statistic": {"enum": ["none", "count", "average", "maximum"]},
        "limit": {"type": "integer"},
    },
    "required": ["collection", "asks_for", "statistic", "limit"],
}
PROMPTS = (
    "How many Italian restaurants have a rating above 4? Reply with JSON.",
    "List the menus with vegetarian dishes. Reply with JSON.",
    "What is the average party size of reservations on Friday? Reply with JSON.",
)


def write(llama: Any, prompt: str, repeat_penalty: float) -> str:
    from llama_cpp import LlamaGrammar

    grammar = LlamaGrammar.from_json_schema(__import__("json").dumps(SCHEMA), verbose=False)
    reply = llama.create_chat_completion(
        messages=[{"role": "user", "content": prompt}],
        grammar=grammar,
        temperature=0.0,
        max_tokens=80,
        repeat_penalty=repeat_penalty,
    )
    return str(reply["choices"][0]["message"]["content"])


@pytest.mark.parametrize("repeat_penalty", [1.0, 1.1])
def test_the_fast_path_writes_what_the_full_chain_writes(llama: Any, repeat_penalty: float) -> None:
    plain = [write(llama, prompt, repeat_penalty) for prompt in PROMPTS]
    decided = {"fast": 0, "full": 0}
    original = llama_grammar.greedy_grammar_token

    def counted(model: Any, idx: int | None) -> int | None:
        token = original(model, idx)
        decided["fast" if token is not None else "full"] += 1
        return token

    sample = type(llama).sample
    llama_grammar.patch_grammar_sampling(type(llama))
    try:
        llama_grammar.greedy_grammar_token = counted  # type: ignore[assignment]
        fast = [write(llama, prompt, repeat_penalty) for prompt in PROMPTS]
    finally:
        llama_grammar.greedy_grammar_token = original  # type: ignore[assignment]
        type(llama).sample = sample
    assert fast == plain
    assert all(text.startswith("{") for text in fast)
    assert decided["fast"] > decided["full"]
