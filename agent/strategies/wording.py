"""What a question's wording fixes in a call the model wrote almost right.

The small model reads the question's condition but writes its literal loosely. In the first calls of
the natural split's 315 questions (2026-11-26), 13 of the 72 that were not exact were one of these away
from the label, and nothing else:
- "the most common department" with a TOP_OCCURRENCES and no limit (every value, most common first);
  "the 3 most common" means 3;
- "more than 20 years" as `>= 20`, "at most 3 guests" as `< 3`: the words name the comparison;
- 'starts with "Me"' as `*Me`, "cover Python" as `*Python`, SQL's `%weekly%`: Weaviate's LIKE takes
  `*` and `?`, so `%` matches only itself, and a one-sided pattern asks for a start or an end.

Each is read from the words alone, in any database's names. A call whose literal agrees with the words is
left as it is, and so is one whose number or prefix the words do not hold. Where the words are unclear the
call is left too: two "most common"s, "the second most common", "no more than", a pattern one-sided on
purpose ("names starting with the letter M"): each turned a right call wrong in review. Every label of our
splits is left as it is, and each written loosely is mended back to it (tests/unit/test_wording.py).
"""

from __future__ import annotations

import re
from typing import Any

from agent._words import IRREGULAR_PLURALS, close_spelling, content_stems, meets, split_name
from executors.vocabulary import (
    AGGREGATION_SLOT,
    FILTER_SLOT,
    NumberMetric,
    NumberOperator,
    PropertyKind,
    TextMetric,
    TextOperator,
)

TEXT_AGGREGATION, TEXT_FILTER = AGGREGATION_SLOT[PropertyKind.TEXT], FILTER_SLOT[PropertyKind.TEXT]
NUMBER_FILTER = FILTER_SLOT[PropertyKind.NUMBER]
NUMBER_AGGREGATION = AGGREGATION_SLOT[PropertyKind.NUMBER]
_COUNTS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
#: A limit the words may state: more is a number of something else ("the 2023 most popular songs").
MAX_TOP = 50
#: The words after "most" that mean the most common: "the most prevalent origin", "the most typical".
MOST_COMMON_WORDS = "common|frequent|popular|often|prevalent|typical|usual|widespread"
#: "the most common X" (one), "the 3 most common Xs" (three), and the word after it.
ASKS_TOP = re.compile(
    rf"\b(?:(?P<n>\d+|{'|'.join(_COUNTS)})\s+)?most\s+(?:{MOST_COMMON_WORDS})\b\s*(?P<noun>[a-z]*)", re.I
)
_ORDINAL = re.compile(r"\b(?:second|third|fourth|fifth|\d+(?:st|nd|rd|th))\s+$", re.I)
#: A comparison written before its number ("more than 4 credits", "before 1900", "at most $15"). The
#: strict ones are not read after "no", "not", "or" or "to" ("no more than", "at or above").
_STRICT = {
    NumberOperator.GREATER: "more than|greater than|higher than|longer than|older than|wider than|heavier than|"
    "taller than|bigger than|larger than|deeper than|north of|east of|over|above|after|exceeding|exceeded|exceeds|"
    "exceed|topped|topping|tops|surpassed|surpassing",
    NumberOperator.LESS: "fewer than|less than|lower than|shorter than|younger than|narrower than|lighter than|"
    "smaller than|shallower than|south of|west of|under|below|before",
}
_INCLUSIVE = {
    NumberOperator.GREATER_EQUAL: "at least|no less than|no fewer than|not less than|not fewer than|at or above|"
    "at or over|on or after|in or after|at or after|equal to or greater than|equal to or more than|equal to or above",
    NumberOperator.LESS_EQUAL: "at most|no more than|not more than|up to|at or below|at or under|on or before|"
    "in or before|at or before|equal to or less than|equal to or fewer than|equal to or below",
    NumberOperator.EQUAL: "exactly",
}
#: ... and after it, past one word of unit ("45 minutes or more", "$15 or less", "1800 or later").
_AFTER = {
    NumberOperator.GREATER_EQUAL: "or more|or later|or above|or over|or greater|or higher|or better|or longer|"
    "or larger",
    NumberOperator.LESS_EQUAL: "or less|or fewer|or earlier|or below|or under|or lower|or shorter|or smaller",
}
_NUMBER = r"[$€£]?(?P<n>\d[\d,]*(?:\.\d+)?)"
_NOT_AFTER = r"(?<!\bno )(?<!\bnot )(?<!\bor )(?<!\bto )"
_COMPARISONS = [
    (op, re.compile(pattern, re.I))
    for op, pattern in (
        [(op, rf"{_NOT_AFTER}\b{re.escape(w)}\s+{_NUMBER}") for op, words in _STRICT.items() for w in words.split("|")]
        + [(op, rf"\b{re.escape(w)}\s+{_NUMBER}") for op, words in _INCLUSIVE.items() for w in words.split("|")]
        + [
            (op, rf"{_NUMBER}(?:\s+[a-z]+)?\s+{re.escape(w)}\b(?!\s+than)")
            for op, words in _AFTER.items()
            for w in words.split("|")
        ]
    )
]
#: What a prefix or a suffix is: a quoted phrase, else one word, after "the letter(s)" or "the prefix".
_AFFIX = (
    r"\s+(?:the\s+(?:letters?|prefix|suffix|word)\s+)?"
    r"(?:[\"“](?P<quoted>[^\"”]+)[\"”]|'(?P<single>[^']+)'|(?P<word>[^\s,?.;\"']+))"
)
STARTS_WITH = re.compile(rf"\b(?:starts?|begins?|starting|beginning)\s+with{_AFFIX}", re.I)
ENDS_WITH = re.compile(rf"\b(?:ends?|ending)\s+(?:with|in){_AFFIX}", re.I)
#: Words that ask for a start or an end: a one-sided pattern beside them is meant.
_ONE_SIDED = re.compile(r"\b(?:start|begin|end|prefix|suffix|initial|letter)", re.I)


