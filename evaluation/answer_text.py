"""The text grader: is a free-text final answer right? For answers without a committed part.

What a right answer must say:

- every key number, correct to the precision it is written in (`evaluation.answer_key.matches`);
- every key name (case-insensitive, as a whole word), and at most one other value of the same
  property, after them (a runner-up in passing, not a list of every value);
- per group: the group's name, followed by its value before any other group is named (or the
  values before their names, or a list of values beside a list of names in the same order:
  "31, 27 and 12 for Spring, Fall and Summer"); every key group, and no group the data does not have.

A key value counts only where it is stated plainly. Not where it is negated ("not X; it is Y"), a
bound ("fewer than X", "at least X", "X or more"), an end of a range ("between X and Y"), one of
alternatives ("either X or Y"), one of a list of candidates ("possible values: a, X, b"), or asked
("X?"). An answer that admits it could not answer and then guesses ("maybe X") is wrong, and
beyond the key's numbers (and numbers that appear in the question) an answer may state at most
`HEDGE_NUMBERS` others.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Protocol

from agent.citations import strip_citations
from evaluation.answer_key import AnswerKey, KeyNumber, Verdict, matches, numbers_in
from executors.results import number_text

HEDGE_NUMBERS = 2
#: Other values of a named property an answer may mention after the key's names.
RUNNER_UP_NAMES = 1

_FILLER = r"(?:[\s\"'*_(]|\b(?:exactly|quite|really|actually|just|simply|precisely|equal\s+to|be|the|a|an)\b)*"
_NEGATED = re.compile(
    r"(?:\bnot|n't|\bnever|\bnor|\brather\s+than|\binstead\s+of|\bother\s+than|\bexcept)" + _FILLER + r"$",
    re.IGNORECASE,
)
_BOUND_BEFORE = re.compile(
    r"\b(?:(?:fewer|less|more|greater|higher|lower|larger|smaller|bigger)\s+than|at\s+(?:least|most)|up\s+to"
    r"|as\s+(?:many|much|few|little|high|low)\s+as|above|below|beyond|exceed(?:s|ing)?|upwards\s+of"
    r"|in\s+excess\s+of|no\s+(?:more|less|fewer)\s+than)" + _FILLER + r"$",
    re.IGNORECASE,
)
_BOUND_AFTER = re.compile(
    r"[\s\"'*_)]*(?:\+|(?:or|and)\s+(?:more|fewer|less|higher|lower|above|below|greater|so|over|under|up)\b"
    r"|at\s+(?:least|most)\b|plus\b)",
    re.IGNORECASE,
)
_RANGE_OPEN = re.compile(r"\b(?:between|from)" + _FILLER + r"$", re.IGNORECASE)
_RANGE_JOIN = re.compile(r"\s*(?:-|–|—|to|through|and)\s*", re.IGNORECASE)
_DASH_JOIN = re.compile(r"\s*(?:-|–|—|to|through)\s*", re.IGNORECASE)
#: What may join the items of a list: commas, semicolons, slashes, "and", "or", quotes and emphasis.
_LIST_JOIN = re.compile(r"[\s\"'*_]*(?:[,;/]|\band\b|\bor\b|\bnor\b|&)[\s\"'*_]*(?:(?:and|or|nor)\s+)?[\s\"'*_]*", re.I)
_OR = re.compile(r"\bor\b(?!\s+(?:more|fewer|less|higher|lower|above|below|greater|so|over|under)\b)", re.IGNORECASE)
_SENTENCE_BREAK = re.compile(r"[.!?;\n]|:\s")
_EITHER = re.compile(r"\beither" + _FILLER + r"$", re.IGNORECASE)
_LIST_END = re.compile(r"[\s\"'*_]*(?:$|[.)\]!\n])")
_LIST_START = re.compile(r"(?:^|[:(\[\n])[\s\"'*_]*$")
#: An answer that lists candidates says so.
_CANDIDATES = re.compile(
    r"\b(?:possible|candidate|plausible|potential)\s+(?:values?|answers?|options?|results?)\b|\bcandidates?\s*:",
    re.IGNORECASE,
)
#: An answer that says it could not answer ...
_ADMITS_FAILURE = re.compile(
    r"\b(?:could\s*n[o']?t|can\s*not|can't|unable|not\s+able|failed\s+to|did\s*n[o']?t\s+(?:find|get|return|work|manage)"
    r"|no\s+results?|not\s+(?:sure|certain)|unsure|uncertain|do\s*n[o']?t\s+know)\b",
    re.IGNORECASE,
)
#: ... and then guesses.
_TENTATIVE = re.compile(
    r"\b(?:maybe|perhaps|possibly|probably|presumably|likely|guess(?:ing)?|might|estimated?|assum(?:e|ing))\b|\?",
    re.IGNORECASE,
)


def _mentions(text: str, name: str) -> list[int]:
    pattern = r"(?<!\w)" + re.escape(name) + r"(?!\w)"
    return [m.start() for m in re.finditer(pattern, text, re.IGNORECASE)]


# --- how a value is stated ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Name:
    """A name mentioned in an answer (lower-cased) and where."""

    start: int
    end: int
    name: str


class _Spanned(Protocol):
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...


def _runs(text: str, spans: Sequence[_Spanned]) -> list[list[int]]:
    """Indices of spans written one after another as a list ("a, b or c"), in order."""
    runs: list[list[int]] = []
    for index, span in enumerate(spans):
        if runs and _LIST_JOIN.fullmatch(text[spans[index - 1].end : span.start]):
            runs[-1].append(index)
        else:
            runs.append([index])
    return runs


def _or_linked(text: str, spans: Sequence[_Spanned]) -> list[set[int]]:
    """Sets of spans offered as alternatives: joined by "or" within a sentence, or a list opened by "either"."""
    linked: list[set[int]] = []
    for run in _runs(text, spans):
        joins = [text[spans[a].end : spans[b].start] for a, b in pairwise(run)]
        if len(run) > 1 and (any(_OR.search(j) for j in joins) or _EITHER.search(text[: spans[run[0]].start])):
            linked.append(set(run))
    for a, b in pairwise(range(len(spans))):
        between = text[spans[a].end : spans[b].start]
        if len(between) <= 40 and _OR.search(between) and not _SENTENCE_BREAK.search(between):
            linked.append({a, b})
    return linked


def _candidate_lists(text: str, spans: Sequence[_Spanned]) -> list[set[int]]:
    """Lists of bare values: three or more in a row, or two joined by a comma that end the sentence."""
    lists = []
    for run in _runs(text, spans):
        if len(run) < 2:
            continue
        first, last = spans[run[0]], spans[run[-1]]
        bare = bool(_LIST_END.match(text[last.end :])) or bool(_LIST_START.search(text[: first.start]))
        comma = any("," in text[spans[a].end : spans[b].start] for a, b in pairwise(run))
        if len(run) >= 3 or (bare and comma):
            lists.append(set(run))
    return lists


class _Reading:
    """An answer read once: its numbers and names, and how each is stated (plainly, or hedged)."""

    def __init__(self, text: str, names: Iterable[str]) -> None:
        self.text = strip_citations(text)
        self.numbers = numbers_in(text)
        named: list[_Name] = []
        for name in sorted(set(names), key=len, reverse=True):  # longest first: "New York" before "York"
            for at in _mentions(self.text, name):
                if not any(s.start < at + len(name) and at < s.end for s in named):
                    named.append(_Name(at, at + len(name), name.lower()))
        self.names = sorted(named, key=lambda s: s.start)
        self.number_alternatives = _or_linked(self.text, self.numbers)
        self.name_alternatives = _or_linked(self.text, self.names)
        self.number_lists = _candidate_lists(self.text, self.numbers)
        self.name_lists = [run for run in _candidate_lists(self.text, self.names) if len(run) >= 3]

    def _qualified(self, span: _Spanned, ranged: bool) -> str | None:
        before, after = self.text[: span.start], self.text[span.end :]
        if _NEGATED.search(before[-60:]):
            return "negated"
        if re.match(r"[\s\"'*_)]*\?", after):
            return "as a question"
        if isinstance(span, _Name):
            return None
        if _BOUND_BEFORE.search(before[-60:]) or _BOUND_AFTER.match(after):
            return "as a bound"
        return "as an end of a range" if ranged else None

    def _ranged(self, index: int) -> bool:
        spans = self.numbers
        for a, b in ((index - 1, index), (index, index + 1)):
            if a < 0 or b >= len(spans):
                continue
            between = self.text[spans[a].end : spans[b].start]
            if _DASH_JOIN.fullmatch(between) or (
                _RANGE_JOIN.fullmatch(between) and _RANGE_OPEN.search(self.text[: spans[a].start][-40:])
            ):
                return True
        return False

    def number_state(self, index: int, key: KeyNumber, keys: list[KeyNumber]) -> str | None:
        """None when number `index` states `key` plainly; otherwise how it is hedged."""
        qualified = self._qualified(self.numbers[index], self._ranged(index))
        if qualified:
            return qualified
        for linked in self.number_alternatives:
            if index in linked and any(not matches(self.numbers[i], key) for i in linked):
                return "among alternatives"
        for listed in self.number_lists:
            if index in listed and any(not any(matches(self.numbers[i], k) for k in keys) for i in listed):
                return "in a list of candidates"
        return None

    def name_state(self, index: int, names: list[str]) -> str | None:
        """None when name `index` is stated plainly; otherwise how it is hedged."""
        span = self.names[index]
        qualified = self._qualified(span, False)
        if qualified:
            return qualified
        for linked in self.name_alternatives:
            if index in linked and any(self.names[i].name != span.name for i in linked):
                return "among alternatives"
        wanted = {n.lower() for n in names}
        for listed in self.name_lists:
            if index in listed and any(self.names[i].name not in wanted for i in listed):
                return "in a list of candidates"
        return None

    def states(self, key: KeyNumber, keys: list[KeyNumber]) -> tuple[int | None, str | None]:
        """The first number stating `key` plainly (its index), or how the matching ones are hedged."""
        hedged = None
        for index, number in enumerate(self.numbers):
            if matches(number, key):
                state = self.number_state(index, key, keys)
                if state is None:
                    return index, None
                hedged = hedged or state
        return None, hedged


def grade(answer: str | None, key: AnswerKey, question: str = "") -> Verdict:
    """The verdict on one final answer's text (None when the question has no key)."""
    if not key.scored:
        return Verdict(correct=None, reason=f"unscored: {key.unscored}")
    text = (answer or "").strip()
    if not text:
        return Verdict(correct=False, reason="no answer")
    if _ADMITS_FAILURE.search(text) and _TENTATIVE.search(text):
        return Verdict(correct=False, reason="guesses after saying it could not answer")
    if _CANDIDATES.search(text):
        return Verdict(correct=False, reason="hedges: lists candidates")
    reading = _Reading(text, [*key.names, *key.other_names, *key.groups, *key.other_groups])
    for check in (_check_names, _check_groups, _check_numbers):
        reason = check(reading, key, question)
        if reason:
            return Verdict(correct=False, reason=reason)
    return Verdict(correct=True)


