"""Whole values for text `=` filters: `round = "Jeopardy!"` means the stored value "Jeopardy!".

Weaviate's `=` on a text property whose tokenization is not `field` matches every object whose value
holds all the filter's tokens (`_text`), so "Jeopardy!" also matches "Double Jeopardy!" and "Final
Jeopardy!". When the filter's value is itself one of the property's stored values (the same token
list) and other stored values hold all its tokens, the filter is taken to mean the whole value and
those other values are excluded. Nothing changes otherwise: a value not stored whole, no such other
values, `field` tokenization, LIKE, numbers, booleans, dates, a property read through a reference,
the caller's scope (its filters keep their token meaning).

The exclusion is `not_equal` on the words that tell each other value apart, not on the other value
itself: Weaviate (1.24 and later) runs `not_equal("Double Jeopardy!")` on a word-tokenized property
as "holds neither `double` nor `jeopardy`", which would drop "Jeopardy!" too. An object is kept when
it lacks one such word of every other value (`not_equal(word)`, `any_of` them when a value has
several). Another value with no such word (the same words in another order, or only stopwords more)
cannot be told apart by a filter and stays matched.

The stored values are read once per (collection, property, scope) and cached (`StoredValues`): the
live executor reads them with a TOP_OCCURRENCES of `STORED_VALUES_LIMIT` + 1 values (more distinct
values than the limit: unknown, nothing changes), the reference from its objects. Under a scope only
the objects in it count, so no value outside the scope shapes a call or shows in its program. This
module owns the rule; `_plan` sends it, the reference evaluates it (`WholeValue.keeps`), `snippet`
comments on it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from weaviate.classes.query import Filter

from executors._render import Expr, attribute_call, list_expr, render_literal
from executors._text import SUPPORTED_TOKENIZATIONS, equal_query_tokens, tokenize
from executors.spec import FilterSpec, QuerySpec
from executors.vocabulary import PropertyKind, TextOperator, Tokenization

#: The most distinct values a property may have for the rule to apply (it needs all of them).
STORED_VALUES_LIMIT = 500
#: How many of the other values a comment names.
SHOWN_OTHERS = 5
#: (collection, property, the scope's filters) -> the property's distinct stored values in the scope;
#: None when they are not all known.
StoredValuesOf = Callable[[str, str, tuple[FilterSpec, ...]], Sequence[str] | None]
_FILTER = Expr(Filter, "Filter")


@dataclass(frozen=True)
class WholeValue:
    """A text `=` filter taken as its whole value: the other stored values it would also match
    (`others`), and the sets of words that exclude them (an object is kept when it lacks one word
    of each set)."""

    filter: FilterSpec
    others: tuple[str, ...]
    words: tuple[tuple[str, ...], ...]

    @property
    def tokenization(self) -> str:
        return self.filter.prop.tokenization or Tokenization.WORD.value

    def exprs(self) -> list[Expr]:
        """What is ANDed with the `=`: `not_equal(word)` for a set of one word, `any_of` them for more."""
        name = self.filter.prop.name

        def not_equal(word: str) -> Expr:
            source = f"Filter.by_property({render_literal(name)}).not_equal({render_literal(word)})"
            return Expr(Filter.by_property(name).not_equal(word), source)

        exprs = []
        for words in self.words:
            each = [not_equal(word) for word in words]
            exprs.append(each[0] if len(each) == 1 else attribute_call(_FILTER, "any_of", list_expr(each)))
        return exprs

    def keeps(self, value: object) -> bool:
        """Whether a stored value passes those `not_equal` filters (a missing one does: Weaviate's deny list)."""
        if value is None:
            return True
        present = set(tokenize(str(value), self.tokenization))
        return all(any(word not in present for word in words) for words in self.words)

    def comment(self) -> str:
        """Why the program has `not_equal` filters the model did not ask for."""
        shown = ", ".join(repr(value) for value in self.others[:SHOWN_OTHERS])
        if len(self.others) > SHOWN_OTHERS:
            shown += f" and {len(self.others) - SHOWN_OTHERS} more"
        return (
            f"Whole value: {self.tokenization} tokenization would also match {shown} for "
            f"{self.filter.prop.name} = {render_literal(self.filter.value)}; "
            "not_equal on the words only they hold excludes them."
        )


def applies_to(flt: FilterSpec) -> bool:
    """Text `=` on a property of the collection itself that Weaviate filters by tokens (not `field`),
    with a tokenization `_text` models (no ASCII folding) and an index to filter with."""
    prop = flt.prop
    tokenization = prop.tokenization or Tokenization.WORD.value
    return (
        flt.via is None
        and prop.kind is PropertyKind.TEXT
        and flt.operator == TextOperator.EQUAL.value
        and tokenization != Tokenization.FIELD.value
        and tokenization in SUPPORTED_TOKENIZATIONS
        and not prop.ascii_fold
        and (prop.index_filterable or prop.index_searchable)
    )


def whole_value(flt: FilterSpec, stored: Sequence[str] | None, stopwords: frozenset[str]) -> WholeValue | None:
    """The rule: `flt` taken as its whole value among the `stored` values, or None when nothing changes."""
    if stored is None or not applies_to(flt):
        return None
    tokenization = flt.prop.tokenization or Tokenization.WORD.value
    text = str(flt.value)
    own = tokenize(text, tokenization)
    required = set(equal_query_tokens(text, tokenization, stopwords))
    if not required or not any(tokenize(value, tokenization) == own for value in stored):
        return None
    # A stopword cannot be filtered on: Weaviate rejects a `not_equal` of stopwords only.
    unfilterable = set(own) | (stopwords if tokenization == Tokenization.WORD.value else frozenset())
    extras: dict[str, frozenset[str]] = {}
    for value in stored:
        tokens = tokenize(value, tokenization)
        if tokens != own and required <= set(tokens) and (extra := frozenset(tokens) - unfilterable):
            extras[value] = extra
    if not extras:
        return None
    sets = set(extras.values())
    # Excluding by a set of words also excludes every value holding a larger set: keep the smallest.
    minimal = sorted((s for s in sets if not any(other < s for other in sets)), key=lambda s: (len(s), sorted(s)))
    return WholeValue(flt, tuple(sorted(extras)), tuple(tuple(sorted(s)) for s in minimal))


def whole_values(spec: QuerySpec, stored_values: StoredValuesOf) -> tuple[WholeValue, ...]:
    """The model's filters of `spec` taken as whole values (the scope's are the caller's and keep their
    meaning); stored values are read, within the scope, only for the filters the rule applies to."""
    found = []
    for flt in spec.all_filters:
        if applies_to(flt):
            stored = stored_values(spec.collection.name, flt.prop.name, spec.scope)
            if (whole := whole_value(flt, stored, spec.collection.stopwords)) is not None:
                found.append(whole)
    return tuple(found)


def distinct_values(values: Iterable[object], limit: int = STORED_VALUES_LIMIT) -> tuple[str, ...] | None:
    """The distinct non-null values, sorted; None when there are more than `limit` (not all known)."""
    found = sorted({str(value) for value in values if value is not None})
    return None if len(found) > limit else tuple(found)


class StoredValues:
    """`StoredValuesOf`, read once per (collection, property, scope): an executor's data does not
    change under it (a session or an eval run)."""

    def __init__(self, read: StoredValuesOf) -> None:
        self._read = read
        self._values: dict[tuple[str, str, tuple[FilterSpec, ...]], Sequence[str] | None] = {}
        self._lock = threading.Lock()

    def __call__(self, collection: str, prop: str, scope: tuple[FilterSpec, ...] = ()) -> Sequence[str] | None:
        key = (collection, prop, scope)
        with self._lock:
            if key in self._values:
                return self._values[key]
        values = self._read(collection, prop, scope)  # not under the lock: a slow read must not hold up others
        with self._lock:
            return self._values.setdefault(key, values)


__all__ = [
    "STORED_VALUES_LIMIT",
    "StoredValues",
    "StoredValuesOf",
    "WholeValue",
    "applies_to",
    "distinct_values",
    "whole_value",
    "whole_values",
]