def top_count(question: str) -> tuple[int, bool] | None:
    """How many values a "most common" question asks for, and whether it wrote the number; None when
    it says no one count (a plural, an ordinal, two "most common"s, a number too large to be a count)."""
    found = list(ASKS_TOP.finditer(question))
    if len(found) != 1 or _ORDINAL.search(question[: found[0].start()]):
        return None
    written = found[0].group("n")
    if written:
        count = _COUNTS.get(written.lower()) or int(written)
        return (count, True) if 1 <= count <= MAX_TOP else None
    noun = found[0].group("noun").lower()
    plural = noun in IRREGULAR_PLURALS or (noun.endswith("s") and not noun.endswith("ss"))
    return None if plural or re.search(r"\b(?:are|were)\s+the\s+most\b", question, re.I) else (1, False)


#: A question that asks for a number of different values: the number of groups.
ASKS_HOW_MANY_DIFFERENT = re.compile(
    r"\bhow many (?:different|distinct|unique|separate)\b|\bnumber of (?:different|distinct|unique)\b", re.I
)
#: "Which state has the most airports?", "what species shows up most often": the most common value, asked.
ASKS_WHICH_MOST = re.compile(
    rf"^\W*(?:\w+\W+){{0,9}}?(?:which|what)\b[^?]*\b(?:the most\b(?! \w+est\b)|most (?:{MOST_COMMON_WORDS})\b)",
    re.I,
)


def asks_which_most(question: str) -> bool:
    """The question asks which value of a property is the most common (not how many, not a measure)."""
    return bool(ASKS_WHICH_MOST.search(question)) and not re.search(r"\bhow (?:many|much)\b", question, re.I)


def comparisons(question: str) -> dict[float, str]:
    """Each number the question compares, with its operator; a number compared two ways is left out."""
    found: dict[float, set[str]] = {}
    for op, pattern in _COMPARISONS:
        for match in pattern.finditer(question):
            found.setdefault(float(match.group("n").replace(",", "")), set()).add(op.value)
    return {number: next(iter(ops)) for number, ops in found.items() if len(ops) == 1}


#: A year a question places its objects in ("in 1931", "from 1975", "1970 model-year").
_YEAR = re.compile(r"\b(?:in|from|during|for|of)\s+(?P<n>(?:1[89]|20)\d\d)\b|\b(?P<m>(?:1[89]|20)\d\d)\s+model", re.I)
_WORD = re.compile(r"[A-Za-z]+")


#: Numbers written as words, as a compound writes them ("six-cylinder").
NUMBER_WORDS = {
    word: index
    for index, word in enumerate(
        ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]
    )
}
#: A number joined to the word it counts: "8-cylinder", "4-door", "3-star", "six-cylinder".
_COMPOUND = re.compile(rf"(?<![\w.])(?P<n>\d+(?:\.\d+)?|{'|'.join(NUMBER_WORDS)})-(?P<w>[a-z]+)\b", re.I)


#: A number after "with" or "have" and the word it counts: "cars with 8 cylinders", "have six cylinders".
_WITH_COUNT = re.compile(
    rf"\b(?:with|have|has|having)\s+(?:exactly\s+)?(?P<n>\d+|{'|'.join(NUMBER_WORDS)})\s+(?P<w>[a-z]+)\b", re.I
)


