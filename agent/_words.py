"""Words of a question, a stored value or a schema, reduced so that forms of one word meet: "hikes" and
"Hiking", "sunny" and "sun", "categories" and "category". Value linking (`values`) and the check's
grounding of what a question asks for (`check`) share it."""

from __future__ import annotations

import re

from executors.schema import EN_STOPWORDS

_WORD = re.compile(r"[a-z0-9]+")
#: English plurals no ending rule reaches, as their singular ("media" ~ `medium`: 3 questions about
#: artworks' media refused, 2026-11-26). A table, not a rule: "-ia" as "-ium" also met India with indie.
IRREGULAR_PLURALS = {
    "media": "medium",
    "criteria": "criterion",
    "phenomena": "phenomenon",
    "bacteria": "bacterium",
    "curricula": "curriculum",
    "millennia": "millennium",
    "strata": "stratum",
    "indices": "index",
    "appendices": "appendix",
    "matrices": "matrix",
    "vertices": "vertex",
    "analyses": "analysis",
    "diagnoses": "diagnosis",
    "theses": "thesis",
    "crises": "crisis",
    "children": "child",
    "people": "person",
    "men": "man",
    "women": "woman",
    "feet": "foot",
    "teeth": "tooth",
    "mice": "mouse",
}
#: The months' names, in calendar order (dates as people write them, and searches that only name one).
MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
#: (suffix, replacement), the first that fits is taken: plural, verb and adjective endings.
_SUFFIXES = (("sses", "ss"), ("ies", ""), ("ied", ""), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""), ("y", ""))


def stem(word: str) -> str:
    """A crude English stem, enough to meet a stored category: hikes/hiking/hike -> hik, sunny/sun -> sun,
    categories/category -> categor."""
    word = word.lower()
    word = IRREGULAR_PLURALS.get(word, word)
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not (suffix == "s" and word.endswith("ss")):
            word = word[: len(word) - len(suffix)] + replacement
            break
    if len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]  # sunn -> sun, runn -> run
    if len(word) >= 4 and word.endswith("e"):
        word = word[:-1]  # hike -> hik
    return word


def content_stems(text: str) -> list[str]:
    """The stems of `text`'s words but stopwords ("Class B" needs a "b" in the question too)."""
    return [stem(w) for w in _WORD.findall(text.lower()) if w not in EN_STOPWORDS]


def split_name(name: str) -> str:
    """A property or collection name as words: "maxGroupSize" -> "max Group Size", "temp_max" -> "temp max"."""
    return re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name).replace("_", " ")


def meets(word: str, other: str) -> bool:
    """Two stems are one word, or one is a prefix of at least four letters of the other ("temp" names
    "temperature"; "fee" does not name "feedback")."""
    return word == other or (len(other) >= 4 and word.startswith(other)) or (len(word) >= 4 and other.startswith(word))


def names_property(text: str, prop: str) -> bool:
    """Whether a word of the text names the property by one of its words' forms ("require" `requiresBooking`)."""
    named = content_stems(split_name(prop))
    return any(meets(w, p) for w in content_stems(text) for p in named)


def close_spelling(a: str, b: str) -> bool:
    """A typo: at most one edit in five letters, for words of four letters or more, a swap of two letters
    one edit ("airprot" ~ airport, "japna" ~ japan; optimal string alignment distance)."""
    if min(len(a), len(b)) < 4 or abs(len(a) - len(b)) > max(len(a), len(b)) // 5:
        return False
    before: list[int] = []
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        current = [i]
        for j, y in enumerate(b, start=1):
            cost = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y))
            if i > 1 and j > 1 and x == b[j - 2] and a[i - 2] == y:
                cost = min(cost, before[j - 2] + 1)
            current.append(cost)
        before, previous = previous, current
    return previous[-1] <= max(len(a), len(b)) // 5
