"""Raw tool arguments -> `QueryDatabaseArguments` -> `QuerySpec`, or a typed, fix-it error.

Parsing accepts what models actually send: a JSON string (even double-encoded), a dict with an
extra `rationale`, slots sent as JSON strings, `null` or `""` for unused slots. Everything else
that is wrong becomes an `ExecutorError` whose message names the slot, the valid choices and,
for unknown names, the closest valid one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from executors._conditions import condition_error, condition_filters
from executors._related import related_filters, sort_of
from executors._resolve import check_filter_value, labels, resolve_property, shown, suggest
from executors.arguments import (
    ARGUMENT_MODELS,
    CompoundQueryArguments,
    QueryDatabaseArguments,
    RelatedQueryArguments,
    TextAggregation,
)
from executors.errors import (
    ExecutorError,
    InvalidArgumentsError,
    InvalidMetricError,
    InvalidOperatorError,
    InvalidValueError,
    TypeMismatchError,
    UnknownCollectionError,
)
from executors.options import MAX_SEARCH_QUERY_CHARS
from executors.schema import CollectionSchema, DatabaseSchema, PropertySchema
from executors.spec import AggregationSpec, FilterSpec, QuerySpec
from executors.vocabulary import (
    AGGREGATION_FIELDS,
    AGGREGATION_SLOT,
    COMPOUND_FIELDS,
    CONDITIONS_FIELD,
    DATE_FILTER_FIELD,
    FIELD_KIND,
    FILTER_FIELDS,
    FILTER_SLOT,
    MAX_SORT_LIMIT,
    METRICS,
    OPERATORS,
    REFERENCE_FILTER_FIELD,
    RELATED_SLOT_KEYS,
    SLOT_KEYS,
    SORT_FIELD,
    VALUE_TYPES,
    DateOperator,
    PropertyKind,
    SortOrder,
    ToolOperations,
)

ARGUMENT_NAMES = tuple(QueryDatabaseArguments.model_fields)
#: Keys some agents add to the call (the schema's optional `rationale`); accepted and ignored.
IGNORED_KEYS = ("rationale",)


# ----------------------------------------------------------------------------------------------
# Parsing


def parse_arguments(raw: object, operations: ToolOperations = ToolOperations.PAPER) -> QueryDatabaseArguments:
    """Accept a `QueryDatabaseArguments`, a dict or a JSON string; raise `ExecutorError` otherwise.

    Under the `paper` operations only the paper's arguments exist; under `related` its three
    optional slots too (`RelatedQueryArguments`)."""
    model = ARGUMENT_MODELS[operations]
    if isinstance(raw, model):
        return raw
    if isinstance(raw, QueryDatabaseArguments):
        raw = raw.to_tool_arguments()
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
        return model.model_validate(data)
    except ValidationError as exc:
        raise _from_validation_error(exc, tuple(model.model_fields)) from None


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
        if (key in SLOT_KEYS or key in RELATED_SLOT_KEYS or key == CONDITIONS_FIELD) and isinstance(value, str):
            value = _slot_from_string(key, value)
        if key == CONDITIONS_FIELD and isinstance(value, Mapping):  # one condition sent bare
            value = [value]
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


def _from_validation_error(exc: ValidationError, names: tuple[str, ...] = ARGUMENT_NAMES) -> ExecutorError:
    described = [_describe(error, names) for error in exc.errors()]
    error_class, _, field = described[0]
    messages = list(dict.fromkeys(message for _, message, _ in described))
    message = " ".join(messages[:5])
    if len(messages) > 5:
        message += f" ({len(messages) - 5} more problems.)"
    return error_class(message, field=field)


def _describe(
    error: Mapping[str, Any], names: tuple[str, ...] = ARGUMENT_NAMES
) -> tuple[type[ExecutorError], str, str | None]:
    loc = tuple(str(part) for part in error.get("loc", ()))
    kind = error.get("type", "")
    path = ".".join(loc) or "arguments"
    given = error.get("input")
    slot = loc[0] if loc else ""
    leaf = loc[-1] if loc else ""
    if slot in COMPOUND_FIELDS:
        error_class, message = condition_error(loc, kind, given, path)
        return error_class, message, path
    if kind == "extra_forbidden":
        if len(loc) == 1:
            return (
                InvalidArgumentsError,
                f"'{leaf}' is not an argument of query_database. Valid arguments: {', '.join(names)}.",
                path,
            )
        return (
            InvalidArgumentsError,
            f"'{leaf}' is not a key of {slot}. Valid keys: "
            f"{', '.join(SLOT_KEYS.get(slot, RELATED_SLOT_KEYS.get(slot, ())))}.",
            path,
        )
    if kind == "missing":
        if len(loc) == 1:
            return InvalidArgumentsError, f"{path} is required: name the collection to query.", path
        needs = SLOT_KEYS[slot][:3] if slot in SLOT_KEYS else RELATED_SLOT_KEYS.get(slot, ())[:3]
        return InvalidArgumentsError, f"{path} is required ({slot} needs {', '.join(needs)}).", path
    if slot in RELATED_SLOT_KEYS and len(loc) == 1:
        return (
            InvalidArgumentsError,
            f"{slot} must be an object with keys {', '.join(RELATED_SLOT_KEYS[slot])}; got {_type_name(given)}.",
            path,
        )
    if slot == DATE_FILTER_FIELD and leaf == "operator":
        choices = ", ".join(o.value for o in DateOperator)
        return InvalidOperatorError, f"{path} {shown(given)} is not valid; use one of: {choices}.", path
    if slot == SORT_FIELD and leaf == "order":
        choices = ", ".join(o.value for o in SortOrder)
        return InvalidValueError, f"{path} {shown(given)} is not valid; use one of: {choices}.", path
    if slot == SORT_FIELD and leaf == "limit":
        return (
            InvalidValueError,
            f"{path} must be a whole number from 1 to {MAX_SORT_LIMIT}; got {shown(given)}.",
            path,
        )
    if slot == REFERENCE_FILTER_FIELD and leaf == "operator":
        return InvalidOperatorError, f"{path} {shown(given)} is not valid; use =, !=, <, <=, >, >= or LIKE.", path
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
        return InvalidValueError, f"{path} must be {VALUE_TYPES[prop_kind]}; got {shown(given)}.", path
    if leaf == "top_occurrences_limit":
        return (
            InvalidValueError,
            f"{path} must be a whole number from 1 to 100 (or left out for the top 5); got {shown(given)}.",
            path,
        )
    if leaf == "property_name":
        return InvalidArgumentsError, f"{path} must be a string naming a property; got {shown(given)}.", path
    if loc == ("collection_name",):
        return InvalidArgumentsError, f"collection_name must be a string; got {shown(given)}.", path
    if loc in (("search_query",), ("groupby_property",)):
        return InvalidArgumentsError, f"{path} must be a string; got {shown(given)}.", path
    return InvalidArgumentsError, f"{path}: {error.get('msg', 'invalid')}.", path


def _operator_message(slot: str, kind: PropertyKind, given: object) -> str:
    message = f"{slot}.operator {shown(given)} is not valid for {kind.value} properties; use one of: " + ", ".join(
        OPERATORS[kind]
    )
    others = [FILTER_SLOT[other] for other in PropertyKind if other != kind and given in OPERATORS[other]]
    if others:
        message += f". {shown(given)} is accepted by {' and '.join(others)}"
    return message + "."


def _metric_message(slot: str, kind: PropertyKind, given: object) -> str:
    message = f"{slot}.metrics {shown(given)} is not valid for {kind.value} properties; use one of: " + ", ".join(
        METRICS[kind]
    )
    others = [AGGREGATION_SLOT[other] for other in PropertyKind if other != kind and given in METRICS[other]]
    if others:
        message += f". {shown(given)} is a metric of {' and '.join(others)}"
    return message + "."


# ----------------------------------------------------------------------------------------------
# Validation against the live schema


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
    if search and not collection.searchable:
        raise InvalidValueError(
            f"{collection.name} has no vectorizer, so no search_query can run on it. Leave search_query out: "
            "filter on its properties and aggregate instead.",
            field="search_query",
        )
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
        prop = resolve_property(collection, argument.property_name, slot, f"{slot}.property_name")
        _check_kind(collection, prop, slot, FILTER_SLOT)
        value = check_filter_value(collection, prop, slot, argument.operator.value, argument.value)
        filters.append(FilterSpec(prop=prop, operator=argument.operator.value, value=value, slot=slot))

    aggregations: list[AggregationSpec] = []
    for slot in AGGREGATION_FIELDS:
        argument = getattr(args, slot)
        if argument is None:
            continue
        prop = resolve_property(collection, argument.property_name, slot, f"{slot}.property_name")
        _check_kind(collection, prop, slot, AGGREGATION_SLOT)
        limit = argument.top_occurrences_limit if isinstance(argument, TextAggregation) else None
        aggregations.append(
            AggregationSpec(prop=prop, metrics=(argument.metrics.value,), slot=slot, top_occurrences_limit=limit)
        )

    group_by = None
    if args.groupby_property is not None:
        group_by = resolve_property(collection, args.groupby_property, "groupby_property", "groupby_property")
        if group_by.kind is None:
            raise TypeMismatchError(
                f"Cannot group by '{group_by.name}': its type {group_by.data_type} is not supported. "
                f"Group by one of: {labels(collection, None)}.",
                field="groupby_property",
            )

    sort = None
    if isinstance(args, RelatedQueryArguments):
        filters += related_filters(args, collection, schema)
        sort = sort_of(args, collection, group_by is not None or search is not None)
    any_of: tuple[tuple[FilterSpec, ...], ...] = ()
    if isinstance(args, CompoundQueryArguments):
        more, any_of = condition_filters(args, collection)
        filters += more

    return QuerySpec(
        collection=collection,
        arguments=args,
        search_query=search,
        filters=tuple(filters),
        aggregations=tuple(aggregations),
        group_by=group_by,
        sort=sort,
        any_of=any_of,
    )


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
    message += f" {expected.value.capitalize()} properties of '{collection.name}': {labels(collection, expected)}."
    raise TypeMismatchError(message, field=f"{slot}.property_name")
