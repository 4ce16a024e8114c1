"""The one canonical result both executors return, its comparison and its rendering for an LLM.

Values are normalised so two executors (or a run and its ground truth) compare equal exactly
when they mean the same thing: numbers are floats, group keys are strings (`"true"`, `"4"`,
`"4.5"`, `"Italian"`), TOP_OCCURRENCES is a list of `{value, count}` sorted by count then value,
COUNT/TOTAL_* are floats, PERCENTAGE_* are fractions in [0, 1], TYPE is Weaviate's data type name
(`text`, `number`, `int`, `boolean`). Object lists are ordered by rank for searches and by UUID
otherwise; groups by count (descending) then key.
"""

from __future__ import annotations

import json
import math
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from executors.options import SearchMode

#: Default size bound of `QueryResult.to_llm_text`.
DEFAULT_LLM_MAX_CHARS = 4000
#: Longest property value shown to the model before it is cut with an ellipsis.
MAX_VALUE_CHARS = 160
#: Objects of a listing shown to the model (the result holds more; the text says how many matched).
LLM_MAX_OBJECTS = 5
#: Hex digits of an object's UUID shown to the model, so an answer can cite the object in about five tokens.
SHORT_ID_CHARS = 8

PropertyValue = str | float | bool | None


class TopOccurrence(BaseModel):
    model_config = ConfigDict(frozen=True)

    value: str
    count: int


MetricValue = float | str | list[TopOccurrence] | None
#: property name -> metric name (e.g. "MEAN") -> value.
Aggregations = dict[str, dict[str, MetricValue]]


class ResultObject(BaseModel):
    """One object: `rank` is its 1-based position in a search (None without search)."""

    uuid: str
    properties: dict[str, PropertyValue] = Field(default_factory=dict)
    rank: int | None = None
    score: float | None = Field(default=None, description="Hybrid/BM25 score, higher is better.")
    distance: float | None = Field(default=None, description="near_text vector distance, lower is better.")


class GroupResult(BaseModel):
    value: str
    count: int
    aggregations: Aggregations = Field(default_factory=dict)
    samples: list[ResultObject] = Field(default_factory=list)


class Program(Protocol):
    """What renders a result's calls as a whole program (`executors.snippet.Snippet`): named here by what it
    does, so the results do not import the module that assembles them."""

    def program(self) -> str: ...


class QueryResult(BaseModel):
    """What a `query_database` call returned, whichever executor ran it."""

    collection: str
    operator_class: str
    search_mode: SearchMode | None = None
    objects: list[ResultObject] = Field(default_factory=list)
    aggregations: Aggregations = Field(default_factory=dict)
    group_by: str | None = None
    groups: dict[str, GroupResult] | None = None
    total_count: int | None = Field(default=None, description="Objects matched/aggregated, when known exactly.")
    truncated: bool = Field(default=False, description="More objects or groups exist than are listed.")
    calls: list[str] = Field(default_factory=list, description="The weaviate-client calls made, as Python.")
    notes: list[str] = Field(default_factory=list)
    #: The executed plan and its connection (live executor only): what `program` renders.
    _snippet: Program | None = PrivateAttr(default=None)

    def with_snippet(self, snippet: Program) -> QueryResult:
        self._snippet = snippet
        return self

    def program(self) -> str | None:
        """`calls` as a whole weaviate-client v4 program (imports, connection, collection, calls, prints),
        for a person to paste and run; None when no live executor made this result."""
        return self._snippet.program() if self._snippet is not None else None

    def comparable(self) -> dict[str, Any]:
        """The part of the result that must agree between executors (no scores, calls or notes)."""
        data: dict[str, Any] = {
            "objects": [{"uuid": o.uuid, "properties": o.properties} for o in self.objects],
            "aggregations": _dump(self.aggregations),
            "total_count": self.total_count,
            "truncated": self.truncated,
        }
        if self.groups is not None:
            data["groups"] = {
                key: {
                    "count": group.count,
                    "aggregations": _dump(group.aggregations),
                    "samples": [sample.uuid for sample in group.samples],
                }
                for key, group in self.groups.items()
            }
        return data

    def to_llm_text(self, max_chars: int = DEFAULT_LLM_MAX_CHARS, max_objects: int = LLM_MAX_OBJECTS) -> str:
        """A compact, size-bounded rendering to feed back to the model as the tool's answer.

        Every token of it costs the model time (~70 ms each on 2 CPU cores), so it carries what an
        answer needs and no more: how many objects matched, the aggregates, the groups' counts and
        metrics (no sample objects), at most `max_objects` objects, numbers to 2 decimals (4
        significant digits below 1; the answer scorer accepts a number to the precision it is
        written). The Weaviate calls that ran stay in the result (`calls`), not in the text."""
        return _bounded(self._llm_lines(max_objects), max_chars)

    def _llm_lines(self, max_objects: int) -> list[str]:
        lines = [f"Collection: {self.collection}"]
        if self.total_count is not None:
            lines.append(f"Total count: {self.total_count}")
        if self.aggregations:
            lines.append("Aggregations:")
            lines.extend(f"- {prop}: {_metrics_text(metrics)}" for prop, metrics in self.aggregations.items())
        if self.groups is not None:
            more = " (more groups exist)" if self.truncated else ""
            lines.append(f"Groups by {self.group_by} ({len(self.groups)}){more}:")
            for key, group in self.groups.items():
                parts = [f"count={group.count}"]
                parts.extend(f"{prop} {_metrics_text(metrics)}" for prop, metrics in group.aggregations.items())
                lines.append(f"- {json.dumps(key, ensure_ascii=False)}: {'; '.join(parts)}")
        if self.objects or (self.groups is None and not self.aggregations):
            shown = self.objects[: max(max_objects, 0)]
            more = " (more exist)" if self.truncated or len(shown) < len(self.objects) else ""
            cite = "; cite one by its [id]" if shown else ""
            # "5 of 253": a small model otherwise counts the rows it sees (the "counted the 10 shown")
            of = f" of {self.total_count}" if self.total_count is not None and self.total_count > len(shown) else ""
            lines.append(f"Objects ({len(shown)}{of} shown){more}{cite}:")
            for index, obj in enumerate(shown, start=1):
                lines.append(f"{obj.rank or index}. [{short_id(obj.uuid)}] {_properties_text(obj.properties)}")
        lines.extend(f"Note: {note}" for note in self.notes)
        return lines


