"""Citations in a final answer, and their precision: every cited object must be one the agent received.

The tool shows each listed object with a short id (`[1a2b3c4d]`, the UUID's first 8 hex digits,
`executors.short_id`); the system prompt asks the model to cite objects by it. A citation is a
full UUID, a bracketed 8-hex id, or a bare 8-hex token with at least one letter a-f (an 8-digit
number such as 20140101 stays a number). A cited id counts as received when some object of a
result the run got (listed objects and group samples, from every call that ran) has a UUID that
equals it or, for a short id, starts with it. Precision says nothing about citations left out: a
model can only lose it by citing what it never saw.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict

from executors import SHORT_ID_CHARS

_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
CITATION = re.compile(
    rf"\b{_UUID}\b|\[(?P<bracketed>[0-9a-f]{{{SHORT_ID_CHARS}}})\]|\b(?=[0-9]*[a-f])[0-9a-f]{{{SHORT_ID_CHARS}}}\b",
    re.IGNORECASE,
)


class Citations(BaseModel):
    model_config = ConfigDict(frozen=True)

    cited: list[str]
    received: list[str]

    @property
    def precision(self) -> float | None:
        """The share of cited ids that were received (None: the answer cites nothing)."""
        return round(len(self.received) / len(self.cited), 6) if self.cited else None


def cited_ids(answer: str | None) -> list[str]:
    """The distinct ids an answer cites, lower-cased, in order of first mention."""
    found = []
    for match in CITATION.finditer(answer or ""):
        found.append((match.group("bracketed") or match.group()).lower())
    return list(dict.fromkeys(found))


def strip_citations(text: str) -> str:
    """`text` with every citation blanked (same length), so its hex digits are never read as numbers."""
    return CITATION.sub(lambda m: " " * len(m.group()), text)


def received_uuids(results: Iterable[dict[str, Any] | None]) -> set[str]:
    """The object UUIDs in serialized `QueryResult`s (`PredictedCall.result`): listed objects and group samples."""
    uuids = set()
    for result in results:
        if not result:
            continue
        for obj in result.get("objects") or []:
            uuids.add(str(obj["uuid"]).lower())
        for group in (result.get("groups") or {}).values():
            uuids.update(str(sample["uuid"]).lower() for sample in group.get("samples") or [])
    return uuids


def check_citations(answer: str | None, received: set[str]) -> Citations:
    cited = cited_ids(answer)
    hits = [c for c in cited if any(u == c or (len(c) == SHORT_ID_CHARS and u.startswith(c)) for u in received)]
    return Citations(cited=cited, received=hits)
