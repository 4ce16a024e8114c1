"""The values of a run's results as ids a model points at (`c1.price.mean = 23.5`), the commit schema that
allows only those ids, the answer read back from the pointers (values copied, never retyped), and what the
oracle points at. `grounded` writes its commit turn with them."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from agent.answer import FinalAnswer
from agent.models import OracleModel, oracle_replies
from executors import QueryResult
from llm import ChatRequest, ModelRequest, ModelResponse
from llm.messages import all_parts

#: The commit schema's name: ids of values, not values.
GROUNDED_SCHEMA_NAME = "GroundedAnswer"
#: Values listed at most (a listing of many objects would otherwise flood the turn).
MAX_FACTS = 80
MAX_OBJECTS = 10


@dataclass(frozen=True)
class Fact:
    id: str
    value: float | str
    #: For a per-group value: group -> value (the `groups` pointer copies it).
    groups: dict[str, float] | None = None
    source: str | None = None

    def line(self) -> str:
        if self.groups is not None:
            shown = ", ".join(f"{k}: {_text(v)}" for k, v in list(self.groups.items())[:12])
            return f"{self.id} = per group {{{shown}}}"
        return f"{self.id} = {_text(self.value)}"


def _text(value: float | str) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return str(value)


def number_of(value: Any) -> float | None:
    """A number a result holds as a float (a boolean is none)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _metric_facts(prefix: str, aggregations: dict[str, Any]) -> list[Fact]:
    facts = []
    for prop, metrics in aggregations.items():
        for metric, value in metrics.items():
            if isinstance(value, list):  # top occurrences
                for rank, item in enumerate(value, start=1):
                    facts.append(Fact(f"{prefix}.{prop}.top{rank}", str(item.value)))
                    facts.append(Fact(f"{prefix}.{prop}.top{rank}.count", float(item.count)))
            elif (number := number_of(value)) is not None:
                facts.append(Fact(f"{prefix}.{prop}.{metric}", number))
    return facts


def facts_of(results: list[QueryResult]) -> list[Fact]:
    """Every value a model may point at, call by call (numbered from 1, as the model saw them)."""
    facts: list[Fact] = []
    for index, result in enumerate(results, start=1):
        prefix = f"c{index}"
        if result.total_count is not None:
            facts.append(Fact(f"{prefix}.count", float(result.total_count)))
        facts += _metric_facts(prefix, result.aggregations)
        if result.groups is not None:
            counts = {k: float(g.count) for k, g in result.groups.items()}
            facts.append(Fact(f"{prefix}.per_group.count", 0.0, counts))
            metrics: dict[str, dict[str, float]] = {}
            scalars: list[Fact] = []  # one group's value alone, so a difference of two groups can be pointed at
            for rank, (key, group) in enumerate(result.groups.items(), start=1):
                facts.append(Fact(f"{prefix}.group{rank}", key))
                for prop, values in group.aggregations.items():
                    for metric, value in values.items():
                        if (number := number_of(value)) is not None:
                            metrics.setdefault(f"{prefix}.per_group.{prop}.{metric}", {})[key] = number
                            scalars.append(Fact(f"{prefix}.group{rank}.{prop}.{metric}", number))
            facts += [Fact(fid, 0.0, per_group) for fid, per_group in metrics.items()] + scalars
        for rank, obj in enumerate(result.objects[:MAX_OBJECTS], start=1):
            for prop, value in obj.properties.items():
                number = number_of(value)
                if number is not None:
                    facts.append(Fact(f"{prefix}.o{rank}.{prop}", number, source=obj.uuid))
                elif isinstance(value, str) and len(value) <= 80:
                    facts.append(Fact(f"{prefix}.o{rank}.{prop}", value, source=obj.uuid))
    seen: dict[str, Fact] = {}
    for fact in facts:
        seen.setdefault(fact.id, fact)
    return list(seen.values())[:MAX_FACTS]


def grounded_schema(facts: list[Fact]) -> dict[str, Any]:
    numbers = [f.id for f in facts if f.groups is None and isinstance(f.value, float)] or [""]
    names = [f.id for f in facts if isinstance(f.value, str)] or [""]
    groups = ["", *(f.id for f in facts if f.groups is not None)]
    return {
        "type": "object",
        "properties": {
            "numbers": {"type": "array", "items": {"enum": numbers}, "maxItems": 8},
            "names": {"type": "array", "items": {"enum": names}, "maxItems": 8},
            "groups": {"enum": groups},
            "differences": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"of": {"enum": numbers}, "minus": {"enum": numbers}},
                    "required": ["of", "minus"],
                    "additionalProperties": False,
                },
                "maxItems": 4,
            },
            "cannot_answer": {"type": "string"},
        },
        "required": ["numbers", "names", "groups", "differences", "cannot_answer"],
        "additionalProperties": False,
    }


