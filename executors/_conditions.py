"""Validation of the `compound` operations' `conditions`: each condition on any property resolved into the
`FilterSpec`s both executors run, joined by `match` (all: ANDed with the other filters; any: one group of
alternatives, each alternative's filters ANDed), or a typed, fix-it error.

A between (on a number or a date) is one condition that is two bounds. A date is read as the span people
mean by what they type: `2002` is the whole year, `2002-03` the month, `1990s` the decade, so `= 2002` is
between its first and last instant, `< 2002` before it starts and `> 2002` after it ends.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from executors._related import parse_date
from executors._resolve import check_filter_value, resolve_property, shown
from executors.arguments import CompoundQueryArguments, Condition
from executors.errors import (
    ExecutorError,
    InvalidArgumentsError,
    InvalidDateError,
    InvalidOperatorError,
    InvalidValueError,
)
from executors.schema import CollectionSchema, PropertySchema
from executors.spec import FilterSpec
from executors.vocabulary import (
    CONDITION_KEYS,
    CONDITION_OPERATORS,
    CONDITIONS_FIELD,
    DATE_DATA_TYPE,
    MATCH_FIELD,
    MAX_CONDITIONS,
    SPAN_END,
    VALUE_TYPES,
    ConditionOperator,
    Match,
    PropertyKind,
)

_YEAR = re.compile(r"(\d{4})")
_MONTH = re.compile(r"(\d{4})-(\d{1,2})")
_DECADE = re.compile(r"(\d{3})0'?s")
_INSTANT = timedelta(milliseconds=1)

#: What `condition_filters` gives: the filters ANDed with the call's others, and the groups of alternatives.
Alternatives = tuple[tuple[FilterSpec, ...], ...]


def condition_filters(
    args: CompoundQueryArguments, collection: CollectionSchema
) -> tuple[list[FilterSpec], Alternatives]:
    """The conditions' filters: under `all` (or a single condition) ANDed with the rest, under `any` one
    group in which an object must satisfy at least one alternative."""
    if len(args.conditions or []) > MAX_CONDITIONS:
        raise InvalidArgumentsError(f"conditions holds at most {MAX_CONDITIONS} conditions.", field=CONDITIONS_FIELD)
    resolved = [_condition(c, collection, f"{CONDITIONS_FIELD}[{i}]") for i, c in enumerate(args.conditions or [])]
    if args.match is Match.ANY and len(resolved) > 1:
        return [], tuple(tuple(filters) for filters in resolved)
    return [f for filters in resolved for f in filters], ()


def _condition(condition: Condition, collection: CollectionSchema, slot: str) -> list[FilterSpec]:
    prop = resolve_property(collection, condition.property_name, slot, f"{slot}.property_name")
    kind = DATE_DATA_TYPE if prop.data_type == DATE_DATA_TYPE else prop.kind.value if prop.kind else None
    if kind is None:
        raise InvalidValueError(
            f"'{prop.name}' has type {prop.data_type}, which a condition cannot compare.", field=f"{slot}.property_name"
        )
    operator = condition.operator.value
    if operator not in CONDITION_OPERATORS[kind]:
        raise InvalidOperatorError(
            f"{slot}.operator {shown(operator)} is not valid for the {kind} property '{prop.name}'; use one of: "
            f"{', '.join(CONDITION_OPERATORS[kind])}.",
            field=f"{slot}.operator",
        )
    if (operator == "between") != (condition.value_to is not None):
        raise InvalidArgumentsError(
            f"{slot}.value_to is the end of a between's range: give it with between, and only then.",
            field=f"{slot}.value_to",
        )
    if kind == DATE_DATA_TYPE:
        return _date_condition(condition, prop, slot)
    if operator == "between":
        low = _value(collection, prop, slot, ">=", condition.value)
        high = _value(collection, prop, slot, "<=", condition.value_to)
        if high < low:
            raise InvalidValueError(f"{slot}: the range ends ({high:g}) before it starts ({low:g}).", field=slot)
        return [FilterSpec(prop, ">=", low, slot), FilterSpec(prop, "<=", high, slot)]
    return [FilterSpec(prop, operator, _value(collection, prop, slot, operator, condition.value), slot)]


def _value(collection: CollectionSchema, prop: PropertySchema, slot: str, operator: str, given: object) -> object:
    field = f"{slot}.value"
    assert prop.kind is not None
    if (prop.kind is PropertyKind.BOOLEAN) != isinstance(given, bool):
        raise InvalidValueError(
            f"{field} must be {VALUE_TYPES[prop.kind]} for '{prop.name}'; got {shown(given)}.", field=field
        )
    if prop.kind is PropertyKind.NUMBER:
        try:
            given = float(str(given))
        except ValueError:
            raise InvalidValueError(
                f"{field} must be a number for '{prop.name}'; got {shown(given)}.", field=field
            ) from None
    if prop.kind is PropertyKind.BOOLEAN:
        return given
    return check_filter_value(collection, prop, slot, "=" if operator == "!=" else operator, given)


def _date_condition(condition: Condition, prop: PropertySchema, slot: str) -> list[FilterSpec]:
    start, end = date_span(condition.value, f"{slot}.value")
    operator = condition.operator.value
    if operator == "between":
        end = date_span(condition.value_to, f"{slot}.value_to")[1]
        if end < start:
            raise InvalidDateError(
                f"{slot}: the range ends ({condition.value_to}) before it starts ({condition.value}).",
                field=f"{slot}.value_to",
            )
    if operator in ("=", "between"):
        return [FilterSpec(prop, ">=", start, slot), FilterSpec(prop, "<=", end, slot)]
    return [FilterSpec(prop, operator, (start, end)[SPAN_END[operator]], slot)]


def date_span(value: object, field: str) -> tuple[datetime, datetime]:
    """The first and last instant of what a person means by a date: a year, a month, a decade, a day, or
    one instant for an RFC 3339 date-time (`parse_date` reads the last two)."""
    text = str(int(value) if isinstance(value, float) and value.is_integer() else value).strip()
    if match := _DECADE.fullmatch(text):
        first = int(match.group(1)) * 10
        return _utc(first, 1), _utc(first + 10, 1) - _INSTANT
    if match := _YEAR.fullmatch(text):
        year = int(match.group(1))
        return _utc(year, 1), _utc(year + 1, 1) - _INSTANT
    if match := _MONTH.fullmatch(text):
        year, month = int(match.group(1)), int(match.group(2))
        if not 1 <= month <= 12:
            raise InvalidDateError(f"{field} {shown(value)} is not a month: months run from 01 to 12.", field=field)
        following = _utc(year + 1, 1) if month == 12 else _utc(year, month + 1)
        return _utc(year, month), following - _INSTANT
    moment = parse_date(text, field)
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):  # a day: all of it
        return moment, moment + timedelta(days=1) - _INSTANT
    return moment, moment


def _utc(year: int, month: int) -> datetime:
    return datetime(year, month, 1, tzinfo=timezone.utc)


def condition_error(loc: tuple[str, ...], kind: str, given: object, path: str) -> tuple[type[ExecutorError], str]:
    """A fix-it message for pydantic's complaint about `conditions` or `match` (`loc` starts with the slot)."""
    leaf = loc[-1]
    if loc[0] == MATCH_FIELD:
        return InvalidValueError, f"match {shown(given)} is not valid; use all (and) or any (or)."
    if len(loc) == 1:
        if kind == "too_long":
            return InvalidArgumentsError, f"conditions holds at most {MAX_CONDITIONS} conditions."
        return InvalidArgumentsError, f"conditions must be a list of objects with keys {', '.join(CONDITION_KEYS)}."
    if kind == "extra_forbidden":
        return InvalidArgumentsError, f"'{leaf}' is not a key of a condition. Valid keys: {', '.join(CONDITION_KEYS)}."
    if kind == "missing":
        return InvalidArgumentsError, f"{path} is required (a condition needs property_name, operator and value)."
    if leaf == "operator":
        choices = ", ".join(o.value for o in ConditionOperator)
        return InvalidOperatorError, f"{path} {shown(given)} is not valid; use one of: {choices}."
    if len(loc) == 2:
        return InvalidArgumentsError, f"{path} must be an object with keys {', '.join(CONDITION_KEYS)}."
    return InvalidValueError, f"{path} must be a string, a number or true/false; got {shown(given)}."
