"""What a question's wording fixes in a call the model wrote almost right.

The small model reads the question's condition but writes its literal loosely. In the first calls of
209 natural questions (2026-11-26), 9 of the 45 that were not exact were one of these away from the
label, and nothing else:
- "the most common department" with a TOP_OCCURRENCES and no limit (every value, most common first);
  "the 3 most common" means 3;
- "more than 20 years" as `>= 20`, "at most 3 guests" as `< 3`: the words name the comparison;
- 'starts with "Me"' as `*Me`, "cover Python" as `*Python`, SQL's `%weekly%`: Weaviate's LIKE takes
  `*` and `?`, so `%` matches only itself, and a one-sided pattern asks for a start or an end.

Each is read from the words alone, in any database's names: what follows "more than" is a number, what
follows 'starts with' a quoted prefix. A call whose literal agrees with the words is left as it is, and
so is one whose number or prefix the words do not hold (the model meant something else). Every label
of the natural, explicit and related splits is left as it is, and on every question these words mark
(140 counts, 160 comparisons, 108 patterns) the label written loosely is mended back to it
(tests/unit/test_wording.py).
"""

from __future__ import annotations

import re
from typing import Any

from executors.vocabulary import AGGREGATION_SLOT, FILTER_SLOT, NumberOperator, PropertyKind, TextMetric, TextOperator

TEXT_AGGREGATION, TEXT_FILTER = AGGREGATION_SLOT[PropertyKind.TEXT], FILTER_SLOT[PropertyKind.TEXT]
NUMBER_FILTER = FILTER_SLOT[PropertyKind.NUMBER]
_COUNTS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
#: "the most common X" (one), "the 3 most common Xs" (three); "what are the most common Xs" says no count.
ASKS_TOP = re.compile(rf"\b(?:(?P<n>\d+|{'|'.join(_COUNTS)})\s+)?most\s+(?:common|frequent|popular)\b", re.I)
#: A comparison written before its number ("more than 4 credits", "before 1900", "at most $15").
_BEFORE = {
    NumberOperator.GREATER: (
        "more than",
        "greater than",
        "higher than",
        "longer than",
        "older than",
        "over",
        "above",
        "after",
    ),
    NumberOperator.GREATER_EQUAL: ("at least", "no less than", "no fewer than"),
    NumberOperator.LESS: (
        "fewer than",
        "less than",
        "lower than",
        "shorter than",
        "younger than",
        "under",
        "below",
        "before",
    ),
    NumberOperator.LESS_EQUAL: ("at most", "no more than", "up to"),
    NumberOperator.EQUAL: ("exactly",),
}
#: ... and after it, past one word of unit ("45 minutes or more", "$15 or less", "1800 or later").
_AFTER = {
    NumberOperator.GREATER_EQUAL: ("or more", "or later", "or above", "or over"),
    NumberOperator.LESS_EQUAL: ("or less", "or fewer", "or earlier", "or below"),
}
_NUMBER = r"[$€£]?(?P<n>\d[\d,]*(?:\.\d+)?)"
_COMPARED = [
    (op, re.compile(rf"\b{re.escape(words)}\s+{_NUMBER}", re.I))
    for op, all_words in _BEFORE.items()
    for words in all_words
] + [
    (op, re.compile(rf"{_NUMBER}(?:\s+[a-z]+)?\s+{re.escape(words)}\b", re.I))
    for op, all_words in _AFTER.items()
    for words in all_words
]
_QUOTED = r"\s+[\"'“‘]?(?P<x>[^\"'”’\s,?.;]+)"
STARTS_WITH = re.compile(rf"\b(?:starts?|begins?|starting|beginning)\s+with{_QUOTED}", re.I)
ENDS_WITH = re.compile(rf"\b(?:ends?|ending)\s+with{_QUOTED}", re.I)


def top_count(question: str) -> int | None:
    """How many values a "most common" question asks for, or None if it says no count."""
    found = ASKS_TOP.search(question)
    if found is None:
        return None
    if found.group("n"):
        word = found.group("n").lower()
        return _COUNTS.get(word) or int(word)
    return None if re.search(r"\bare\s+the\s+most\b", question, re.I) else 1


def comparisons(question: str) -> dict[float, str]:
    """Each number the question compares, with its operator; a number compared two ways is left out."""
    found: dict[float, set[str]] = {}
    for op, pattern in _COMPARED:
        for match in pattern.finditer(question):
            found.setdefault(float(match.group("n").replace(",", "")), set()).add(op.value)
    return {number: next(iter(ops)) for number, ops in found.items() if len(ops) == 1}


def like_pattern(question: str, value: str) -> str:
    """The LIKE value the words ask for: `X*` after 'starts with "X"', `*X` after 'ends with "X"', else
    `*X*`; `value` as it is when it names something else than the question's prefix or has no wildcard."""
    core = value.replace("%", "*").strip("*").strip()
    if not core or "*" in core:
        return value.replace("%", "*")
    for pattern, shape in ((STARTS_WITH, "{}*"), (ENDS_WITH, "*{}")):
        found = pattern.search(question)
        if found and found.group("x").lower() == core.lower():
            return shape.format(found.group("x"))
    if not any(mark in value for mark in "*%"):
        return value
    return f"*{core}*"


def amend_wording(question: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The call with the literals the question's words fix, and why (empty if none changed)."""
    amended, why = dict(arguments), []
    top = amended.get(TEXT_AGGREGATION)
    count = top_count(question)
    top = top if isinstance(top, dict) and top.get("metrics") == TextMetric.TOP_OCCURRENCES else None
    if top is not None and count is not None and top.get("top_occurrences_limit") != count:
        amended[TEXT_AGGREGATION] = {**top, "top_occurrences_limit": count}
        why.append(f"the question asks for the {count} most common: a limit of {count}")
    where = amended.get(NUMBER_FILTER)
    if isinstance(where, dict) and isinstance(where.get("value"), int | float):
        op = comparisons(question).get(float(where["value"]))
        if op is not None and where.get("operator") != op:
            amended[NUMBER_FILTER] = {**where, "operator": op}
            why.append(f"the question compares {where['value']:g} with {op}")
    where = amended.get(TEXT_FILTER)
    if isinstance(where, dict) and where.get("operator") == TextOperator.LIKE and isinstance(where.get("value"), str):
        pattern = like_pattern(question, where["value"])
        if pattern != where["value"]:
            amended[TEXT_FILTER] = {**where, "value": pattern}
            why.append(f"the words ask for the pattern {pattern}")
    return (amended, why) if why else (arguments, [])