def _compound_number(written: str) -> float:
    """The number a compound writes, in digits or as a word."""
    return float(NUMBER_WORDS.get(written.lower(), written))


def _named_by(word: str, numbers: list[str]) -> str | None:
    """The one number property a word names ("cylinder" names `cylinders`; a typo of six letters or more,
    "cyclinder", too), or None."""
    named = [
        p
        for p in numbers
        if any(
            meets(w, n) or (min(len(w), len(n)) >= 6 and close_spelling(w, n))
            for w in content_stems(word)
            for n in content_stems(split_name(p))
        )
    ]
    return named[0] if len(named) == 1 else None


#: The measure an adjective or a verb of size names: "sepals wider than 3.5 cm" compare sepal width.
DIMENSIONS = {
    **dict.fromkeys(("wide", "wider", "widest", "narrow", "narrower", "narrowest"), "width"),
    **dict.fromkeys(("long", "longer", "longest", "short", "shorter", "shortest"), "length"),
    **dict.fromkeys(("heavy", "heavier", "heaviest", "light", "lighter", "lightest", "weigh", "weighs"), "weight"),
    **dict.fromkeys(("tall", "taller", "tallest"), "height"),
    **dict.fromkeys(("deep", "deeper", "deepest", "shallow", "shallower"), "depth"),
}
#: Words of heat, wet and wind, each the measure its extremes are of ("the hottest it got": a temperature).
#: Read only where the check asks whether the database holds what a question asks for (`asked_for`), not
#: where a statistic is linked to its property: "the mean wind on the 10 wettest days" is the wind's mean.
WEATHER_MEASURES = {
    **dict.fromkeys(("hot", "hotter", "hottest", "warm", "warmer", "warmest"), "temperature"),
    **dict.fromkeys(("cold", "colder", "coldest", "cool", "cooler", "coolest"), "temperature"),
    **dict.fromkeys(("wet", "wetter", "wettest", "rainier", "rainiest", "dry", "drier", "driest"), "precipitation"),
    **dict.fromkeys(("windy", "windier", "windiest"), "wind"),
}


def measure_words(text: str) -> list[str]:
    """The stems of `text`'s words, with the measure each word of size names ("wider" -> width)."""
    raw = _WORD.findall(text)
    return content_stems(" ".join([*raw, *(DIMENSIONS[w.lower()] for w in raw if w.lower() in DIMENSIONS)]))


def initials(name: str) -> str:
    """A property name's initials, the way a unit abbreviates it: `miles_per_gallon` -> "mpg"."""
    return "".join(word[0] for word in split_name(name).lower().split())


def named_number(question: str, numbers: list[str], start: int, end: int) -> str | None:
    """The one number property the words of a comparison at `start:end` name: in the comparison itself
    ("200 horsepower or more", "wider than 3.5": width), its unit after it, else its subject before it."""
    windows = (question[start:end], question[end : end + 25], question[max(0, start - 25) : start])
    for near in (*windows, question[max(0, start - 25) : end]):  # last: the subject and its comparison together
        words = measure_words(near)
        named = [p for p in numbers if any(meets(w, n) for w in words for n in content_stems(split_name(p)))]
        said = {w.lower() for w in _WORD.findall(near)}
        named = named or [p for p in numbers if len(initials(p)) > 1 and initials(p) in said]  # "mpg"
        if len(named) > 1:  # "sepal length" names sepal_length whole, sepal_width in part
            named = [p for p in named if all(any(meets(w, n) for w in words) for n in content_stems(split_name(p)))]
        if len(named) == 1:
            return named[0]
    return None


#: "between 40 and 45", "from 1975 through 1979": a range of numbers, both ends inclusive.
_RANGE = re.compile(
    rf"\b(?:between|from)\s+(?:[a-z-]+\s+){{0,3}}?{_NUMBER}\s+(?:and|to|through|thru)\s+[$€£]?(?P<m>\d[\d,]*(?:\.\d+)?)",
    re.I,
)


