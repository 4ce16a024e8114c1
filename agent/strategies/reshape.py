"""The written call reshaped to what the question asks: the slots its words need, and what they leave out.

The small model's call is amended here, not constrained (why: `agent.strategies.typed`), each change
recorded with why:
- a question that asks for a share ("what percentage of the clinics accept walk-ins", "how many of
  the exhibitions require booking") is answered by a boolean aggregation, the only place the tool
  computes a percentage or a count of trues; a call with one boolean filter and no boolean
  aggregation (the small model's habit: 4 of the committed sample's 28 single-step failures) has
  that filter turned into the aggregation, of the trues or the falses the filter kept;
- a question that asks per group ("for each consultation language", "split by whether they are
  family-friendly") and a call with no group-by get the group-by on the one text or boolean property
  whose name the words after "for each" (or "per", "split by", "grouped by") name;
- a boolean share (a percentage or a total of trues or falses) beside a filter on the same property
  (`tenured != true` with the share of the untenured) loses the filter, which made the share 0 or 1
  whatever the data. A COUNT beside that filter is a count of what the filter kept, and stays;
- a COUNT of a number beside a boolean or text aggregation (the share or the values asked) counts what
  the result's total already says, and is left out: the answer would hold two numbers for one question;
- a boolean's aggregation beside the statistic of a number asked, where no count or share is asked, is the
  condition the words name ("among exhibitions that require booking": `requiresBooking = true`), or left
  out where they name none (`agent.strategies.shares`);
- a share asked of the one boolean the words name, where the call computes none, is computed, and a
  statistic of a number the call only bounds is left out (`agent.strategies.shares`).
Every question of the natural and explicit splits these words mark has the slot in its gold call (60
and 160 of 315 each), and none a boolean filter beside a share's aggregation.
The literals the words fix (the count of a "most common", a comparison's operator, a LIKE pattern's
wildcards) are amended as well (`agent.strategies.wording`).
"""

from __future__ import annotations

import re
from typing import Any

from agent._words import content_stems, meets, names_property, split_name
from agent.strategies.asked import (
    ASKS_PER_GROUP,
    asks_for_groups,
    extreme_asked,
    first_counted,
    one_number_asked,
    statistic_asked,
)
from agent.strategies.codes import abbreviates, code_for, letters
from agent.strategies.compared import held
from agent.strategies.conditions import filtered_properties
from agent.strategies.shares import (
    ASKS_A_PERCENTAGE,
    ASKS_A_SHARE,
    BOOLEAN_AGGREGATION,
    BOOLEAN_FILTER,
    TALLY,
    is_share,
)
from agent.strategies.wording import (
    ASKS_HOW_MANY_DIFFERENT,
    NUMBER_AGGREGATION,
    NUMBER_FILTER,
    NUMBER_WORDS,
    TEXT_AGGREGATION,
    TEXT_FILTER,
    amend_wording,
)
from executors.vocabulary import (
    AGGREGATION_SLOT,
    CONDITIONS_FIELD,
    FILTER_SLOT,
    GROUPBY_FIELD,
    MATCH_FIELD,
    RELATED_FIELDS,
    SORT_FIELD,
    Match,
    NumberMetric,
)

#: "type" in a question asks for a property's data type.
_TYPE = re.compile(r"\b(?:type|kind)\b", re.I)


def asked_slots(question: str) -> tuple[str, ...]:
    """The slots the question's words alone say the call needs."""
    slots = [BOOLEAN_AGGREGATION] if ASKS_A_SHARE.search(question) else []
    return (*slots, GROUPBY_FIELD) if ASKS_PER_GROUP.search(question) else tuple(slots)


def group_named(question: str, properties: list[str]) -> str | None:
    """The one property (of those a call may group by) the words after "for each" name best, or None."""
    found = ASKS_PER_GROUP.search(question)
    words = content_stems(found.group("words")) if found else []
    scores = {
        name: sum(any(meets(w, p) for p in content_stems(split_name(name))) for w in words) for name in properties
    }
    best = max(scores.values(), default=0)
    named = [name for name, score in scores.items() if score == best]
    return named[0] if best and len(named) == 1 else None


