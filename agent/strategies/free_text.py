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

from collections.abc import Callable, Iterable

from agent._words import MONTHS, content_stems, split_name
from agent.strategies.asked_for import NAME
from agent.strategies.codes import letters
from executors.schema import CollectionSchema

#: Days of the week: a time, not a value (months are in `MONTHS`).
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def _forms(word: str) -> list[str]:
    """The word, and its singulars where it reads as a plural ("Fords" -> "ford", "Porsches" -> "porsche",
    "porsch")."""
    bare = letters(word.removesuffix("'s").removesuffix("’s"))
    if not bare.endswith("s") or len(bare) <= 4:
        return [bare]
    return [bare, bare[:-1], *([bare[:-2]] if bare.endswith("es") else [])]


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
    known = {letters(v) for values in categories.values() for v in values}
    known |= {w for name in (found.name, *(p.name for p in found.properties)) for w in content_stems(split_name(name))}
    known |= {m.lower() for m in MONTHS} | set(_DAYS)
    # a word the call already filters on, in whatever property: the model placed it ("city = Houston")
    known |= {letters(str(c.get("value"))) for c in held if isinstance(c, dict)}
    open_texts = [p for p in texts if p not in filtered]
    added: list[dict[str, str]] = []
    spans = list(taken)
    inside = [m.group() for m in NAME.finditer(question) if not any(s < m.end() and m.start() < e for s, e in spans)]
    for word in dict.fromkeys(inside):
        forms = [f for f in _forms(word) if len(f) >= 3]
        if not forms or any(f in known or any(f in k for k in known if len(k) > 3) for f in forms):
            continue
        for form in forms:
            holding = [p for p in open_texts if matches(p, f"*{form}*")]
            if len(holding) == 1 and not any(c["property_name"] == holding[0] for c in added):
                added.append({"property_name": holding[0], "operator": "LIKE", "value": f"*{form}*"})
            if holding:
                break
    return added
