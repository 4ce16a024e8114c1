"""The model server wrapper's accounting of reused prompt tokens, without a model."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import jinja2
import numpy

from dbgorilla.llm_server import (
    PrefixStore,
    patch_llama,
    shared_first,
    shared_prefix,
    system_end,
    with_cached_tokens,
    with_object_arguments,
)


class FakeLlama:
    """The two methods the wrapper patches, with llama-cpp-python's KV bookkeeping."""

    def __init__(self) -> None:
        self._input_ids: list[int] = []
        self.n_tokens = 0
        self.calls = 0

    def generate(self, tokens: Sequence[int], *args: Any, **kwargs: Any) -> Iterator[int]:
        self._input_ids, self.n_tokens = list(tokens), len(tokens)
        yield 0
        yield 1

    def create_chat_completion(self, messages: list[dict[str, Any]], prompt: list[int]) -> dict[str, Any]:
        self.calls += 1
        for _ in self.generate(prompt):
            break  # as llama_cpp does at a stop token: the generator is closed, not run out
        return {"id": f"chatcmpl-{self.calls}", "usage": {"prompt_tokens": len(prompt), "completion_tokens": 1}}


def test_shared_prefix_counts_leading_equal_tokens() -> None:
    assert shared_prefix([1, 2, 3, 4], [1, 2, 9, 4]) == 2
    assert shared_prefix([], [1, 2]) == 0
    assert shared_prefix([1, 2, 3], [1, 2]) == 2


def test_each_completion_reports_the_prefix_it_found_evaluated() -> None:
    patch_llama(FakeLlama)
    llama = FakeLlama()
    question = [{"role": "user", "content": "?"}]
    first = llama.create_chat_completion(messages=question, prompt=[1, 2, 3, 4, 5])
    second = llama.create_chat_completion(messages=question, prompt=[1, 2, 3, 4, 6, 7])
    same = llama.create_chat_completion(messages=question, prompt=[1, 2, 3, 4, 6, 7])
    reported = [json.loads(with_cached_tokens(json.dumps(r).encode())) for r in (first, second, same)]
    cached = [r["usage"]["prompt_tokens_details"]["cached_tokens"] for r in reported]
    # The whole prompt is never reused: llama.cpp evaluates its last token again for fresh logits.
    assert cached == [0, 4, 5]


def test_replies_it_did_not_count_pass_unchanged() -> None:
    for body in (b"not json", b"[]", json.dumps({"id": "x"}).encode(), json.dumps({"id": "x", "usage": {}}).encode()):
        assert with_cached_tokens(body) == body


def test_tools_are_rendered_parameters_first() -> None:
    tool = {"type": "function", "function": {"name": "q", "description": "about the data", "parameters": {"x": 1}}}
    assert list(shared_first(tool)["function"]) == ["name", "parameters", "description"]
    assert shared_first(tool)["function"] == tool["function"]
    assert shared_first({"type": "function"}) == {"type": "function"}
    named = {"properties": {"text_property_filter": {"properties": {"property_name": {"enum": ["cuisine"]}}}}}
    typed = {"type": "function", "function": {"description": "d", "parameters": named, "name": "q"}}
    assert list(shared_first(typed)["function"]) == ["name", "parameters", "description"]  # a typed tool too


def test_a_models_own_call_is_rendered_as_the_object_it_wrote() -> None:
    """Qwen2.5's template renders `arguments | tojson`: the API's string would come out escaped."""
    template = jinja2.Environment().from_string(
        '{% for c in m.tool_calls %}{"name": "{{ c.function.name }}", "arguments": {{ c.function.arguments | tojson }}}'
        "{% endfor %}"
    )
    arguments = {"collection_name": "Courses", "groupby_property": "subject"}
    message = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "1", "type": "function", "function": {"name": "query_database", "arguments": json.dumps(arguments)}}
    ]}  # fmt: skip
    as_sent = json.loads(template.render(m=message))
    assert isinstance(as_sent["arguments"], str)  # the call the model made, shown as one escaped string
    rendered = json.loads(template.render(m=with_object_arguments(message)))
    assert rendered == {"name": "query_database", "arguments": arguments}
    broken = {**message, "tool_calls": [{"id": "2", "function": {"name": "q", "arguments": "{not json"}}]}
    assert with_object_arguments(broken) == broken
    for other in ({"role": "user", "content": "hi"}, {"role": "assistant", "content": "x", "tool_calls": []}, "text"):
        assert with_object_arguments(other) == other