def number_range(question: str, numbers: list[str]) -> list[dict[str, Any]]:
    """The two bounds of the one range of numbers the question states ("at least 2000 but less than 3000",
    "between 40 and 45 degrees") on the number property its words name, or [] without one."""
    if (ranged := _RANGE.search(question)) is not None:
        low, high = (float(ranged.group(g).replace(",", "")) for g in ("n", "m"))
        prop = named_number(question, numbers, ranged.start(), ranged.end())
        # a range on a collection of one number property is on it: "close between $25 and $30" is the price;
        # "from 2003 to 2005" there is a time span, unless that property holds years
        years = all(v.is_integer() and 1800 <= v <= 2100 for v in (low, high))
        lone = numbers[0] if len(numbers) == 1 and (not years or "year" in numbers[0].lower()) else None
        prop = prop or lone
        if prop is None or low >= high:
            return []
        exact = [int(v) if v.is_integer() else v for v in (low, high)]
        return [{"property_name": prop, "operator": "between", "value": exact[0], "value_to": exact[1]}]
    found = sorted(
        (m.start(), m.end(), float(m.group("n").replace(",", "")), op.value)
        for op, pattern in _COMPARISONS
        for m in pattern.finditer(question)
    )
    lower = [f for f in found if f[3] in (">", ">=")]
    upper = [f for f in found if f[3] in ("<", "<=")]
    if len(lower) != 1 or len(upper) != 1 or lower[0][2] >= upper[0][2]:
        return []
    props = {named_number(question, numbers, f[0], f[1]) for f in (lower[0], upper[0])} - {None}
    if len(props) != 1:
        return []
    prop = props.pop()
    return [
        {"property_name": prop, "operator": op, "value": int(v) if v.is_integer() else v}
        for _, _, v, op in (lower[0], upper[0])
    ]


def number_condition(question: str, numbers: list[str]) -> dict[str, Any] | None:
    """The one number condition the question states, on the one number property its words name beside the
    number ("under 25 bushels" -> `yield_bushels < 25`, "latitude over 66.5"), or a year it places its objects
    in on the one number property named for years; None when it states none, several, or names no property."""
    found = [
        (float(m.group("n").replace(",", "")), op.value, m.start(), m.end())
        for op, pattern in _COMPARISONS
        for m in pattern.finditer(question)
    ]
    if len({value for value, *_ in found}) == 1 and len({op for _, op, *_ in found}) == 1:
        value, op, start, end = found[0]
        if value.is_integer() and 1800 <= value <= 2100 and not any("year" in p.lower() for p in numbers):
            return None  # a year: a date condition, which no number property holds
        if (prop := named_number(question, numbers, start, end)) is not None:
            return {"property_name": prop, "operator": op, "value": int(value) if value.is_integer() else value}
        yearly = [p for p in numbers if "year" in split_name(p).lower().split()]
        if value.is_integer() and 1800 <= value <= 2100 and len(yearly) == 1:  # "1975 or later": the year
            return {"property_name": yearly[0], "operator": op, "value": int(value)}
        return None
    compounds = {
        (_compound_number(m["n"]), prop)
        for pattern in (_COMPOUND, _WITH_COUNT)
        for m in pattern.finditer(question)
        if (prop := _named_by(m["w"], numbers))
    }
    if not found and len(compounds) == 1:  # "the 8-cylinder cars", "cars with 8 cylinders": cylinders = 8
        value, prop = compounds.pop()
        return {"property_name": prop, "operator": "=", "value": int(value) if value.is_integer() else value}
    return placed_year(question, numbers) if not found else None


def placed_year(question: str, numbers: list[str]) -> dict[str, Any] | None:
    """The one year the question places its objects in ("in 2007") on the one number property named for years,
    beside a comparison ("below 50 in 2007" lost its year where one condition was read); None for a range."""
    if _RANGE.search(question):
        return None
    compared = {m.group("n") for _, pattern in _COMPARISONS for m in pattern.finditer(question)}
    years = {int(y) for m in _YEAR.finditer(question) if (y := m.group("n") or m.group("m")) not in compared}
    yearly = [p for p in numbers if "year" in split_name(p).lower().split()]
    if len(years) == 1 and len(yearly) == 1:
        return {"property_name": yearly[0], "operator": "=", "value": years.pop()}
    return None


def _affix(pattern: re.Pattern[str], question: str) -> str | None:
    found = pattern.search(question)
    return next((g for g in found.group("quoted", "single", "word") if g), None) if found else None


def like_pattern(question: str, value: str) -> str:
    """The LIKE value the words ask for: `X*` after 'starts with "X"', `*X` after 'ends with "X"', `*X*`
    for a one-sided pattern of a word the question holds where it asks for no start or end; SQL's `%`
    as `*` (unless the question writes a `%` itself). Anything else as it is."""
    if "%" in value and "%" not in question:
        value = value.replace("%", "*")
    core = value.strip("*")
    if not core or "*" in core or "?" in core or core == value:
        return value
    for pattern, shape in ((STARTS_WITH, "{}*"), (ENDS_WITH, "*{}")):
        affix = _affix(pattern, question)
        if affix is not None and affix.lower() == core.strip().lower():
            return shape.format(affix)
    one_sided = not (value.startswith("*") and value.endswith("*"))
    named = re.search(rf"\b{re.escape(core.strip())}\b", question, re.I)
    if one_sided and named and not _ONE_SIDED.search(question):
        return f"*{core.strip()}*"
    return value