def _check_names(reading: _Reading, key: AnswerKey, question: str) -> str:
    text = reading.text
    firsts = []
    for name in key.names:
        seen = [i for i, s in enumerate(reading.names) if s.name == name.lower()]
        if not seen:
            return f"does not name {name!r}"
        states = [reading.name_state(i, key.names) for i in seen]
        plain = [i for i, state in zip(seen, states, strict=True) if state is None]
        if not plain:
            return f"hedges: names {name!r} only {states[0]}"
        firsts.append(reading.names[plain[0]].start)
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


def _check_groups(reading: _Reading, key: AnswerKey, question: str) -> str:
    if not key.groups:
        return ""
    text = reading.text
    invented = [g for g in key.other_groups if _mentions(text, g) and not any(_mentions(k, g) for k in key.groups)]
    if invented:
        return f"names groups the answer does not have: {', '.join(invented[:3])}"
    missing = next((name for name in key.groups if not _mentions(text, name)), None)
    if missing is not None:
        return f"does not name group {missing!r}"
    readings = (_name_first(reading, key), _values_first(reading, key), _in_parallel(reading, key))
    if any(all(found.values()) for found in readings if found):
        return ""
    wrong = next(name for name, right in readings[0].items() if not right)
    return f"group {wrong!r}: no {number_text(round(key.groups[wrong].value, 4))} after its name"


