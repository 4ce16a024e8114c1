"""What a question's words ask for, read before or beside the model's call: one number or one per group,
the extreme or the mean of a number, the least of something. One owner for these readings; `typed`,
`values`, `answer_form`, `chain` and `arithmetic` read them.
"""

from __future__ import annotations

import re

from agent._words import content_stems, meets, split_name
from agent.strategies.wording import ASKS_HOW_MANY_DIFFERENT, NUMBER_WORDS, WEATHER_MEASURES, measure_words

#: A question that asks for its answer per group ("per night" and the like are units, not groups); the
#: words after the marker, up to a comma or the end, name the property.
ASKS_PER_GROUP = re.compile(
    r"\b(?:for (?:each|every)|(?:of|in) (?:each|every) (?:type|kind|category) of|grouped by|split by|broken down by|"
    r"break(?:s|ing)? (?:it |this |that )?down (?:[^,?.;]*? )?by|"
    r"per (?!(?:night|day|hour|minute|week|month|year|person|guest|head|cent|gallon|liter|litre|acre|hectare|mile|"
    r"kilometer|km|unit|capita|annum|share)\b)(?=\w))\s*(?P<words>[^,?.;]*)",
    re.I,
)

#: A question of one number ("what was the average ...", "how many ...") and the words that would ask for
#: one per group instead (which value, each, per, by, grouped, split, broken down, among the groups).
#: A question typed without its "what is" opens with the statistic: "Average petal width for virginica or
#: versicolor flowers?", "avg weight of US cars with 8 cylinders?" (16 of the public suite's, none of our splits').
ONE_NUMBER = re.compile(
    r"^\W*(?:what(?:'s|\s+is|\s+was|\s+were|\s+are)?|how\s+(?:many|much)|count"
    r"|(?:the\s+)?(?:average|avg|mean|median|total|sum|number|lowest|highest|smallest|largest|min(?:imum)?|max(?:imum)?))\b",
    re.I,
)
#: "which", "who" and "whose" ask which group only as a question's (or a clause's) first word: after a noun they
#: bind a condition ("courses whose credits are between 1 and 4", "doctors who consult in Spanish"), and read
#: as asking per group they kept the model's group-by on 3 of the compound split's one-number questions.
GROUP_WORDS = re.compile(
    r"\b(?:each|every|by|group\w*|split|break\w*|among|respectively|distribution)\b"
    r"|(?:^\W*|[,;.?!]\s*(?:and\s+)?)(?:which|who|whose)\b",
    re.I,
)


def asks_for_groups(question: str) -> bool:
    """Whether the question asks for one value per group, or which group ("per" a unit of measure is none)."""
    return bool(GROUP_WORDS.search(question) or ASKS_PER_GROUP.search(question))


def one_number_asked(question: str) -> bool:
    """The question asks for one number ("What was the average mpg for 1982?", "How many cars ...?"): no group
    asked, and not how many different values (the number of groups)."""
    asked = ONE_NUMBER.search(question) and not ASKS_HOW_MANY_DIFFERENT.search(question)
    return bool(asked) and not asks_for_groups(question)


#: "What's the northernmost latitude ...", "what was the lowest yield of any trial ...": one extreme value
#: of a number, asked by its superlative; the words after it name the number.
_EXTREME_WORDS = (
    r"(?P<words>[a-z][a-z -]*?)"
    r"(?=\s+(?:of|for|among|in|at|by|reached|across|recorded|ever|on|any|from|that|with)\b|\s*[?,.;]|$)"
)
_EXTREME = re.compile(rf"\bwhat(?:'s|\s+is|\s+was|\s+were)?\s+the\s+(?P<sup>[a-z]+)\s+{_EXTREME_WORDS}", re.I)
#: "best" is the most and "worst" the least, as of a yield, a rating or a fuel economy (of a time it would be
#: the other way round: none of the public suite's questions, nor our splits', asks for a best time).
_MOST = {
    "highest",
    "largest",
    "biggest",
    "greatest",
    "maximum",
    "max",
    "longest",
    "heaviest",
    "widest",
    "tallest",
    "best",
    "latest",
    "hottest",
    "warmest",
    "wettest",
    "windiest",
}
_LEAST = {
    "lowest",
    "smallest",
    "minimum",
    "min",
    "shortest",
    "lightest",
    "narrowest",
    "worst",
    "fewest",
    "earliest",
    "cheapest",
    "coldest",
    "coolest",
    "driest",
}
#: "the most expensive nightly price": most and least before an adjective (not "the most common party size")
_MOST_LEAST = ("most", "least")
_NOT_OF_A_NUMBER = {"common", "frequent", "popular", "often", "usual", "typical", "likely"}
#: The compass superlatives: the extreme of a coordinate (west and south are the smaller numbers).
_COMPASS = {
    "northernmost": ("latitude", "MAX"),
    "southernmost": ("latitude", "MIN"),
    "easternmost": ("longitude", "MAX"),
    "westernmost": ("longitude", "MIN"),
}
#: Words after a superlative that make it a statistic's, not one value's ("the highest average rating").
_OF_STATISTIC = {"average", "mean", "median", "total", "number", "count", "sum", "share", "percentage", "combined"}


#: The same asked without "what is the", as a question's first words: "Smallest sepal length of any flower that
#: isn't a setosa?", "Highest monthly closing price ever for GOOG?" (only a superlative opens it: "How many ...").
_EXTREME_OPENING = re.compile(
    rf"^\W*(?:the\s+)?(?P<sup>{'|'.join(sorted({*_MOST, *_LEAST, *_COMPASS, *_MOST_LEAST}))})\s+{_EXTREME_WORDS}",
    re.I,
)


