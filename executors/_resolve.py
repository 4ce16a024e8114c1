"""Names and values resolved against a collection's schema, with fix-it errors: shared by the paper's
slots (`_validate`) and the `related` ones (`_related`)."""

from __future__ import annotations

import difflib
import json
import math
from typing import Any

from executors import _text
from executors.errors import InvalidValueError, UnknownPropertyError
from executors.options import MAX_INT_FILTER_MAGNITUDE, MAX_TEXT_VALUE_CHARS
from executors.schema import CollectionSchema, PropertySchema
from executors.vocabulary import PropertyKind


def shown(value: object) -> str:
    try:
        text = json.dumps(value, allow_nan=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def suggest(name: str, candidates: list[str]) -> str:
    """` Did you mean 'x'?` for a near miss (case-insensitive first), else an empty string."""
    folded = [c for c in candidates if c.lower() == name.lower()]
    close = folded or difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    return f" Did you mean '{close[0]}'?" if close else ""


def labels(collection: CollectionSchema, kind: PropertyKind | None) -> str:
    props = [p for p in collection.properties if (p.kind == kind if kind else p.kind is not None)]
    return ", ".join(p.label() for p in props) or "(none)"


def resolve_property(collection: CollectionSchema, name: str, slot: str, field: str) -> PropertySchema:
    prop = collection.get_property(name)
    if prop is None:
        named = f"'{name}'" if name.strip() else "an empty property name"
        raise UnknownPropertyError(
            f"Collection '{collection.name}' has no property {named} (in {slot}). "
            f"Its properties: {collection.describe_properties()}." + suggest(name, collection.property_names()),
            field=field,
        )
    return prop


def check_filter_value(collection: CollectionSchema, prop: PropertySchema, slot: str, operator: str, value: Any) -> Any:
    field = f"{slot}.value"
    if prop.kind == PropertyKind.NUMBER:
        number = float(value)
        if not math.isfinite(number):
            raise InvalidValueError(f"{field} must be a finite number; got {shown(value)}.", field=field)
        if prop.is_int:
            if abs(number) > MAX_INT_FILTER_MAGNITUDE:
                raise InvalidValueError(
                    f"{field} {shown(value)} is out of range for the integer property '{prop.name}' "
                    f"(at most {MAX_INT_FILTER_MAGNITUDE} in magnitude).",
                    field=field,
                )
            if operator == "=" and not number.is_integer():
                raise InvalidValueError(
                    f"'{prop.name}' holds whole numbers, so '= {shown(value)}' can never match; compare with a "
                    "whole number or use <, <=, >, >=.",
                    field=field,
                )
        return number
    if prop.kind == PropertyKind.TEXT:
        text = str(value)
        if not _text.go_trim_space(text):
            raise InvalidValueError(
                f"{field} is empty; give the text to match (LIKE accepts * and ? wildcards).", field=field
            )
        if len(text) > MAX_TEXT_VALUE_CHARS:
            raise InvalidValueError(
                f"{field} is {len(text)} characters long; keep it under {MAX_TEXT_VALUE_CHARS}.", field=field
            )
        tokenization = prop.tokenization or "word"
        if tokenization in _text.SUPPORTED_TOKENIZATIONS:
            if operator == "LIKE":
                tokens = _text.like_tokens(text, tokenization)
            else:
                tokens = _text.equal_query_tokens(text, tokenization, collection.stopwords)
            if not tokens:
                raise InvalidValueError(
                    f"{field} {shown(value)} has no searchable words: '{prop.name}' is matched word by word and "
                    "stopwords and punctuation are ignored. Use a more specific value.",
                    field=field,
                )
        return text
    return bool(value)
