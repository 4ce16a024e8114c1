"""When two calls mean the same thing: the canonical form of a validated call.

Two calls with the same canonical form give the same result on any data this project creates
(properties are never missing), because the executor runs them the same way: numbers as numbers,
boolean `!= v` as `= not v`, text `=` as LIKE without wildcards, a text value by the tokens its
property's tokenization compares (`Italian` == `italian` under `word`), a bound on an `int`
property by the integer bound it is sent as (`< 3.5` == `< 4`), TOP_OCCURRENCES without a limit as
the default limit, and search by its presence (what the text finds is compared by executing it).
The scorer's argument match compares these forms, so only the executor decides what is equal.
One exception depends on the data, not the call: a text `=` whose value is stored whole excludes the
longer stored values holding its words (`whole_value`) and LIKE does not, so on such data `=` and a
LIKE without wildcards can differ.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from executors._plan import int_filter_bound
from executors._text import SUPPORTED_TOKENIZATIONS, equal_query_tokens, like_tokens
from executors.options import DEFAULT_TOP_OCCURRENCES_LIMIT
from executors.schema import PropertySchema
from executors.spec import FilterSpec, QuerySpec
from executors.vocabulary import (
    CONDITIONS_FIELD,
    DATE_FILTER_FIELD,
    GROUPBY_FIELD,
    SEARCH_FIELD,
    SORT_FIELD,
    PropertyKind,
)

#: The canonical form's key of a compound call's filters, and of its alternatives (`match: any`).
FILTERS_KEY = "filters"
ANY_OF_KEY = "any_of"


def canonical_form(spec: QuerySpec) -> dict[str, Any]:
    """Slot name -> what that slot means (absent slots left out); the collection under `collection_name`.

    A call with `conditions` has no slots for its filters: every filter it ANDs, from a slot or a
    condition, is one set under `filters` (so order never matters, one condition is its slot and a
    between is its two bounds), and its alternatives a set of sets under `any_of`."""
    form: dict[str, Any] = {"collection_name": spec.collection.name}
    if spec.search_query is not None:
        form[SEARCH_FIELD] = True
    if is_compound(spec):
        form[FILTERS_KEY] = filter_set(spec.filters, spec.collection.stopwords)
        if spec.any_of:
            form[ANY_OF_KEY] = frozenset(filter_set(a, spec.collection.stopwords) for a in spec.any_of)
    for flt in () if is_compound(spec) else spec.filters:
        meaning = _meaning(flt, spec.collection.stopwords)
        if flt.slot == DATE_FILTER_FIELD:  # before/after is one bound, between two: all of them, in order
            form[flt.slot] = (*form.get(flt.slot, ()), meaning)
        else:
            form[flt.slot] = meaning
    if spec.sort is not None:
        form[SORT_FIELD] = (spec.sort.prop.name, spec.sort.descending, spec.sort.limit)
    for aggregation in spec.aggregations:
        limit = None
        if "TOP_OCCURRENCES" in aggregation.metrics:
            limit = aggregation.top_occurrences_limit or DEFAULT_TOP_OCCURRENCES_LIMIT
        form[aggregation.slot] = (aggregation.prop.name, tuple(sorted(aggregation.metrics)), limit)
    if spec.group_by is not None:
        form[GROUPBY_FIELD] = spec.group_by.name
    return form


def is_compound(spec: QuerySpec) -> bool:
    """The call holds `conditions` (the `compound` operations): its filters are compared as one set."""
    return bool(getattr(spec.arguments, CONDITIONS_FIELD, None))


def filter_set(filters: tuple[FilterSpec, ...], stopwords: frozenset[str] = frozenset()) -> frozenset[tuple[Any, ...]]:
    """What a conjunction of filters means, order aside."""
    return frozenset(_meaning(flt, stopwords) for flt in filters)


def _meaning(flt: FilterSpec, stopwords: frozenset[str]) -> tuple[Any, ...]:
    meaning = (flt.prop.name, *filter_meaning(flt, stopwords))
    if flt.via is not None:  # a property of the referenced object: the link is part of the meaning
        meaning = (flt.via, *meaning)
    return meaning


def filter_meaning(flt: FilterSpec, stopwords: frozenset[str] = frozenset()) -> tuple[str, Any]:
    """(operator, value) in the form the executor runs the filter."""
    if flt.is_date:
        assert isinstance(flt.value, datetime)
        return flt.operator, flt.value.astimezone(timezone.utc).isoformat()
    if flt.kind is PropertyKind.BOOLEAN:
        return "=", bool(flt.value) if flt.operator == "=" else not bool(flt.value)
    if flt.kind is PropertyKind.NUMBER:
        if flt.prop.is_int:
            return flt.operator, float(int_filter_bound(flt.operator, float(flt.value)))
        return flt.operator, float(flt.value)
    return _text_meaning(flt.operator, str(flt.value), flt.prop, stopwords)


def _text_meaning(operator: str, text: str, prop: PropertySchema, stopwords: frozenset[str]) -> tuple[str, Any]:
    if operator == "LIKE" and "*" not in text and "?" not in text:
        operator = "="
    tokenization = prop.tokenization or "word"
    if tokenization not in SUPPORTED_TOKENIZATIONS:
        return operator, text
    if operator == "LIKE":
        return operator, tuple(like_tokens(text, tokenization))
    return operator, tuple(equal_query_tokens(text, tokenization, stopwords))