def test_prefix_store_keeps_distinct_prefixes_on_disk(tmp_path: Path) -> None:
    store = PrefixStore(tmp_path, capacity=2, min_new=3)
    tools_a, tools_b = [1, 2, 3, 4, 5, 6], [1, 2, 7, 8, 9, 10]
    store.put(numpy.array([*tools_a, 50, 51], dtype=numpy.int32), b"state a")  # as llama_cpp holds them
    assert not store.wants([*tools_a, 60]), "another question on the same tools adds only 1 new token"
    assert store.wants([*tools_b, 60])
    store.put([*tools_b, 60], b"state b")
    again = PrefixStore(tmp_path, capacity=2, min_new=3)  # a restarted server
    name, shared = again.best([*tools_a, 70])
    assert shared == 6 and name is not None and again.get(name) == b"state a"
    again.put([9, 9, 9], b"state c")
    assert again.best(tools_a)[1] == 2, "the oldest state went when the store was full: only b shares 2 tokens"
    assert len(list(tmp_path.glob("*.state"))) == 2


def test_prefix_store_without_a_folder_keeps_states_in_memory() -> None:
    store = PrefixStore(None)
    store.put([1, 2, 3], b"kv")
    name, shared = store.best([1, 2, 4])
    assert shared == 2 and name is not None and store.get(name) == b"kv"


def test_prefix_store_forgets_the_least_recently_used_state(tmp_path: Path) -> None:
    store = PrefixStore(tmp_path, capacity=2, min_new=3)
    store.put([1, 2, 3, 4], b"tools a")
    store.put([5, 6, 7, 8], b"tools b")
    name_a, _ = store.best([1, 2, 3, 4, 9])
    assert name_a is not None
    store.touch(name_a)  # a question just loaded a
    store.put([7, 7, 7, 7], b"examples c")
    assert store.best([1, 2, 3, 4, 9])[1] == 4, "a was used last: b went"
    assert store.best([5, 6, 7, 8])[1] == 0
    store.touch(name_a)  # used again, after c was stored
    again = PrefixStore(tmp_path, capacity=2, min_new=3)  # a restart keeps that order
    again.put([8, 8, 8, 8], b"d")
    assert again.best([1, 2, 3, 4])[1] == 4 and again.best([7, 7, 7, 7])[1] == 0


def test_a_state_that_a_longer_one_starts_with_is_forgotten_when_that_one_is_stored(tmp_path: Path) -> None:
    """A warming's whole prompt after its system turn's state: every prompt shares at least as much with
    the longer one, so the shorter would only take a place in the store."""
    store = PrefixStore(tmp_path, capacity=3)
    store.put([1, 2, 3, 4], b"system turn")
    store.put([1, 2, 9], b"another")
    store.put([1, 2, 3, 4, 5, 6], b"warming")
    assert sorted(store.tokens(n) for n in store._keys) == [(1, 2, 3, 4, 5, 6), (1, 2, 9)]
    assert len(list(tmp_path.glob("*.state"))) == 2, "forgotten on disk too"
    name, shared = store.best([1, 2, 3, 4, 7])
    assert shared == 4 and name is not None and store.get(name) == b"warming"


def test_a_warming_keeps_a_short_first_prompt_that_a_question_would_not() -> None:
    store = PrefixStore()
    short = list(range(100))
    assert not store.wants(short), "a question's first prompt this short is not stored"
    assert store.wants(short, opening=True), "a warming's is"
    store.put(short, b"state")
    assert not store.wants([*short[:90], *range(500, 510)], opening=True), "10 new tokens: not worth a state"
    assert store.wants([*short[:50], *range(500, 550)], opening=True)


def test_the_system_turn_ends_where_the_second_message_starts() -> None:
    start = 9  # the template's message-start token
    assert system_end([start, 1, 2, 3, start, 4, 5, start, 6], start) == 4
    assert system_end([start, 1, 2, 3], start) is None, "one message: nothing to cut"
    assert system_end([start, 1, start, 2], None) is None, "a template without the token: whole prompts are stored"
