"""A name the question gives that lives inside a text property's values, not as a category of its own.

"What's the worst gas mileage of any Honda?", "Count the Fords in the data.": the make is a word of each
car's `name` ("honda civic", "ford torino"), never a whole stored value, so the value linker, which reads
categories, finds nothing, and the model filtered nothing (2 of the public split's cars questions,
2026-11-29). Here each capitalized word inside the question that no category holds (nor the schema's own
names, nor a month) is looked up as a word inside each text property that is not a category, one
filtered listing per property; a plural is tried singular ("Fords" -> `*ford*`). Where exactly one
property holds it, the call gets `LIKE "*word*"` on it as a condition, unless it already filters that
property or holds the word in a filter of another ("Houston" as `city = "Houston"`: not also in the airports'
names, which lost "How many airports are in Houston, Texas?" once). Where several hold it, nothing is added:
the word does not say which.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from agent._words import MONTHS, content_stems, split_name
from agent.loop import Executor
from agent.sentence import condition_text
from agent.strategies.asked_for import NAME
from agent.strategies.codes import code_for, initials, letters, ticker_for
from executors.errors import ExecutorError
from executors.results import QueryResult
from executors.schema import CollectionSchema
from executors.vocabulary import CONDITIONS_FIELD, FILTER_SLOT, MATCH_FIELD, PropertyKind

#: Days of the week: a time, not a value (months are in `MONTHS`).
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
#: Units written with a capital: a scale, not a value.
_UNITS = ("celsius", "fahrenheit", "kelvin")


def _forms(word: str) -> list[str]:
    """The word, and its singulars where it reads as a plural ("Fords" -> "ford", "Porsches" -> "porsche",
    "porsch")."""
    bare = letters(word.removesuffix("'s").removesuffix("’s"))
    if not bare.endswith("s") or len(bare) <= 4:
        return [bare]
    return [bare, bare[:-1], *([bare[:-2]] if bare.endswith("es") else [])]


def _known(found: CollectionSchema, categories: dict[str, list[str]]) -> set[str]:
    """What a name may be without being looked up: a stored category value, a word of the schema's names or
    their initials ("MPG" for `miles_per_gallon`), a month or a day."""
    known = {letters(v) for values in categories.values() for v in values}
    names = [split_name(name) for name in (found.name, *(p.name for p in found.properties))]
    known |= {w for name in names for w in content_stems(name)} | {initials(name) for name in names}
    # the names' words unstemmed too: a form is looked up as written ("Seattle" of `SeattleDays`, stem "seattl")
    known |= {letters(w) for name in names for w in name.split()}
    return known | {m.lower() for m in MONTHS} | set(_DAYS)


def _unknown(question: str, known: set[str], taken: Iterable[tuple[int, int]]) -> list[tuple[str, list[str]]]:
    """Each capitalized word inside the question outside the `taken` spans that `known` does not hold, with
    the forms to look up."""
    spans = list(taken)
    inside = [m.group() for m in NAME.finditer(question) if not any(s < m.end() and m.start() < e for s, e in spans)]
    found = []
    for word in dict.fromkeys(inside):
        forms = [f for f in _forms(word) if len(f) >= 3]
        if forms and not any(f in known or any(f in k for k in known if len(k) > 3) for f in forms):
            found.append((word, forms))
    return found


def unheld_names(
    question: str,
    found: CollectionSchema,
    categories: dict[str, list[str]],
    matches: Callable[[str, str], bool],
    taken: Iterable[tuple[int, int]] = (),
) -> list[str]:
    """The names of the question that `found` holds nowhere: no category value, schema name, month or code
    fits ("Tesla" among the tickers `AAPL`, `MSFT`...), and no text property holds it inside a value. A
    collection without a vectorizer can only filter, so a question about what such a name names has no
    answer there: "What was Tesla's average monthly closing price in 2009?" was answered with every stock's.
    Two or three capitals and units are no names ("in USD", "in Celsius", "in thousand MWh")."""
    codes = [v for values in categories.values() for v in values if v.isupper() and 2 <= len(letters(v)) <= 5]
    texts = [p.name for p in found.properties_of_kind(PropertyKind.TEXT)]
    unheld = []
    for word, forms in _unknown(question, _known(found, categories) | set(_UNITS), taken):
        if word.isupper() and len(letters(word)) <= 3:
            continue
        if len(letters(word)) <= 4 and not word.isupper() and any(ch.isupper() for ch in word[1:]):
            continue  # a unit's mixed case ("MWh", "kWh"): a scale, as "Celsius" is
        if any(code_for(word, code) or ticker_for(word, code) for code in codes):
            continue
        if not any(matches(prop, f"*{form}*") for prop in texts for form in forms):
            unheld.append(re.sub(r"['’]s$", "", word.rstrip(".-")))
    return unheld


def matches_like(executor: Executor, collection: str, prop: str, pattern: str) -> bool:
    """Whether any object's `prop` matches the LIKE pattern (one filtered listing; a failure: no)."""
    where = {"property_name": prop, "operator": "LIKE", "value": pattern}
    try:
        return bool(executor.execute({"collection_name": collection, FILTER_SLOT[PropertyKind.TEXT]: where}).objects)
    except ExecutorError:
        return False


