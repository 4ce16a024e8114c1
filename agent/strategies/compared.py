"""What arithmetic a question asks for, read from its words: a difference, a share or a spread
(`asked_of`), the conditions a call holds (`held`), and the two values a difference compares
(`pair_of`). `arithmetic` runs the call's variants and computes the answer from them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from agent.strategies.asked import LEAST_WORDS
from agent.strategies.conditions import spans
from agent.strategies.naming import mentions
from executors.vocabulary import (
    CONDITIONS_FIELD,
    DATE_FILTER_FIELD,
    FILTER_FIELDS,
    MATCH_FIELD,
    NumberMetric,
    PropertyKind,
)

Form = Literal["difference", "share", "spread"]

_SHARE = re.compile(
    r"\b(?:(?:what|which)\s+(?:share|fraction|percentage|percent|proportion)|what\s+portion)\s+of\s+(?P<population>.*)",
    re.I,
)
#: Two extremes joined by "and": "the highest and lowest", "the northernmost and southernmost".
_EXTREMES = re.compile(
    r"\b(?:\w+est|\w*most|least|max(?:imum)?|min(?:imum)?)\s+and\s+(?:the\s+)?(?:\w+est|\w*most|least|max(?:imum)?|min(?:imum)?)\b",
    re.I,
)
_SPREAD_WORD = re.compile(r"\b(?:difference|gap|spread|range|separate[sd]?|apart|distance)\b", re.I)
#: Words that ask how far apart two things are.
_DIFFERENCE = re.compile(
    r"\bhow\s+(?:much|many)\s+(?:more|less|fewer|(?!other\b|water\b|power\b|paper\b|after\b)\w+er)\b"
    r"|\bby\s+how\s+(?:much|many)\b|\b(?:difference|gap)\b"
    r"|\bhow\s+(?:much|many)\s+\w*\s*(?:did|does|do|has|have|had)\b.*\b(?:change|rise|fall|drop|grow|increase|decrease)\b",
    re.I,
)
#: Words that ask which of the two: "which", "who", or a yes/no question between alternatives ("Do gram-positive
#: or gram-negative bacteria have the higher average ...?").
_WHICH = re.compile(
    r"\b(?:which|who)\b|^\s*(?:do|does|did|is|are|was|were|has|have|had)\b[^?]*\bor\b[^?]*\bthe\s+\w+er\b", re.I
)
_COUNTING = re.compile(r"\bhow\s+many\s+(?:more|fewer|less)\b|\bmore\s+\w+\s*,|\bfewer\s+\w+\s*,", re.I)
NUMBERS = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")
_YEAR = re.compile(r"(?<![\w.$])(?:1[89]|20)\d\d(?![\w.])")
STATISTICS = {m.value for m in NumberMetric} - {NumberMetric.COUNT.value, NumberMetric.TYPE.value}


@dataclass(frozen=True)
class Asked:
    """The arithmetic a question asks for, read from its words."""

    form: Form
    #: The words after "what share of": the population, then the part the share asks about.
    population: str = ""
    #: The question asks which of the two (a difference) it is.
    which: bool = False
    #: The one with less wins "which" (lower, fewer, shorter ...).
    less: bool = False
    #: The question asks for a count ("how many more"), not a statistic.
    counting: bool = False


def asked_of(question: str) -> Asked | None:
    """The arithmetic `question` asks for, or None for a question of another form."""
    if (share := _SHARE.search(question)) is not None:
        return Asked("share", population=share["population"])
    if _EXTREMES.search(question) and _SPREAD_WORD.search(question):
        return Asked("spread")
    if _DIFFERENCE.search(question):
        return Asked(
            "difference",
            which=bool(_WHICH.search(question)),
            less=bool(LEAST_WORDS.search(question)),
            counting=bool(_COUNTING.search(question)),
        )
    return None


Condition = dict[str, Any]


def held(arguments: dict[str, Any]) -> list[Condition]:
    """Every condition a call holds: in a filter slot, the date filter or its `conditions`."""
    slots = [arguments.get(slot) for slot in (*FILTER_FIELDS, DATE_FILTER_FIELD)]
    listed = arguments.get(CONDITIONS_FIELD)
    return [c for c in [*slots, *(listed if isinstance(listed, list) else [])] if isinstance(c, dict)]


def keeping(arguments: dict[str, Any], keep: Callable[[Condition], bool]) -> dict[str, Any]:
    """The call with only the conditions `keep` accepts."""
    kept = {
        k: v
        for k, v in arguments.items()
        if not (k in (*FILTER_FIELDS, DATE_FILTER_FIELD) and isinstance(v, dict) and not keep(v))
    }
    listed = [c for c in kept.get(CONDITIONS_FIELD) or [] if isinstance(c, dict) and keep(c)]
    if listed:
        kept[CONDITIONS_FIELD] = listed
    else:
        kept.pop(CONDITIONS_FIELD, None)
        kept.pop(MATCH_FIELD, None)
    return kept


def number_of(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True)
class Pair:
    """Two values of one property the question compares, in the order it names them."""

    prop: str
    values: tuple[Any, Any]
    #: "=" conditions, or the date spans the executor resolves ("2009").
    kind: Literal["text", "number", "date"]

    def condition(self, value: Any) -> Condition:
        return {"property_name": self.prop, "operator": "=", "value": value}

    def label(self, value: Any) -> str:
        return f'{self.prop} = "{value}"' if self.kind == "text" else f"{self.prop} = {value}"


def pair_of(question: str, arguments: dict[str, Any], categories: dict[str, list[str]], schema: Any) -> Pair | None:
    """The two values the question compares: two stored values of one category property it names, else
    two years (on the one number property named for years, or the one date property), else the number
    the call filters a number property on and the one other number the question writes."""
    named: dict[str, list[str]] = {}
    for prop, value, *_ in mentions(question, categories):
        named.setdefault(prop, [])
        if value not in named[prop]:
            named[prop].append(value)
    two = [(prop, values) for prop, values in named.items() if len(values) == 2]
    if len(two) == 1:
        return Pair(two[0][0], (two[0][1][0], two[0][1][1]), "text")
    years = list(dict.fromkeys(int(y) for y in _YEAR.findall(question)))
    if len(years) == 2 and schema is not None:
        numbers = [p.name for p in schema.properties if p.kind is PropertyKind.NUMBER]
        yearly = [p for p in numbers if "year" in p.lower()]
        if len(yearly) == 1:
            return Pair(yearly[0], (years[0], years[1]), "number")
    dates = [p.name for p in schema.dates()] if schema is not None else []
    if len(written_spans := spans(question)) == 2 and len(dates) == 1:
        return Pair(dates[0], (written_spans[0], written_spans[1]), "date")
    written = [float(n) for n in NUMBERS.findall(question)]
    for condition in held(arguments):
        value = number_of(condition.get("value"))
        if condition.get("operator") != "=" or value is None or isinstance(condition.get("value"), bool):
            continue
        others = [n for n in dict.fromkeys(written) if n != value]
        if value in written and len(others) == 1:
            first, second = (
                (value, others[0]) if written.index(value) < written.index(others[0]) else (others[0], value)
            )
            cast = int if all(float(v).is_integer() for v in (first, second)) else float
            return Pair(str(condition["property_name"]), (cast(first), cast(second)), "number")
    return None
