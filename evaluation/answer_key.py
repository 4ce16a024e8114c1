"""The answer key of a question, read off executed gold results, and how a written number states it.

The key is never typed by hand: it is read off the ground truth's result (one call, `single_call_key`)
or off the values a multi-step question's gold chain picked (`chain_key`). Questions whose answer is
a set of objects (a listing) or a data type get no key: they are reported as unscored, never as right.

A number states a key number when it is right to the precision it is written in (`3.46` and `3.5`
for 3.456, not `3`; whole numbers are accepted from 10 up, so `12` for 12.4); a fraction also as a
percentage (`35%`, `35 percent`, `0.35`). `numbers_in` reads numbers as digits (thousands with
commas) and as words ("forty-two", "one hundred and five"). The graders are in `evaluation.answers`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agent.answer import FinalAnswer
from agent.citations import strip_citations
from executors import QueryResult
from executors.results import number_text
from executors.vocabulary import PERCENT_METRICS, PropertyKind
from fixtures.datasets.chains import AnswerPart

UNKEYED_METRICS = frozenset({"TYPE"})

_UNITS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
_TEENS = ["ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_WORD_VALUES = {
    **{word: n for n, word in enumerate(_UNITS, start=1)},
    **{word: n for n, word in enumerate(_TEENS, start=10)},
    **{word: 10 * n for n, word in enumerate(_TENS, start=2)},
    "zero": 0,
    "none": 0,
    "a": 1,
}
_BELOW_100 = rf"(?:(?:{'|'.join(_TENS)})(?:[\s-]+(?:{'|'.join(_UNITS)}))?|{'|'.join(_TEENS)}|{'|'.join(_UNITS)})"
_BELOW_1000 = rf"(?:(?:{_BELOW_100}|a)\s+hundred(?:\s+(?:and\s+)?{_BELOW_100})?|{_BELOW_100})"
_WORD_NUMBER = rf"(?:(?:{_BELOW_1000}|a)\s+thousand(?:,?\s+(?:and\s+)?{_BELOW_1000})?|{_BELOW_1000}|zero|none)"
_NUMBER = re.compile(
    r"(?<![\w.])(?P<sign>-)?(?P<int>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<frac>\d+))?(?!\w)(?P<pct>\s*(?:%|percent\b))?"
    rf"|\b(?P<word>{_WORD_NUMBER})\b(?P<wpct>\s+percent\b)?",
    re.IGNORECASE,
)


class KeyNumber(BaseModel):
    model_config = ConfigDict(frozen=True)
    value: float
    #: A fraction in [0, 1] that may be written as a percentage.
    fraction: bool = False


class AnswerKey(BaseModel):
    """What a right answer states; `unscored` says why a question has no key."""

    model_config = ConfigDict(frozen=True)
    numbers: list[KeyNumber] = Field(default_factory=list)
    names: list[str] = Field(default_factory=list)
    #: Other values of the named property: naming them is how a list of everything shows.
    other_names: list[str] = Field(default_factory=list)
    groups: dict[str, KeyNumber] = Field(default_factory=dict)
    other_groups: list[str] = Field(default_factory=list)
    unscored: str | None = None

    @property
    def scored(self) -> bool:
        return self.unscored is None

    def text(self) -> str:
        """A plain answer that states the key (what the oracle says)."""
        parts = [", ".join(self.names)] if self.names else []
        parts += [number_text(round(n.value, 4)) for n in self.numbers]
        parts += [f"{name}: {number_text(round(value.value, 4))}" for name, value in self.groups.items()]
        return "; ".join(p for p in parts if p)

    def committed(self) -> FinalAnswer:
        """The key as a committed answer (what the oracle commits)."""
        return FinalAnswer(
            numbers=[round(n.value, 4) for n in self.numbers],
            names=list(self.names),
            groups={name: round(value.value, 4) for name, value in self.groups.items()},
        )


class Verdict(BaseModel):
    model_config = ConfigDict(frozen=True)
    correct: bool | None
    reason: str = ""


class WrittenNumber(BaseModel):
    model_config = ConfigDict(frozen=True)
    value: float
    decimals: int
    percent: bool
    start: int
    end: int


def word_number(words: str) -> int:
    """The value of a number written in words: "forty-two" 42, "one hundred and five" 105."""
    total = current = 0
    for token in re.findall(r"[a-z]+", words.lower()):
        if token == "hundred":
            current = (current or 1) * 100
        elif token == "thousand":
            total += (current or 1) * 1000
            current = 0
        elif token != "and":
            current += _WORD_VALUES[token]
    return total + current


def numbers_in(text: str) -> list[WrittenNumber]:
    """Every number written in `text` (cited ids and UUIDs removed first), with the precision it was written to."""
    cleaned = strip_citations(text)
    found = []
    for match in _NUMBER.finditer(cleaned):
        if match.group("word"):
            value, decimals, percent = float(word_number(match.group("word"))), 0, bool(match.group("wpct"))
        else:
            digits = match.group("int").replace(",", "")
            frac = match.group("frac") or ""
            value = float(f"{digits}.{frac}" if frac else digits) * (-1 if match.group("sign") else 1)
            decimals, percent = len(frac), bool(match.group("pct"))
        at, end = match.start(), match.end()
        found.append(WrittenNumber(value=value, decimals=decimals, percent=percent, start=at, end=end))
    return found


def _close(written: float, decimals: int, truth: float) -> bool:
    if not math.isfinite(truth):
        return False
    if decimals == 0 and abs(truth) < 10 and not float(truth).is_integer():
        return False
    return abs(written - truth) <= 0.5 * 10.0**-decimals + 1e-9 * max(1.0, abs(truth))


def matches(number: WrittenNumber, key: KeyNumber) -> bool:
    """Does a written number state the key number, to the precision it was written?"""
    if number.percent:
        return key.fraction and _close(number.value, number.decimals, key.value * 100)
    if key.fraction and _close(number.value, number.decimals, key.value * 100) and number.value > 1:
        return True
    return _close(number.value, number.decimals, key.value)


# --- keys -------------------------------------------------------------------------------------


def key_number(metric: str, value: Any) -> KeyNumber | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return KeyNumber(value=float(value), fraction=metric in PERCENT_METRICS)


def single_call_key(
    result: QueryResult,
    kind_of: Callable[[str], PropertyKind | None],
    values_of: Callable[[str], list[str]],
) -> AnswerKey:
    """The key of a one-call question: the numbers, names or group values its result holds.

    `kind_of(property)` and `values_of(property)` describe the collection (every value a text
    property takes in it, which is how an answer listing them all is caught)."""
    if result.groups is not None:
        return _groups_key(result, kind_of, values_of)
    if not result.aggregations:
        return AnswerKey(unscored="a listing: its answer is the objects")
    numbers: list[KeyNumber] = []
    names: list[str] = []
    named_property = None
    for prop, metrics in result.aggregations.items():
        for metric, value in metrics.items():
            if metric in UNKEYED_METRICS:
                return AnswerKey(unscored=f"{metric} is a data type, not a value")
            if isinstance(value, list):
                names += [item.value for item in value]
                named_property = prop
            elif value is None:
                return AnswerKey(unscored=f"{prop} {metric} has no value")
            else:
                number = key_number(metric, value)
                if number is None:
                    return AnswerKey(unscored=f"{prop} {metric} is {value!r}")
                numbers.append(number)
    others = [v for v in values_of(named_property) if v not in names] if named_property else []
    return AnswerKey(numbers=numbers, names=names, other_names=others)


def _groups_key(
    result: QueryResult, kind_of: Callable[[str], PropertyKind | None], values_of: Callable[[str], list[str]]
) -> AnswerKey:
    assert result.groups is not None and result.group_by is not None
    if kind_of(result.group_by) is not PropertyKind.TEXT:
        return AnswerKey(unscored=f"groups by {result.group_by}, which is not text")
    if result.truncated:
        return AnswerKey(unscored="more groups exist than the result lists")
    per_group: dict[str, KeyNumber] = {}
    for name, group in result.groups.items():
        values = [(metric, value) for metrics in group.aggregations.values() for metric, value in metrics.items()]
        if len(values) > 1:
            return AnswerKey(unscored="several values per group")
        number = key_number(*values[0]) if values else KeyNumber(value=float(group.count))
        if number is None:
            return AnswerKey(unscored="a group value that is not a number")
        per_group[name] = number
    others = [v for v in values_of(result.group_by) if v not in per_group]
    return AnswerKey(groups=per_group, other_groups=others)


def unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def chain_key(
    parts: list[AnswerPart], values: dict[str, str | float], values_of: Callable[[str, str], list[str]]
) -> AnswerKey:
    """The key of a multi-step question: its answer parts, read off the values its chain picked."""
    missing = sorted({ref for part in parts for ref in part.refs if ref not in values})
    if missing:
        return AnswerKey(unscored=f"the chain picked no {', '.join(missing)}")
    numbers: list[KeyNumber] = []
    names: list[str] = []
    universe: list[str] = []
    for part in parts:
        picked = [values[ref] for ref in part.refs]
        if part.kind in ("name", "larger"):
            if part.kind == "name":
                names.append(str(picked[0]))
            else:
                first, first_value, second, second_value = picked
                names.append(str(first if float(first_value) > float(second_value) else second))
            if part.collection and part.property:
                universe += values_of(part.collection, part.property)
        elif part.kind == "number":
            numbers.append(KeyNumber(value=float(picked[0]), fraction=part.fraction))
        else:
            numbers.append(KeyNumber(value=abs(float(picked[0]) - float(picked[1])), fraction=part.fraction))
    return AnswerKey(numbers=numbers, names=names, other_names=[v for v in unique(universe) if v not in names])
