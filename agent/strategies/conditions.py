"""Conditions the question states and the call dropped, put back as `conditions` of the compound tool.

The small model writes the first condition it reads and often stops there: "French Pinot Noirs" became every
French wine. The agent's linkers (`values` for stored category values, `typed` for numbers and time spans)
add what they found and the call lacks: only where nothing in the call filters that property, and never to a
call whose conditions are alternatives (`match: any`), which one more alternative would widen. Dates are read
as people write them ("in March 2005", "the 90s", "since 2002"; `executors._conditions.date_span`).
"""

from __future__ import annotations

import re
from typing import Any

from agent._words import MONTHS, names_property
from agent.strategies.codes import abbreviates, coded, letters
from agent.strategies.meaning import means_value
from agent.strategies.naming import flagged, mentions
from agent.strategies.wording import (
    DIMENSIONS,
    NUMBER_FILTER,
    WEATHER_MEASURES,
    number_condition,
    number_range,
    placed_year,
)
from executors.schema import CollectionSchema, PropertyKind
from executors.vocabulary import (
    CONDITIONS_FIELD,
    DATE_FILTER_FIELD,
    FILTER_FIELDS,
    FILTER_SLOT,
    MATCH_FIELD,
    MAX_CONDITIONS,
    REFERENCE_FILTER_FIELD,
    Match,
)

_MONTH = "|".join(sorted({m for name in MONTHS for m in (name, name[:3])} | {"sept"}, key=len, reverse=True))
#: One time span: a month and year, a year, or a decade ("1990s", "the 90s", "'90s").
_SPAN = (
    rf"(?P<{{p}}iso>(?:1[89]|20)\d\d-[01]\d-[0-3]\d)\b"
    rf"|(?:(?P<{{p}}mon>{_MONTH})\.?\s+(?:(?P<{{p}}day>[0-3]?\d)(?:st|nd|rd|th)?,?\s+)?(?:of\s+)?)?"
    rf"(?P<{{p}}year>(?:1[89]|20)\d\d)(?![\d'’]|s\b)"
    rf"|(?:the\s+)?(?P<{{p}}dec>(?:1[89]|20)?\d0)['’]?s\b"
)
_ONE = re.compile(rf"(?<![\d.,])(?:{_SPAN.format(p='a')})", re.I)
_RANGE = re.compile(
    rf"\b(?:between|from)\s+(?:{_SPAN.format(p='a')})\s+(?:and|to|through|until)\s+(?:{_SPAN.format(p='b')})", re.I
)
#: Words before a number that make it an amount, not a year ("over 2000 dollars", "$2000").
_AMOUNT = re.compile(r"(?:\b(?:over|under|above|below|than|least|most|exactly|about|around)\s+|[$€£])$", re.I)
#: The words before a span that make it a bound, and the operator each one means.
_BOUNDS = (
    (re.compile(r"\b(?:in or after|on or after|since|starting(?: in| from)?|as of|from)\s+$", re.I), ">="),
    (re.compile(r"\b(?:in or before|on or before|until|through|up to|by)\s+$", re.I), "<="),
    (re.compile(r"\b(?:after|later than)\s+$", re.I), ">"),
    (re.compile(r"\b(?:before|prior to|earlier than)\s+$", re.I), "<"),
)


def _value(match: re.Match[str], prefix: str) -> str:
    """The span as the executor reads it: 2005, 2005-03 or 1990s."""
    decade = match.group(f"{prefix}dec")
    if decade:
        return f"{decade}s" if len(decade) == 4 else f"{'19' if int(decade) >= 30 else '20'}{decade}s"
    if iso := match.group(f"{prefix}iso"):
        return iso
    month = match.group(f"{prefix}mon")
    year = match.group(f"{prefix}year")
    if month:
        number = MONTHS.index(next(m for m in MONTHS if m.startswith(month.lower()[:3]))) + 1
        day = match.group(f"{prefix}day")  # "April 30, 1992": the day
        return f"{year}-{number:02d}-{int(day):02d}" if day else f"{year}-{number:02d}"
    return year