def _group_spans(reading: _Reading, key: AnswerKey) -> list[_Name]:
    return [s for s in reading.names if s.name in {g.lower() for g in [*key.groups, *key.other_groups]}]


def _plain_value(reading: _Reading, index: int | None, value: KeyNumber, key: AnswerKey) -> bool:
    if index is None:
        return False
    return (
        matches(reading.numbers[index], value) and reading.number_state(index, value, list(key.groups.values())) is None
    )


def _name_first(reading: _Reading, key: AnswerKey) -> dict[str, bool]:
    """Each group's name followed by its value, before the next group's name (or the line's end)."""
    text, spans = reading.text, _group_spans(reading, key)
    found = {}
    for name, value in key.groups.items():
        right = False
        for span in (s for s in spans if s.name == name.lower()):
            line_end = text.find("\n", span.end)
            stop = min([s.start for s in spans if s.start >= span.end] + [line_end if line_end >= 0 else len(text)])
            first = next((i for i, n in enumerate(reading.numbers) if span.end <= n.start < stop), None)
            right = right or _plain_value(reading, first, value, key)
        found[name] = right
    return found


def _values_first(reading: _Reading, key: AnswerKey) -> dict[str, bool] | None:
    """ "497 days of sun, 253 days of rain": each group's value just before its name. Read so only when no
    group name is followed by a colon or an equals sign (`sun: 497` is name first, and a name-first list
    with its values shifted by one must not pass read the other way)."""
    text, spans = reading.text, _group_spans(reading, key)
    if any(re.match(r"[\"'*\s]*[:=]", text[s.end :]) for s in spans if s.name in {g.lower() for g in key.groups}):
        return None
    found = {}
    for name, value in key.groups.items():
        right = False
        for span in (s for s in spans if s.name == name.lower()):
            line_start = text.rfind("\n", 0, span.start) + 1
            start = max([s.end for s in spans if s.end <= span.start] + [line_start])
            last = next(
                (
                    i
                    for i in reversed(range(len(reading.numbers)))
                    if start <= reading.numbers[i].start and reading.numbers[i].end <= span.start
                ),
                None,
            )
            right = right or _plain_value(reading, last, value, key)
        found[name] = right
    return found


