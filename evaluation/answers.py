"""Is the final answer right? A key derived from executed results, and a deterministic grader.

The key is never typed by hand: it is read off the ground truth's result (one call) or off the
results of a multi-step question's gold chain. What a right answer must say:

- every key number, correct to the precision it is written in (`3.46` and `3.5` for 3.456, not
  `3`; whole numbers are accepted from 10 up, so `12` for 12.4); fractions also as percentages
  (`35%`, `35 percent`, `0.35`), thousands with commas, and zero to twenty as words;
- every key name (case-insensitive, as a whole word), and at most one other value of the same
  property, after them (a runner-up in passing, not a list of every value);
- per group: the group's name, followed by its value before any other group is named; every
  key group, and no group the data does not have.

An answer that hedges fails: beyond the key's numbers (and numbers that appear in the question),
it may state at most `HEDGE_NUMBERS` others. Questions whose answer is a set of objects (a listing)
or a data type get no key: they are reported as unscored, never as right.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agent.citations import strip_citations
from executors import QueryResult
from executors.results import number_text
from executors.vocabulary import PropertyKind
from fixtures.datasets.chains import AnswerPart

#: Numbers an answer may state beyond the key's own (and the question's) before it counts as hedging.
HEDGE_NUMBERS = 3
#: Other values of a named property an answer may mention after the key's names.
RUNNER_UP_NAMES = 1
PERCENT_METRICS = frozenset({"PERCENTAGE_TRUE", "PERCENTAGE_FALSE"})
UNKEYED_METRICS = frozenset({"TYPE"})

_NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen"
    " sixteen seventeen eighteen nineteen twenty"
)
_WORDS = {word: value for value, word in enumerate(_NUMBER_WORDS.split())}
_NUMBER = re.compile(
    r"(?<![\w.])(?P<sign>-)?(?P<int>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<frac>\d+))?(?!\w)(?P<pct>\s*(?:%|percent\b))?"
    r"|\b(?P<word>" + "|".join(_WORDS) + r"|none)\b",
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


class Verdict(BaseModel):
    model_config = ConfigDict(frozen=True)
    correct: bool | None
    reason: str = ""


class _Number(BaseModel):
    model_config = ConfigDict(frozen=True)
    value: float
    decimals: int
    percent: bool
    start: int
    end: int


def numbers_in(text: str) -> list[_Number]:
    """Every number written in `text` (cited ids and UUIDs removed first), with the precision it was written to."""
    cleaned = strip_citations(text)
    found = []
    for match in _NUMBER.finditer(cleaned):
        if match.group("word"):
            word = match.group("word").lower()
            value, decimals, percent = float(0 if word == "none" else _WORDS[word]), 0, False
        else:
            digits = match.group("int").replace(",", "")
            frac = match.group("frac") or ""
            value = float(f"{digits}.{frac}" if frac else digits) * (-1 if match.group("sign") else 1)
            decimals, percent = len(frac), bool(match.group("pct"))
        found.append(_Number(value=value, decimals=decimals, percent=percent, start=match.start(), end=match.end()))
    return found


def _close(written: float, decimals: int, truth: float) -> bool:
    if not math.isfinite(truth):
        return False
    if decimals == 0 and abs(truth) < 10 and not float(truth).is_integer():
        return False
    return abs(written - truth) <= 0.5 * 10.0**-decimals + 1e-9 * max(1.0, abs(truth))


def matches(number: _Number, key: KeyNumber) -> bool:
    """Does a written number state the key number, to the precision it was written?"""
    if number.percent:
        return key.fraction and _close(number.value, number.decimals, key.value * 100)
    if key.fraction and _close(number.value, number.decimals, key.value * 100) and number.value > 1:
        return True
    return _close(number.value, number.decimals, key.value)


def _mentions(text: str, name: str) -> list[int]:
    pattern = r"(?<!\w)" + re.escape(name) + r"(?!\w)"
    return [m.start() for m in re.finditer(pattern, text, re.IGNORECASE)]


def grade(answer: str | None, key: AnswerKey, question: str = "") -> Verdict:
    """The verdict on one final answer (None when the question has no key)."""
    if not key.scored:
        return Verdict(correct=None, reason=f"unscored: {key.unscored}")
    text = (answer or "").strip()
    if not text:
        return Verdict(correct=False, reason="no answer")
    written = numbers_in(text)
    for check in (_check_names, _check_groups, _check_numbers):
        reason = check(text, written, key, question)
        if reason:
            return Verdict(correct=False, reason=reason)
    return Verdict(correct=True)


def _check_names(text: str, written: list[_Number], key: AnswerKey, question: str) -> str:
    firsts = []
    for name in key.names:
        seen = _mentions(text, name)
        if not seen:
            return f"does not name {name!r}"
        firsts.append(seen[0])
    if not key.names:
        return ""
    named_others = {
        other: _mentions(text, other)[0]
        for other in key.other_names
        if _mentions(text, other) and not any(_mentions(name, other) for name in key.names)
    }
    if len(named_others) > RUNNER_UP_NAMES:
        return f"also names {', '.join(sorted(named_others))}"
    early = [other for other, at in named_others.items() if at < max(firsts)]
    return f"names {early[0]!r} before the answer" if early else ""


def _check_groups(text: str, written: list[_Number], key: AnswerKey, question: str) -> str:
    if not key.groups:
        return ""
    invented = [g for g in key.other_groups if _mentions(text, g) and not any(_mentions(k, g) for k in key.groups)]
    if invented:
        return f"names groups the answer does not have: {', '.join(invented[:3])}"
    boundaries = sorted(at for name in [*key.groups, *key.other_groups] for at in _mentions(text, name))
    missing = next((name for name in key.groups if not _mentions(text, name)), None)
    if missing is not None:
        return f"does not name group {missing!r}"
    wrong = next(
        (
            name
            for name, value in key.groups.items()
            if not any(
                _group_value_matches(text, at + len(name), boundaries, written, value) for at in _mentions(text, name)
            )
        ),
        None,
    )
    if wrong is None or _values_first(text, key, boundaries, written):
        return ""
    return f"group {wrong!r}: no {number_text(round(key.groups[wrong].value, 4))} after its name"


def _values_first(text: str, key: AnswerKey, boundaries: list[int], written: list[_Number]) -> bool:
    """ "497 days of sun, 253 days of rain": each group's value just before its name. Read so only when no
    group name is followed by a colon or an equals sign (`sun: 497` is name first, and a name-first list
    with its values shifted by one must not pass read the other way)."""
    labelled = any(
        re.match(r"[\"'*\s]*[:=]", text[at + len(name) :]) for name in key.groups for at in _mentions(text, name)
    )
    if labelled:
        return False
    for name, value in key.groups.items():
        if not any(_value_before_matches(text, at, boundaries, written, value) for at in _mentions(text, name)):
            return False
    return True


def _value_before_matches(text: str, at: int, boundaries: list[int], written: list[_Number], key: KeyNumber) -> bool:
    line_start = text.rfind("\n", 0, at) + 1
    start = max([b for b in boundaries if b < at] + [line_start])
    last = next((n for n in reversed(written) if start <= n.start and n.end <= at), None)
    return last is not None and matches(last, key)


def _group_value_matches(text: str, after: int, boundaries: list[int], written: list[_Number], key: KeyNumber) -> bool:
    line_end = text.find("\n", after)
    stop = min([b for b in boundaries if b >= after] + [line_end if line_end >= 0 else len(text)])
    first = next((n for n in written if after <= n.start < stop), None)
    return first is not None and matches(first, key)


def _check_numbers(text: str, written: list[_Number], key: AnswerKey, question: str) -> str:
    used: set[int] = set()
    for number in key.numbers:
        hit = next((i for i, n in enumerate(written) if i not in used and matches(n, number)), None)
        if hit is None:
            hit = next((i for i, n in enumerate(written) if matches(n, number)), None)
        if hit is None:
            return f"does not state {number_text(round(number.value, 4))}"
        used.add(hit)
    if key.groups or not key.numbers:
        return ""
    asked = {n.value for n in numbers_in(question)}
    others = {n.value for i, n in enumerate(written) if i not in used and n.value not in asked}
    others -= {n.value for i, n in enumerate(written) if i in used}
    if len(others) > HEDGE_NUMBERS:
        return f"hedges: states {len(others)} other numbers"
    return ""


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
