"""Validation of the `related` operations' slots: a filter through a reference, a date filter, and a
sort with a limit, each resolved into the `FilterSpec`s and `SortSpec` both executors run, or a
typed error (`UnknownReferenceError`, `InvalidDateError`, `UnsortablePropertyError`, ...)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Any

from executors._resolve import check_filter_value, resolve_property, shown, suggest
from executors.arguments import DateFilter, ReferenceFilter, RelatedQueryArguments
from executors.errors import (
    InvalidArgumentsError,
    InvalidDateError,
    InvalidOperatorError,
    InvalidValueError,
    TypeMismatchError,
    UnknownReferenceError,
    UnsortablePropertyError,
)
from executors.schema import CollectionSchema, DatabaseSchema
from executors.spec import FilterSpec, SortSpec
from executors.vocabulary import (
    DATE_BOUNDS,
    DATE_DATA_TYPE,
    DATE_FILTER_FIELD,
    DATE_OPERATORS,
    OPERATORS,
    REFERENCE_FILTER_FIELD,
    SORT_FIELD,
    VALUE_TYPES,
    DateOperator,
    PropertyKind,
    SortOrder,
)

_DATE_ONLY = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?([Zz]|[+-]\d{2}:\d{2})?")


def related_filters(
    args: RelatedQueryArguments, collection: CollectionSchema, schema: DatabaseSchema
) -> list[FilterSpec]:
    filters: list[FilterSpec] = []
    if args.reference_filter is not None:
        filters.append(_reference_filter(args.reference_filter, collection, schema))
    if args.date_filter is not None:
        filters += _date_filters(args.date_filter, collection)
    return filters


def _reference_filter(argument: ReferenceFilter, collection: CollectionSchema, schema: DatabaseSchema) -> FilterSpec:
    slot = REFERENCE_FILTER_FIELD
    reference = collection.get_reference(argument.reference)
    if reference is None:
        names = [r.name for r in collection.references]
        have = ", ".join(r.label() for r in collection.references) or "none"
        raise UnknownReferenceError(
            f"Collection '{collection.name}' has no reference '{argument.reference}'. Its references: {have}."
            + suggest(argument.reference, names),
            field=f"{slot}.reference",
        )
    target = schema.get(reference.targets[0]) if len(reference.targets) == 1 else None
    if target is None:
        raise UnknownReferenceError(
            f"'{collection.name}.{reference.name}' points to {' or '.join(reference.targets)}, which cannot be "
            "queried here.",
            field=f"{slot}.reference",
        )
    prop = resolve_property(target, argument.property_name, slot, f"{slot}.property_name")
    field, operator = f"{slot}.value", argument.operator.value
    if prop.data_type == DATE_DATA_TYPE:
        if operator not in DATE_OPERATORS:
            raise InvalidOperatorError(
                f"Compare the date '{prop.name}' with {', '.join(DATE_OPERATORS)}.", field=f"{slot}.operator"
            )
        value: Any = parse_date(argument.value, field)
        return FilterSpec(prop=prop, operator=operator, value=value, slot=slot, via=reference.name)
    if prop.kind is None:
        raise TypeMismatchError(f"'{target.name}.{prop.name}' has type {prop.data_type}, which cannot be filtered.")
    if operator not in OPERATORS[prop.kind]:
        raise InvalidOperatorError(
            f"{slot}.operator {shown(operator)} is not valid for the {prop.kind.value} property "
            f"'{target.name}.{prop.name}'; use one of: {', '.join(OPERATORS[prop.kind])}.",
            field=f"{slot}.operator",
        )
    given = argument.value
    if prop.kind is PropertyKind.BOOLEAN and not isinstance(given, bool):
        raise InvalidValueError(f"{field} must be true or false for '{prop.name}'; got {shown(given)}.", field=field)
    if prop.kind is not PropertyKind.BOOLEAN and isinstance(given, bool):
        raise InvalidValueError(f"{field} must be {VALUE_TYPES[prop.kind]}; got {shown(given)}.", field=field)
    if prop.kind is PropertyKind.NUMBER:
        try:
            given = float(given)
        except ValueError:
            raise InvalidValueError(f"{field} must be a number; got {shown(argument.value)}.", field=field) from None
    value = check_filter_value(target, prop, slot, operator, given)
    return FilterSpec(prop=prop, operator=operator, value=value, slot=slot, via=reference.name)


def parse_date(text: object, field: str) -> datetime:
    """An RFC 3339 date-time (`2025-03-01T18:30:00Z`, any offset) or a date (`2025-03-01`, its first
    instant in UTC); a date-time without an offset is read as UTC. Anything else is `InvalidDateError`."""
    raw = str(text).strip()
    parsed: datetime | None = None
    try:
        if _DATE_ONLY.fullmatch(raw):
            parsed = datetime.fromisoformat(raw + "T00:00:00+00:00")
        elif _DATE_TIME.fullmatch(raw):
            parsed = datetime.fromisoformat(raw.replace("z", "Z").replace("Z", "+00:00").replace("t", "T"))
    except ValueError:  # the right shape, an impossible date (month 13, February 30)
        parsed = None
    if parsed is None:
        raise InvalidDateError(
            f"{field} {shown(text)} is not a date: write it in RFC 3339, e.g. 2025-03-01T18:30:00Z, or as a "
            "date, 2025-03-01.",
            field=field,
        )
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=timezone.utc)


def _date_filters(argument: DateFilter, collection: CollectionSchema) -> list[FilterSpec]:
    slot = DATE_FILTER_FIELD
    prop = resolve_property(collection, argument.property_name, slot, f"{slot}.property_name")
    if prop.data_type != DATE_DATA_TYPE:
        dates = ", ".join(p.name for p in collection.dates()) or "(none)"
        raise TypeMismatchError(
            f"'{prop.name}' is not a date property; date_filter filters dates. Date properties of "
            f"'{collection.name}': {dates}.",
            field=f"{slot}.property_name",
        )
    start = parse_date(argument.value, f"{slot}.value")
    if argument.operator is not DateOperator.BETWEEN:
        if argument.value_to is not None:
            raise InvalidArgumentsError(
                f"{slot}.value_to is for between only; {argument.operator.value} takes one value.",
                field=f"{slot}.value_to",
            )
        (symbol,) = DATE_BOUNDS[argument.operator]
        return [FilterSpec(prop=prop, operator=symbol, value=start, slot=slot)]
    if argument.value_to is None:
        raise InvalidArgumentsError(f"{slot}.value_to is required for between: the end of the range.", field=slot)
    end = parse_date(argument.value_to, f"{slot}.value_to")
    if _DATE_ONLY.fullmatch(argument.value_to.strip()):
        end += timedelta(days=1) - timedelta(milliseconds=1)  # a date as the end: the whole day
    if end < start:
        raise InvalidDateError(
            f"{slot}: the range ends ({argument.value_to}) before it starts ({argument.value}).",
            field=f"{slot}.value_to",
        )
    low, high = DATE_BOUNDS[DateOperator.BETWEEN]
    return [
        FilterSpec(prop=prop, operator=low, value=start, slot=slot),
        FilterSpec(prop=prop, operator=high, value=end, slot=slot),
    ]


def sort_of(args: RelatedQueryArguments, collection: CollectionSchema, combined: bool) -> SortSpec | None:
    argument = args.sort
    if argument is None:
        return None
    slot = SORT_FIELD
    if combined:
        raise InvalidArgumentsError(
            "sort orders the objects and keeps the first `limit` (listed, or aggregated with an aggregation); it "
            "cannot be combined with search_query or groupby_property. Filter and sort instead.",
            field=slot,
        )
    prop = resolve_property(collection, argument.property_name, slot, f"{slot}.property_name")
    if prop.kind is not PropertyKind.NUMBER and prop.data_type != DATE_DATA_TYPE:
        sortable = [
            p.name for p in collection.properties if p.kind is PropertyKind.NUMBER or p.data_type == DATE_DATA_TYPE
        ]
        raise UnsortablePropertyError(
            f"'{prop.name}' ({prop.data_type}) cannot be sorted: sort orders number and date properties. "
            f"Sortable properties of '{collection.name}': {', '.join(sortable) or '(none)'}.",
            field=f"{slot}.property_name",
        )
    return SortSpec(prop=prop, descending=argument.order is SortOrder.DESCENDING, limit=argument.limit)
