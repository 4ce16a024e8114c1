"""The kind of thing a question's answer is, read from its opening words, and whether the database holds it.

"What color are the virginica petals?" asks for a color, "Which airport in Texas has the most runways?"
counts runways. Where no collection offered names such a thing, by spelling or by meaning, no query can
answer it, and the check says so before any request. The model's own reading of these questions mapped
them onto what the data holds: the color onto the species, the runways onto the latitude (`asks_for`
"name, state"), and the verdict then said the properties hold it (the public split, 2026-11-29).

Read where the words are unambiguous: the two words after an opening "which" or "what" ("Which region of
origin", "Which female penguin": a stored value may come first), the first two past words of asking after
"what is the" ("the top speed"), and the two after "has the most". A word of size stands for its measure
("longest", a length). Measured on every committed split's 1,106 questions (2026-11-30, before any run with
it): 370 answerable ones have such words, and each names something its collections hold; of the 50
unanswerable ones (the public split's 30, the abstention split's 20), 30 have them and 18 name nothing held
(of the 12 others, 6 name a statistic the tool cannot compute, which the check refuses by its name, and
"airlines" meets `iata` by meaning). Found on the way and fixed before the rule was kept: words of proportion
and of comparison ("what share of", "the difference between") read as kinds, and "the longest" as no
measure: 8 answerable questions refused. On 35 questions written for palmerpenguins (kept aside) before the
rule ran: 9 of 10 unanswerable refused; 1 of 25 answerable ("the most female penguins", one word read) before
the rule read two words, none after. Where a collection can search, the objects an opening "which" names are
left to the search ("Which places are bars?" of a collection of restaurants; CI's first run of the rule
refused it): the opening read holds for collections without a vectorizer, as a user's own tables often are.
"""

from __future__ import annotations

import re

from agent._words import content_stems, split_name
from agent.strategies.asked_for import ASKING_WORDS, DIMENSION_STEMS, FUNCTION_WORDS, held_words, meets_any
from agent.strategies.meaning import meant_property
from agent.strategies.wording import initials
from executors.schema import CollectionSchema

#: The two words after an opening "which" or "what" ("Which region of origin", "Which female penguin").
OPENING_KIND = re.compile(r"^(?:[\w,]+\s+){0,3}?(?:which|what)\s+([\w-]+)(?:\s+(?:of\s+)?([\w-]+))?", re.I)
#: The words after an opening "what is the" ("What's the top speed ..."): the first two past words of asking.
WHAT_IS = re.compile(
    r"^(?:[\w,]+\s+){0,3}?what(?:'s|\s+is|\s+was|\s+are|\s+were)\s+(?:the\s+|an?\s+)?((?:[\w'-]+[\s,?]*){1,5})", re.I
)
#: The two words after "has the most": what it counts ("the most female penguins").
COUNTED_MOST = re.compile(
    r"\b(?:has|have|had|with|having)\s+(?:the\s+)?(?:most|fewest|least|more|fewer)\s+([\w-]+)(?:\s+([\w-]+))?", re.I
)
#: Words that say nothing of the kind ("what kind of", "which one", "most often", "what share of"), and words
#: any object has whatever its properties ("What is the name of ...": a title, a name or its id).
NO_KIND = (
    frozenset(
        content_stems(
            "kind type sort one ones often common frequently percentage proportion fraction share portion part ratio "
            "best worst difference spread gap range "
            "name names title id ids detail details information info thing things object objects record records"
        )
    )
    | ASKING_WORDS
    | FUNCTION_WORDS
)
#: Words of time, which a date property holds ("In what year ...").
TIME_WORDS = frozenset(content_stems("year month day date time hour week decade century"))


def _kind_words(question: str, searchable: bool = False) -> list[list[str]]:
    """The words that may name the kind: two, for a stored value may come first ("female penguins"); a
    capitalized word is a name the question gives ("Which Honda ...") and says nothing of a kind. Where a
    collection can search, the objects an opening "which" names may be found by meaning ("Which places are
    bars?" of restaurants): that read is left out, as `check` leaves names it holds nowhere to a search."""
    opening = None if searchable else OPENING_KIND.search(question)
    matches = [opening, *COUNTED_MOST.finditer(question)]
    found = [[w for w in m.groups() if w] for m in matches if m]
    if what_is := WHAT_IS.search(question):  # "the top speed": past "top", the kind
        words = re.findall(r"[\w'-]+", what_is.group(1))
        while words and (not content_stems(words[0]) or any(s in NO_KIND for s in content_stems(words[0]))):
            words.pop(0)
        found.append(words[:2])
    return [words for words in found if words and _says_kind(words[0])]


def _says_kind(word: str) -> bool:
    stems = content_stems(word)
    return bool(stems) and not word[0].isupper() and not any(s in NO_KIND or s.isdigit() for s in stems)


def _held(word: str, question: str, collections: list[CollectionSchema], vocabulary: set[str], dated: bool) -> bool:
    """Whether the collections' names or descriptions (`vocabulary`) hold the word (forms and typos of it meet;
    a word of size its measure, "longest" a length), a date property its time, a property's initials spell it,
    or a property means it."""
    stems = [*content_stems(word), *(DIMENSION_STEMS[s] for s in content_stems(word) if s in DIMENSION_STEMS)]
    if meets_any(stems, vocabulary) or (dated and any(s in TIME_WORDS for s in stems)):
        return True
    # a unit written as a name's initials: "mpg" is `miles_per_gallon`
    if any(
        len(split_name(p.name).split()) > 1 and word.lower() == initials(p.name)
        for c in collections
        for p in c.properties
    ):
        return True
    return any(meant_property(word, question, c) for c in collections)


def unheld_kind(question: str, collections: list[CollectionSchema]) -> str:
    """The kind of thing the question asks for or counts that no offered collection holds ("" when each is
    held, or the words name none)."""
    vocabulary = {w for c in collections for w in held_words(c)}
    dated = any(p.data_type.startswith("date") for c in collections for p in c.properties)
    for words in _kind_words(question, any(c.searchable for c in collections)):
        if not any(_held(word, question, collections, vocabulary, dated) for word in words):
            return words[0]
    return ""
