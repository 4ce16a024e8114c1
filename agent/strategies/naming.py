"""Which stored values a question's words name: whole ("University Farm"), through a word's forms
("Adelies" ~ `Adelie`, "European" ~ `Europe`), an abbreviation ("Calif" ~ `California`), a country's people
("American" ~ `USA`) or a typo ("Japna" ~ `Japan`). `values` offers and puts back what they find;
`conditions` reads which of them are excluded or alternatives. Nothing here knows a database: the values
are the database's own."""

from __future__ import annotations

import re
from itertools import pairwise

from agent._words import EN_STOPWORDS, MONTHS, close_spelling, content_stems, split_name
from agent.strategies.codes import country_of, initials, letters

#: A word, without a possessive's "'s" ("IBM's" names `IBM`).
_QUESTION_WORDS = re.compile(r"[A-Za-z](?:[A-Za-z-]|'(?!s\b))*")


def linked(question: str, values: dict[str, list[str]]) -> list[tuple[str, str]]:
    """(property, value) for each stored value whose every content word the question names, longest
    first; a property's values are tried in the order given (most frequent first)."""
    asked = set(content_stems(question))
    found: list[tuple[int, str, str]] = []
    for prop, stored in values.items():
        for value in stored:
            words = content_stems(value)
            if words and not any(w.isdigit() for w in words) and set(words) <= asked:
                found.append((len(words), prop, value))
    found.sort(key=lambda item: -item[0])  # stable: most frequent first among values of one length
    return [(prop, value) for _, prop, value in found]


def named_values(question: str, values: dict[str, list[str]]) -> list[tuple[str, str]]:
    """(property, value) for each stored value the question names: all its words (`linked`), one word or
    two of the question meeting it through its forms ("European" ~ `Europe`, "Setosas" ~ `setosa`), a yes
    or no property's name (`flagged`), or a word of sex (`sexed`: "women" `Female`)."""
    found = list(linked(question, values))
    words = _QUESTION_WORDS.findall(question)
    phrases = [w for w in words if len(w) >= 4] + [f"{a} {b}" for a, b in pairwise(words)]
    for prop, stored in values.items():
        for phrase in phrases:
            meant = nearest_value(phrase, stored)
            if meant is not None and (prop, meant) not in found:
                found.append((prop, meant))
    return found + [said for said in (*flagged(question, values), *sexed(question, values)) if said not in found]


#: A property stored as a yes or no answer, in the table's own words.
_FLAGS = (("yes", "no"), ("true", "false"), ("y", "n"))
#: A word that names the property's no: "non-smokers", "not a smoker".
_NOT_BEFORE = re.compile(r"(?:\bnon-?|\bnot (?:an? )?|\bno )$", re.I)


#: The words people use for a sex or gender the data stores as female or male: "paid by women" is `sex =
#: "Female"`. Read by meaning with the encoder instead, "taught" was `Education` (0.66) and "artworks"
#: `Sculpture` (0.75), above "men" `Male` (0.67): 16 of our splits' gold calls gained a condition (2026-12-03).
_SEXES = {
    "female": ("women", "woman", "female", "females", "girls", "girl", "ladies", "lady"),
    "male": ("men", "man", "male", "males", "boys", "boy", "gentlemen"),
}


def sexed(question: str, values: dict[str, list[str]]) -> list[tuple[str, str]]:
    """(property, value) for a property storing female and male ("Female", "M") where the question's words
    say one of them and not the other ("How many dinner bills were paid by women?")."""
    words = {w.lower() for w in _QUESTION_WORDS.findall(question)}
    said = [sex for sex, named in _SEXES.items() if words & set(named)]
    found: list[tuple[str, str]] = []
    for prop, stored in values.items():
        by_letters = {letters(v): v for v in stored}
        held = next((keys for keys in (("female", "male"), ("f", "m")) if set(keys) <= set(by_letters)), None)
        if held is not None and len(said) == 1:
            found.append((prop, by_letters[held[0] if said[0] == "female" else held[1]]))
    return found


def flagged(question: str, values: dict[str, list[str]]) -> list[tuple[str, str]]:
    """(property, its yes) for each property stored as yes or no whose name a word of the question names
    ("smokers" `smoker = Yes`), its no where the word is negated ("non-smokers"). A table of one waiter's
    tips stores `smoker` as Yes or No, and "tips from smokers" was left unfiltered (2026-12-03)."""
    found: list[tuple[str, str]] = []
    for prop, stored in values.items():
        by_letters = {letters(v): v for v in stored}
        pair = next((flag for flag in _FLAGS if set(by_letters) == set(flag)), None)
        named = content_stems(split_name(prop))
        if pair is None or len(named) != 1:
            continue
        yes, no = pair
        for word in _QUESTION_WORDS.finditer(question):
            stems = content_stems(word.group().removeprefix("non-"))
            if stems and stems[0] == named[0]:
                negated = word.group().lower().startswith("non") or _NOT_BEFORE.search(question[: word.start()])
                found.append((prop, by_letters[no if negated else yes]))
                break
    return found


