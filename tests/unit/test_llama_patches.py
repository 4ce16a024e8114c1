"""The model server's patches of llama-cpp-python say which upstream version they were read against; a
build that moves to another version must read them again (each patch replaces a method by name)."""

from __future__ import annotations

import importlib
import importlib.metadata

import pytest

from dbgorilla.llama_build import LLAMA_CPP_PYTHON_VERSION

PATCHES = ("dbgorilla.llm_server", "dbgorilla.llm_server.grammar", "dbgorilla.llm_server.speculative")


@pytest.mark.parametrize("module", PATCHES)
def test_each_patch_was_read_against_the_version_we_build(module: str) -> None:
    assert importlib.import_module(module).READ_AGAINST == LLAMA_CPP_PYTHON_VERSION


def test_the_installed_llama_cpp_python_is_the_one_the_patches_were_read_against() -> None:
    try:
        installed = importlib.metadata.version("llama-cpp-python")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("llama-cpp-python is not installed (the model tier's extra)")
    assert installed == LLAMA_CPP_PYTHON_VERSION, (
        f"llama-cpp-python {installed} is installed; the patches were read against {LLAMA_CPP_PYTHON_VERSION}"
    )


def test_a_call_s_grammar_allows_no_space_and_a_schema_reply_s_keeps_upstream_s(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`patch_compact_calls` works through the module constant llama-cpp-python's schema converter reads, for a
    request with tools only, and leaves upstream's rule after each request."""
    grammar = pytest.importorskip("llama_cpp.llama_grammar", reason="llama-cpp-python is not installed")
    from dbgorilla.llm_server.grammar import patch_compact_calls

    schema = '{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}'
    upstream = grammar.SPACE_RULE
    assert f"space ::= {upstream}" in grammar.json_schema_to_gbnf(schema)

    class Model:
        def create_chat_completion(self, **kwargs: object) -> str:
            return grammar.json_schema_to_gbnf(schema)

    monkeypatch.setattr(grammar, "SPACE_RULE", upstream)  # restored after the test, whatever happens
    patch_compact_calls(Model, grammar)
    assert 'space ::= ""' in Model().create_chat_completion(messages=[], tools=[{"type": "function"}])
    assert f"space ::= {upstream}" in Model().create_chat_completion(
        messages=[], response_format={"type": "json_object"}
    )
    assert grammar.SPACE_RULE == upstream  # noqa: SIM300


def test_the_template_renders_tools_and_calls_compact_and_an_asked_indent_as_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`patch_compact_listing` reaches the filter a formatter built after it renders with (Qwen2.5's template
    renders `tool | tojson` and a call's `arguments | tojson`); a template that asks for an indent keeps it."""
    chat_format = pytest.importorskip("llama_cpp.llama_chat_format", reason="llama-cpp-python is not installed")
    from dbgorilla.llm_server.grammar import patch_compact_listing

    template = (
        "{% for tool in tools %}{{ tool | tojson }}\n{% endfor %}"
        "{% for m in messages %}{% for c in m.tool_calls or [] %}{{ c.function.arguments | tojson }}\n"
        "{{ c.function.arguments | tojson(indent=1) }}{% endfor %}{% endfor %}"
    )
    tool = {"type": "function", "function": {"name": "q", "parameters": {"type": "object", "properties": {}}}}
    call = {"function": {"name": "q", "arguments": {"collection_name": "Cars", "limit": 3}}}
    messages = [{"role": "assistant", "content": None, "tool_calls": [call]}]

    def rendered() -> str:
        formatter = chat_format.Jinja2ChatFormatter(template=template, eos_token="", bos_token="")
        return formatter(messages=messages, tools=[tool]).prompt

    spaced = rendered()
    assert '{"type": "function"' in spaced
    monkeypatch.setattr(chat_format.Jinja2ChatFormatter, "tojson", chat_format.Jinja2ChatFormatter.tojson)
    patch_compact_listing(chat_format.Jinja2ChatFormatter)
    compact = rendered()
    assert '{"type":"function","function":{"name":"q","parameters":{"type":"object","properties":{}}}}' in compact
    assert '{"collection_name":"Cars","limit":3}' in compact
    assert '{\n "collection_name": "Cars",' in compact  # an indent asked for is upstream's
    assert len(compact) < len(spaced)
