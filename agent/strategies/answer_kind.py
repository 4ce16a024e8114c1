"""The kind of thing a question's answer is, read from its opening words, and whether the database holds it.

"What color are the virginica petals?" asks for a color, "Which airport in Texas has the most runways?"
counts runways. Where no collection offered names such a thing, by spelling or by meaning, no query can
answer it, and the check says so before any request. The model's own reading of these questions mapped
them onto what the data holds: the color onto the species, the runways onto the latitude (`asks_for`
"name, state"), and the verdict then said the properties hold it (the public split, 2026-11-29).

Read where the words are unambiguous: the two words after an opening "which" or "what" ("Which region of
origin", "Which female penguin": a stored value may come first), and the two after "has the most". Over every
committed split's 1,106 questions (2026-11-30, before any run with it), 83 have such words: each of the 76
answerable ones names something its collections hold, and 6 of the public split's 7 unanswerable ones do not
("airlines" meets `iata` by meaning). Words of proportion ("what share of") were first read as a kind, 3
answerable questions refused; they say nothing of one now. On 20 questions written for palmerpenguins (kept
aside) before the rule ran: 5 of 5 unanswerable refused; 1 of 15 answerable ("the most female penguins", one
word read) before the rule read two words, none after.
"""

from __future__ import annotations

import re

from agent._words import content_stems, meets
from agent.strategies.asked_for import ASKING_WORDS, FUNCTION_WORDS, held_words, typed_for
from agent.strategies.meaning import meant_property
from executors.schema import CollectionSchema

#: The two words after an opening "which" or "what" ("Which region of origin", "Which female penguin").
OPENING_KIND = re.compile(r"^(?:[\w,]+\s+){0,3}?(?:which|what)\s+([\w-]+)(?:\s+(?:of\s+)?([\w-]+))?", re.I)
#: The two words after "has the most": what it counts ("the most female penguins").
COUNTED_MOST = re.compile(
    r"\b(?:has|have|had|with|having)\s+(?:the\s+)?(?:most|fewest|least|more|fewer)\s+([\w-]+)(?:\s+([\w-]+))?", re.I
)
#: Words that say nothing of the kind ("what kind of", "which one", "most often", "what share of").
NO_KIND = (
    frozenset(
        content_stems(
            "kind type sort one ones often common frequently percentage proportion fraction share portion part ratio"
        )
    )
    | ASKING_WORDS
    | FUNCTION_WORDS
)
#: Words of time, which a date property holds ("In what year ...").
TIME_WORDS = frozenset(content_stems("year month day date time hour week decade century"))


def _kind_words(question: str) -> list[list[str]]:
    """The words that may name the kind: two, for a stored value may come first ("female penguins"); a
    capitalized word is a name the question gives ("Which Honda ...") and says nothing of a kind."""
    matches = [OPENING_KIND.search(question), *COUNTED_MOST.finditer(question)]
    found = [[w for w in m.groups() if w] for m in matches if m]
    return [words for words in found if _says_kind(words[0])]


def _says_kind(word: str) -> bool:
    stems = content_stems(word)
    return bool(stems) and not word[0].isupper() and not any(s in NO_KIND or s.isdigit() for s in stems)


def _held(word: str, question: str, collections: list[CollectionSchema]) -> bool:
    """Whether a collection's names or descriptions hold the word (forms and typos of it meet), a date
    property its time, or a property means it."""
    stems = content_stems(word)
    vocabulary = {w for c in collections for w in held_words(c)}
    if any(meets(s, k) or typed_for(s, k) for s in stems for k in vocabulary):
        return True
    dated = any(p.data_type.startswith("date") for c in collections for p in c.properties)
    return (dated and any(s in TIME_WORDS for s in stems)) or any(
        meant_property(word, question, c) for c in collections
    )


def unheld_kind(question: str, collections: list[CollectionSchema]) -> str:
    """The kind of thing the question asks for or counts that no offered collection holds ("" when each is
    held, or the words name none)."""
    for words in _kind_words(question):
        if not any(_held(word, question, collections) for word in words):
            return words[0]
    return ""
