"""A count of events the objects hold as numbers: "How many soldiers died of disease?" of monthly deaths.

Where each object is a period or a place and a number property holds how many things happened there (`disease`:
"Deaths from preventable disease that month"), "how many soldiers" asks the SUM of that property, not how
many objects there are. The small model counted the months (24 for 12,640; 2 of 8 questions on a fresh
table, the unseen split, 2026-12-03). Read from the words: the first two words past "how many" name neither the
objects (the collection's name, the opening words of its description, "daily" a day) nor a property, and the
question names exactly one number property, on which the call has no condition ("in how many months did
disease kill more than 500" counts months), and no statistic but the count ("on average" asks a mean).
"""

from __future__ import annotations

import re
from typing import Any

from agent._words import content_stems, meets, names_property, split_name
from agent.strategies.asked_for import STATISTIC_WRITTEN, what_objects_are
from agent.strategies.conditions import filtered_properties
from agent.strategies.wording import number_condition, number_range
from executors.schema import CollectionSchema, PropertyKind
from executors.vocabulary import AGGREGATION_SLOT, GROUPBY_FIELD, NumberMetric

NUMBER_AGGREGATION = AGGREGATION_SLOT[PropertyKind.NUMBER]
#: The first two words of what a count counts: "how many soldiers died", "how many more soldiers", "how many
#: sunny days" (a stored value may come first).
_COUNTED = re.compile(r"^\W*(?:in\s+)?how many\s+(?:more\s+|fewer\s+|less\s+)?(\w[\w'-]*(?:\s+\w[\w'-]*)?)", re.I)
#: A period's adjective, the period an object of it is.
_PERIODS = {"daily": "day", "weekly": "week", "monthly": "month", "quarterly": "quarter", "yearly": "year"}
_PERIODS |= {"annual": "year", "hourly": "hour"}


def _objects(collection: CollectionSchema) -> set[str]:
    """The stems that name the collection's objects: its name's and its description's opening words'."""
    words = f"{split_name(collection.name)} {what_objects_are(collection)}".lower().split()
    return set(content_stems(" ".join(_PERIODS.get(w, w) for w in words)))


def _statistics(question: str) -> list[str]:
    """Every statistic the question's words write ("How many degrees of latitude separate the northernmost
    and southernmost ...": a count, a maximum and a minimum)."""
    return [name for name, pattern in STATISTIC_WRITTEN if pattern.search(question.lower())]


#: Words after a counted property's name that are no noun of what it holds ("how many crew does ...").
_NOT_A_NOUN = frozenset({"do", "does", "did", "is", "are", "was", "were", "has", "have", "had", "can", "will"})


def _held_by_name(counted: str, numbers: list[str]) -> str | None:
    """The number property whose whole name opens what a count counts, before the noun of what it holds:
    "how many construction jobs" of a table whose `construction` holds jobs (the unseen split's monthly jobs,
    2026-12-03: the model listed the month and the answer counted it); None otherwise ("how many crew does")."""
    words = counted.split()
    if len(words) != 2 or words[1].lower() in _NOT_A_NOUN or not words[0][0].isalpha():
        return None
    held = [p for p in numbers if split_name(p).lower() == words[0].lower()]
    return held[0] if len(held) == 1 else None


def summed_property(question: str, collection: CollectionSchema) -> str | None:
    """The number property whose SUM the question's count asks for, or None (it counts the objects)."""
    counted = _COUNTED.search(question)
    if counted is None or counted.group(0).lower().lstrip().startswith("in ") or _statistics(question) != ["count"]:
        return None
    stems = content_stems(counted.group(1))
    props = [p.name for p in collection.properties]
    numbers = [p.name for p in collection.properties_of_kind(PropertyKind.NUMBER)]
    if (held := _held_by_name(counted.group(1), numbers)) is not None:
        return held
    if not stems or any(meets(s, o) for s in stems for o in _objects(collection)):
        return None
    if any(names_property(counted.group(1), p) for p in props):  # "how many cylinders": the property read
        return None
    named = [p for p in numbers if names_property(question, p)]
    if len(named) != 1:
        return None
    # "How many bacteria have a penicillin MIC above 1?": a condition on it, the objects counted
    bounded = [number_condition(question, named), *number_range(question, named)]
    return None if any(bound is not None for bound in bounded) else named[0]


def to_summed(question: str, arguments: dict[str, Any], found: CollectionSchema) -> tuple[dict[str, Any], str]:
    """The call computing the SUM `summed_property` names where it computes another statistic (a COUNT, the
    objects' total, the MAX the model wrote for "How many more soldiers died of disease in 1855 than in
    1854?": the question writes no statistic but the count), and why ("" unchanged); a call with a condition
    on that property or grouped by it is left."""
    prop = summed_property(question, found)
    if prop is None or prop in filtered_properties(arguments) or arguments.get(GROUPBY_FIELD) == prop:
        return arguments, ""
    slots = [s for s in AGGREGATION_SLOT.values() if isinstance(arguments.get(s), dict)]
    held = arguments.get(NUMBER_AGGREGATION)
    if isinstance(held, dict) and held == {"property_name": prop, "metrics": NumberMetric.SUM.value}:
        return arguments, ""
    amended = {k: v for k, v in arguments.items() if k not in slots}
    amended[NUMBER_AGGREGATION] = {"property_name": prop, "metrics": NumberMetric.SUM.value}
    return amended, f"the question counts what {prop} holds, not the objects: the SUM of {prop}."


def groups_of_objects(arguments: dict[str, Any], found: CollectionSchema) -> tuple[dict[str, Any], str]:
    """The call without a group-by on the property that names the collection's objects (`district` of
    `ElectionDistricts`): each of its groups is one object, so "On average, how many votes were cast per district?"
    grouped by it gave each district's own total, and "In how many districts ...?" listed them (the unseen split's
    election, 2026-12-03). The property is named as the name's last word, which says what one object is
    (not `accommodationType` of `Accommodations`: its groups are kinds)."""
    grouped = arguments.get(GROUPBY_FIELD)
    head = split_name(found.name).split()[-1:] if found.name else []
    if not isinstance(grouped, str) or not head or content_stems(split_name(grouped)) != content_stems(head[0]):
        return arguments, ""
    kept = {k: v for k, v in arguments.items() if k != GROUPBY_FIELD}
    return kept, f"each {found.name} object is one {grouped}: not grouped by it."
