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

from agent._words import names_property, split_name
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
from executors.vocabulary import AGGREGATION_FIELDS, GROUPBY_FIELD, NumberMetric

#: What a count counts: "how many seats".
_HOW_MANY = re.compile(r"\bhow many (\w+)", re.IGNORECASE)
#: At most this many objects may share the extreme for the next part to be about them.
MAX_HOLDERS = 5
#: The statistics whose value some object holds, and how the answer says them.
_EXTREMES = {NumberMetric.MAX.value: "highest", NumberMetric.MIN.value: "lowest"}


def reads_held(next_part: str, prop: str, collection: CollectionSchema | None) -> bool:
    """Whether the next part reads the property of the objects rather than a statistic over others: it names
    no statistic, or counts the property itself ("how many seats does that place have", not "how many days
    had that weather"), or counts what the property holds ("how many soldiers died of wounds in that month":
    `wounds`, `events`)."""
    asked = statistic_written(next_part)
    counted = _HOW_MANY.search(next_part)
    if asked == "count" and collection is not None and summed_property(next_part, collection) == prop:
        return True
    return asked == "none" or (asked == "count" and counted is not None and names_property(counted[1], prop))


def last_made(run: AgentRun) -> ExecutedCall | None:
    """The run's last call that ran and was not a repeat: the one whose extreme the next part may ask about."""
    made = [c for c in run.calls() if c.result is not None and c.repeat_of is None and c.arguments]
    return made[-1] if made else None


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
    base = {k: v for k, v in bare(arguments).items() if k not in AGGREGATION_FIELDS}
    equal = {"property_name": prop, "operator": "=", "value": extreme}
    call = with_condition(base, equal, again=True) if extreme is not None else None
    if call is None or extreme is None:
        return None
    variants = Variants(executor)
    found = variants.run(call, f"the next part asks about what has the {_EXTREMES[metric]} {prop}")
    if found is None or not found.objects or found.truncated or len(found.objects) > MAX_HOLDERS:
        return None  # many objects share the extreme: "that day" names none of them
    named = [p for p in found.objects[0].properties if p != prop and names_property(next_part, p)]
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