def without_dates(question: str) -> str:
    """The question with the day of each date it writes blanked: the 30 of "April 30, 1992" is a day, no number
    a condition compares (the model wrote `age = 30` for "How many people died on April 30, 1992?"). A year
    stays: it may be what an integer `year` holds."""

    def blank(match: re.Match[str]) -> str:
        text, start = match.group(), match.start()
        if match.group("aiso"):
            return text[:4] + " " * (len(text) - 4)
        if match.group("aday"):
            at, end = match.start("aday") - start, match.end("aday") - start
            return text[:at] + " " * (end - at) + text[end:]
        return text

    return _ONE.sub(blank, question)


def spans(question: str) -> list[str]:
    """The distinct time spans the question writes, in order, as the executor reads them ("2000-01", "2010")."""
    found = [m for m in _ONE.finditer(question) if not _AMOUNT.search(question[max(0, m.start() - 20) : m.start()])]
    return list(dict.fromkeys(_value(m, "a") for m in found))


def date_condition(question: str, dates: list[str]) -> dict[str, Any] | None:
    """The one time span the question places its objects in, as a condition on the collection's one date
    property; None without one date property, or with no span or several."""
    if len(dates) != 1:
        return None
    if (ranged := _RANGE.search(question)) is not None:
        return {
            "property_name": dates[0],
            "operator": "between",
            "value": _value(ranged, "a"),
            "value_to": _value(ranged, "b"),
        }
    found = [m for m in _ONE.finditer(question) if not _AMOUNT.search(question[max(0, m.start() - 20) : m.start()])]
    if len({_value(m, "a") for m in found}) != 1:
        return None
    first = found[0]
    before = question[max(0, first.start() - 20) : first.start()]
    operator = next((op for pattern, op in _BOUNDS if pattern.search(before)), "=")
    return {"property_name": dates[0], "operator": operator, "value": _value(first, "a")}


def filtered_properties(arguments: dict[str, Any]) -> set[str]:
    """The properties a call already filters on: in a filter slot, the date filter or a condition."""
    slots = [arguments.get(slot) for slot in (*FILTER_FIELDS, DATE_FILTER_FIELD)]
    listed = arguments.get(CONDITIONS_FIELD)
    found = [*slots, *(listed if isinstance(listed, list) else [])]
    return {str(f.get("property_name")) for f in found if isinstance(f, dict)}


def with_condition(
    arguments: dict[str, Any], *conditions: dict[str, Any], again: bool = False
) -> dict[str, Any] | None:
    """The call with `conditions` (the bounds of one range, say) among its conditions, or None where it
    cannot take them: a property is filtered already (unless `again`: the other bound of a range), its
    conditions are alternatives, or the list is full."""
    listed = arguments.get(CONDITIONS_FIELD)
    listed = listed if isinstance(listed, list) else []
    taken = set() if again else filtered_properties(arguments)
    if any(c["property_name"] in taken for c in conditions) or len(listed) + len(conditions) > MAX_CONDITIONS:
        return None
    if arguments.get(MATCH_FIELD) == Match.ANY.value and listed:
        return None
    return {**arguments, CONDITIONS_FIELD: [*listed, *conditions]}


def with_text_condition(arguments: dict[str, Any], condition: dict[str, Any]) -> dict[str, Any] | None:
    """The call with a text `condition`: in the text filter's slot where it is free, else among its
    conditions (`with_condition`); None where it cannot take it."""
    slot = FILTER_SLOT[PropertyKind.TEXT]
    return {**arguments, slot: condition} if not arguments.get(slot) else with_condition(arguments, condition)


