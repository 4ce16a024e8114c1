"""Stored codes a written name stands for: "Texas" is `TX`, "Puerto Rico" `PR`, and where a name fits
several ("California": `CA`, `CO`), the one the model chooses. `values` reads them; nothing here knows a
database: the codes are the database's own."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from itertools import groupby
from typing import Any

from agent.loop import Executor
from agent.models import ModelError, OracleModel, oracle_replies
from executors.errors import ExecutorError
from executors.schema import CollectionSchema
from executors.vocabulary import CONDITIONS_FIELD, FILTER_SLOT, PropertyKind
from llm import ChatRequest, ModelRequest, ResponseFormat


def letters(text: str) -> str:
    """Letters and digits, lower case: how a value is compared whatever its case and punctuation."""
    return "".join(ch for ch in text.lower() if ch.isalnum())


def initials(text: str) -> str:
    """The first letter of each word ("Puerto Rico" -> "pr")."""
    return "".join(word[0] for word in text.lower().replace("-", " ").split() if word[:1].isalnum())


def is_code(value: str) -> bool:
    """A stored code: 2 or 3 capital letters (`TX`, `PR`; `AAPL` is a ticker, not a code)."""
    return value.isupper() and 2 <= len(letters(value)) <= 3


def code_for(written: str, stored: str) -> bool:
    """A stored code in capitals (2 or 3 letters) shortens a name written out: the name's initials ("Puerto
    Rico" ~ `PR`), or its first letter then letters of it in order ("Texas" ~ `TX`, "Florida" ~ `FL`). Used
    on a filter value the model wrote; where several fit ("Alaska": AK, AL and AS), `chosen_code` decides."""
    code, name = letters(stored), letters(written)
    if not (is_code(stored) and len(name) >= 4 and written[:1].isupper()):
        return False
    if initials(written) == code:
        return True
    return _in_order(name, code)


#: (property, the value the model wrote, the stored codes it fits) -> the one meant, or None.
Chooser = Callable[[str, str, list[str]], str | None]
#: The schema name of the choice among codes.
VALUE_SCHEMA_NAME = "StoredValue"
#: The choice that takes no code; first, so that a model must choose a code.
NO_CODE = "none of them"
#: The system turn of that choice.
VALUE_SYSTEM = "You match a question's words to the values a database stores."


def chosen_code(model: Any, question: str, prop: str, value: str, codes: list[str]) -> str | None:
    """The stored code the model says a name means, among those its letters fit ("California": `CA` or
    `CO`), or None. A short constrained turn of its own, only where a written name fits several codes:
    asked to choose among every stored value, the model named one for names the data does not hold
    ("Tesla" -> `AAPL`, "Ontario" -> `CA`); among codes of the name's own letters it has no such choice.
    A model error takes none."""
    prompt = (
        f'Question: {question}\n\n{prop} stores no "{value}". Stored values of {prop} written like it: '
        f'{", ".join(codes)}.\n\nWhich stored value does the question mean by "{value}"?'
    )
    wanted = {
        "type": "object",
        "properties": {"value": {"enum": [NO_CODE, *codes]}},
        "required": ["value"],
        "additionalProperties": False,
    }
    request = ChatRequest(
        messages=[ModelRequest.prompt(VALUE_SYSTEM, prompt)],
        response_format=ResponseFormat(name=VALUE_SCHEMA_NAME, json_schema=wanted),
    )
    try:
        picked = json.loads(model.complete(request).content or "{}").get("value")
    except (ModelError, ValueError, AttributeError):
        return None
    return picked if picked in codes else None


@oracle_replies(VALUE_SCHEMA_NAME)
def oracle_code(oracle: OracleModel, request: ChatRequest) -> dict[str, Any]:
    """The oracle takes no code: gold values are stored values, so no gold call asks for one."""
    return {"value": NO_CODE}


#: A name inside a sentence: a capitalized word after another word ("airports in Houston, Texas"), and one of
#: two words ("New York").
_INNER_NAME = re.compile(r"(?<=[\w,;:'’)] )[A-Z][a-z]+")
_INNER_PAIR = re.compile(r"(?<=[\w,;:'’)] )[A-Z][a-z]+ [A-Z][a-z]+")
#: A name of two capitalized words joined by "of", with the "the" before it: "the District of Columbia".
_INNER_OF = re.compile(r"(?<=[\w,;:'’)] )(?:the )?(?P<name>[A-Z][a-z]+ of [A-Z][a-z]+)")
#: What stands before a place's name: "in Maine", "of Texan airports", "Houston, Texas", "Texas and Florida",
#: "does Alaska have" (not "the word Municipal", "with County in their name", "above the Arctic Circle").
_PLACE_WORDS = "in|of|from|at|for|across|within|outside|and|or|than|between|to|near|vs|does|do|did|has|have"
_PLACED = re.compile(rf"(?:\b(?:{_PLACE_WORDS})\.?\s+|,\s*)$", re.I)


#: A capitalized word inside a sentence, of three letters or more: a name the question gives.
_INNER_CAPITAL = re.compile(r"(?<=[\w,;:'’)] )[A-Z][\w'’&.-]{2,}")


def abbreviates(value: str, question: str) -> bool:
    """Whether a stored abbreviation (2 to 5 capitals: `AMZN`, `MSFT`) may stand for a name the question
    gives: a capitalized word inside it with the same first letter ("Amazon's", "Microsoft"). Loose on
    purpose: it only keeps a condition the model wrote (a ticker it knows), never adds one; the unasked
    rule dropped `symbol = "AMZN"` for "What was Amazon's average monthly closing price before March 2003?"
    (2026-11-29)."""
    if not (value.isupper() and value.isalpha() and 2 <= len(value) <= 5):
        return False
    return any(m.group()[0] == value[0] for m in _INNER_CAPITAL.finditer(question))


def coded(values: list[str]) -> bool:
    """Whether a property stores codes: every value is one (`is_code`)."""
    return bool(values) and all(is_code(v) for v in values)


def code_mentions(
    question: str, values: dict[str, list[str]], choose: Chooser | None, held: Callable[[str, str], bool]
) -> list[tuple[str, str, int, int]]:
    """(property, code, start, end) for each name inside the question that stands for a stored code of a
    property that stores codes: the one code its letters fit ("Texas" `TX`), else the one `choose` takes
    among those that fit ("Maine": `MA`, `ME`, `MI`, `MN`). Only a name where a place's name stands
    (`_PLACED`: never "the word Municipal" nor "above the Arctic Circle", never the first word: "Which" has
    the letters of `WI`), and not one that `held(property, name)` finds stored whole in another property
    ("Denver", a city, fits `DE`): asked to choose, the model took `DE` for Denver, `AR` for Arctic and `OR`
    for Orlando, never "none". Left to right, a pair of words before a word of it ("New York"). A property of
    longer abbreviations (tickers) is read by `_abbreviated`."""
    found: list[tuple[str, str, int, int]] = []
    names = [(m.group("name"), m.start()) for m in _INNER_OF.finditer(question)]
    names += [(m.group(), m.start()) for pattern in (_INNER_PAIR, _INNER_NAME) for m in pattern.finditer(question)]
    for prop, stored in values.items():
        if not coded(stored):
            found += _abbreviated(question, prop, stored, names, found)
            continue
        for name, start in names:
            end = question.index(name, start) + len(name)
            if not _PLACED.search(question[:start]) or any(s < end and start < e for _, _, s, e in found):
                continue
            codes = [v for v in stored if code_for(name, v)]
            if not codes or held(prop, name):  # held: a listing per other property, only for a name that fits
                continue
            meant = codes[0] if len(codes) == 1 else choose(prop, name, codes) if codes and choose else None
            if meant is not None:
                found.append((prop, meant, start, end))
    return sorted(found, key=lambda m: m[2])


def _abbreviated(
    question: str, prop: str, stored: list[str], names: list[tuple[str, int]], found: list[tuple[str, str, int, int]]
) -> list[tuple[str, str, int, int]]:
    """For a property that stores abbreviations of 4 or 5 capitals (tickers: `MSFT`, `AMZN`), each name of
    five letters or more inside the question that exactly one of them abbreviates: its first letter, then
    the others in order (`ticker_for`: "Microsoft" `MSFT`, "Apple" `AAPL`; "Tesla" none). Where a
    name stands is not read (a company is no place: "Microsoft's average close"), and the model is never
    asked to choose: among every stored value it named one for a name the data does not hold."""
    if not (stored and all(v.isupper() and v.isalpha() and 2 <= len(v) <= 5 for v in stored)):
        return []
    added: list[tuple[str, str, int, int]] = []
    for name, start in names:
        end = question.index(name, start) + len(name)
        if len(name) < 5 or " " in name or any(s < end and start < e for _, _, s, e in [*found, *added]):
            continue
        fits = [v for v in stored if len(v) >= 4 and ticker_for(name, v)]
        if len(fits) == 1:
            added.append((prop, fits[0], start, end))
    return added


def ticker_for(name: str, code: str) -> bool:
    """A ticker abbreviates a name: its letters, a doubled one read once, are the name's first and then
    letters of the rest in order ("Google" `GOOG`, "Apple" `AAPL`: no name has two a's for it)."""
    return _in_order(letters(name), "".join(letter for letter, _ in groupby(letters(code))))


def _in_order(name: str, code: str) -> bool:
    """The code is the name's first letter, then letters of the rest in order ("texas" `tx`, "google" `goog`)."""
    rest = iter(name[1:])
    return name[:1] == code[:1] and all(letter in rest for letter in code[1:])


def held_elsewhere(executor: Executor, found: CollectionSchema) -> Callable[[str, str], bool]:
    """Whether a name is a whole stored value of a text property of `found` other than the one given (a
    city): one filtered listing a property (a failure: no)."""

    def held(prop: str, name: str) -> bool:
        for other in (p.name for p in found.properties_of_kind(PropertyKind.TEXT) if p.name != prop):
            where = {"property_name": other, "operator": "=", "value": name}
            try:  # a word-tokenized `=` also matches "Central Maine": the value must be the name whole
                objects = executor.execute(
                    {"collection_name": found.name, FILTER_SLOT[PropertyKind.TEXT]: where}
                ).objects
            except ExecutorError:
                continue
            if any(letters(str(o.properties.get(other, ""))) == letters(name) for o in objects):
                return True
        return False

    return held


#: Names of peoples and countries whose letters do not lead to the name or code a database stores for the
#: country ("American" is no form of `USA`, "British" none of `UK`, "Swiss" none of `Switzerland`): the
#: country's names written out, matched to a stored value by its letters or its initials (`country_of`).
COUNTRY_NAMES: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("america", "american", "americans"), ("United States of America", "United States", "America")),
    **dict.fromkeys(("britain", "british", "brits"), ("United Kingdom", "Great Britain", "Britain")),
    **dict.fromkeys(("english",), ("England",)),
    **dict.fromkeys(("dutch",), ("Netherlands", "Holland")),
    **dict.fromkeys(("swiss",), ("Switzerland",)),
    **dict.fromkeys(("french",), ("France",)),
    **dict.fromkeys(("german", "germans"), ("Germany",)),
    **dict.fromkeys(("spanish",), ("Spain",)),
    **dict.fromkeys(("chinese",), ("China",)),
    **dict.fromkeys(("irish",), ("Ireland",)),
    **dict.fromkeys(("danish",), ("Denmark",)),
    **dict.fromkeys(("swedish",), ("Sweden",)),
    **dict.fromkeys(("finnish",), ("Finland",)),
    **dict.fromkeys(("polish",), ("Poland",)),
    **dict.fromkeys(("turkish",), ("Turkey",)),
    **dict.fromkeys(("greek",), ("Greece",)),
    **dict.fromkeys(("thai",), ("Thailand",)),
    **dict.fromkeys(("welsh",), ("Wales",)),
    **dict.fromkeys(("scottish", "scots"), ("Scotland",)),
    **dict.fromkeys(("filipino",), ("Philippines",)),
    **dict.fromkeys(("peruvian",), ("Peru",)),
    **dict.fromkeys(("argentine", "argentinian"), ("Argentina",)),
    **dict.fromkeys(("portuguese",), ("Portugal",)),
    **dict.fromkeys(("norwegian",), ("Norway",)),
    **dict.fromkeys(("new zealander", "kiwi"), ("New Zealand",)),
}