def short_id(uuid: str) -> str:
    """The id the model sees and cites: a UUID's first 8 hex digits (4 billion values; one object in
    practice, and `evaluation.citations` checks a cited one against the full UUIDs received)."""
    return uuid[:SHORT_ID_CHARS].lower()


def _dump(aggregations: Aggregations) -> dict[str, dict[str, Any]]:
    return {
        prop: {
            name: [item.model_dump() for item in value] if isinstance(value, list) else value
            for name, value in metrics.items()
        }
        for prop, metrics in aggregations.items()
    }


def number_text(value: float) -> str:
    """`4` for 4.0, `4.5` for 4.5: the form numbers take in group keys and LLM text."""
    if math.isfinite(value) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(float(value))


def group_key(value: object) -> str:
    """Normalise a group-by value: booleans as `true`/`false`, numbers via `number_text`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return number_text(float(value))
    if value is None:
        return "null"
    return str(value)


def normalize_property_value(value: object) -> PropertyValue:
    """Object property values: numbers as float; other scalars unchanged; anything else as text."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int | float):
        return float(value)
    return str(value)


def _value_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return number_text(_significant(value)) if math.isfinite(value) else str(value)
    if isinstance(value, list):
        return "[" + ", ".join(f"{item.value!r}: {item.count}" for item in value) + "]"
    if value is None:
        return "null"
    text = str(value)
    return json.dumps(text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 3] + "...", ensure_ascii=False)


def _significant(value: float) -> float:
    """Two decimals from 1 up, four significant digits below: `24.506756756756754` costs 18 tokens."""
    if value == 0 or value.is_integer():
        return value
    return round(value, 2) if abs(value) >= 1 else float(f"{value:.4g}")


def _metrics_text(metrics: dict[str, MetricValue]) -> str:
    return ", ".join(f"{name}={_value_text(value)}" for name, value in metrics.items())


def _properties_text(properties: dict[str, PropertyValue]) -> str:
    return "{" + ", ".join(f"{name}: {_value_text(value)}" for name, value in properties.items()) + "}"


def _bounded(lines: list[str], max_chars: int) -> str:
    max_chars = max(int(max_chars), 20)
    out: list[str] = []
    used = 0
    for index, line in enumerate(lines):
        cost = len(line) + (1 if out else 0)
        if used + cost <= max_chars:
            out.append(line)
            used += cost
            continue
        marker = f"... [{len(lines) - index} more lines cut]"
        while out and used + len(marker) + 1 > max_chars:
            used -= len(out.pop()) + (1 if out else 0)
        if not out:
            return (line[: max_chars - len(marker) - 1] + "\n" + marker)[:max_chars]
        out.append(marker)
        break
    return "\n".join(out)


def compare_results(
    expected: QueryResult, actual: QueryResult, rel_tol: float = 1e-9, abs_tol: float = 1e-9
) -> list[str]:
    """Differences between the comparable parts of two results (empty when they agree)."""
    differences: list[str] = []
    _compare(expected.comparable(), actual.comparable(), "result", differences, rel_tol, abs_tol)
    return differences


def _compare(expected: Any, actual: Any, path: str, out: list[str], rel_tol: float, abs_tol: float) -> None:
    if isinstance(expected, float | int) and isinstance(actual, float | int) and not isinstance(expected, bool):
        if isinstance(actual, bool) or not math.isclose(expected, actual, rel_tol=rel_tol, abs_tol=abs_tol):
            out.append(f"{path}: expected {expected!r}, got {actual!r}")
        return
    if isinstance(expected, dict) and isinstance(actual, dict):
        if list(expected) != list(actual):
            out.append(f"{path}: expected keys {list(expected)}, got {list(actual)}")
        for key in expected:
            if key in actual:
                _compare(expected[key], actual[key], f"{path}.{key}", out, rel_tol, abs_tol)
        return
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            out.append(f"{path}: expected {len(expected)} items, got {len(actual)}")
        for index, (left, right) in enumerate(zip(expected, actual, strict=False)):
            _compare(left, right, f"{path}[{index}]", out, rel_tol, abs_tol)
        return
    if expected != actual or type(expected) is not type(actual):
        out.append(f"{path}: expected {expected!r}, got {actual!r}")
