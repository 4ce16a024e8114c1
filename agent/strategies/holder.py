"""The object that holds a part's highest (lowest) value, when the next part asks about that object.

"What was the highest wind speed on record? What weather did that day have?" The first part is a maximum;
the second asks about the object that has it ("that day"), not about the number. Rewritten to name the
number, the model took the maximum again and the weather was never read (the unseen split's two-part
questions, 2026-12-03: 0 of 8). So `chain` asks here first: where a part's answer is the MAX (MIN) of one
number property, with no group-by, and the next part's words name one other property of the collection and
no stored value of it, the agent runs the part's call once more for the objects whose property equals that
extreme (its conditions kept), and answers the next part from those objects: no model turn. A next part that
names a stored value ("what did renewables generate that same year") asks about other objects, and one that
names a statistic ("the biggest rainfall that year", "how many days had that weather") asks of others too: both
go on as before.
"""

from __future__ import annotations

import re
from typing import Any

from agent._words import content_stems, names_property, split_name
from agent.answer import FinalAnswer
from agent.loop import AgentRun, ExecutedCall, Executor
from agent.sentence import rounded
from agent.strategies.arithmetic import Computed, Variants, aggregated, bare, things
from agent.strategies.asked_for import statistic_written
from agent.strategies.compared import number_of
from agent.strategies.conditions import with_condition
from agent.strategies.events import summed_property
from agent.strategies.naming import mentions
from executors.schema import CollectionSchema
from executors.vocabulary import AGGREGATION_FIELDS, GROUPBY_FIELD, SORT_FIELD, NumberMetric, SortOrder

#: What a count counts: "how many seats".
_HOW_MANY = re.compile(r"\bhow many (\w+)", re.IGNORECASE)
#: At most this many objects may share the extreme for the next part to be about them.
MAX_HOLDERS = 5
#: The statistics whose value some object holds, and how the answer says them.
_EXTREMES = {NumberMetric.MAX.value: "highest", NumberMetric.MIN.value: "lowest"}


def described(text: str, collection: CollectionSchema | None) -> str | None:
    """The one property whose description shares the most words with `text`, two or more, ahead of every
    other: "how many people were in that party" is `size` ("How many people were in the party."), a name no
    word of the question spells (a table of tips, 2026-12-03)."""
    asked = set(content_stems(text))
    shared = sorted(
        (
            (len(asked & set(content_stems(p.description or ""))), p.name)
            for p in (collection.properties if collection else ())
        ),
        reverse=True,
    )
    if not shared or shared[0][0] < 2 or (len(shared) > 1 and shared[1][0] == shared[0][0]):
        return None
    return shared[0][1]


def reads_held(next_part: str, prop: str, collection: CollectionSchema | None) -> bool:
    """Whether the next part reads the property of the objects rather than a statistic over others: it names
    no statistic, or counts the property itself ("how many seats does that place have", not "how many days
    had that weather"), or counts what the property holds ("how many soldiers died of wounds in that month":
    `wounds`, `events`)."""
    asked = statistic_written(next_part)
    counted = _HOW_MANY.search(next_part)
    if (
        asked == "count"
        and collection is not None
        and prop in (summed_property(next_part, collection), described(next_part, collection))
    ):
        return True
    return asked == "none" or (asked == "count" and counted is not None and names_property(counted[1], prop))


def last_made(run: AgentRun) -> ExecutedCall | None:
    """The run's last call that ran and was not a repeat: the one whose extreme the next part may ask about."""
    made = [c for c in run.calls() if c.result is not None and c.repeat_of is None and c.arguments]
    return made[-1] if made else None


def _listing(arguments: dict[str, Any]) -> dict[str, Any]:
    """The call with its conditions only: no group-by, sort or aggregation, so it lists the objects."""
    return {k: v for k, v in bare(arguments).items() if k not in AGGREGATION_FIELDS}