def amend_wording(question: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The call with the literals the question's words fix, and why (empty if none changed)."""
    amended, why = dict(arguments), []
    top = amended.get(TEXT_AGGREGATION)
    top = top if isinstance(top, dict) and top.get("metrics") == TextMetric.TOP_OCCURRENCES else None
    counted = amended.get(NUMBER_AGGREGATION)
    if isinstance(counted, dict) and counted.get("metrics") == NumberMetric.COUNT and asks_which_most(question):
        # "which model year has the most cars" counted the years' values: the most frequent one is asked
        amended[NUMBER_AGGREGATION] = {**counted, "metrics": NumberMetric.MODE.value}
        why.append("the question asks which value is the most common: its mode")
    counted = amended.get(TEXT_AGGREGATION)
    if isinstance(counted, dict) and counted.get("metrics") == NumberMetric.COUNT and asks_which_most(question):
        # "which state has the most airports" counted the states' values: the most common one is asked
        top = {**counted, "metrics": TextMetric.TOP_OCCURRENCES.value, "top_occurrences_limit": 1}
        amended[TEXT_AGGREGATION] = top
        why.append("the question asks which value is the most common: its top occurrence")
    asked = top_count(question)
    if top is not None and asked is not None:
        count, written = asked
        limit = top.get("top_occurrences_limit")
        if limit != count and (written or limit is None):  # a count the words leave open stays the model's
            amended[TEXT_AGGREGATION] = {**top, "top_occurrences_limit": count}
            why.append(f"the question asks for the {count} most common: a limit of {count}")
    where = amended.get(NUMBER_FILTER)
    if isinstance(where, dict) and isinstance(where.get("value"), int | float):
        op = comparisons(question).get(float(where["value"]))
        if op is not None and where.get("operator") != op:
            amended[NUMBER_FILTER] = {**where, "operator": op}
            why.append(f"the question compares {where['value']:g} with {op}")
    where = amended.get(TEXT_FILTER)
    if isinstance(where, dict) and where.get("operator") == TextOperator.LIKE and isinstance(where.get("value"), str):
        pattern = like_pattern(question, where["value"])
        if pattern != where["value"]:
            amended[TEXT_FILTER] = {**where, "value": pattern}
            why.append(f"the words ask for the pattern {pattern}")
    return (amended, why) if why else (arguments, [])


#: A number as written: digits with thousands commas and decimals, a "k" for thousands ("$50k").
_WRITTEN = re.compile(r"(?<![\w.])(?P<n>\d[\d,]*(?:\.\d+)?)(?P<k>k\b)?", re.I)


def written_numbers(question: str) -> set[float]:
    """The numbers a question writes, in digits ("4,500", "66.56", "$50k") or as words up to twelve, and
    each as a share or a percentage."""
    numbers = {
        float(m["n"].replace(",", "")) * (1000 if m["k"] else 1)
        for m in _WRITTEN.finditer(question)
        if m["n"].replace(",", "").replace(".", "", 1).isdigit()
    }
    words = {w.lower() for w in _WORD.findall(question)}
    numbers |= {float(n) for word, n in NUMBER_WORDS.items() if word in words}
    return numbers | {n / 100 for n in numbers} | {n * 100 for n in numbers}  # "50%" as 0.5, "0.5" as 50


def unwritten_numbers(question: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The call without a number filter whose value the question does not write: the small model writes
    the answer it expects as a condition ("Smallest sepal length of any flower that isn't a setosa?" got
    `sepal_length <= 4.3`, and the minimum over it was read as 0; the public split, 2026-11-29). A number
    that came from an earlier result is written in the part that uses it (`chain` names it), so this
    reads a run's first call; "" where nothing is left out."""
    where = arguments.get(NUMBER_FILTER)
    value = where.get("value") if isinstance(where, dict) else None
    if not isinstance(value, int | float) or isinstance(value, bool) or float(value) in written_numbers(question):
        return arguments, ""
    kept = {k: v for k, v in arguments.items() if k != NUMBER_FILTER}
    said = f"{where.get('property_name')} {where.get('operator')} {value:g}"
    return kept, f"the question writes no {value:g}: the condition {said} left out."