def _asked_shapes(question: str, arguments: dict[str, Any], groupable: list[str]) -> tuple[dict[str, Any], list[str]]:
    """The call with the share, the group-by and the number of different values the words ask for, and why."""
    amended, why = dict(arguments), []
    where = arguments.get(BOOLEAN_FILTER)
    # a call that aggregates something else read the share words as part of a name ("the average discount
    # percentage of the active promotions"): its boolean filter is a condition, kept
    aggregates = any(arguments.get(slot) for slot in AGGREGATION_SLOT.values())
    if ASKS_A_SHARE.search(question) and not aggregates and isinstance(where, dict):
        kept = (where.get("operator") == "=") == (str(where.get("value")).lower() == "true")
        metric = ("PERCENTAGE_" if ASKS_A_PERCENTAGE.search(question) else "TOTAL_") + ("TRUE" if kept else "FALSE")
        del amended[BOOLEAN_FILTER]
        amended[BOOLEAN_AGGREGATION] = {"property_name": where.get("property_name"), "metrics": metric}
        why.append(f"the question asks for a share: {where.get('property_name')} as {metric}, not as a filter")
    share = amended.get(BOOLEAN_AGGREGATION)
    where = amended.get(BOOLEAN_FILTER)
    shared = is_share(share)
    if shared and isinstance(where, dict) and where.get("property_name") == share.get("property_name"):
        del amended[BOOLEAN_FILTER]  # the share of what a filter kept is 0 or 1 whatever the data
        why.append(f"a filter on {share.get('property_name')} makes its share 0 or 1: the filter left out")
    if ASKS_PER_GROUP.search(question) and not arguments.get(GROUPBY_FIELD):
        group = group_named(question, groupable)
        fixed = {f.get("property_name") for f in map(arguments.get, FILTER_SLOT.values()) if isinstance(f, dict)}
        if group is not None and group not in fixed:  # a call that filters the group's property chose its groups
            amended[GROUPBY_FIELD] = group
            why.append(f"the question asks per {group}: grouped by it")
    wild = amended.get(TEXT_FILTER)
    if isinstance(wild, dict) and not str(wild.get("value", "")).strip("*?% "):
        # `species = "*"` for "how many different species": a value of wildcards alone names no objects
        prop = wild.get("property_name")
        del amended[TEXT_FILTER]
        why.append(f"a filter on {prop} with only wildcards names no value: left out")
        listed = not any(amended.get(slot) for slot in AGGREGATION_SLOT.values())
        if ASKS_HOW_MANY_DIFFERENT.search(question) and prop in groupable and listed and not amended.get(GROUPBY_FIELD):
            amended[GROUPBY_FIELD] = prop
            why.append(f"the question asks how many different {prop}: grouped by it")
    counted = amended.get(TEXT_AGGREGATION)
    distinct = (
        isinstance(counted, dict)
        and counted.get("metrics") == NumberMetric.COUNT
        and ASKS_HOW_MANY_DIFFERENT.search(question)
    )
    if distinct and counted.get("property_name") in groupable and not amended.get(GROUPBY_FIELD):
        # "how many different varieties" counted every variety's value: the number of groups is asked
        del amended[TEXT_AGGREGATION]
        amended[GROUPBY_FIELD] = counted["property_name"]
        why.append(f"the question asks how many different {counted['property_name']}: grouped by it")
    return amended, why


def amend_to_question(question: str, arguments: dict[str, Any], groupable: list[str]) -> tuple[dict[str, Any], str]:
    """The call with the slots the question's words ask for and the model left out, and what it leaves out
    beside them, and why ("" if none)."""
    amended, why = _asked_shapes(question, arguments, groupable)
    beside = amended.get(TEXT_AGGREGATION)
    numeric = any(isinstance(amended.get(slot), dict) for slot in (NUMBER_AGGREGATION, BOOLEAN_AGGREGATION))
    if isinstance(beside, dict) and beside.get("metrics") in TALLY and numeric and not _TYPE.search(question):
        # "average petal length of setosa flowers": a COUNT (TYPE) of species beside the mean answers nothing
        # asked, and the answer then holds its numbers too
        del amended[TEXT_AGGREGATION]
        why.append(f"a {beside.get('metrics')} of {beside.get('property_name')} beside the aggregation asked: left out")
    grouped = amended.get(GROUPBY_FIELD)  # `numeric` still holds: only a text aggregation was left out above
    # a count is one number too ("How many ...?", "Count the Fords")
    counts = bool(re.match(r"\W*(?:how\s+many|count)\b", question, re.I))
    if grouped and (numeric or counts) and one_number_asked(question):
        # "What was the average mpg for 1982?" grouped by origin: one number asked, its groups' are not
        del amended[GROUPBY_FIELD]
        why.append(f"the question asks for one number, not one per {grouped}: the group-by left out")
    measured = amended.get(NUMBER_AGGREGATION)
    summed = re.search(
        r"\b(?:in total|total|altogether|combined|in all|sum)\b", question, re.I
    )  # "how many guests in total"
    if counts and not summed and isinstance(measured, dict) and measured.get("metrics") not in TALLY:
        prop = str(measured.get("property_name"))
        if not names_property(question, prop) or prop in filtered_properties(amended):
            # "How many foggy days were there in 2015?" summed precipitation, "How many Italian restaurants have
            # an average rating of more than 3.8?" averaged the rating it bounds: a count of the objects is asked
            amended[NUMBER_AGGREGATION] = {"property_name": prop, "metrics": NumberMetric.COUNT.value}
            why.append(f"the question counts objects, not the {measured.get('metrics')} of {prop}")
    # after the count asked replaced a statistic of a bound number ("How many of the X whose cost is between
    # 112 and 236 require a visa?": MAX of the cost, then its COUNT, beside the visa's TOTAL_TRUE)
    tally = amended.get(NUMBER_AGGREGATION)
    other = any(isinstance(amended.get(slot), dict) for slot in (BOOLEAN_AGGREGATION, TEXT_AGGREGATION))
    if isinstance(tally, dict) and tally.get("metrics") == NumberMetric.COUNT and other:
        # a COUNT of a number beside the share or the values asked counts what the result's total already
        # says, and the answer then holds two numbers for one question
        del amended[NUMBER_AGGREGATION]
        why.append(f"a COUNT of {tally.get('property_name')} beside the aggregation asked: left out")
    amended, literals = amend_wording(question, amended)
    why += literals
    return (amended, "; ".join(why) + ".") if why else (arguments, "")


