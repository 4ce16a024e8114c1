"""Aggregate per-case scores into the run's numbers, overall and per slice (as in the paper's tables).

Rates are fractions in [0, 1]. Execution match is reported over the cases whose ground truth
executed and is not vacuous; vacuous ground truths are counted apart.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from evaluation.argument_match import COMPONENT_LABELS
from evaluation.records import EvalRecord, Outcome
from executors import Component

COMPONENTS = tuple(component.value for component in Component)
DISAGREEMENT_EXAMPLES = 5


def _mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return round(sum(values) / len(values), 6) if values else None


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    return round(statistics.quantiles(ordered, n=100, method="inclusive")[int(q) - 1], 4)


def executed(records: list[EvalRecord]) -> list[EvalRecord]:
    """Cases whose execution match was scored: ground truth ran and is not vacuous."""
    return [r for r in records if r.scores.execution_exact is not None and r.scores.ground_truth_vacuous is None]


def core(records: list[EvalRecord]) -> dict[str, Any]:
    """The headline numbers for any set of records."""
    scored = executed(records)
    return {
        "cases": len(records),
        "exact_match": _mean(float(r.scores.exact_match) for r in records),
        "ast_score": _mean(r.scores.ast_score for r in records),
        "routing_accuracy": _mean(float(r.scores.routing) for r in records),
        "no_tool_rate": _mean(float(r.outcome is Outcome.NO_TOOL_CALL) for r in records),
        "execution_match_exact": _mean(float(bool(r.scores.execution_exact)) for r in scored),
        "execution_match_subset": _mean(float(bool(r.scores.execution_subset)) for r in scored),
    }


def summarize(records: list[EvalRecord], executed_scoring: bool = True) -> dict[str, Any]:
    summary = core(records)
    if not executed_scoring:
        summary.pop("execution_match_exact")
        summary.pop("execution_match_subset")
    latencies = [r.latency_s for r in records]
    summary.update(
        {
            "ast_score_lenient": _mean(r.scores.ast_score_lenient for r in records),
            "search_similarity": _mean(
                r.scores.search_similarity for r in records if r.scores.search_similarity is not None
            ),
            "avg_steps": _mean(r.steps for r in records),
            "avg_corrections": _mean(r.corrections for r in records),
            "recovered_text_call_rate": _mean(
                float(any(c.recovered_from_text for c in r.predicted_calls)) for r in records
            ),
            "outcomes": dict(Counter(r.outcome.value for r in records)),
            "prompt_tokens": sum(r.prompt_tokens for r in records),
            "completion_tokens": sum(r.completion_tokens for r in records),
            "latency_p50_s": percentile(latencies, 50),
            "latency_p95_s": percentile(latencies, 95),
            "models": sorted({r.model for r in records}),
            "tool_designs": sorted({r.tool_design for r in records}),
            "by_use_case": _slices(records, lambda r: [r.use_case], executed_scoring),
            "by_complexity": _slices(records, lambda r: [r.complexity], executed_scoring),
            "by_component": component_accuracy(records),
        }
    )
    if executed_scoring:
        summary["execution_scored_cases"] = len(executed(records))
        summary["vacuous_ground_truths"] = dict(
            Counter(r.scores.ground_truth_vacuous for r in records if r.scores.ground_truth_vacuous)
        )
        summary["ground_truth_errors"] = sum(1 for r in records if r.ground_truth_error)
        summary["search_recall"] = _mean(r.scores.search_recall for r in records if r.scores.search_recall is not None)
        summary["disagreement"] = disagreement(records)
    return summary


def _slices(
    records: list[EvalRecord], keys: Callable[[EvalRecord], list[str]], executed_scoring: bool
) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[EvalRecord]] = {}
    for record in records:
        for key in keys(record):
            groups.setdefault(key, []).append(record)
    result = {}
    for key in sorted(groups):
        numbers = core(groups[key])
        if not executed_scoring:
            numbers.pop("execution_match_exact")
            numbers.pop("execution_match_subset")
        result[key] = numbers
    return result


def component_accuracy(records: list[EvalRecord]) -> dict[str, dict[str, Any]]:
    """Per component: how often it was right where the ground truth used it, and how often the
    prediction added it where the ground truth did not (the paper's per-component view)."""
    table = {}
    for component in COMPONENTS:
        needed = [r for r in records if component in r.components]
        added = [r for r in records if component not in r.components and _predicted_components(r) & {component}]
        table[component] = {
            "cases": len(needed),
            "accuracy": _mean(float(r.scores.components.get(component, False)) for r in needed),
            "spurious": len(added),
        }
    return table


def _predicted_components(record: EvalRecord) -> set[str]:
    arguments = record.first_arguments or {}
    return {label for field, label in COMPONENT_LABELS.items() if arguments.get(field) not in (None, "", {})}


def disagreement(records: list[EvalRecord]) -> dict[str, Any]:
    """Where argument match and execution match disagree, both ways, with examples."""
    scored = executed(records)
    args_only = [r for r in scored if r.scores.exact_match and not r.scores.execution_exact]
    exec_only = [r for r in scored if r.scores.execution_exact and not r.scores.exact_match]
    example = lambda r: {  # noqa: E731
        "id": r.id,
        "query": r.query,
        "ground_truth": r.ground_truth,
        "prediction": r.first_arguments,
    }
    return {
        "cases": len(scored),
        "argument_match_but_execution_differs": len(args_only),
        "execution_match_but_arguments_differ": len(exec_only),
        "rate": _mean(float(r in args_only or r in exec_only) for r in scored),
        "examples_argument_only": [example(r) for r in args_only[:DISAGREEMENT_EXAMPLES]],
        "examples_execution_only": [example(r) for r in exec_only[:DISAGREEMENT_EXAMPLES]],
    }
