"""Which of a run's calls a score looks at. Every score is under one named protocol.

- `first`: the calls of the model's first step that made calls, whether or not they parsed: the
  paper's one-step protocol. A rejected or unparseable first call scores 0.
- `final`: the calls the final answer rests on: the successful calls of the last step that
  returned results. A correction after an error counts here, not under `first`.

Under both, a single-call label is matched by exactly one call: a step that hedges with several
calls at once (the right one among near misses) brings extra results, and extra results are extra
rows, so it earns nothing. "Any call matches" is not a protocol; it survives only as a diagnostic
beside the number of calls made.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evaluation.records import EvalRecord, PredictedCall


class ScoringProtocol(str, Enum):
    FIRST = "first"
    FINAL = "final"


PROTOCOLS = tuple(ScoringProtocol)


def protocol_calls(record: EvalRecord, protocol: ScoringProtocol) -> list[PredictedCall]:
    """The calls `protocol` scores, in the order they were made."""
    calls = record.predicted_calls
    if not calls:
        return []
    if protocol is ScoringProtocol.FIRST:
        first = calls[0].step
        return [c for c in calls if c.step == first]
    answered = [c.step for c in calls if c.ok]
    if not answered:
        return []
    last = max(answered)
    return [c for c in calls if c.step == last and c.ok]
