"""Raw tool arguments -> `QueryDatabaseArguments` -> `QuerySpec`, or a typed, fix-it error.

Parsing accepts what models actually send: a JSON string (even double-encoded), a dict with an
extra `rationale`, slots sent as JSON strings, `null` or `""` for unused slots. Everything else
that is wrong becomes an `ExecutorError` whose message names the slot, the valid choices and,
for unknown names, the closest valid one.
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from executors import _text
from executors.arguments import QueryDatabaseArguments, TextAggregation
from executors.errors import (
    ExecutorError,
    InvalidArgumentsError,
    InvalidMetricError,
    InvalidOperatorError,
    InvalidValueError,
    TypeMismatchError,
    UnknownCollectionError,
    UnknownPropertyError,
)
from executors.options import MAX_INT_FILTER_MAGNITUDE, MAX_SEARCH_QUERY_CHARS, MAX_TEXT_VALUE_CHARS
from executors.schema import CollectionSchema, DatabaseSchema, PropertySchema
from executors.spec import AggregationSpec, FilterSpec, QuerySpec
from executors.vocabulary import (
    AGGREGATION_FIELDS,
    AGGREGATION_SLOT,
    FIELD_KIND,
    FILTER_FIELDS,
    FILTER_SLOT,
    METRICS,
    OPERATORS,
    SLOT_KEYS,
    VALUE_TYPES,
    PropertyKind,
)

ARGUMENT_NAMES = tuple(QueryDatabaseArguments.model_fields)
#: Keys some agents add to the call (the schema's optional `rationale`); accepted and ignored.
IGNORED_KEYS = ("rationale",)


# ----------------------------------------------------------------------------------------------
# Parsing


def parse_arguments(raw: object) -> QueryDatabaseArguments:
    """Accept a `QueryDatabaseArguments`, a dict or a JSON string; raise `ExecutorError` otherwise."""
    if isinstance(raw, QueryDatabaseArguments):
        return raw
    if isinstance(raw, bytes | bytearray):
        raw = bytes(raw).decode("utf-8", errors="replace")
    if isinstance(raw, str):
        raw = _loads(raw)
    if not isinstance(raw, Mapping):
        raise InvalidArgumentsError(
            f"query_database arguments must be a JSON object such as "
            f'{{"collection_name": "...", "search_query": "..."}}; got {_type_name(raw)}.'
        )
    data = _prepare(raw)
    try:
        return QueryDatabaseArguments.model_validate(data)
    except ValidationError as exc:
        raise _from_validation_error(exc) from None


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    return {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}.get(
        type(value), type(value).__name__
    )


def _loads(text: str) -> Any:
    try:
        value = json.loads(text)
        if isinstance(value, str) and value.strip().startswith("{"):
            value = json.loads(value)  # double-encoded JSON, a common model mistake
    except (json.JSONDecodeError, RecursionError) as exc:
        where = f" ({exc.msg} at line {exc.lineno} column {exc.colno})" if isinstance(exc, json.JSONDecodeError) else ""
        raise InvalidArgumentsError(
            f"The arguments are not valid JSON{where}. Send one JSON object such as "
            '{"collection_name": "...", "search_query": "..."}.'
        ) from None
    return value


def _prepare(raw: Mapping[Any, Any]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for key, value in raw.items():
        if not isinstance(key, str):
            raise InvalidArgumentsError(f"Argument names must be strings; got {key!r}.")
        if key in IGNORED_KEYS:
            continue
        if key in SLOT_KEYS and isinstance(value, str):
            value = _slot_from_string(key, value)
        data[key] = value
    for slot in FILTER_FIELDS:
        value = data.get(slot)
        if isinstance(value, Mapping) and FIELD_KIND[slot] != PropertyKind.BOOLEAN:
            _reject_boolean_value(slot, value.get("value"))
    return data


def _slot_from_string(slot: str, value: str) -> Any:
    """Models sometimes send a slot object as a JSON string; decode it, or leave it blank."""
    if not value.strip():
        return None
    try:
        return json.loads(value)
    except (json.JSONDecodeError, RecursionError):
        return value  # reported below as "must be an object"


def _reject_boolean_value(slot: str, value: object) -> None:
    if isinstance(value, bool):
        kind = FIELD_KIND[slot]
        raise InvalidValueError(
            f"{slot}.value must be {VALUE_TYPES[kind]}, got {json.dumps(value)}. "
            f"To filter a boolean property use boolean_property_filter.",
            field=f"{slot}.value",
        )


def _from_validation_error(exc: ValidationError) -> ExecutorError:
    described = [_describe(error) for error in exc.errors()]
    error_class, _, field = described[0]
    messages = list(dict.fromkeys(message for _, message, _ in described))
    message = " ".join(messages[:5])
    if len(messages) > 5:
        message += f" ({len(messages) - 5} more problems.)"
    return error_class(message, field=field)


def _describe(error: Mapping[str, Any]) -> tuple[type[ExecutorError], str, str | None]:
    loc = tuple(str(part) for part in error.get("loc", ()))
    kind = error.get("type", "")
    path = ".".join(loc) or "arguments"
    given = error.get("input")
    slot = loc[0] if loc else ""
    leaf = loc[-1] if loc else ""
    if kind == "extra_forbidden":
        if len(loc) == 1:
            return (
                InvalidArgumentsError,
                f"'{leaf}' is not an argument of query_database. Valid arguments: {', '.join(ARGUMENT_NAMES)}.",
                path,
            )
        return (
            InvalidArgumentsError,
            f"'{leaf}' is not a key of {slot}. Valid keys: {', '.join(SLOT_KEYS.get(slot, ()))}.",
            path,
        )
    if kind == "missing":
        if len(loc) == 1:
            return InvalidArgumentsError, f"{path} is required: name the collection to query.", path
        return InvalidArgumentsError, f"{path} is required ({slot} needs {', '.join(SLOT_KEYS[slot][:3])}).", path
    if slot in SLOT_KEYS and len(loc) == 1:
        return (
            InvalidArgumentsError,
            f"{slot} must be an object with keys {', '.join(SLOT_KEYS[slot])}; got {_type_name(given)}.",
            path,
        )
    if slot in FIELD_KIND and leaf == "operator":
        prop_kind = FIELD_KIND[slot]
        return InvalidOperatorError, _operator_message(slot, prop_kind, given), path
    if slot in FIELD_KIND and leaf == "metrics":
        prop_kind = FIELD_KIND[slot]
        return InvalidMetricError, _metric_message(slot, prop_kind, given), path
    if slot in FIELD_KIND and leaf == "value":
        prop_kind = FIELD_KIND[slot]
        return InvalidValueError, f"{path} must be {VALUE_TYPES[prop_kind]}; got {_show(given)}.", path
    if leaf == "top_occurrences_limit":
        return (
            InvalidValueError,
            f"{path} must be a whole number from 1 to 100 (or left out for the top 5); got {_show(given)}.",
            path,
        )
    if leaf == "property_name":
        return InvalidArgumentsError, f"{path} must be a string naming a property; got {_show(given)}.", path
    if loc == ("collection_name",):
        return InvalidArgumentsError, f"collection_name must be a string; got {_show(given)}.", path
    if loc in (("search_query",), ("groupby_property",)):
        return InvalidArgumentsError, f"{path} must be a string; got {_show(given)}.", path
    return InvalidArgumentsError, f"{path}: {error.get('msg', 'invalid')}.", path


def _show(value: object) -> str:
    try:
        text = json.dumps(value, allow_nan=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _operator_message(slot: str, kind: PropertyKind, given: object) -> str:
    message = f"{slot}.operator {_show(given)} is not valid for {kind.value} properties; use one of: " + ", ".join(
        OPERATORS[kind]
    )
    others = [FILTER_SLOT[other] for other in PropertyKind if other != kind and given in OPERATORS[other]]
    if others:
        message += f". {_show(given)} is accepted by {' and '.join(others)}"
    return message + "."


def _metric_message(slot: str, kind: PropertyKind, given: object) -> str:
    message = f"{slot}.metrics {_show(given)} is not valid for {kind.value} properties; use one of: " + ", ".join(
        METRICS[kind]
    )
    others = [AGGREGATION_SLOT[other] for other in PropertyKind if other != kind and given in METRICS[other]]
    if others:
        message += f". {_show(given)} is a metric of {' and '.join(others)}"
    return message + "."


# ----------------------------------------------------------------------------------------------
# Validation against the live schema


def suggest(name: str, candidates: list[str]) -> str:
    """` Did you mean 'x'?` for a near miss (case-insensitive first), else an empty string."""
    folded = [c for c in candidates if c.lower() == name.lower()]
    close = folded or difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    return f" Did you mean '{close[0]}'?" if close else ""


def validate_arguments(args: QueryDatabaseArguments, schema: DatabaseSchema) -> QuerySpec:
    """Check `args` against the schema and resolve it into a `QuerySpec`."""
    collection = schema.get(args.collection_name)
    if collection is None:
        names = sorted(schema.names())
        available = ", ".join(names) if names else "(none: the database is empty)"
        raise UnknownCollectionError(
            f"Unknown collection '{args.collection_name}'. Available collections: {available}."
            + suggest(args.collection_name, names),
            field="collection_name",
        )

    search = args.search_query
    if search is not None and len(search) > MAX_SEARCH_QUERY_CHARS:
        raise InvalidValueError(
            f"search_query is {len(search)} characters long; keep it under {MAX_SEARCH_QUERY_CHARS}.",
            field="search_query",
        )

    filters: list[FilterSpec] = []
    for slot in FILTER_FIELDS:
        argument = getattr(args, slot)
        if argument is None:
            continue
        prop = _resolve(collection, argument.property_name, slot, f"{slot}.property_name")
        _check_kind(collection, prop, slot, FILTER_SLOT)
        value = check_filter_value(collection, prop, slot, argument.operator.value, argument.value)
        filters.append(FilterSpec(prop=prop, operator=argument.operator.value, value=value, slot=slot))

    aggregations: list[AggregationSpec] = []
    for slot in AGGREGATION_FIELDS:
        argument = getattr(args, slot)
        if argument is None:
            continue
        prop = _resolve(collection, argument.property_name, slot, f"{slot}.property_name")
        _check_kind(collection, prop, slot, AGGREGATION_SLOT)
        limit = argument.top_occurrences_limit if isinstance(argument, TextAggregation) else None
        aggregations.append(
            AggregationSpec(prop=prop, metrics=(argument.metrics.value,), slot=slot, top_occurrences_limit=limit)
        )

    group_by = None
    if args.groupby_property is not None:
        group_by = _resolve(collection, args.groupby_property, "groupby_property", "groupby_property")
        if group_by.kind is None:
            raise TypeMismatchError(
                f"Cannot group by '{group_by.name}': its type {group_by.data_type} is not supported. "
                f"Group by one of: {_labels(collection, None)}.",
                field="groupby_property",
            )

    return QuerySpec(
        collection=collection,
        arguments=args,
        search_query=search,
        filters=tuple(filters),
        aggregations=tuple(aggregations),
        group_by=group_by,
    )


def _labels(collection: CollectionSchema, kind: PropertyKind | None) -> str:
    props = [p for p in collection.properties if (p.kind == kind if kind else p.kind is not None)]
    return ", ".join(p.label() for p in props) or "(none)"


def _resolve(collection: CollectionSchema, name: str, slot: str, field: str) -> PropertySchema:
    prop = collection.get_property(name)
    if prop is None:
        shown = f"'{name}'" if name.strip() else "an empty property name"
        raise UnknownPropertyError(
            f"Collection '{collection.name}' has no property {shown} (in {slot}). "
            f"Its properties: {collection.describe_properties()}." + suggest(name, collection.property_names()),
            field=field,
        )
    return prop


def _check_kind(collection: CollectionSchema, prop: PropertySchema, slot: str, slots: dict[PropertyKind, str]) -> None:
    expected = FIELD_KIND[slot]
    if prop.kind == expected:
        return
    verb = "filter" if slot in FILTER_FIELDS else "aggregate"
    if prop.kind is None:
        message = f"'{prop.name}' has type {prop.data_type}, which query_database cannot {verb}."
    else:
        message = (
            f"'{prop.name}' is a {prop.kind.value} property but {slot} is for {expected.value} properties. "
            f"Use {slots[prop.kind]} for '{prop.name}'"
        )
        options = OPERATORS if slot in FILTER_FIELDS else METRICS
        message += f" ({'operators' if slot in FILTER_FIELDS else 'metrics'} {', '.join(options[prop.kind])})."
    message += f" {expected.value.capitalize()} properties of '{collection.name}': {_labels(collection, expected)}."
    raise TypeMismatchError(message, field=f"{slot}.property_name")


def check_filter_value(collection: CollectionSchema, prop: PropertySchema, slot: str, operator: str, value: Any) -> Any:
    field = f"{slot}.value"
    if prop.kind == PropertyKind.NUMBER:
        number = float(value)
        if not math.isfinite(number):
            raise InvalidValueError(f"{field} must be a finite number; got {_show(value)}.", field=field)
        if prop.is_int:
            if abs(number) > MAX_INT_FILTER_MAGNITUDE:
                raise InvalidValueError(
                    f"{field} {_show(value)} is out of range for the integer property '{prop.name}' "
                    f"(at most {MAX_INT_FILTER_MAGNITUDE} in magnitude).",
                    field=field,
                )
            if operator == "=" and not number.is_integer():
                raise InvalidValueError(
                    f"'{prop.name}' holds whole numbers, so '= {_show(value)}' can never match; compare with a "
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
                    f"{field} {_show(value)} has no searchable words: '{prop.name}' is matched word by word and "
                    "stopwords and punctuation are ignored. Use a more specific value.",
                    field=field,
                )
        return text
    return bool(value)
