"""Aggregate per-case scores into the run's numbers, overall and per slice (as in the paper's tables).

Rates are fractions in [0, 1]. Every score is under a named protocol (`evaluation.protocols`):
the summary holds one block per protocol, and every table or printout names the protocol of each
number. Execution match is reported over the cases whose ground truth executed and is not vacuous;
vacuous ground truths are counted apart.

The numbers of each score come from its evaluator (`evaluation.evaluators`); this module adds what
is not a score (cost, latency, outcomes) and lays the summary out in its format's order
(`evaluation.formats.RunSummary`, the order `--json` and summary.json have always printed).
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from evaluation.evaluators import EVALUATORS, mean
from evaluation.formats import RunSummary
from evaluation.protocols import PROTOCOLS, ScoringProtocol
from evaluation.records import EvalRecord, Outcome
from executors import Blame, codes_blaming


def tokens_per_case(records: list[EvalRecord]) -> dict[str, float | None]:
    """Mean prompt, new (not reused) prompt and completion tokens per question: on a CPU, its cost."""
    reported = [r for r in records if r.cached_prompt_tokens is not None]
    return {
        "prompt": mean(r.prompt_tokens for r in records),
        "new_prompt": mean(r.prompt_tokens - (r.cached_prompt_tokens or 0) for r in reported),
        "completion": mean(r.completion_tokens for r in records),
    }


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    return round(statistics.quantiles(ordered, n=100, method="inclusive")[int(q) - 1], 4)


def core(
    records: Sequence[EvalRecord], protocol: ScoringProtocol | str, executed_scoring: bool = True
) -> dict[str, Any]:
    """The headline numbers of one protocol for any set of records: each score's, in the evaluators' order."""
    name = ScoringProtocol(protocol)
    return {
        key: value
        for each in EVALUATORS
        if executed_scoring or not each.needs_execution
        for key, value in each.protocol_numbers(records, name).items()
    }


#: The numbers of `core`, in the order tables show them.
CORE_KEYS = tuple(core([], ScoringProtocol.FIRST))


def by_protocol(records: Sequence[EvalRecord], executed_scoring: bool = True) -> dict[str, dict[str, Any]]:
    return {p.value: core(records, p, executed_scoring) for p in PROTOCOLS}


#: Outcomes caused by the infrastructure rather than the model: `--resume` runs these again.
RETRIED_ON_RESUME = {Outcome.MODEL_ERROR, Outcome.TIMEOUT}
INFRASTRUCTURE_ERROR_CODES = codes_blaming(Blame.INFRASTRUCTURE)


def infrastructure_failed(record: EvalRecord) -> bool:
    """The case says nothing about the model: the model server, Weaviate or scoring failed under it."""
    if record.outcome in RETRIED_ON_RESUME or record.ground_truth_error or record.scores.scoring_error:
        return True
    codes = {c.error_code for c in record.predicted_calls if c.error_code}
    return record.outcome is Outcome.EXECUTION_ERROR and bool(codes & INFRASTRUCTURE_ERROR_CODES)


def summarize(records: list[EvalRecord], executed_scoring: bool = True) -> dict[str, Any]:
    """Scores over the answerable questions; cost and outcomes over all; abstention on its own.

    A run in which every case failed on the infrastructure says so (`infrastructure_failure`):
    its zeros measure a dead server, not a model, and the report shows them as such."""
    answerable = [r for r in records if r.expected == "call"]
    latencies = [r.latency_s for r in records]
    failed = sum(infrastructure_failed(r) for r in records)
    summary: dict[str, Any] = {
        "cases": len(records),
        "infrastructure_failures": failed,
        "infrastructure_failure": bool(records) and failed == len(records),
        "answerable_cases": len(answerable),
        "protocols": by_protocol(answerable, executed_scoring),
        "by_use_case": _slices(answerable, lambda r: [r.use_case], executed_scoring),
        "by_complexity": _slices(answerable, lambda r: [r.complexity], executed_scoring),
        "outcomes": dict(Counter(r.outcome.value for r in records)),
        "prompt_tokens": sum(r.prompt_tokens for r in records),
        "completion_tokens": sum(r.completion_tokens for r in records),
        "tokens_per_case": tokens_per_case(records),
        "latency_p50_s": percentile(latencies, 50),
        "latency_p95_s": percentile(latencies, 95),
        "models": sorted({r.model for r in records}),
        "tool_designs": sorted({r.tool_design for r in records}),
    }
    for each in EVALUATORS:
        summary |= each.summary(answerable, executed_scoring)
        summary |= each.overall(records)
    return in_format_order(summary)


#: The summary's keys in the order of its format (`--json` and summary.json print them so).
SUMMARY_KEYS = tuple(field.alias or name for name, field in RunSummary.model_fields.items())


def in_format_order(summary: dict[str, Any]) -> dict[str, Any]:
    """The summary's keys in its format's order; a key the format does not describe is an error."""
    unknown = set(summary) - set(SUMMARY_KEYS)
    if unknown:
        raise ValueError(f"summary keys without a field in evaluation.formats.RunSummary: {sorted(unknown)}")
    return {key: summary[key] for key in SUMMARY_KEYS if key in summary}


def _slices(
    records: list[EvalRecord], keys: Callable[[EvalRecord], list[str]], executed_scoring: bool
) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[EvalRecord]] = {}
    for record in records:
        for key in keys(record):
            groups.setdefault(key, []).append(record)
    return {
        key: {
            "cases": len(groups[key]),
            **by_protocol(groups[key], executed_scoring),
            **{k: v for each in EVALUATORS for k, v in each.slice_numbers(groups[key]).items()},
        }
        for key in sorted(groups)
    }
