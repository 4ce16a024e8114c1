"""A composed question reworded by a model, kept only where a check shows it still asks the same thing.

The gold stays the composed calls, so a rewording must not change what they answer. The check
(`changed`) reads the wording alone, never the agent's own readings (a filter built from what the agent
understands would keep only what the agent reads right). It keeps a rewording only where:
- it is one question, not much longer than the template, and not the template again;
- every stored value the gold calls filter on, and every number of the template, is written in it, and it
  writes no other number;
- it names no other property of the collection the template does not name (a condition added);
- every property the calls use is named by a word that starts like one of its own for three letters
  ("temperature" for `temp_max`, "rated" for `averageRating`), or by the stored value it is filtered on
  ("Thai restaurants");
- each kind of ask the template has (how many, an average, the lowest, the highest, the most common, how
  many different, per group, above) is still asked, with its own words or a synonym of the list below,
  and no kind it did not have (a comparison the other way, a negation) is added; a property's own words
  ("average rating") ask nothing.

What it misses: a change of meaning that keeps the words (which value belongs to which property, "the
average of the lowest" for "the lowest average"), a scope word that narrows ("only the open ones" where
the template said nothing of openness but the words of no property say so), and synonyms of a property
the list does not know (a rewording that says "heaviness" for `weight_in_lbs` is dropped, not kept).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

#: What the model is asked; the template follows on its own line.
INSTRUCTION = (
    "Rewrite this database question the way a person would type it to a colleague. Keep every value, name "
    "and number exactly as written and keep what it asks for; add no condition. Reply with the rewritten "
    "question only."
)
#: Each kind of ask, and the words that say it.
ASKS: dict[str, re.Pattern[str]] = {
    "count": re.compile(r"\bhow many\b|\bnumber of\b|\bcount\b", re.I),
    "mean": re.compile(r"\baverage\b|\bmean\b|\bavg\b", re.I),
    "lowest": re.compile(r"\blowest\b|\bminimum\b|\bsmallest\b|\bleast\b|\bmin\b", re.I),
    "highest": re.compile(r"\bhighest\b|\bmaximum\b|\blargest\b|\bgreatest\b|\bbiggest\b|\btop\b|\bmax\b", re.I),
    "common": re.compile(r"\bmost (?:common|frequent|often|usual)\b|\bmost\b", re.I),
    "different": re.compile(r"\bdifferent\b|\bdistinct\b|\bunique\b", re.I),
    "each": re.compile(r"\beach\b|\bevery\b|\bper\b|\bby\b|\bbreak(?:down| down)\b", re.I),
    "above": re.compile(r"\babove\b|\bover\b|\bmore than\b|\bgreater than\b|\bhigher than\b|\bexceed", re.I),
    "below": re.compile(r"\bbelow\b|\bunder\b|\bless than\b|\blower than\b|\bfewer than\b", re.I),
    "negation": re.compile(r"\bnot\b|n't\b|\bno\b|\bwithout\b|\bexcept\b|\bother than\b|\bexcluding\b", re.I),
}
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")
_WORD = re.compile(r"[a-z0-9]+")


def _words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name).replace("_", " ").lower()
    return [w for w in _WORD.findall(spaced) if len(w) >= 3]


def _used(calls: Iterable[dict[str, Any]]) -> dict[str, set[str]]:
    """Each property the calls use, with the stored text values they filter it on."""
    used: dict[str, set[str]] = {}

    def visit(value: Any, key: str = "") -> None:
        if isinstance(value, dict):
            name = value.get("property_name")
            if isinstance(name, str):
                literal = value.get("value")
                texts = used.setdefault(name, set())
                if isinstance(literal, str) and not literal.isdigit() and key != "conditions":
                    texts.add(literal)
            for inner_key, inner in value.items():
                visit(inner, inner_key)
        elif isinstance(value, list):
            for item in value:
                visit(item, key)
        elif key == "groupby_property" and isinstance(value, str):
            used.setdefault(value, set())

    for call in calls:
        visit(call)
    return used


def _share_a_stem(word: str, known: str) -> bool:
    """Two words that start alike for three letters or more: "rated" and "rating", "temp" and "temperature"."""
    common = 0
    for a, b in zip(word, known, strict=False):
        if a != b:
            break
        common += 1
    return common >= 3


def _without(text: str, phrases: list[str]) -> str:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text).replace("_", " ")
    for phrase in phrases:
        if phrase:
            spaced = re.sub(rf"\b{re.escape(phrase)}\b", " ", spaced, flags=re.I)
    return spaced


def _named(known: str, text: str) -> bool:
    return any(_share_a_stem(word, known) for word in _WORD.findall(text.lower()))


def changed(template: str, reworded: str, calls: list[dict[str, Any]], others: Iterable[str] = ()) -> str:
    """Why the rewording may not ask what the template asks ("" when the check sees nothing); `others`: the
    collection's other properties (a rewording that names one the template does not adds a condition)."""
    text = " ".join(reworded.split())
    if not text or "\n" in reworded.strip() or not text.endswith("?") or text.count("?") != template.count("?"):
        return "not one question"
    if text.lower() == " ".join(template.split()).lower():
        return "the template again"
    if len(text) > 2 * len(template) + 40:
        return "too long"
    used = _used(calls)
    lowered = text.lower()
    values = {v for texts in used.values() for v in texts}
    missing = sorted(v for v in values if not re.search(rf"(?<!\w){re.escape(v.lower())}(?!\w)", lowered))
    if missing:
        return f"drops the value {missing[0]!r}"
    if sorted(_NUMBER.findall(template)) != sorted(_NUMBER.findall(text)):
        return "other numbers"
    written = set(_WORD.findall(lowered))
    for prop, texts in sorted(used.items()):
        named = any(_share_a_stem(word, known) for word in written for known in _words(prop))
        if _words(prop) and not named and not texts:  # a value filtered on names its property ("Thai restaurants")
            return f"names no word of {prop}"
    for prop in sorted(set(others) - set(used)):
        said = _words(prop)
        if said and all(_named(w, text) for w in said[:1]) and not any(_named(w, template) for w in said):
            return f"adds a condition on {prop}"
    # "average rating" names a property and asks no mean in the template; in the rewording "the average
    # rating of ..." may ask the mean the template said as "the mean average rating".
    spoken = [" ".join(_words(prop)) for prop in used]
    bare = [re.sub(r"^(?:average|mean|avg)\s+", "", phrase) for phrase in spoken]
    asked, answered = _without(template, spoken), _without(text, bare)
    for kind, words in ASKS.items():
        before, after = bool(words.search(asked)), bool(words.search(answered))
        if before and not after:
            return f"no longer asks {kind}"
        if after and not before and kind in ("below", "negation", "different", "each"):
            return f"adds {kind}"
    return ""


#: A model turn: the instruction and the template in, the reply's text out.
Reword = Callable[[str], str]


def paraphrase(
    template: str,
    calls: list[dict[str, Any]],
    reword: Reword,
    others: Iterable[str] = (),
    lacking: Iterable[str] = (),
) -> tuple[str | None, str]:
    """The model's rewording where the check keeps it, else None and why it was dropped (`lacking`: what a
    question the data cannot answer asks for, which the rewording must still name)."""
    try:
        reply = reword(f"{INSTRUCTION}\n\n{template}")
    except Exception as error:  # an endpoint failure drops this rewording, named, and the template stays
        return None, f"the model failed: {type(error).__name__}: {error}"
    text = reply.strip().strip('"').strip()
    reason = changed(template, text, calls, others)
    if not reason and (gone := [w for w in lacking if not _named(w, text)]):
        reason = f"drops the measure {gone[0]!r}"
    return (None, reason) if reason else (" ".join(text.split()), "")


def reason_kind(why: str) -> str:
    """A reason without what it names, to count reasons by kind: "drops the value 'Thai'" -> "drops the value"."""
    named = re.match(r"(drops the value|drops the measure|names no word|adds a condition|the model failed)\b", why)
    return named.group(1) if named else why
