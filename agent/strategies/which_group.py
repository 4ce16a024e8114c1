"""Which group has the highest (lowest) statistic, read as the per-group question whose result a pick reads:
"Which cuisine has the highest average rating?" -> "What is the average rating per cuisine?". `chain` asks
it in place of the part as written."""

from __future__ import annotations

import re

from agent.strategies.asked import ASKS_PER_GROUP
from agent.strategies.wording import DIMENSIONS

_SUPERLATIVE = re.compile(
    r"^which (?P<category>[\w -]+?) (?:has|have|had|gets|got) the (?:highest|lowest|largest|smallest|greatest|biggest"
    r"|longest|shortest|best|worst) (?P<measure>(?:average|mean|median|total) [\w ,-]+?)"
    r"(?: (?:among|of|for) (?P<population>[\w -]+?))?\?$",
    re.IGNORECASE,
)
#: "Which ticker had the highest single monthly close?", "Which species has the single longest petal?": the
#: group of the one object with the extreme value, asked per group ("What is the highest monthly close per
#: ticker?"); the model took the maximum over all objects and named no group (2026-11-27).
_SINGLE = re.compile(
    r"^which (?P<category>[\w -]+?) (?:has|have|had|gets|got|holds?|recorded|saw) the "
    r"(?:(?:single|one) (?P<a>\w+est)|(?P<b>\w+est) single) (?P<measure>[\w ,-]+?)(?: (?:among|of|for) "
    r"(?P<population>[\w -]+?))?\?$",
    re.IGNORECASE,
)
#: "Which origin has the lightest cars on average?": a word of size is the mean of the measure it names.
_ON_AVERAGE = re.compile(
    r"^which (?P<category>[\w -]+?) (?:has|have|had|makes?|made|builds?|built) the (?P<adjective>\w+est) "
    r"(?P<things>[\w -]+?),? on average\?$",
    re.IGNORECASE,
)
#: "Which source generated the most electricity on average?": the mean of what it names, per group (the model
#: took the mean over all objects and named no source, 2026-11-29).
_MOST_ON_AVERAGE = re.compile(
    r"^which (?P<category>[\w -]+?) (?:\w+) the (?:most|least|fewest) (?P<things>[\w -]+?),? on average\?$",
    re.IGNORECASE,
)

#: "On which day do people tip the most on average?": the mean of what the verb names, per group (the model
#: took the mean over all parties and named no day; a table of tips, 2026-12-03).
_DO_MOST_ON_AVERAGE = re.compile(
    r"^(?:(?:on|in|at|during|for) )?which (?P<category>[\w -]+?) (?:do|does|did) (?:[\w-]+ ){1,3}?(?P<verb>[\w-]+) "
    r"the (?:most|least),? on average\?$",
    re.IGNORECASE,
)


def per_group_question(measure: str, population: str, category: str) -> str:
    """The single-step question whose per-group result holds the answer."""
    among = f" of {population}" if population else ""
    # "per day" is read as a rate, and the group-by left out: "for each day" asks per group
    per = "per" if ASKS_PER_GROUP.search(f"per {category}") else "for each"
    return f"What is the {measure}{among} {per} {category}?"


def per_group_part(part: str) -> str | None:
    """A part asking which group has the highest (lowest) statistic, as the per-group question whose
    result the pick reads: "Which cuisine has the highest average rating among restaurants?" -> "What is
    the average rating of restaurants per cuisine?". Asked as it was, the model took the MAX of the
    ratings instead of the mean per cuisine in 6 of the 13 failed chains of 2026-11-26, and its answer
    named a number, not a cuisine. None for a part of another form."""
    found = _SUPERLATIVE.match(part.strip())
    if found is not None:
        return per_group_question(found["measure"], found["population"] or "", found["category"])
    sized = _ON_AVERAGE.match(part.strip())
    if sized is not None and sized["adjective"].lower() in DIMENSIONS:  # "the lightest cars on average": weight
        measure = f"average {DIMENSIONS[sized['adjective'].lower()]}"
        return per_group_question(measure, sized["things"], sized["category"])
    most = _MOST_ON_AVERAGE.match(part.strip())
    if most is not None:
        return per_group_question(f"average {most['things']}", "", most["category"])
    done = _DO_MOST_ON_AVERAGE.match(part.strip())
    if done is not None:
        return per_group_question(f"average {done['verb']}", "", done["category"])
    single = _SINGLE.match(part.strip())
    if single is not None:
        measure = f"{single['a'] or single['b']} {single['measure']}"
        return per_group_question(measure, single["population"] or "", single["category"])
    return None