def unheld_value(executor: Executor, arguments: dict[str, Any], result: QueryResult) -> str | None:
    """Why an empty result answers nothing: a text condition whose value no object holds in any text property.
    "How many of the cars have an automatic transmission?" was written `name LIKE "*automatic*"` and answered
    "0" (the public split, 2026-11-30): the data has no such value, so 0 is no count of anything. A value the
    data does not hold is mapped to one it holds (`values`) or said to exist nowhere, here. A count of 0 over
    values the data holds is a count (None), as is any result with objects or under `match: any`."""
    schema = getattr(executor, "schema", None)
    found = schema.get(str(arguments.get("collection_name") or "")) if schema is not None else None
    if found is None or result.objects or result.groups or result.total_count or arguments.get(MATCH_FIELD) == "any":
        return None
    texts = [p.name for p in found.properties_of_kind(PropertyKind.TEXT)]
    listed = [arguments.get(FILTER_SLOT[PropertyKind.TEXT]), *(arguments.get(CONDITIONS_FIELD) or [])]
    for where in listed:
        if not isinstance(where, dict) or where.get("property_name") not in texts:
            continue
        value = where.get("value")
        words = [w for w in re.split(r"[\s*?]+", value) if len(w) >= 3] if isinstance(value, str) else []
        if where.get("operator") not in ("=", "LIKE") or not words:
            continue
        if not any(matches_like(executor, found.name, p, f"*{w}*") for p in texts for w in words):
            held = " ".join(words)
            return f'no {found.name} object holds "{held}" in any text property (filter {condition_text(where)})'
    return None


def named_in_text(
    question: str,
    found: CollectionSchema,
    categories: dict[str, list[str]],
    texts: Iterable[str],
    filtered: set[str],
    matches: Callable[[str, str], bool],
    taken: Iterable[tuple[int, int]] = (),
    held: Iterable[object] = (),
) -> list[dict[str, str]]:
    """The `LIKE "*word*"` conditions for the names of the question that one text property holds inside its
    values. `categories` are the stored category values (a name they hold is theirs), `texts` the text
    properties that are not categories, `filtered` the properties the call already filters, `matches(prop,
    pattern)` whether any object matches; `taken` the spans of words already read as values or codes; `held`
    the call's conditions."""
    known = _known(found, categories)
    # a word the call already filters on, in whatever property: the model placed it ("city = Houston")
    known |= {letters(str(c.get("value"))) for c in held if isinstance(c, dict)}
    open_texts = [p for p in texts if p not in filtered]
    added: list[dict[str, str]] = []
    spans = list(taken)
    for _, forms in _unknown(question, known, spans):
        for form in forms:
            holding = [p for p in open_texts if matches(p, f"*{form}*")]
            if len(holding) == 1 and not any(c["property_name"] == holding[0] for c in added):
                added.append({"property_name": holding[0], "operator": "LIKE", "value": f"*{form}*"})
            if holding:
                break
    return added
