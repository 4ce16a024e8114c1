"""A share the question asks of a boolean, and a boolean's aggregation no word asks for.

Split from `agent.strategies.reshape` (which amends the call's other slots) so that each stays short:
- a boolean share asked where the call computes none is computed from the one boolean the words name,
  and a statistic of a number the call only bounds is left out (`share_of_named`);
- a boolean's aggregation beside the statistic of a number asked, where no count or share is asked, is the
  condition the words name ("among exhibitions that require booking": `requiresBooking = true`), or left
  out where they name none (`boolean_beside`).
"""

from __future__ import annotations

import re
from typing import Any

from agent._words import content_stems, meets, split_name
from agent.strategies.conditions import filtered_properties, with_condition
from agent.strategies.wording import NUMBER_AGGREGATION, TEXT_AGGREGATION
from executors.vocabulary import AGGREGATION_SLOT, FILTER_SLOT, GROUPBY_FIELD, NumberMetric, PropertyKind

BOOLEAN_FILTER, BOOLEAN_AGGREGATION = FILTER_SLOT[PropertyKind.BOOLEAN], AGGREGATION_SLOT[PropertyKind.BOOLEAN]
#: Metrics that tally values, not name them (reshape's too).
TALLY = {NumberMetric.COUNT.value, NumberMetric.TYPE.value}
#: A question that asks what share of the objects are something: a boolean's percentage or its trues.
ASKS_A_PERCENTAGE = re.compile(r"\b(?:percentages?|percent|proportion|fraction)\b", re.I)
ASKS_A_SHARE = re.compile(rf"{ASKS_A_PERCENTAGE.pattern}|\bhow many of (?:the|these|those)\b", re.I)


def is_share(aggregation: object) -> bool:
    """Whether a boolean aggregation computes a share: a percentage or a total of trues or falses."""
    return isinstance(aggregation, dict) and str(aggregation.get("metrics", "")).startswith(("PERCENTAGE_", "TOTAL_"))


#: Words that ask for a count or a share somewhere in the question: a boolean's aggregation may be what it asks.
_COUNTS_ANYWHERE = re.compile(r"\b(?:how\s+many|count|number\s+of)\b", re.I)
_NEGATION = re.compile(r"\b(?:not|no|never|without)\b|n't\b", re.I)


def boolean_beside(question: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The call without a boolean's aggregation beside the statistic of a number the question asks, where it
    asks for no count or share: "the cheapest ticket price among exhibitions that require advance booking"
    got MIN of the price and a COUNT of `requiresBooking`, and the answer read "2, 6" (the compound split,
    2026-11-29). A boolean the words name is a condition ("that require booking": true; "that do not": false);
    one they do not name is left out."""
    share, measured = arguments.get(BOOLEAN_AGGREGATION), arguments.get(NUMBER_AGGREGATION)
    if not (isinstance(share, dict) and isinstance(measured, dict)) or measured.get("metrics") in TALLY:
        return arguments, []
    if _COUNTS_ANYWHERE.search(question) or ASKS_A_SHARE.search(question):
        return arguments, []
    prop = str(share.get("property_name"))
    amended = {k: v for k, v in arguments.items() if k != BOOLEAN_AGGREGATION}
    words, at = _named_at(question, prop)
    if not at or prop in filtered_properties(amended):
        return amended, [f"a {share.get('metrics')} of {prop} beside the statistic asked, which no word asks: left out"]
    kept = _asserted(words, at)
    condition = {"property_name": prop, "operator": "=", "value": kept}
    placed = (
        {**amended, BOOLEAN_FILTER: condition}
        if not amended.get(BOOLEAN_FILTER)
        else with_condition(amended, condition)
    )
    if placed is None:
        return amended, [f"a {share.get('metrics')} of {prop} beside the statistic asked: left out"]
    metric = share.get("metrics")
    return placed, [f"the question's {prop} is a condition, not a {metric} beside the statistic: {prop} = {kept}"]


def _named_at(question: str, prop: str) -> tuple[list[str], list[int]]:
    """The question's words, and where a word of them names the property (its forms: "require" `requiresBooking`)."""
    words = re.findall(r"[\w']+", question)
    named = content_stems(split_name(prop))
    return words, [i for i, w in enumerate(words) if any(meets(s, p) for s in content_stems(w) for p in named)]


def _asserted(words: list[str], at: list[int]) -> bool:
    """Whether the words before the first that names a boolean assert it ("that do not require": no)."""
    return not _NEGATION.search(" ".join(words[max(0, at[0] - 3) : at[0]]))


def share_of_named(question: str, arguments: dict[str, Any], booleans: list[str]) -> tuple[dict[str, Any], str]:
    """The share a question asks of the one boolean its words name, where the call computes none, and without
    a statistic of a number the call only bounds: "What percentage of menu items whose price is between 9.9
    and 28.6 are vegetarian?" got the price's MEDIAN, and the answer was the share of the range; "... do not
    include breakfast?" got the nightly price's MEAN beside the share (the compound split, 2026-11-29)."""
    # a group-by or a text's values: another part of the question is asked ("Which subject ...? How many of ...")
    if not ASKS_A_SHARE.search(question) or any(
        arguments.get(s) for s in (BOOLEAN_FILTER, GROUPBY_FIELD, TEXT_AGGREGATION)
    ):
        return arguments, ""
    amended, why = dict(arguments), []
    if not isinstance(amended.get(BOOLEAN_AGGREGATION), dict):
        named = [(prop, *_named_at(question, prop)) for prop in booleans]
        named = [(prop, words, at) for prop, words, at in named if at and prop not in filtered_properties(amended)]
        if len(named) != 1:
            return arguments, ""
        prop, words, at = named[0]
        metric = "PERCENTAGE_" if ASKS_A_PERCENTAGE.search(question) else "TOTAL_"
        metric += "TRUE" if _asserted(words, at) else "FALSE"
        amended[BOOLEAN_AGGREGATION] = {"property_name": prop, "metrics": metric}
        why.append(f"the question asks for the share of {prop}: its {metric}")
    share, measured = amended[BOOLEAN_AGGREGATION], amended.get(NUMBER_AGGREGATION)
    bound = isinstance(measured, dict) and measured.get("property_name") in filtered_properties(amended)
    if bound and is_share(share):
        del amended[NUMBER_AGGREGATION]
        why.append(f"the {measured.get('metrics')} of {measured.get('property_name')}, which the call bounds: left out")
    return (amended, "; ".join(why) + ".") if why else (arguments, "")
