"""The questions one question holds: two questions, two sentences, or one sentence joined by "and".

`chain` answers each part in turn; this reads the parts from the words alone (no model)."""

from __future__ import annotations

import re
from itertools import pairwise

from agent.strategies.rewrite import completed

#: At most this many parts (a longer question is answered as one).
MAX_PARTS = 3
_PART = re.compile(r"[^?]+\?")
#: Words of a part that refer back to an earlier part's answer ("of that subject", "its", "there").
REFERS = re.compile(r"\b(?:that|those|these|this|its|it|their|them|they|there|the same|such)\b", re.IGNORECASE)


#: Where one sentence starts its second question: ", and what ...", "; which ...", "and how many ...", ", and in
#: which neighborhood ..." ("and which have 4 cylinders" is a relative clause, not a question).
_JOINED = re.compile(
    r"(?:\s*,\s*and\s+(?:then\s+)?|\s*;\s*(?:and\s+)?(?:then\s+)?|\s+and\s+(?:then\s+)?)"
    r"(?=(?:(?:in|on|at|for|from|during|to)\s+(?=which|what\b))?(?:what|what's|whats|which|how)\b)"
    r"(?!which\s+(?:have|has|had|are|is|was|were|do|does|did|can)\b)",
    re.IGNORECASE,
)
#: Where a second sentence starts: "Find the busiest state. How many of its airports ...".
_SENTENCE = re.compile(r"(?<=[.!])\s+(?=[A-Z])")
#: Words a part needs to be a question of its own ("what and how" is one question).
_MIN_PART_WORDS = 3


def _as_question(part: str) -> str:
    part = part.strip().rstrip(".!,; ")
    return part if part.endswith("?") else f"{part}?"


def _cut(text: str, at: re.Pattern[str]) -> list[str]:
    """`text` cut where `at` matches, when every piece is long enough to ask on its own."""
    pieces = [p for p in at.split(text) if p.strip()]
    if len(pieces) < 2 or any(len(p.split()) < _MIN_PART_WORDS for p in pieces):
        return [text]
    return pieces


def _told_how(sentences: list[str]) -> list[str]:
    """Each sentence, a short one that tells how to answer the one before it ("Break it down.", "List
    them.": no question mark, at most `_MIN_PART_WORDS` words, one of them referring back) joined to it: it
    asks nothing of its own. "How many prices are there for each symbol? Break it down." was answered twice,
    the second time for one symbol (the public split, 2026-11-30)."""
    joined: list[str] = []
    for sentence in sentences:
        short = len(sentence.split()) <= _MIN_PART_WORDS and not sentence.rstrip().endswith("?")
        if joined and short and REFERS.search(sentence):
            joined[-1] = f"{joined[-1]} {sentence}"
        else:
            joined.append(sentence)
    return joined


#: One sentence whose opening phrase picks an object by an extreme and whose rest asks about it: "In the month
#: with the most disease deaths, how many soldiers died of wounds?" (asked whole, the model listed months).
_PICKED_FIRST = re.compile(
    r"^\s*(?:in|for|on|during|at)\s+the\s+(?P<thing>[\w-]+)\s+(?:with|that had|that has)\s+the\s+"
    r"(?P<most>most|highest|lowest|fewest|least|largest|smallest|greatest|biggest)\s+(?P<what>[^,]+?),\s*"
    r"(?P<rest>(?:what|which|how|who|when|where)\b[^?]*)\??\s*$",
    re.IGNORECASE,
)


def _picked_first(question: str) -> list[str]:
    """The two questions of an opening that picks an object ("Which month had the most disease deaths?",
    "how many soldiers died of wounds in that month?"), or none."""
    found = _PICKED_FIRST.match(question)
    if found is None:
        return []
    thing, most, what, rest = found.group("thing", "most", "what", "rest")
    return [f"Which {thing} had the {most.lower()} {what.strip()}?", f"{rest.strip()} in that {thing}?"]


def parts_of(question: str) -> list[str]:
    """The questions `question` holds, in order; itself alone when it holds one (or more than MAX_PARTS).

    People write two parts as two questions, as two sentences, or as one sentence joined by "and":
    "Which country has the most wines, and what is the average price of the wines from that country?"
    Each sentence is cut where a second question word starts a clause after "and" or a semicolon (not
    after a comma alone: "Of the two most common X, which ..." is one question); a part is at least three
    words, so "what and how much" stays one."""
    if picked := _picked_first(question):
        return picked
    sentences = [p.strip() for p in _PART.findall(question)]
    rest = _PART.sub("", question).strip()
    if rest:
        sentences.append(rest)
    sentences = _told_how([s for piece in sentences for s in _cut(piece, _SENTENCE)])
    parts = [_as_question(p) for sentence in sentences for p in _cut(sentence, _JOINED)]
    if len(parts) < 2 or len(parts) > MAX_PARTS:
        return [question]
    return [parts[0], *(completed(earlier, later) for earlier, later in pairwise(parts))]