def extreme_group(executor: Executor, run: AgentRun) -> Computed | None:
    """The group that holds the highest (lowest) value, where the run's last call took the MAX (MIN) per group
    over more groups than a result lists: the objects sorted by that property name it, each group's extreme
    being some object's. "Which country had the largest population in 1952?" grouped 142 countries; the
    result was cut at 100, and the answer listed the first names in the alphabet (2026-12-03). None where the
    result was not cut, or two groups share the extreme."""
    made = last_made(run)
    if made is None or made.arguments is None or made.result is None or not made.result.truncated:
        return None
    slot, prop, metric = aggregated(made.arguments)
    group = made.arguments.get(GROUPBY_FIELD)
    if not slot or metric not in _EXTREMES or not isinstance(group, str):
        return None
    order = SortOrder.DESCENDING if metric == NumberMetric.MAX.value else SortOrder.ASCENDING
    base = _listing(made.arguments)
    call = {**base, SORT_FIELD: {"property_name": prop, "order": order.value, "limit": 2}}
    variants = Variants(executor)
    found = variants.run(
        call, f"the {group} of the object with the {_EXTREMES[metric]} {prop}: more groups than listed"
    )
    top = [o.properties for o in (found.objects if found is not None else [])]
    if not top or top[0].get(group) is None or top[0].get(prop) is None:
        return None
    if len(top) > 1 and top[1].get(prop) == top[0].get(prop) and top[1].get(group) != top[0].get(group):
        return None  # a tie between groups: no one group holds it
    name, extreme = str(top[0][group]), float(top[0][prop])
    text = f"{name}, the {_EXTREMES[metric]}: its {split_name(prop).lower()} is {rounded(extreme)}."
    return Computed(variants.calls, FinalAnswer(names=[name]), text)  # the name asked, alone (as `chain` picks)


def asked_of_holder(
    executor: Executor,
    run: AgentRun,
    next_part: str,
    values: dict[str, list[str]],
    collection: CollectionSchema | None = None,
) -> Computed | None:
    """The next part answered from the objects that hold the extreme `run` computed, or None where it
    does not fit (no MAX or MIN of one property; the next part names no other property, or several, or a
    stored value of the collection's category `values`; no object found)."""
    made = last_made(run)
    if made is None or made.arguments is None or made.result is None:
        return None
    arguments, result = made.arguments, made.result
    slot, prop, metric = aggregated(arguments)
    if not slot or metric not in _EXTREMES or arguments.get(GROUPBY_FIELD) or mentions(next_part, values):
        return None
    extreme = number_of((result.aggregations.get(prop) or {}).get(metric))
    base = _listing(arguments)
    equal = {"property_name": prop, "operator": "=", "value": extreme}
    call = with_condition(base, equal, again=True) if extreme is not None else None
    if call is None or extreme is None:
        return None
    variants = Variants(executor)
    found = variants.run(call, f"the next part asks about what has the {_EXTREMES[metric]} {prop}")
    if found is None or not found.objects or found.truncated or len(found.objects) > MAX_HOLDERS:
        return None  # many objects share the extreme: "that day" names none of them
    named = [p for p in found.objects[0].properties if p != prop and names_property(next_part, p)]
    if not named and (meant := described(next_part, collection)) not in (None, prop):
        named = [str(meant)]
    if len(named) != 1 or not reads_held(next_part, named[0], collection):
        return None
    held = list(dict.fromkeys(o.properties.get(named[0]) for o in found.objects))
    held = [v for v in held if v is not None and not isinstance(v, dict | list)]
    names = [str(v) for v in held if isinstance(v, str)]
    numbers = [float(v) for v in held if isinstance(v, int | float) and not isinstance(v, bool)]
    if not names and not numbers:  # a yes/no property: nothing to name
        return None
    shown = ", ".join(v if isinstance(v, str) else rounded(float(v)) for v in held)
    owner = "its" if len(found.objects) == 1 else f"the {len(found.objects)} {things(base)} that have it, their"
    text = (
        f"The {_EXTREMES[metric]} {split_name(prop).lower()} is {rounded(extreme)}; "
        f"{owner} {split_name(named[0]).lower()}: {shown}."
    )
    answer = FinalAnswer(names=names, numbers=[extreme, *numbers])
    return Computed(variants.calls, answer, text)