def _without_bounds(arguments: dict[str, Any], between: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The call without the bounds it holds of the question's "between 15 and 40" (`>= 15`, `> 15`, `<= 40`, `= 15`),
    and those bounds as the note says them; the call unchanged when it holds none, or anything else on
    that property."""
    prop, low, high = between["property_name"], between["value"], between["value_to"]
    listed = arguments.get(CONDITIONS_FIELD)
    listed = listed if isinstance(listed, list) else []

    def bound(flt: object) -> bool:
        if not isinstance(flt, dict) or flt.get("property_name") != prop:
            return False
        value = flt.get("value")
        number = float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
        # an equality at either end is the range written as one of its ends ("close between $25 and $30": `= 25`)
        return (
            (flt.get("operator") in (">", ">=") and number == float(low))
            or (flt.get("operator") in ("<", "<=") and number == float(high))
            or (flt.get("operator") == "=" and number in (float(low), float(high)))
        )

    on_prop = [
        f
        for f in [*map(arguments.get, FILTER_FIELDS), *listed]
        if isinstance(f, dict) and f.get("property_name") == prop
    ]
    if not on_prop or not all(map(bound, on_prop)) or arguments.get(MATCH_FIELD) == Match.ANY.value:
        return arguments, []
    kept = {k: v for k, v in arguments.items() if not (k in FILTER_FIELDS and bound(v))}
    rest = [c for c in listed if not bound(c)]
    kept = {**kept, CONDITIONS_FIELD: rest} if rest else {k: v for k, v in kept.items() if k != CONDITIONS_FIELD}
    return kept, [shown(f) for f in on_prop]


def _year_as_number(arguments: dict[str, Any], span: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The call without a number condition holding the year of the question's time span on a property whose
    name says no year ("How many monthly records does IBM have since 2005?": `price >= 2005` beside the span
    `date >= 2005`, which made the count 0), and that condition as the note says it; else unchanged."""
    years = {float(y) for y in re.findall(r"\b(?:1[89]|20)\d\d\b", f"{span['value']} {span.get('value_to', '')}")}

    def misread(flt: object) -> bool:
        if not isinstance(flt, dict) or "year" in str(flt.get("property_name", "")).lower():
            return False
        value = flt.get("value")
        return isinstance(value, int | float) and not isinstance(value, bool) and float(value) in years

    listed = arguments.get(CONDITIONS_FIELD)
    listed = listed if isinstance(listed, list) else []
    number = arguments.get(NUMBER_FILTER)
    gone = [f for f in [number, *listed] if misread(f)]
    if not gone or arguments.get(MATCH_FIELD) == Match.ANY.value:
        return arguments, ""
    kept = {k: v for k, v in arguments.items() if not (k == NUMBER_FILTER and misread(v))}
    rest = [c for c in listed if not misread(c)]
    kept = {**kept, CONDITIONS_FIELD: rest} if rest else {k: v for k, v in kept.items() if k != CONDITIONS_FIELD}
    return kept, " and ".join(shown(f) for f in gone)


def _unsaid(arguments: dict[str, Any], bounds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The bounds of a range the call does not state, when what it states on that property is among them
    (`price >= 20` of "at least 20 but under 30"); none when it states something else there."""
    prop = bounds[0]["property_name"]
    listed = arguments.get(CONDITIONS_FIELD)
    held = [f for f in [*map(arguments.get, FILTER_FIELDS), *(listed if isinstance(listed, list) else [])]]
    held = [f for f in held if isinstance(f, dict) and f.get("property_name") == prop]

    def key(flt: dict[str, Any]) -> tuple[str, object]:
        value = flt.get("value")
        return str(flt.get("operator")), float(value) if isinstance(value, int | float) else value

    wanted = {key(b): b for b in bounds}
    if any(key(f) not in wanted for f in held):
        return []
    return [b for k, b in wanted.items() if k not in {key(f) for f in held}]


def shown(condition: dict[str, Any]) -> str:
    """A condition as the note says it: `date between 2002 and 2004`, `country = "US"`."""
    value = condition["value"]
    written = f'"{value}"' if isinstance(value, str) and not re.fullmatch(r"[\d-]+s?", value) else str(value)
    if condition["operator"] == "between":
        return f"{condition['property_name']} between {value} and {condition['value_to']}"
    return f"{condition['property_name']} {condition['operator']} {written}"


def _without_held_values(question: str, arguments: dict[str, Any]) -> str:
    """The question with the text values the call already filters on blanked out: the 2025 of a term
    "Spring 2025" the call holds is that value, not a time span or a number to put back."""
    slots = [arguments.get(slot) for slot in FILTER_FIELDS]
    listed = arguments.get(CONDITIONS_FIELD)
    held = [f.get("value") for f in [*slots, *(listed if isinstance(listed, list) else [])] if isinstance(f, dict)]
    for value in held:
        text = value.strip("*") if isinstance(value, str) else ""
        if any(ch.isdigit() for ch in text):
            question = re.sub(re.escape(text), lambda m: " " * len(m.group(0)), question, flags=re.I)
    return question


def put_back(
    question: str, arguments: dict[str, Any], numbers: list[str], dates: list[str]
) -> tuple[dict[str, Any], list[str]]:
    """The compound call with the number condition, the range of numbers and the time span the question
    states put back where the call lacks them (the number condition in its slot when that is free), and
    a note for each. Nothing through a reference filter: its condition may be on the linked objects."""
    if arguments.get(REFERENCE_FILTER_FIELD):
        return arguments, []
    question = _without_held_values(question, arguments)
    notes: list[str] = []
    restored = number_condition(question, numbers)
    found: list[tuple[str, list[dict[str, Any]]]] = [
        ("condition", [restored] if restored is not None else []),
        ("range", number_range(question, numbers) if restored is None else []),
        ("time span", [span] if (span := date_condition(question, dates)) is not None else []),
    ]
    year = placed_year(question, numbers) if restored is not None else None
    if year is not None and year["property_name"] != restored["property_name"]:  # "below 50 in 2007"
        found.append(("condition", [year]))
    if span is not None:
        arguments, dropped = _year_as_number(arguments, span)
        notes += [f"{dropped} holds the year of the question's time span {shown(span)}: left out."] if dropped else []
    for what, conditions in found:
        if not conditions:
            continue
        if what == "range" and conditions[0]["operator"] == "between":  # its bounds held are replaced
            arguments, replaced = _without_bounds(arguments, conditions[0])
            if replaced:
                arguments = {**arguments, CONDITIONS_FIELD: [*(arguments.get(CONDITIONS_FIELD) or []), conditions[0]]}
                notes.append(f"the question's range {shown(conditions[0])} replaced {' and '.join(replaced)}.")
                continue
        if what == "range":  # the call may hold one bound of it already: the others are added
            conditions = _unsaid(arguments, conditions)
        if not conditions:
            continue
        if what == "condition":  # the question's number on another property: the model misplaced it
            arguments, moved = _misplaced(arguments, conditions[0])
            if moved:
                notes.append(f"the question's condition {shown(conditions[0])} replaced {moved}.")
                continue
        if what == "condition" and not arguments.get(NUMBER_FILTER):
            added = (
                None
                if conditions[0]["property_name"] in filtered_properties(arguments)
                else {
                    **arguments,
                    NUMBER_FILTER: conditions[0],
                }
            )
        else:
            added = with_condition(arguments, *conditions, again=what == "range")
        if added is not None:
            arguments = added
            notes.append(f"the question's {what} {' and '.join(map(shown, conditions))} was put back.")
    return arguments, notes


def _misplaced(arguments: dict[str, Any], condition: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The call with `condition` in place of the one number filter (its slot, or one of its conditions) that
    holds the same number on another property ("horsepower >= 1980" where the question says "model year 1980
    or later"), and what it replaced ("" where none does and the property is not filtered already)."""
    prop, value = condition["property_name"], condition["value"]
    if prop in filtered_properties(arguments):
        return arguments, ""
    slot = arguments.get(NUMBER_FILTER)
    if isinstance(slot, dict) and slot.get("value") == value and slot.get("property_name") != prop:
        return {**arguments, NUMBER_FILTER: condition}, shown(slot)
    listed = arguments.get(CONDITIONS_FIELD)
    for index, held in enumerate(listed if isinstance(listed, list) else []):
        if isinstance(held, dict) and held.get("value") == value and held.get("property_name") != prop:
            return {**arguments, CONDITIONS_FIELD: [*listed[:index], condition, *listed[index + 1 :]]}, shown(held)
    return arguments, ""


def unasked(
    question: str, arguments: dict[str, Any], categories: dict[str, list[str]], numbers: tuple[str, ...] = ()
) -> tuple[dict[str, Any], str]:
    """The call without its text `=` conditions (all joined by and) on a stored category value the question
    does not name in any way (`mentions`, its letters), or a boolean's true no word of it names, and why
    ("" where none). Asked "What was the lowest minimum temperature in 2013?", the model added `weather =
    "Rain"` and answered for rainy days (2 of 16 questions on a table never seen, 2026-11-29). Properties
    that store codes are left alone (a name stands for them: "Texas" `TX`), as is a stored abbreviation a
    name the question gives may stand for ("Amazon's" `AMZN`: the model's own knowledge), and any text but
    a whole stored value. A text condition on a category is left out too where its value is no stored value
    but a word of measure or the name of one of the collection's `numbers` (`weather = "hot"` for "the hottest
    it got", `weather = "wind"` for "the highest wind speed": an empty result, answered "no objects matched";
    3 of 20 questions on a table never seen, 2026-12-03)."""
    if arguments.get(MATCH_FIELD) == Match.ANY.value:
        return arguments, ""
    said = [*mentions(question, categories), *flagged(question, categories)]  # "smokers": `smoker = Yes`
    named = {(prop, letters(value)) for prop, value, *_ in said}
    written = letters(question)
    measures = {letters(w) for w in (*DIMENSIONS, *WEATHER_MEASURES, *numbers)}
    words = [w for w in re.findall(r"[A-Za-z][\w-]*", question) if letters(w) not in measures]

    def unnamed(held: object) -> bool:
        if isinstance(held, dict) and held.get("operator") in ("=", "LIKE") and isinstance(held.get("value"), str):
            stored, value = categories.get(str(held.get("property_name"))), letters(held["value"])
            if stored and value in measures and value not in {letters(v) for v in stored}:
                return True
        if isinstance(held, dict) and isinstance(held.get("value"), bool) and held.get("operator") in ("=", "!="):
            # `openNow = true` for "How many restaurants whose rating is between 3.0 and 4.2 are there?" (the
            # compound split); a false one stays: "taught in person" is `isOnline = false`, no word of it
            asserted = held["value"] is (held["operator"] == "=")
            return asserted and not names_property(question, str(held.get("property_name")))
        if not isinstance(held, dict) or held.get("operator") != "=" or not isinstance(held.get("value"), str):
            return False
        prop, value = str(held.get("property_name")), letters(str(held.get("value")))
        stored = categories.get(prop) or []
        same = [v for v in stored if letters(v) == value]  # "Rain" for `rain`: the same value to the filter
        return (
            bool(same)
            and not coded(stored)
            and not abbreviates(str(held.get("value")), question)
            and (prop, value) not in named
            and value not in written
            and not means_value(words, same[0], stored)  # "women": `Female`
        )

    conditions = arguments.get(CONDITIONS_FIELD)
    conditions = conditions if isinstance(conditions, list) else []
    dropped = [f for f in [*map(arguments.get, FILTER_FIELDS), *conditions] if unnamed(f)]
    if not dropped:
        return arguments, ""
    kept = {k: v for k, v in arguments.items() if not (k in FILTER_FIELDS and unnamed(v))}
    listed = [c for c in conditions if not unnamed(c)]
    if conditions:
        if listed:
            kept[CONDITIONS_FIELD] = listed
        else:
            del kept[CONDITIONS_FIELD]
    return kept, " ".join(f"the question names no {shown(f)}: the condition left out." for f in dropped)


def own_condition(arguments: dict[str, Any], found: CollectionSchema) -> tuple[dict[str, Any], str]:
    """The call with a `reference_filter` on a property of the collection itself made one of its conditions:
    "reference": "language" for the doctors' own `language`, or the collection's own name. No reference
    holds such a property, so the executor refuses the call, and the small model wrote it again three times
    (the compound split, 2026-11-29). A filter through a real reference to a property of its target stays."""
    through = arguments.get(REFERENCE_FILTER_FIELD)
    if not isinstance(through, dict):
        return arguments, ""
    prop, reference = through.get("property_name"), found.get_reference(str(through.get("reference")))
    if reference is not None or found.get_property(str(prop)) is None:
        return arguments, ""
    condition = {k: v for k, v in through.items() if k != "reference"}
    moved = with_condition({k: v for k, v in arguments.items() if k != REFERENCE_FILTER_FIELD}, condition)
    if moved is None:
        return arguments, ""
    return moved, f"{prop} is a property of {found.name} itself, not through a reference: {shown(condition)}."
