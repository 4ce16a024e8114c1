"""A search that only restates what the call's filters already say.

The small model often writes the question's values as a search beside its filters ("Computer Science
and Python"). Such a search restricts an aggregation to the objects nearest it and finds nothing the
filters do not say, so `values` leaves it out; a search for a topic ("places with live music") is kept.
"""

from __future__ import annotations

import re
from typing import Any

from agent._words import MONTHS, split_name
from agent.strategies.conditions import filtered_properties
from agent.strategies.naming import mentions
from executors.schema import CollectionSchema
from executors.vocabulary import CONDITIONS_FIELD, FILTER_FIELDS

#: Words a search that only restates conditions may hold besides values and names ("X and Y", "in July 2025").
#: The most words a stored value has that a search may restate as a category ("Computer Science").
MAX_CATEGORY_WORDS = 3
_JOINERS = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "not",
        "no",
        "in",
        "on",
        "at",
        "of",
        "for",
        "with",
        "by",
        "to",
        "from",
        "between",
        "than",
        "that",
        "which",
        "who",
        "whose",
        "is",
        "are",
        "was",
        "were",
        "mention",
        "mentions",
        "mentioning",
        "contain",
        "contains",
        "containing",
        "word",
        "words",
    ]
)


def restates(search: str, arguments: dict[str, Any], found: CollectionSchema, values: dict[str, list[str]]) -> bool:
    """Whether a search holds nothing but the call's filter values, the collection's name and property names
    (as written too: "durationHours"), its stored category values (of a few words), dates and numbers:
    "Computer Science and Python", "rating between 3 and 4.2", "July 2025". Such a search restricts an
    aggregation to its nearest objects and finds nothing a filter does not say; a topic ("places with live
    music") holds other words."""
    listed = arguments.get(CONDITIONS_FIELD)
    held = [f for f in [*map(arguments.get, FILTER_FIELDS), *(listed if isinstance(listed, list) else [])]]
    texts = [str(f.get("value")) for f in held if isinstance(f, dict)]
    # a stored value counts when it is a category (a few words), not prose: "The host asks for wheelchair
    # access." makes no search for "wheelchair access" a restatement
    texts += [split_name(p.name) for p in (found, *found.properties)] + [
        v for vs in values.values() for v in vs if len(v.split()) <= MAX_CATEGORY_WORDS
    ]
    known = {w for text in texts for w in re.findall(r"[a-z]+", text.lower())} | _JOINERS | set(MONTHS)
    words = re.findall(r"[a-z]+", split_name(search).lower())  # "durationHours between 3.4 and 6.7"
    return bool(words) and all(w in known for w in words)


def stated_values(search: str, arguments: dict[str, Any], values: dict[str, list[str]]) -> list[dict[str, Any]]:
    """The conditions a restating search names and the call's filters lack: each property's one stored value
    it writes ("koreatown" a `neighborhood`; "gender: Female"), where nothing filters that property yet. The
    model wrote them as a search beside one filter ("how many homicides were there in koreatown": `type =
    Homicide` and the search ",koreatown,homicide"); left out without them, the count was every homicide's
    (the unseen split, 2026-12-03). Two values of one property say "or" or "and", which a search does not
    tell apart: neither is put back."""
    named: dict[str, list[str]] = {}
    for prop, value, *_ in mentions(split_name(search), values):
        named.setdefault(prop, []).append(value)
    taken = filtered_properties(arguments)
    return [
        {"property_name": prop, "operator": "=", "value": found[0]}
        for prop, found in named.items()
        if len(set(found)) == 1 and prop not in taken
    ]