def extreme_asked(question: str, numbers: list[str]) -> tuple[str, str] | None:
    """The number property and MAX or MIN a question asks for by a superlative ("the lowest yield of any
    trial": yield, MIN; "the northernmost latitude": latitude, MAX); None for any other question, a
    superlative of a statistic ("the highest average rating"), or words naming no one number property."""
    found = _EXTREME.search(question) or _EXTREME_OPENING.search(question)
    if found is None or found["words"].split()[0].lower() in _OF_STATISTIC:
        return None
    return _superlative_of(found["sup"], found["words"], numbers)


def _superlative_of(sup: str, after: str, numbers: list[str]) -> tuple[str, str] | None:
    """The one number property a superlative and the words after it name, with MAX or MIN."""
    sup = sup.lower()
    if sup in _COMPASS:
        coordinate, metric = _COMPASS[sup]
        words = f"{coordinate} {after}"
    elif sup in _MOST or sup in _LEAST:  # "the wettest days": the precipitation's (`WEATHER_MEASURES`)
        metric, words = ("MAX" if sup in _MOST else "MIN"), f"{sup} {WEATHER_MEASURES.get(sup, '')} {after}"
    elif sup in _MOST_LEAST and after.split()[0].lower() not in _NOT_OF_A_NUMBER:
        metric, words = ("MAX" if sup == "most" else "MIN"), after
    else:
        return None
    named = measure_words(words)
    props = [p for p in numbers if all(any(meets(w, n) for w in named) for n in content_stems(split_name(p)))]
    if len(props) != 1:
        props = [p for p in numbers if any(meets(w, n) for w in named for n in content_stems(split_name(p)))]
    return (props[0], metric) if len(props) == 1 else None


_SUPERLATIVE = "|".join(sorted({*_MOST, *_LEAST, *_COMPASS}))
#: The first N objects by the number a superlative names, counted in the words: "the 5 heaviest cars", "the
#: three flowers with the longest petals". A statistic asked of them is over those N, not over all.
_COUNTED_FIRST = re.compile(
    rf"\b(?P<n>\d+|{'|'.join(NUMBER_WORDS)})\s+(?:[a-z]+\s+){{0,2}}?(?:with\s+the\s+)?"
    rf"(?P<sup>{_SUPERLATIVE})\s+{_EXTREME_WORDS}",
    re.I,
)


def first_counted(question: str, numbers: list[str]) -> tuple[str, str, int] | None:
    """The sort the question counts: the number property a superlative names, its order ("descending" for the
    most) and the count written ("the 5 heaviest cars": weight, descending, 5); None where it counts none."""
    found = _COUNTED_FIRST.search(question)
    if found is None:
        return None
    count = int(found["n"]) if found["n"].isdigit() else NUMBER_WORDS[found["n"].lower()]
    extreme = _superlative_of(found["sup"], found["words"], numbers)
    if extreme is None or count < 2:
        return None
    prop, metric = extreme
    return prop, "descending" if metric == "MAX" else "ascending", count


#: "Which month had the most disease deaths?": what a sort is by, the number the superlative names.
_SORTED_BY = re.compile(
    rf"^\W*(?:\w+\s+)?which\b.*?\bthe\s+(?P<sup>{_SUPERLATIVE}|most|least|fewest)\s+{_EXTREME_WORDS}", re.I
)


def sort_asked(question: str, numbers: list[str]) -> tuple[str, str] | None:
    """The number property and order a "which ... the most X" question ranks its objects by ("Which month had
    the most disease deaths?": disease, descending); None where the words name no one number property."""
    found = _SORTED_BY.search(question)
    if found is None:
        return None
    sup = "least" if found["sup"].lower() == "fewest" else found["sup"]
    extreme = _superlative_of(sup, found["words"], numbers)
    return (extreme[0], "descending" if extreme[1] == "MAX" else "ascending") if extreme is not None else None


_MEAN_WORDS = re.compile(r"\b(?:average|mean|avg|on average)\b", re.I)
_SUM_WORDS = re.compile(r"\b(?:total|sum|combined|altogether)\b", re.I)
_MEDIAN_WORDS = re.compile(r"\bmedian\b", re.I)


def statistic_asked(question: str, numbers: list[str]) -> tuple[str, str] | None:
    """The median (mean, sum) of the one number property the question's words name, where it says "median",
    "average" ("on average", "mean") or "total": "How much longer are virginica petals on average" ->
    petal_length, MEAN. None where it names no statistic or not one property. ("What is the median final
    grade of those?" was written as the most common feedback, 2026-11-30.)"""
    said = (("MEDIAN", _MEDIAN_WORDS), ("MEAN", _MEAN_WORDS), ("SUM", _SUM_WORDS))
    metric = next((name for name, words in said if words.search(question)), "")
    if not metric:
        return None
    words = measure_words(question)
    whole = [p for p in numbers if all(any(meets(w, n) for w in words) for n in content_stems(split_name(p)))]
    some = [p for p in numbers if any(meets(w, n) for w in words for n in content_stems(split_name(p)))]
    named = whole if len(whole) == 1 else some
    return (named[0], metric) if len(named) == 1 else None


#: Words that ask for the least of something (a superlative or a comparative): which group a pick takes,
#: which of two a difference names. Read by `chain`, `answer_form` and `arithmetic`.
LEAST_WORDS = re.compile(
    r"\b(?:least|lowest|worst|smallest|fewest|lightest|shortest|narrowest|slowest|weakest|cheapest|youngest|"
    r"earliest|bottom|min(?:imum)?|less|lower|smaller|fewer|shorter|lighter|cheaper|narrower|worse|weaker|"
    r"slower|younger|earlier)\b",
    re.I,
)
