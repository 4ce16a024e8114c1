"""Is the final answer right? The committed answer graded exactly, the text as a fallback.

A committed answer (`agent.answer.FinalAnswer`, the typed part beside the prose) is graded by
`grade_committed`: exactly one value per part of the key (each number within the precision it is
committed to, each name, each group's value), so a hedge cannot be written at all. `grade_answer`
grades the committed part when there is one, and the text otherwise (`evaluation.answer_text.grade`:
a model that ignores the contract, a results file of the paper's runs). The key itself, read off
executed gold results, is built in `evaluation.answer_key`.
"""

from __future__ import annotations

from decimal import Decimal

from agent.answer import FinalAnswer
from evaluation.answer_key import (
    PERCENT_METRICS,
    UNKEYED_METRICS,
    AnswerKey,
    KeyNumber,
    Verdict,
    WrittenNumber,
    chain_key,
    key_number,
    matches,
    numbers_in,
    single_call_key,
    unique,
    word_number,
)
from evaluation.answer_text import HEDGE_NUMBERS, RUNNER_UP_NAMES, grade
from executors.results import number_text

__all__ = [
    "HEDGE_NUMBERS",
    "PERCENT_METRICS",
    "RUNNER_UP_NAMES",
    "UNKEYED_METRICS",
    "AnswerKey",
    "KeyNumber",
    "Verdict",
    "WrittenNumber",
    "chain_key",
    "committed_number",
    "grade",
    "grade_answer",
    "grade_committed",
    "key_number",
    "matches",
    "numbers_in",
    "single_call_key",
    "unique",
    "word_number",
]


# --- committed answers -------------------------------------------------------------------------


def committed_number(value: float) -> WrittenNumber:
    """A committed number, precise to the digits it was committed with (3.46: two decimals, 12 none).
    JSON says no more than the float: "3.50" commits as 3.5, one decimal."""
    exponent = Decimal(repr(float(value))).as_tuple().exponent
    whole = float(value).is_integer()
    decimals = -exponent if isinstance(exponent, int) and exponent < 0 and not whole else 0
    return WrittenNumber(value=float(value), decimals=decimals, percent=False, start=0, end=0)


def _assignment(numbers: list[WrittenNumber], key: list[KeyNumber]) -> bool:
    """Can each committed number be paired with its own key number, every pair a match?"""
    paired: dict[int, int] = {}  # key index -> committed index

    def place(index: int, tried: set[int]) -> bool:
        for k, truth in enumerate(key):
            if k in tried or not matches(numbers[index], truth):
                continue
            tried.add(k)
            if k not in paired or place(paired[k], tried):
                paired[k] = index
                return True
        return False

    return len(numbers) == len(key) and all(place(i, set()) for i in range(len(numbers)))


def _folded(name: str) -> str:
    return name.strip().strip("\"'*").strip().casefold()


def grade_committed(answer: FinalAnswer, key: AnswerKey) -> Verdict:
    """The verdict on a committed answer: one value per part of the key, no more and no fewer."""
    if not key.scored:
        return Verdict(correct=None, reason=f"unscored: {key.unscored}")
    if answer.refuses:
        return Verdict(correct=False, reason="commits that the database cannot answer this")
    names, numbers, groups = list(answer.names), list(answer.numbers), dict(answer.groups)
    if groups and not key.groups:  # "Thai": 4.12 for a name and its number
        names, numbers, groups = [*names, *groups], [*numbers, *groups.values()], {}
    if sorted(map(_folded, names)) != sorted(map(_folded, key.names)):
        if len(names) > len(key.names):
            return Verdict(correct=False, reason=f"commits {len(names)} names for {len(key.names)}: {', '.join(names)}")
        return Verdict(correct=False, reason=f"commits names [{', '.join(names)}], not [{', '.join(key.names)}]")
    committed = [committed_number(n) for n in numbers]
    if len(committed) != len(key.numbers):
        return Verdict(correct=False, reason=f"commits {len(committed)} numbers for {len(key.numbers)}")
    if not _assignment(committed, key.numbers):
        shown = ", ".join(number_text(round(n.value, 4)) for n in key.numbers)
        return Verdict(correct=False, reason=f"commits {', '.join(map(number_text, numbers))}, not {shown}")
    by_name = {_folded(name): value for name, value in groups.items()}
    if len(by_name) != len(groups):
        return Verdict(correct=False, reason="commits a group twice")
    wanted = {_folded(name): (name, value) for name, value in key.groups.items()}
    extra = [name for name in groups if _folded(name) not in wanted]
    if extra:
        return Verdict(correct=False, reason=f"commits groups the answer does not have: {', '.join(extra[:3])}")
    for folded, (name, value) in wanted.items():
        if folded not in by_name:
            return Verdict(correct=False, reason=f"does not commit group {name!r}")
        if not matches(committed_number(by_name[folded]), value):
            got, truth = number_text(by_name[folded]), number_text(round(value.value, 4))
            return Verdict(correct=False, reason=f"group {name!r}: commits {got}, not {truth}")
    return Verdict(correct=True)


def grade_answer(text: str | None, committed: FinalAnswer | None, key: AnswerKey, question: str = "") -> Verdict:
    """The committed answer's verdict when there is one; the text's otherwise."""
    return grade_committed(committed, key) if committed is not None else grade(text, key, question)