def country_of(written: str, stored: str) -> bool:
    """Whether a stored value is the country a people's or country's name stands for (`COUNTRY_NAMES`):
    "American" ~ `USA`, `US`, `United States`; "British" ~ `UK`. The initials skip "of"."""
    names = COUNTRY_NAMES.get(written.strip().lower(), ())
    held = letters(stored)
    return any(held in (letters(name), "".join(w[0] for w in name.lower().split() if w != "of")) for name in names)


TEXT_FILTER = FILTER_SLOT[PropertyKind.TEXT]


def off_code_names(
    question: str, arguments: dict[str, Any], coded_at: list[tuple[str, str, int, int]]
) -> tuple[dict[str, Any], list[str]]:
    """The call without a text `=` filter on another property whose value is (part of) a name the question
    gives for a stored code: "District of Columbia" is `state = DC`, and the model's `city = "Columbia"`
    beside it matched nothing; "Puerto Rico" is `PR`, and `country = "Puerto Rico"` matched nothing (2 of
    the public split's airports questions, 2026-11-29). Each left out with a note."""
    spans = [(prop, letters(question[start:end])) for prop, _, start, end in coded_at]

    def named(held: object) -> bool:
        if not isinstance(held, dict) or held.get("operator") != "=" or not isinstance(held.get("value"), str):
            return False
        value = letters(str(held["value"]))
        return len(value) >= 4 and any(held.get("property_name") != p and value in name for p, name in spans)

    notes = [
        f'{f["property_name"]} = "{f["value"]}" is the name the question gives for a code: left out.'
        for f in _filters(arguments)
        if named(f)
    ]
    if not notes:
        return arguments, []
    kept = {k: v for k, v in arguments.items() if not (k == TEXT_FILTER and named(v))}
    listed = [c for c in arguments.get(CONDITIONS_FIELD) or [] if not named(c)]
    if listed:
        kept[CONDITIONS_FIELD] = listed
    else:
        kept.pop(CONDITIONS_FIELD, None)
    return kept, notes


def _filters(arguments: dict[str, Any]) -> list[Any]:
    listed = arguments.get(CONDITIONS_FIELD)
    return [arguments.get(TEXT_FILTER), *(listed if isinstance(listed, list) else [])]