def to_extreme(question: str, arguments: dict[str, Any], numbers: list[str]) -> tuple[dict[str, Any], str]:
    """The call computing the one extreme value a superlative asks for ("the lowest yield of any trial":
    MIN of yield) where it computes something else: a listing grouped by a code, another property's
    minimum, the top values of a text. Its conditions are kept; a group-by only where asked per group."""
    asked = extreme_asked(question, numbers)
    held = arguments.get(NUMBER_AGGREGATION)
    if asked is None or (isinstance(held, dict) and (held.get("property_name"), held.get("metrics")) == asked):
        return arguments, ""
    prop, metric = asked
    return _computing(arguments, prop, metric, keep_groups=bool(ASKS_PER_GROUP.search(question)))


def _computing(arguments: dict[str, Any], prop: str, metric: str, keep_groups: bool) -> tuple[dict[str, Any], str]:
    """The call computing `metric` of `prop` in place of what it computed or listed: its text aggregation and
    sort left out, its group-by too unless `keep_groups`; its conditions kept. With why."""
    drop = {TEXT_AGGREGATION, SORT_FIELD, *(() if keep_groups else (GROUPBY_FIELD,))}
    amended = {k: v for k, v in arguments.items() if k not in drop}
    amended[NUMBER_AGGREGATION] = {"property_name": prop, "metrics": metric}
    return amended, f"the question asks for the {metric} of {prop}: computed."