class PointingError(ValueError):
    """A grounded reply that cannot be turned into an answer (not JSON, an id that is no value)."""


def answer_from(content: str | None, facts: list[Fact]) -> FinalAnswer:
    """The answer the pointers name, the values copied from the results."""
    try:
        data = json.loads((content or "").strip() or "null")
    except json.JSONDecodeError as error:
        raise PointingError(f"the reply is not JSON ({error.msg})") from None
    if not isinstance(data, dict):
        raise PointingError("the reply is not a JSON object")
    by_id = {f.id: f for f in facts}
    numbers_at, names_at = list(data.get("numbers") or []), list(data.get("names") or [])
    pairs = [d for d in data.get("differences") or [] if isinstance(d, dict)]
    pointed = [*numbers_at, *names_at, *(d.get(k) for d in pairs for k in ("of", "minus"))]
    unknown = [str(p) for p in pointed if p not in by_id and p != ""]
    group_id = str(data.get("groups") or "")
    if group_id and (group_id not in by_id or by_id[group_id].groups is None):
        unknown.append(group_id)
    if unknown:
        raise PointingError(f"no value has the id {', '.join(unknown)}")
    numbers = [by_id[p].value for p in numbers_at if p and by_id[p].groups is None]
    for pair in pairs:  # "by how much": the absolute difference of two values, computed, not retyped
        a, b = by_id[pair["of"]].value, by_id[pair["minus"]].value
        if isinstance(a, float) and isinstance(b, float):
            numbers.append(abs(a - b))
    names = [str(by_id[p].value) for p in names_at if p]
    sources = list(dict.fromkeys(by_id[p].source for p in pointed if p and by_id[p].source))
    return FinalAnswer(
        numbers=[n for n in numbers if isinstance(n, float)],
        names=names,
        groups=dict(by_id[group_id].groups or {}) if group_id else {},
        cannot_answer=str(data.get("cannot_answer") or ""),
        sources=[s[:8] for s in sources if s],
    )


#: A value as the grounded commit turn lists it: `c1.price.mean = 23.5`.
_FACT_LINE = re.compile(r"^(c\d+\.\S+) = (.*)$", re.MULTILINE)


def point_at(committed: dict[str, Any], messages: list[ModelRequest | ModelResponse]) -> dict[str, Any]:
    """The oracle's grounded commit: for each value it knows, the id of a listed value equal to it
    (within the precision an answer key commits to)."""
    texts = [str(getattr(p, "content", "")) for p in all_parts(messages)]
    prompt = next((text for text in reversed(texts) if _FACT_LINE.search(text)), "")
    facts = _FACT_LINE.findall(prompt)

    def close(text: str, target: float) -> bool:
        try:
            return math.isclose(float(text), target, rel_tol=1e-4, abs_tol=5.1e-5)
        except ValueError:
            return False

    numbers, differences = [], []
    for n in committed.get("numbers", []):
        found = next((i for i, t in facts if close(t, n)), "")
        pair = (
            None
            if found
            else next(((a, b) for a, x in facts for b, y in facts if close(str(_float(x) - _float(y)), n)), None)
        )
        if found:
            numbers.append(found)
        elif pair is not None:  # a derived number: the difference of two listed values
            differences.append({"of": pair[0], "minus": pair[1]})
    names = [i for name in committed.get("names", []) for i in [next((i for i, t in facts if t == name), "")] if i]
    wanted = committed.get("groups") or {}
    groups = ""
    for fact_id, text in facts:
        pairs = dict(_GROUP_PAIR.findall(text)) if text.startswith("per group") else {}
        shared = [k for k in pairs if k in wanted]
        if wanted and len(shared) == min(len(pairs), len(wanted)) and all(close(pairs[k], wanted[k]) for k in shared):
            groups = fact_id
            break
    return {
        "numbers": numbers,
        "names": names,
        "groups": groups,
        "differences": differences,
        "cannot_answer": str(committed.get("cannot_answer", "")),
    }


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return math.nan


#: One group of a per-group value as the grounded turn lists it: `Spring: 31`.
_GROUP_PAIR = re.compile(r"(?:\{|, )([^:{}]+): ([-+0-9.eE]+)")


@oracle_replies(GROUNDED_SCHEMA_NAME)
def oracle_points(oracle: OracleModel, request: ChatRequest) -> dict[str, Any]:
    """The oracle's grounded commit: the ids of the values it knows."""
    return point_at(oracle.committed, request.messages)
