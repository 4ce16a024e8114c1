"""Values a question excludes ("other than Alaska and Texas") and alternatives it joins by "or" ("European
or Japanese", "whose subject is History or that are taught online"), as the compound tool's conditions.

The small model wrote an excluded value as a filter on it, or as a LIKE of the names the question gives
(`state LIKE "!ALaska, Texas"`, which matched nothing), and an "or" as two conditions joined by and. The
value linker (`values`) finds the values the question names; these functions read how the words around
them join them, and turn the call's filters accordingly, each with a note.
"""

from __future__ import annotations

import re
from typing import Any

from agent.strategies.codes import letters
from agent.strategies.conditions import filtered_properties, shown, with_condition
from executors.vocabulary import CONDITIONS_FIELD, FILTER_FIELDS, MATCH_FIELD, Match

#: Words right before a value that exclude it: "other than Morris", "isn't a setosa", "outside Duluth", "without a
#: majority", and a negated verb with one word of its own ("weren't labeled as rain", "didn't have snow").
_EXCLUDING = re.compile(
    r"(?:\bother than|\bexcept(?: for)?|\bexcluding|\bbesides|\boutside(?: of)?|\bwithout|\bnot(?: in| from| at)?|"
    r"\bisn'?t|\baren'?t|\bnon-?|"
    r"\b(?:wasn|weren|doesn|don|didn)['’]?t\b|\b(?:isn|aren|wasn|weren|doesn|don|didn)['’]?t\s+[a-z]+(?:\s+as)?)"
    r"\s*(?:the\s+|an?\s+)?$",
    re.I,
)
#: A clause that excludes what follows it, up to the value: "except those whose cuisine is Italian".
_EXCLUDING_CLAUSE = re.compile(
    r"\b(?:except|other than|excluding|besides|but not)\s+(?:for\s+)?(?:those|the ones|any)\b[^,.;:?!]{0,40}$", re.I
)
#: After a value, an "or" that opens a clause of its own, not another value: "History or that are online".
_OR_CLAUSE = re.compile(r"^\W*or\s+(?:that|which|who|whose|with|those|ones)\b", re.I)
#: What may stand between two values of one list: "Alaska and Texas", "NY, NJ".
_LISTED = re.compile(r"^\s*(?:,\s*)?(?:and|or|nor)?\s*(?:the\s+)?$", re.I)
#: What stands between two alternatives: "European or Japanese", "NY, NJ or CT".
_OR = re.compile(r"^\s*(?:,\s*)?(?:or|and/or)\s+(?:the\s+)?$|^\s*,\s*$", re.I)

#: A question that asks to choose between the values it names, not for all of them together.
_CHOOSES = re.compile(
    r"\b(?:which|whether|compared?|versus|vs\.?|between)\b|^\W*(?:is|are|was|were|does|do|did|has|have)\b", re.I
)
#: A value the question names, where: (property, value, start, end), from `values.mentions`.
Mention = tuple[str, str, int, int]


def excluded(question: str, named: list[Mention]) -> list[Mention]:
    """The values the question excludes: each right after words that exclude ("other than X"), and the
    values listed after one ("other than Alaska and Texas")."""
    found: list[Mention] = []
    for mention in named:
        prop, _, start, _ = mention
        before = question[max(0, start - 24) : start]
        after_excluded = bool(found) and found[-1][0] == prop and _LISTED.match(question[found[-1][3] : start])
        clause = _EXCLUDING_CLAUSE.search(question[max(0, start - 60) : start])
        if _EXCLUDING.search(before) or clause or after_excluded:
            found.append(mention)
    return found


def alternatives(question: str, named: list[Mention]) -> tuple[str, list[str]] | None:
    """The property and values of the one "a or b" the question names (values of one property, joined by
    "or"), or None; never in a question that asks to choose between them ("Which is higher, Morris or
    Duluth?", "Is Morris or Duluth higher?"): there each is its own group, not one set."""
    if _CHOOSES.search(question):
        return None
    runs: list[list[Mention]] = []
    for mention in named:
        last = runs[-1][-1] if runs else None
        if last is not None and last[0] == mention[0] and _OR.match(question[last[3] : mention[2]]):
            runs[-1].append(mention)
        else:
            runs.append([mention])
    joined = [run for run in runs if len(run) > 1 and " or " in question[run[0][2] : run[-1][3]].lower()]
    if len(joined) != 1:
        return None
    return joined[0][0][0], list(dict.fromkeys(m[1] for m in joined[0]))


def exclude(arguments: dict[str, Any], out: list[Mention], question: str = "") -> tuple[dict[str, Any], list[str]]:
    """The call with each excluded value excluded: its filter on that value, or on the name the question
    writes for it ("Alaska" for `AK`), turned to `!=` the value, or a `!=` condition added where the call
    does not filter that property; a note for each."""
    notes: list[str] = []
    for prop, value, start, end in out:
        flipped, done = _flip(arguments, prop, value, question[start:end])
        if done:
            arguments = flipped
        elif prop in filtered_properties(arguments) and not any(o[0] == prop and o[1] != value for o in out):
            continue  # the call filters that property otherwise: its own reading is kept
        elif (added := with_condition(arguments, _condition(prop, "!=", value), again=True)) is not None:
            arguments = added
        else:
            continue
        notes.append(f'the question excludes {prop} = "{value}": {prop} != "{value}".')
    return arguments, notes


