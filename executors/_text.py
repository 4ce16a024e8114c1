"""Weaviate's text-filter semantics in Python (entities/tokenizer, adapters/repos/db/inverted, v1.39).

A text filter is evaluated on the property's *tokens*, not on the raw string:

- `field`: one token, the value trimmed of Unicode white space; `=` is exact, case-sensitive
  equality and `LIKE` matches the whole trimmed value.
- `word` (Weaviate's default): tokens are the runs of letters and digits, lower-cased. `=` keeps
  the query's tokens that are not stopwords and matches objects that contain *all* of them, in
  any order. `LIKE` splits the pattern the same way (keeping `*` and `?`) and every pattern token
  must match at least one token of the object. Both are therefore case-insensitive.
- `whitespace` / `lowercase`: tokens split on white space (lower-cased for `lowercase`).

`LIKE` patterns become `^...$` regular expressions: `*` is any run of characters, `?` exactly one
character, and neither crosses a newline (Go's `.`). Weaviate rejects a filter whose query
tokens are all stopwords (or empty); validation turns that into an `invalid_value` error first.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache

from executors.vocabulary import Tokenization

#: Tokenizations whose filter semantics this module reproduces exactly: every one we create.
SUPPORTED_TOKENIZATIONS = tuple(t.value for t in Tokenization)

_GO_LATIN1_SPACES = frozenset("\t\n\v\f\r \x85\xa0")


def _go_is_space(char: str) -> bool:
    """Go's unicode.IsSpace: Latin-1 spaces plus the Unicode White_Space property."""
    if char in _GO_LATIN1_SPACES:
        return True
    return ord(char) > 0xFF and (unicodedata.category(char) == "Zs" or char in "\u2028\u2029")


def _is_alphanumeric(char: str) -> bool:
    """Go's unicode.IsLetter || unicode.IsNumber."""
    return unicodedata.category(char)[0] in ("L", "N")


def _split(value: str, is_separator: Callable[[str], bool]) -> list[str]:
    tokens: list[str] = []
    current: list[str] = []
    for char in value:
        if is_separator(char):
            if current:
                tokens.append("".join(current))
                current = []
        else:
            current.append(char)
    if current:
        tokens.append("".join(current))
    return tokens


def go_trim_space(value: str) -> str:
    start, end = 0, len(value)
    while start < end and _go_is_space(value[start]):
        start += 1
    while end > start and _go_is_space(value[end - 1]):
        end -= 1
    return value[start:end]


def tokenize(value: str, tokenization: str) -> list[str]:
    """The tokens Weaviate indexes for `value` (and derives from a filter value before stopwords)."""
    return list(_tokens(value, tokenization))


@lru_cache(maxsize=65_536)
def _tokens(value: str, tokenization: str) -> tuple[str, ...]:
    """Cached: the reference executor and benchmark authoring tokenize the same texts many times."""
    return tuple(_tokenize(value, tokenization))


def _tokenize(value: str, tokenization: str) -> list[str]:
    if tokenization == "field":
        return [go_trim_space(value)]
    if tokenization == "word":
        return [token.lower() for token in _split(value, lambda c: not _is_alphanumeric(c))]
    if tokenization == "whitespace":
        return _split(value, _go_is_space)
    if tokenization == "lowercase":
        return [token.lower() for token in _split(value, _go_is_space)]
    raise ValueError(f"tokenization {tokenization!r} is not supported")


def like_tokens(pattern: str, tokenization: str) -> list[str]:
    """The pattern tokens of a LIKE filter (wildcards survive the word splitter)."""
    if tokenization == "word":
        keep = ("*", "?")
        return [token.lower() for token in _split(pattern, lambda c: not _is_alphanumeric(c) and c not in keep)]
    return tokenize(pattern, tokenization)


def equal_query_tokens(value: str, tokenization: str, stopwords: frozenset[str]) -> list[str]:
    """The tokens an `=` filter requires; stopwords are dropped for word tokenization only."""
    tokens = tokenize(value, tokenization)
    if tokenization == "word":
        tokens = [token for token in tokens if token not in stopwords]
    return tokens


@lru_cache(maxsize=1024)
def like_regex(pattern: str) -> re.Pattern[str]:
    """`*` -> `.*`, `?` -> `.`, everything else literal, anchored (Weaviate's like_regexp.go)."""
    parts = ("." if char == "?" else ".*" if char == "*" else re.escape(char) for char in pattern)
    return re.compile("".join(parts))


def text_equal(value: str | None, query: str, tokenization: str, stopwords: frozenset[str]) -> bool:
    if value is None:
        return False
    required = equal_query_tokens(query, tokenization, stopwords)
    present = set(tokenize(value, tokenization))
    return bool(required) and all(token in present for token in required)


def text_like(value: str | None, pattern: str, tokenization: str) -> bool:
    if value is None:
        return False
    patterns = like_tokens(pattern, tokenization)
    present = tokenize(value, tokenization)
    return bool(patterns) and all(
        any(like_regex(token).fullmatch(candidate) for candidate in present) for token in patterns
    )
