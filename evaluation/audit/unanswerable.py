"""The audit of the questions the tool cannot answer: the evidence holds on the live schema, and
the abstention grade cannot be gamed.

Evidence, per question: an `unknown_property` is like no property of any collection of the use
case, in the file's schema and the live one, and a call that uses it fails with `unknown_property`;
an `unsupported_metric` names a number property that exists, and a call asking for the metric
fails. Probes, graded by `grade_abstention` like a model's answer: the oracle's refusal must pass
every question, and these must pass none (at most `PROBE_LIMIT`):
- `nothing`: an empty answer;
- `collection_count`: the collection's real object count, stated as the answer;
- `nearest_value`: the mean of the collection's first number property, stated as the answer;
- `hedge`: a refusal followed by a guess ("I cannot be sure, but it is about N").
"""

from __future__ import annotations

import time
from typing import Any

from pydantic import BaseModel, Field

from evaluation.audit.probes import PROBE_LIMIT
from evaluation.refusal import grade_abstention
from evaluation.runner import oracle_for
from executors import ExecutorError, PropertyKind, WeaviateExecutor
from executors.results import number_text
from fixtures.datasets.abstention import AbstentionCase, evidence_issues, similar_properties
from fixtures.loader import check_ours, names_of
from fixtures.use_cases import get_use_case
from llm import ChatRequest

GOLD = "gold"


class AbstentionAudit(BaseModel):
    dataset: str
    questions: int
    by_reason: dict[str, int] = Field(default_factory=dict)
    issues: list[str] = Field(default_factory=list)
    #: Probe name -> share of the questions it applies to that it passed.
    probes: dict[str, float] = Field(default_factory=dict)
    seconds: float = 0.0

    @property
    def failed_targets(self) -> list[str]:
        failed = list(self.issues)
        for name, rate in self.probes.items():
            if name == GOLD and rate < 1.0:
                failed.append(f"probe gold passes {rate:.3f} < 1")
            elif name != GOLD and rate > PROBE_LIMIT:
                failed.append(f"probe {name} passes {rate:.3f} > {PROBE_LIMIT:g}")
        return failed

    @property
    def ok(self) -> bool:
        return self.questions > 0 and not self.failed_targets


def audit_abstentions(
    client: Any, dataset: str, cases: list[AbstentionCase], namespace: str | None = None
) -> AbstentionAudit:
    """Check the evidence of each question on the live schema (of our use cases, under `namespace`)."""
    started = time.perf_counter()
    use_cases = [get_use_case(name) for name in sorted({case.use_case for case in cases})]
    check_ours(client, use_cases, namespace)
    executor = WeaviateExecutor(client, names=names_of(use_cases, namespace))
    issues: list[str] = []
    tallies: dict[str, list[bool]] = {}
    by_reason: dict[str, int] = {}
    for case in cases:
        by_reason[case.reason] = by_reason.get(case.reason, 0) + 1
        issues += evidence_issues(case) + _live_issues(executor, case)
        for name, answer in _probes(executor, case).items():
            tallies.setdefault(name, []).append(bool(grade_abstention(answer, case.query).correct))
    return AbstentionAudit(
        dataset=dataset,
        questions=len(cases),
        by_reason=by_reason,
        issues=issues,
        probes={name: round(sum(v) / len(v), 6) for name, v in sorted(tallies.items())},
        seconds=round(time.perf_counter() - started, 2),
    )


def _live_issues(executor: WeaviateExecutor, case: AbstentionCase) -> list[str]:
    schema = executor.schema
    names = [c.name for c in get_use_case(case.use_case).collections]
    if schema.get(case.collection) is None:
        return [f"{case.id}: {case.collection} is not loaded"]
    issues = []
    if case.missing_property:
        for name in names:
            live = schema.get(name)
            found = similar_properties(case.missing_property, live.property_names()) if live else []
            issues += [f"{case.id}: the live {name} has a property {prop!r}" for prop in found]
        call = {"property_name": case.missing_property, "metrics": "MEAN"}
        issues += _must_fail(executor, case, {"integer_property_aggregation": call}, "unknown_property")
    if case.metric and case.metric_property:
        call = {"property_name": case.metric_property, "metrics": case.metric.upper().replace(" ", "_")}
        issues += _must_fail(executor, case, {"integer_property_aggregation": call}, None)
    return issues


def _must_fail(executor: WeaviateExecutor, case: AbstentionCase, part: dict[str, Any], code: str | None) -> list[str]:
    try:
        executor.execute({"collection_name": case.collection, **part})
    except ExecutorError as error:
        if code is None or error.code == code:
            return []
        return [f"{case.id}: the call failed with {error.code}, not {code}"]
    return [f"{case.id}: a call that needs what the question needs ran: {part}"]


def _probes(executor: WeaviateExecutor, case: AbstentionCase) -> dict[str, str]:
    answers = {GOLD: _oracle_text(case), "nothing": ""}
    collection = executor.schema.get(case.collection)
    numbers = collection.properties_of_kind(PropertyKind.NUMBER) if collection else []
    if numbers:
        prop = numbers[0].name
        mean_of = {"property_name": prop, "metrics": "MEAN"}
        result = executor.execute({"collection_name": case.collection, "integer_property_aggregation": mean_of})
        if result.total_count is not None:
            count = result.total_count
            answers["collection_count"] = f"There are {count} {case.collection}."
            answers["hedge"] = f"I cannot be sure, but it is about {count}."
            mean = result.aggregations.get(prop, {}).get("MEAN")
            if isinstance(mean, int | float):
                answers["nearest_value"] = f"It is {number_text(round(mean, 2))}, from the {prop} values."
    return answers


def _oracle_text(case: AbstentionCase) -> str:
    """What the oracle says: the answer every abstention question must accept."""
    reply = oracle_for(case).complete(ChatRequest(messages=[]))
    return reply.content or ""