def mentions(question: str, values: dict[str, list[str]]) -> list[tuple[str, str, int, int]]:
    """(property, value, start, end) for each place the question names a stored value, left to right: a word
    or two written like it or meeting it through its forms (`nearest_value`)."""
    words = list(_QUESTION_WORDS.finditer(question))
    pairs = [(a.start(), b.end()) for a, b in pairwise(words)]
    held = {letters(v) for stored in values.values() for v in stored}
    whole = [p for p in pairs if letters(question[p[0] : p[1]]) in held]  # "University Farm" before "University"
    # "non-American": the value after the prefix (`alternatives.excluded` reads the prefix)
    tails = [(m.start() + 4, m.end()) for m in words if m.group().lower().startswith("non-")]
    # "gram-positive": the value after a compound's last hyphen ("positive" a stored `gram_staining`), where
    # the whole word names none
    ends = [(m.start() + m.group().rindex("-") + 1, m.end()) for m in words if "-" in m.group().strip("-")]
    phrases = whole + tails + [(m.start(), m.end()) for m in words] + ends + pairs
    found: list[tuple[str, str, int, int]] = []
    for start, end in phrases:  # then single words, then two-word phrases where neither word names one
        if any(start < e and s < end for _, _, s, e in found):
            continue
        text = question[start:end]
        if text.lower() in EN_STOPWORDS:  # "it" abbreviates no `Italian`, "or" no `Oregon`
            continue
        for prop, stored in values.items():
            # a short code in capitals is named in capitals: "or" is no `OR`, "in" no `IN`
            same = [v for v in stored if letters(v) == letters(text) and (text.isupper() or not _code(v))]
            meant = same[0] if len(same) == 1 else nearest_value(text, stored) if len(text) >= 2 else None
            if meant is not None and _code(meant) and not text.isupper() and not country_of(text, meant):
                meant = None
            if meant is not None:
                found.append((prop, meant, start, end))
                break
    return sorted(found, key=lambda m: m[2])


def _code(value: str) -> bool:
    return value.isupper() and len(letters(value)) <= 3


def can_match(value: str, stored: list[str]) -> bool:
    """Whether a filter's value (`=` or a LIKE pattern with * and ?) could match one of a category's
    stored values: its letters, wildcards aside, are in one of them, whole or word by word. Generous on
    purpose: a filter is moved only when no stored value holds it at all."""
    core = value.replace("*", " ").replace("?", " ").lower().split()
    if not core:
        return True
    lowered = [v.lower() for v in stored]
    return any(all(part in v for part in core) for v in lowered)


def nearest_value(value: str, stored: list[str]) -> str | None:
    """The one stored value a filter's value means when no stored value is written like it, or None.

    Tried in order, each only when exactly one stored value fits it: the same letters up to case and
    punctuation ("europe" ~ `Europe`); the same words up to their endings ("Adelies" ~ `Adelie`,
    "Setosas" ~ `setosa`); an abbreviation either way ("USA" ~ `US`, "Calif" ~ `California`, "NY" ~
    `New York`, "Sunday" ~ `Sun`); a people's or country's name for its country ("American" ~ `USA`); a
    typo of at most a fifth of the letters ("Japna" ~ `Japan`). Nothing here knows a database."""
    core = value.replace("*", " ").replace("?", " ").strip()
    typed, words = letters(core), set(content_stems(core))
    if not typed or any(letters(v) == typed and v == core for v in stored):
        return None
    tests = (
        lambda v: letters(v) == typed,
        lambda v: bool(words) and set(content_stems(v)) == words,
        lambda v: min(len(letters(v)), len(typed)) >= 2 and _abbreviates(typed, v, core.isupper()),
        lambda v: country_of(core, v),
        lambda v: close_spelling(typed, letters(v)),
    )
    for fits in tests:
        found = [v for v in stored if fits(v)]
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            return None
    return None


#: What may follow a stored value in a word made of it: "Japan" -> "Japanese", "Kenya" -> "Kenyan".
_DERIVED_ENDINGS = ("ese", "ian", "an", "n", "ish", "i", "s", "es")
#: The calendar's words, which data often stores cut to their first letters ("Sun", "Thur", "Sept"): a table of
#: one waiter's tips stores `Sun` and `Sat`, and "on Sunday" was dropped as naming nothing (2026-12-03). Only
#: these: any other word that starts like a stored value ("rainfall", `rain`) names no value.
CALENDAR = frozenset(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", *MONTHS))


def _abbreviates(typed: str, stored: str, capitals: bool = False) -> bool:
    """The typed letters shorten the stored value ("calif" ~ California, "ny" ~ New York), or the stored
    value shortens them: an acronym in capitals ("US" ~ "usa") or a word made of it ("Japan" ~ "japanese"),
    never any word that merely starts alike ("rain" is no value of "rainfall")."""
    held = letters(stored)
    if held.startswith(typed) or initials(stored) == typed:
        return True
    if typed in CALENDAR and len(held) >= 3 and typed.startswith(held):  # "sunday" ~ `Sun`, "thursday" ~ `Thur`
        return True
    if not typed.startswith(held):
        return False
    # a stored acronym shortens a longer word only when it is 3 letters or more, or the word is in capitals
    # too: "GOOG" ~ google, "US" ~ USA, never "ME" ~ mean
    acronym = stored.isupper() and (len(held) >= 3 or capitals)
    return acronym or (len(held) >= 4 and typed[len(held) :] in _DERIVED_ENDINGS)
