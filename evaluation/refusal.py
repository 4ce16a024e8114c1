"""Did the answer say the database cannot answer? Graded from the text, deterministically.

An abstention question (`fixtures.datasets.abstention`) is answered right when the final answer
says the data or the tool cannot give it, and states no number the question did not: a refusal
followed by "but about 40" is a guess, not an abstention. Whether the model called the tool first
does not matter (the offline models are made to call it on their first turn); what it tells the
user does. On answerable questions the same test says whether an answer refused (`refuses`), the
false-abstention rate an always-refusing model would max out.
"""

from __future__ import annotations

import re

from agent.answer import FinalAnswer
from agent.citations import strip_citations
from evaluation.answers import Verdict

_NOT = r"(?:\s+not|n't)"
#: Ways an answer says the data cannot give what was asked. "There are no X" alone is not one:
#: that claims a count of zero.
REFUSAL = re.compile(
    r"\b(?:can\s?not|can't|unable to|not able to|impossible|no way to"
    rf"|(?:does|do|did){_NOT}\s+(?:have|contain|include|store|record|track|support|provide|offer|list)"
    rf"|(?:is|are|was|were){_NOT}\s+(?:possible|available|supported|stored|recorded|tracked|included|provided)"
    r"|not (?:available|possible|supported|stored|recorded|tracked|included|provided)"
    r"|(?:there is|there's|there are) no (?:such |)(?:property|properties|field|fields|information|data|attribute"
    r"|column|record of|way)"
    r"|no (?:property|field|attribute|column|information|data) (?:for|about|on|named|called|like|that)"
    r"|(?:has|have) no (?:\w+ ){0,2}(?:property|properties|field|fields|attribute|column|data|information)"
    r"|lacks?|missing|need to add)\b",
    re.IGNORECASE,
)
_DIGITS = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?!\w)")


def refuses(answer: str | None) -> bool:
    """The answer says the database or the tool cannot give the answer."""
    return bool(answer and REFUSAL.search(answer))


def _numbers(text: str) -> set[float]:
    return {float(match.replace(",", "")) for match in _DIGITS.findall(strip_citations(text))}


def grade_abstention(answer: str | None, question: str) -> Verdict:
    """Right when the answer refuses and claims no number beyond the question's own."""
    if not answer or not answer.strip():
        return Verdict(correct=False, reason="no answer: it should say the database cannot answer this")
    if not refuses(answer):
        return Verdict(correct=False, reason="answers instead of saying the database cannot answer this")
    claimed = sorted(_numbers(answer) - _numbers(question))
    if claimed:
        shown = ", ".join(f"{n:g}" for n in claimed[:3])
        return Verdict(correct=False, reason=f"says it cannot, but states numbers the question did not ({shown})")
    return Verdict(correct=True, reason="says the database cannot answer this")


def grade_committed_abstention(answer: FinalAnswer) -> Verdict:
    """A committed answer to a question the tool cannot answer: right when it commits "cannot answer"
    (with a reason) and no value beside it."""
    if not answer.refuses:
        return Verdict(correct=False, reason=f"commits an answer ({answer.text()}), not that the database cannot")
    if answer.valued:
        return Verdict(correct=False, reason=f"commits that it cannot, and a value too ({answer.text()})")
    return Verdict(correct=True, reason="commits that the database cannot answer this")
