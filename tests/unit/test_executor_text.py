"""Weaviate's tokenization and LIKE semantics as reproduced by `executors._text`.

The LIKE cases are Weaviate's own (adapters/repos/db/inverted/like_regexp_test.go, v1.39).
"""

from __future__ import annotations

import pytest

from executors import _text
from executors.schema import EN_STOPWORDS


@pytest.mark.parametrize(
    ("pattern", "subject", "expected"),
    [
        ("car", "car", True),
        ("car", "care", False),
        ("car", "supercar", False),
        ("car?", "car", False),
        ("car?", "cap", False),
        ("car?", "care", True),
        ("car?", "carer", False),
        ("car*", "car", True),
        ("car*", "cap", False),
        ("car*", "carer", True),
        ("car*", "supercar", False),
        ("*c?r*", "car", True),
        ("*c?r*", "cap", False),
        ("*c?r*", "supercar", True),
        ("car)", "car)", True),
        ("car)", "car))", False),
        ("car)", "/s/up{e)rca\\r", False),
        ("this-/is(my complex).text!", "this-/is(my complex).text!", True),
        ("this-/is(my complex).text!", "///this-/is(my complex).text!}}", False),
        ("*car)*", "I love this fast car) that is yellow", True),
        ("*car))*", "I love this fast car) that is yellow", False),
        ("*", "anything\nmultiline", False),
        ("?", "é", True),
    ],
)
def test_like_regex_matches_weaviate(pattern: str, subject: str, expected: bool) -> None:
    assert bool(_text.like_regex(pattern).fullmatch(subject)) is expected


@pytest.mark.parametrize(
    ("tokenization", "value", "tokens"),
    [
        ("word", "Hello, World! It's 2024", ["hello", "world", "it", "s", "2024"]),
        ("word", "  ", []),
        ("word", "Crème brûlée", ["crème", "brûlée"]),
        ("field", "  Italian \t", ["Italian"]),
        ("field", "New York", ["New York"]),
        ("whitespace", "Hello, World", ["Hello,", "World"]),
        ("lowercase", "Hello, World", ["hello,", "world"]),
    ],
)
def test_tokenize(tokenization: str, value: str, tokens: list[str]) -> None:
    assert _text.tokenize(value, tokenization) == tokens


def test_unknown_tokenization_is_refused() -> None:
    with pytest.raises(ValueError, match="trigram"):
        _text.tokenize("abc", "trigram")


def test_word_equal_needs_every_non_stopword_token_in_any_order() -> None:
    assert _text.text_equal("The cozy pizza kitchen", "pizza cozy", "word", EN_STOPWORDS)
    assert _text.text_equal("The cozy pizza kitchen", "PIZZA", "word", EN_STOPWORDS)
    assert _text.text_equal("The cozy pizza kitchen", "the pizza", "word", EN_STOPWORDS)  # "the" dropped
    assert not _text.text_equal("The cozy pizza kitchen", "pizza bar", "word", EN_STOPWORDS)
    assert not _text.text_equal("The cozy pizza kitchen", "the", "word", EN_STOPWORDS)  # only stopwords
    assert not _text.text_equal(None, "pizza", "word", EN_STOPWORDS)


def test_field_equal_is_exact_after_trimming() -> None:
    assert _text.text_equal(" Italian ", "Italian", "field", EN_STOPWORDS)
    assert not _text.text_equal("Italian", "italian", "field", EN_STOPWORDS)
    assert not _text.text_equal("South Italian", "Italian", "field", EN_STOPWORDS)


def test_like_per_tokenization() -> None:
    assert _text.text_like("The cozy pizza kitchen", "piz*", "word")
    assert _text.text_like("The cozy pizza kitchen", "PIZ* kit?hen", "word")
    assert not _text.text_like("The cozy pizza kitchen", "piz* bar", "word")
    assert _text.text_like("Italian", "It*", "field")
    assert not _text.text_like("Italian", "it*", "field")
    assert not _text.text_like("South Italian", "It*", "field")
    assert _text.text_like("South Italian", "* It*", "field")


def test_word_like_keeps_wildcards_but_splits_punctuation() -> None:
    assert _text.like_tokens("pi*a, ki?chen!", "word") == ["pi*a", "ki?chen"]
    assert _text.like_tokens("--", "word") == []