def either(arguments: dict[str, Any], prop: str, values: list[str]) -> tuple[dict[str, Any], list[str]]:
    """The call with "a or b" as alternatives (`match: any`) in place of any `=` on one of them, where its
    conditions hold nothing else (the one group of alternatives a call has)."""
    listed = arguments.get(CONDITIONS_FIELD)
    listed = listed if isinstance(listed, list) else []
    if any(isinstance(c, dict) and c.get("property_name") != prop for c in listed):
        return arguments, []
    kept = {k: v for k, v in arguments.items() if k not in (CONDITIONS_FIELD, MATCH_FIELD)}
    for slot in FILTER_FIELDS:
        held = kept.get(slot)
        if isinstance(held, dict) and held.get("property_name") == prop:
            if held.get("operator") != "=" or held.get("value") not in values:
                return arguments, []  # the call reads that property otherwise
            del kept[slot]
    group = [_condition(prop, "=", value) for value in values]
    choices = " or ".join(f'"{v}"' for v in values)
    return {**kept, CONDITIONS_FIELD: group, MATCH_FIELD: Match.ANY.value}, [f"the question asks for {prop} {choices}."]


def or_clause(question: str, arguments: dict[str, Any], named: list[Mention]) -> tuple[dict[str, Any], list[str]]:
    """The call's two filters as alternatives (`match: any`) where the question joins the value one of them
    holds to a clause of its own by "or" ("whose subject is History or that are taught online") and the
    call holds just those two, ANDed; never in a question that asks to choose between them."""
    if _CHOOSES.search(question) or arguments.get(MATCH_FIELD) == Match.ANY.value:
        return arguments, []
    joined = [m for m in named if _OR_CLAUSE.match(question[m[3] :])]
    listed = arguments.get(CONDITIONS_FIELD)
    held = [f for f in [*map(arguments.get, FILTER_FIELDS), *(listed if isinstance(listed, list) else [])] if f]
    if len(joined) != 1 or len(held) != 2 or not any(_is(f, *joined[0][:2]) for f in held):
        return arguments, []
    kept = {k: v for k, v in arguments.items() if k not in (*FILTER_FIELDS, CONDITIONS_FIELD)}
    note = f"the question asks for {shown(held[0])} or {shown(held[1])}."
    return {**kept, CONDITIONS_FIELD: held, MATCH_FIELD: Match.ANY.value}, [note]


def _condition(prop: str, operator: str, value: str) -> dict[str, Any]:
    return {"property_name": prop, "operator": operator, "value": value}


def _flip(arguments: dict[str, Any], prop: str, value: str, name: str = "") -> tuple[dict[str, Any], bool]:
    """The call with its filter on `value` (or on the `name` the question writes for it), in a slot or a
    condition, as `prop != value`, and whether it held one."""
    for slot in FILTER_FIELDS:
        if _is(arguments.get(slot), prop, value, name, excluding=True):
            return {**{k: v for k, v in arguments.items() if k != slot}, **_added(arguments, prop, value)}, True
    listed = arguments.get(CONDITIONS_FIELD)
    if isinstance(listed, list) and arguments.get(MATCH_FIELD) != Match.ANY.value:
        for i, held in enumerate(listed):
            if _is(held, prop, value, name, excluding=True):
                flipped = [*listed[:i], _condition(prop, "!=", value), *listed[i + 1 :]]
                return {**arguments, CONDITIONS_FIELD: flipped}, True
    return arguments, False


def _is(held: object, prop: str, value: str, name: str = "", excluding: bool = False) -> bool:
    """`held` is the filter `prop = value`, or a LIKE that matches the value only as a part ("*Morris*").
    Excluding, also one on the `name` the question writes for a stored code, and one that holds that name
    among others: the model wrote `state LIKE "!ALaska"` and `"!ALaska, Texas"` for "other than Alaska and
    Texas", which matched nothing."""
    if not isinstance(held, dict) or held.get("property_name") != prop:
        return False
    written, operator = str(held.get("value")), held.get("operator")
    if excluding:
        return letters(written) in {letters(value), letters(name)} or (
            len(letters(name)) >= 4 and letters(name) in letters(written)
        )
    if operator == "LIKE":
        return written.strip("*").lower() == value.lower()
    return operator == "=" and written == value


def _added(arguments: dict[str, Any], prop: str, value: str) -> dict[str, Any]:
    listed = arguments.get(CONDITIONS_FIELD)
    return {CONDITIONS_FIELD: [*(listed if isinstance(listed, list) else []), _condition(prop, "!=", value)]}
