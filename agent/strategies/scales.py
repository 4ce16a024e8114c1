"""Numbers written with a scale word ("140 million") and properties stored in a unit of thousands or millions.

Real tables often store a count in thousands ("US jobs by industry ..., in thousands") or money in millions,
and people write "more than 140 million jobs". The small model wrote `nonfarm > 140`, the number without its
word, and the question's own condition read the same (the unseen split's monthly jobs, 2026-12-03): every
month matched. Here a condition on the bare number of a scaled one is given the number the property stores:
140 million in a property of thousands is 140,000.
"""

from __future__ import annotations

import re
from typing import Any

from agent.strategies.wording import NUMBER_FILTER
from executors.schema import CollectionSchema
from executors.vocabulary import CONDITIONS_FIELD

#: What each scale word multiplies by.
SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
#: A number with its scale word: "140 million", "1.5 billion", "$2 thousand".
_SCALED = re.compile(r"(?<![\w.])[$€£]?(?P<n>\d[\d,]*(?:\.\d+)?)\s*(?P<s>thousand|million|billion|trillion)s?\b", re.I)
#: A description's unit: "in thousands", "(millions)", "thousands of dollars".
_UNIT = re.compile(r"\b(?:in\s+)?(?P<s>thousand|million|billion|trillion)s\b", re.I)


def scaled_numbers(question: str) -> dict[float, float]:
    """Each number the question writes before a scale word, and what it means: {140: 140e6}."""
    return {
        float(m["n"].replace(",", "")): float(m["n"].replace(",", "")) * SCALES[m["s"].lower()]
        for m in _SCALED.finditer(question)
    }


def stored_unit(prop: str, found: CollectionSchema) -> float:
    """What one stored unit of `prop` counts: 1,000 where its description, else its collection's, says it
    is in thousands; 1 where neither names a unit."""
    own = next((p.description or "" for p in found.properties if p.name == prop), "")
    for text in (own, found.description or ""):
        if (unit := _UNIT.search(text)) is not None:
            return SCALES[unit["s"].lower()]
    return 1.0


def to_stored_unit(question: str, arguments: dict[str, Any], found: CollectionSchema) -> tuple[dict[str, Any], str]:
    """The call with each number condition on the bare number of a scaled one ("140" of "140 million") given
    the number its property stores (140,000 in thousands), and why ("" when none is)."""
    meant = scaled_numbers(question)
    if not meant:
        return arguments, ""
    notes: list[str] = []

    def stored(condition: Any) -> Any:
        if not isinstance(condition, dict):
            return condition
        prop, changed = str(condition.get("property_name")), dict(condition)
        for bound in ("value", "value_to"):
            value = condition.get(bound)
            if not isinstance(value, int | float) or isinstance(value, bool) or float(value) not in meant:
                continue
            number = meant[float(value)] / stored_unit(prop, found)
            changed[bound] = int(number) if number.is_integer() else number
            notes.append(f"the question's {value:g} with its scale word is {changed[bound]:g} as {prop} stores it")
        return changed

    amended = dict(arguments)
    if isinstance(amended.get(NUMBER_FILTER), dict):
        amended[NUMBER_FILTER] = stored(amended[NUMBER_FILTER])
    if isinstance(amended.get(CONDITIONS_FIELD), list):
        amended[CONDITIONS_FIELD] = [stored(c) for c in amended[CONDITIONS_FIELD]]
    return (amended, "; ".join(notes) + ".") if notes else (arguments, "")
