"""The answer a question's form asks for, read off the one result that holds it.

On the public suite's first run (2026-11-27), one call often held the answer in another form than the
question asked for, and the committed answer was graded wrong for the form alone:

- "how many cars get better than 40 mpg": the call listed the 9 cars, and the commit was their names and
  the 9 (`commits 8 names for 0`). A count question's answer is the count.
- "Which region of origin has the best average fuel efficiency?": the call gave the mean per origin, and
  the commit was every origin's mean. A "which ... best/most/highest" question's answer is the group.
- "mean 0-60 time for European cars": the call grouped by origin instead of filtering on it. The
  question names one group, and asks for no breakdown: its answer is that group's value.
- "How many different model years does the dataset cover?": the number of groups, not a count of objects.

Each rule reads only the question's words and the result: nothing here knows a database. A question
that asks per group ("for each", "by", "break down") keeps its groups.
"""

from __future__ import annotations

import re
from itertools import pairwise

from agent.answer import FinalAnswer
from agent.strategies.asked import ASKS_PER_GROUP, LEAST_WORDS
from agent.strategies.naming import nearest_value
from agent.strategies.wording import ASKS_HOW_MANY_DIFFERENT
from executors import QueryResult
from executors.vocabulary import NumberMetric

#: A question that asks for a count of objects.
ASKS_HOW_MANY = re.compile(r"^\W*(?:\w+\W+){0,3}?(?:how many|number of|count of|count the)\b", re.I)
#: A question that asks for a breakdown, beyond `typed`'s "for each", "per", "grouped by".
ASKS_BREAKDOWN = re.compile(
    r"\b(?:break(?:s|ing)? (?:it |this |that )?down|breakdown|by each|each of|across (?:the |all )?\w+s\b)"
    r"|\bby \w+\W*$",
    re.I,
)
#: A question that asks which group is first on some measure: "which origin ...", "what state has ...".
ASKS_WHICH = re.compile(
    r"^\W*(?:\w+\W+){0,3}?(?:which\b|what (?!is\b|are\b|was\b|were\b|'s\b)\w+(?: \w+)? "
    r"(?:has|have|had|is|are|was|were|gets|got|shows|makes|produces|sees)\b)",
    re.I,
)
_TOP = re.compile(
    r"\b(?:most|highest|best|largest|biggest|greatest|heaviest|longest|widest|tallest|fastest|strongest|"
    r"top|max(?:imum)?|more|higher|larger|bigger|greater)\b",
    re.I,
)
_COUNTED_TOP = re.compile(r"\b(?:\d+|two|three|four|five)\s+(?:most|least|top|\w+est)\b", re.I)
#: A question that asks for several: "which cuisines are the most common".
_PLURAL_VERB = re.compile(r"\b(?:are|were|have|do)\b", re.I)
_WORDS = re.compile(r"[A-Za-z][A-Za-z.'-]*")
MODE = NumberMetric.MODE.value


def number_name(value: float) -> str:
    """A number named as a value is: 1982, not 1982.0."""
    return str(int(value)) if float(value).is_integer() else str(value)


def asks_per_group(question: str) -> bool:
    return bool(ASKS_PER_GROUP.search(question) or ASKS_BREAKDOWN.search(question))


def named_group(question: str, groups: list[str]) -> str | None:
    """The one group the question names (a word or two of it meeting a group's name through its forms:
    "European" ~ Europe), or None when it names none or several."""
    words = _WORDS.findall(question)
    phrases = [*words, *(" ".join(pair) for pair in pairwise(words))]
    found = set()
    for phrase in phrases:
        lowered = phrase.lower()
        exact = [g for g in groups if g.lower() == lowered]
        meant = exact[0] if exact else nearest_value(phrase, groups) if len(phrase) >= 4 else None
        if meant is not None:
            found.add(meant)
    return next(iter(found)) if len(found) == 1 else None


def _most_frequent(answer: FinalAnswer, result: QueryResult, question: str) -> str | None:
    """The one top value a "which ... most often" question asks for, where the call listed several top values:
    "Which species most often has petals wider than 1.5 cm?" was answered "virginica, versicolor" (the public
    split, 2026-11-30). None where the question asks for several (a plural verb, "the 3 most"), the least, or
    per group, or where the first two occur equally often (no one answer)."""
    tops = [
        item for metrics in result.aggregations.values() for v in metrics.values() if isinstance(v, list) for item in v
    ]
    if answer.numbers or len(answer.names) < 2 or len(tops) < 2 or tops[0].count <= tops[1].count:
        return None
    one = ASKS_WHICH.search(question) and _TOP.search(question) and not _PLURAL_VERB.search(question)
    if not one or _COUNTED_TOP.search(question) or LEAST_WORDS.search(question) or asks_per_group(question):
        return None
    return str(tops[0].value)


def shaped(answer: FinalAnswer, result: QueryResult, question: str) -> tuple[FinalAnswer, str]:
    """The answer in the form the question asks for, and which rule made it ("" when it is as it was)."""
    if answer.refuses:
        return answer, ""
    listing = not result.aggregations and result.groups is None and result.total_count is not None
    if listing and ASKS_HOW_MANY.search(question) and not ASKS_HOW_MANY_DIFFERENT.search(question):
        return FinalAnswer(numbers=[float(result.total_count or 0)]), "count"
    modes = [m for metrics in result.aggregations.values() for m in metrics]
    if modes == [MODE] and len(answer.numbers) == 1 and ASKS_WHICH.search(question):
        # "which model year has the most cars": the most frequent value is a name, not a number
        return FinalAnswer(names=[number_name(answer.numbers[0])]), "which"
    if (first := _most_frequent(answer, result, question)) is not None:
        return FinalAnswer(names=[first]), "which"
    if not answer.groups or answer.numbers or answer.names:
        return answer, ""
    groups = list(answer.groups)
    if ASKS_HOW_MANY_DIFFERENT.search(question) and not result.truncated:
        return FinalAnswer(numbers=[float(len(groups))]), "distinct"
    if asks_per_group(question):
        return answer, ""
    if ASKS_WHICH.search(question) and not _COUNTED_TOP.search(question):
        low, high = bool(LEAST_WORDS.search(question)), bool(_TOP.search(question))
        if low != high:
            pick = (min if low else max)(groups, key=lambda name: answer.groups[name])
            return FinalAnswer(names=[pick]), "which"
    named = named_group(question, groups)
    if named is not None:
        return FinalAnswer(numbers=[answer.groups[named]]), "named group"
    return answer, ""