#: What may stand between a list of values and the list of the groups they belong to.
_PARALLEL_JOIN = re.compile(r"[^\d\n.;]{0,30}")


def _in_parallel(reading: _Reading, key: AnswerKey) -> dict[str, bool] | None:
    """ "31, 27 and 12 for Spring, Fall and Summer" (or the names first): two lists of equal length,
    one beside the other, read in the same order."""
    text, spans = reading.text, _group_spans(reading, key)
    found: dict[str, bool] = {}
    value_runs = [r for r in _runs(text, reading.numbers) if len(r) > 1]
    name_runs = [[spans[i] for i in r] for r in _runs(text, spans) if len(r) > 1]
    for values in value_runs:
        for names in name_runs:
            first_values, last_values = reading.numbers[values[0]], reading.numbers[values[-1]]
            if len(values) != len(names):
                continue
            if names[0].start >= last_values.end:
                between = text[last_values.end : names[0].start]
            elif first_values.start >= names[-1].end:
                between = text[names[-1].end : first_values.start]
            else:
                continue
            if not _PARALLEL_JOIN.fullmatch(between):
                continue
            for index, span in zip(values, names, strict=True):
                name = next((g for g in key.groups if g.lower() == span.name), None)
                if name is not None:
                    right = _plain_value(reading, index, key.groups[name], key)
                    found[name] = found.get(name, False) or right
    if set(found) != set(key.groups):
        return None
    return found


def _check_numbers(reading: _Reading, key: AnswerKey, question: str) -> str:
    used: set[int] = set()
    for number in key.numbers:
        index, hedged = reading.states(number, key.numbers)
        if index is None:
            shown = number_text(round(number.value, 4))
            return f"hedges: states {shown} only {hedged}" if hedged else f"does not state {shown}"
        used.add(index)
    if key.groups or not key.numbers:
        return ""
    written = reading.numbers
    asked = {n.value for n in numbers_in(question)}
    others = {n.value for i, n in enumerate(written) if i not in used and n.value not in asked}
    others -= {n.value for i, n in enumerate(written) if i in used}
    others = {v for v in others if not any(matches(n, k) for n in written if n.value == v for k in key.numbers)}
    if len(others) > HEDGE_NUMBERS:
        return f"hedges: states {len(others)} other numbers"
    return ""