def to_first(question: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The call without its sort where it aggregates and the question writes no number of first objects
    ("the 5 heaviest cars": the average is over the sort's first 5). A sort the question does not count
    (`year` ascending, limit 1, for "the lowest average yield in 1931") would aggregate one object."""
    sort = arguments.get(SORT_FIELD)
    aggregates = any(arguments.get(slot) for slot in AGGREGATION_SLOT.values())
    if not isinstance(sort, dict) or not aggregates or _counts_first(question, sort.get("limit")):
        return arguments, ""
    kept = {k: v for k, v in arguments.items() if k != SORT_FIELD}
    by = sort.get("property_name")
    return kept, f"the question counts no first objects by {by}: the aggregation is over all, the sort left out."


def to_counted_first(question: str, arguments: dict[str, Any], numbers: list[str]) -> tuple[dict[str, Any], str]:
    """The call's aggregation over the first objects the words count by a superlative ("the average horsepower
    of the 5 heaviest cars": sorted by weight, largest first, the first 5), where it aggregates over all: the
    small model wrote the mean of every car's horsepower (3 of the public suite's questions, 2026-12-02). A call
    that sorts, groups or aggregates nothing is left as it is."""
    counted = first_counted(question, numbers)
    aggregates = any(arguments.get(slot) for slot in AGGREGATION_SLOT.values())
    if counted is None or not aggregates or arguments.get(SORT_FIELD) or arguments.get(GROUPBY_FIELD):
        return arguments, ""
    prop, order, limit = counted
    amended = {**arguments, SORT_FIELD: {"property_name": prop, "order": order, "limit": limit}}
    why = f"the question counts the first {limit} by {prop}: the aggregation is over them."
    # the count written as a condition: "the 10 wettest days", precipitation = 10
    where = arguments.get(NUMBER_FILTER) or {}
    if (where.get("property_name"), where.get("operator"), where.get("value")) == (prop, "=", limit):
        del amended[NUMBER_FILTER]
        why += f" {prop} = {limit} was the count, not a condition: left out."
    return amended, why


#: A question (or a clause of it) that opens with "which" or "what": it asks which group.
_WHICH = re.compile(r"(?:^\W*|[,;.?!]\s*(?:and\s+)?)(?:which|what)\b", re.I)


def groups_of_one(question: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The call without a text `=` filter on the property it groups by, where the question asks which group
    and names no such value: grouped over one value, the answer is that value whatever the data holds.
    Asked "Which state has the most airports south of latitude 30?", the model grouped `state = "CA"` by
    state and answered CA (3 of the public suite's questions, 2026-12-02). A value the question names (its
    letters, a name a stored code or abbreviation stands for) is kept, as are alternatives (`match: any`)."""
    prop = arguments.get(GROUPBY_FIELD)
    if not prop or arguments.get(MATCH_FIELD) == Match.ANY.value or not _WHICH.search(question):
        return arguments, ""
    written = letters(question)
    words = re.findall(r"[A-Z][\w'-]+", question)

    def unnamed(flt: object) -> bool:
        if not isinstance(flt, dict) or flt.get("property_name") != prop or flt.get("operator") != "=":
            return False
        value = flt.get("value")
        if not isinstance(value, str) or not letters(value):
            return False
        named = letters(value) in written or abbreviates(value, question) or any(code_for(w, value) for w in words)
        return not named

    listed = arguments.get(CONDITIONS_FIELD)
    listed = listed if isinstance(listed, list) else []
    gone = [f for f in [arguments.get(TEXT_FILTER), *listed] if unnamed(f)]
    if not gone:
        return arguments, ""
    kept = {k: v for k, v in arguments.items() if not (k == TEXT_FILTER and unnamed(v))}
    rest = [c for c in listed if not unnamed(c)]
    kept = {**kept, CONDITIONS_FIELD: rest} if rest else {k: v for k, v in kept.items() if k != CONDITIONS_FIELD}
    value = gone[0]["value"]
    return kept, f'the question asks which {prop} and names no {prop} "{value}": grouped over all, not that one.'


def groups_of_itself(arguments: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The call without a group-by on the text property whose most common values it asks for: each group holds
    one value, so every group's "most common" is its own name ("Which weather type shows up most often in
    2015?" grouped `weather` by weather and answered each weather; the unseen split, 2026-12-03)."""
    top = arguments.get(TEXT_AGGREGATION)
    grouped = arguments.get(GROUPBY_FIELD)
    if not (isinstance(top, dict) and grouped and top.get("metrics") == "TOP_OCCURRENCES"):
        return arguments, ""  # a COUNT within its own groups is each group's size: asked for, and kept
    if top.get("property_name") != grouped:
        return arguments, ""
    kept = {k: v for k, v in arguments.items() if k != GROUPBY_FIELD}
    return kept, f"the {top.get('metrics')} of {grouped} is over all objects, not within each of its own groups."


def groups_unsorted(arguments: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The call without its sort where it groups: a sort orders objects, not groups, and the executor refuses
    the pair. Written compact, the small model continued a group-by with a sort, met the refusal three times and
    gave no answer (7 of 8 such public-split questions lost, 2026-12-01); the groups answer "which has the most"."""
    sort = arguments.get(SORT_FIELD)
    if not sort or not arguments.get(GROUPBY_FIELD):
        return arguments, ""
    kept = {k: v for k, v in arguments.items() if k != SORT_FIELD}
    return kept, f"the groups by {arguments[GROUPBY_FIELD]} are not sorted: the sort was left out."


#: What "how many different ..." counts, up to the verb or the end: "model years", "grape varieties".
_DISTINCT_OF = re.compile(
    r"\bhow many (?:different|distinct|unique|separate) (?P<what>[\w' -]+?)"
    r"(?= (?:are|is|were|was|do|does|did|have|has|had|r|exist|appear|show|there|in|of|among|across)\b|\W*$|[?,.])",
    re.I,
)


def to_distinct(question: str, arguments: dict[str, Any], properties: list[str]) -> tuple[dict[str, Any], str]:
    """The call grouped by the one property "how many different ..." names ("How many different model years
    does the dataset cover?": grouped by `year`), where it groups by none: the number of groups is the
    answer (`answer_form`). Its aggregations, sort and `=` conditions on that property are left out (a
    count of years, or `species = "Iris"`, answered 406 and 0); its other conditions kept."""
    found = _DISTINCT_OF.search(question)
    if found is None or arguments.get(GROUPBY_FIELD) or ASKS_PER_GROUP.search(question):
        return arguments, ""
    words = content_stems(found.group("what"))
    named = [p for p in properties if any(meets(w, n) for w in words for n in content_stems(split_name(p)))]
    if len(named) != 1:
        return arguments, ""
    prop = named[0]
    drop = {*AGGREGATION_SLOT.values(), SORT_FIELD}
    amended = {
        k: v
        for k, v in arguments.items()
        if k not in drop and not (isinstance(v, dict) and v.get("property_name") == prop and v.get("operator") == "=")
    }
    listed = amended.pop(CONDITIONS_FIELD, None)
    listed = listed if isinstance(listed, list) else []
    kept = [c for c in listed if not (isinstance(c, dict) and c.get("property_name") == prop)]
    if kept:
        amended[CONDITIONS_FIELD] = kept
    else:
        amended.pop(MATCH_FIELD, None)
    amended[GROUPBY_FIELD] = prop
    return amended, f"the question asks how many different {prop}: grouped by it, the groups counted."


def _counts_first(question: str, limit: object) -> bool:
    """Whether the question writes the sort's limit, in digits or as a word ("5 heaviest", "top five")."""
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 2:
        return False
    words = [str(limit), *(word for word, n in NUMBER_WORDS.items() if n == limit)]
    return bool(re.search(rf"\b(?:{'|'.join(words)})\b", question, re.I))


#: A property named for its statistic: "average" in a question names it, not a statistic of it.
_STATISTIC_NAME = re.compile(r"\b(?:average|avg|mean|total|sum)\b", re.I)


def to_statistic(question: str, arguments: dict[str, Any], numbers: list[str]) -> tuple[dict[str, Any], str]:
    """The call computing the median, mean (sum) the question's words ask for ("Average yield of the Manchuria or
    Svansota plots?": MEAN of yield) where it computes no number at all: a count or the top values of a
    category, a listing. A call with a statistic of its own keeps it, as does a property the call filters or
    whose name says the statistic (`averageRating`). A question that asks per group in so many words, over a
    call that groups by a property and tallies it, keeps the group-by with the statistic computed per group
    ("the average weight for each origin" counted each origin: the mean of the weight per origin); one that
    asks which group, a bare group-by, or no group-by is left as it is. Its conditions are kept."""
    asked = statistic_asked(question, numbers)
    busy = any(arguments.get(slot) for slot in (NUMBER_AGGREGATION, BOOLEAN_AGGREGATION, *RELATED_FIELDS))
    # "for each origin" over a call that tallies the origins it groups by (COUNT, TYPE): the statistic per
    # group; a bare group-by (the counts a comparison of the most common groups reads), "which subject": as is
    grouped = arguments.get(GROUPBY_FIELD)
    tally = arguments.get(TEXT_AGGREGATION)
    tallies = isinstance(tally, dict) and tally.get("property_name") == grouped and tally.get("metrics") in TALLY
    per_group = bool(grouped) and tallies and bool(ASKS_PER_GROUP.search(question))
    if asked is None or busy or (asks_for_groups(question) and not per_group):
        return arguments, ""
    prop, metric = asked
    if prop in filtered_properties(arguments) or _STATISTIC_NAME.search(split_name(prop)):
        return arguments, ""  # "an average wait of at most 30 minutes": a condition on `averageWaitMinutes`
    return _computing(arguments, prop, metric, keep_groups=per_group)


def off_fixed(question: str, arguments: dict[str, Any], numbers: list[str]) -> tuple[dict[str, Any], str]:
    """The call's statistic moved off a number property its conditions hold to one value: the mean of
    `cylinders` where `cylinders = 8` is 8 whatever the data ("avg weight of US cars with 8 cylinders?"
    averaged the cylinders it put back). Moved to the one other number property the question's words name
    with a statistic (`asked.statistic_asked`); left as it is where they name none."""
    asked = arguments.get(NUMBER_AGGREGATION)
    fixed = {str(c.get("property_name")) for c in held(arguments) if c.get("operator") == "="}
    if not isinstance(asked, dict) or asked.get("property_name") not in fixed or asked.get("metrics") in TALLY:
        return arguments, ""
    other = statistic_asked(question, [n for n in numbers if n not in fixed])
    if other is None:
        return arguments, ""
    prop, metric = other
    moved = {**arguments, NUMBER_AGGREGATION: {"property_name": prop, "metrics": metric}}
    return moved, f"the {asked.get('metrics')} of {asked.get('property_name')}, which the call holds to one value, " + (
        f"answers nothing: the {metric} of {prop} the question names."
    )
