"""What the strategies before the loop read from the question, for the strategies after it (`AgentConfig.reading`)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Reading(BaseModel):
    """What the strategies before the loop read from the question, for the strategies after it. Each field
    names who writes it and who reads it, so a strategy's inputs are found in one place, not in a config
    every strategy may write."""

    model_config = ConfigDict(frozen=True)
    #: Written by `check`: the collection the question is about ("" unread). Read by `typed`, which offers
    #: only its properties, and `values`, which reads only its stored values.
    collection: str = ""
    #: Written by `check`: the statistic asked ("count", "average", ...; "" unread). Read by `grounded`,
    #: which ends the loop only at a result that computes it.
    statistic: str = ""
    #: Written by `chain` (one part found, no comparison) and `arithmetic` (one operand): the question asks
    #: one thing. Read by `grounded`, which ends the loop at the first result that holds one answer,
    #: whatever statistic `check` read. A part of a longer question keeps the loop's later turns.
    single: bool = False
    #: Written by `chain`: slots the call needs (a question it asks per group needs the group-by). Read by
    #: `typed`, which makes them required, so a forced first call's grammar holds them.
    required_slots: tuple[str, ...] = ()
