"""Strategies compared on the same questions: one row per strategy and kind of question (single-step,
multi-step, unanswerable), each against a baseline (`react` unless told) with the paired exact test, with
Wilson intervals, and where the tokens and the time go (prompt, new prompt, completion tokens and p50 per question).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from evaluation.ablation import percent
from evaluation.protocols import ScoringProtocol
from evaluation.records import EvalRecord, Outcome
from evaluation.statistics import paired_comparison, pass_rate
from evaluation.summary import core

BASELINE_STRATEGY = "react"
KINDS = ("single-step", "multi-step", "unanswerable")


class StrategyRow(BaseModel):
    strategy: str
    kind: str
    questions: int
    passed: dict[str, Any]
    answer_accuracy: float | None = None
    exact_match: float | None = None
    calls_per_question: float | None = None
    #: An answerable question answered "the database cannot answer this" (None for unanswerable rows).
    false_abstention: float | None = None
    prompt_tokens: float | None = None
    #: Prompt tokens the server had to evaluate (prompt minus its cache); None when it did not say.
    new_prompt_tokens: float | None = None
    completion_tokens: float | None = None
    p50_latency_s: float | None = None
    model_errors: int = 0
    #: The strategy the paired test compares against, and the test (None on the baseline's own rows).
    baseline: str = BASELINE_STRATEGY
    versus_baseline: dict[str, Any] | None = None


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 3) if values else None


def strategy_rows(runs: Mapping[str, Sequence[EvalRecord]], baseline: str = BASELINE_STRATEGY) -> list[StrategyRow]:
    """One row per strategy and kind, the baseline first; the paired test on the questions both ran."""
    rows = []
    order = sorted(runs, key=lambda name: (name != baseline, list(runs).index(name)))
    for kind in KINDS:
        base = [r for r in runs.get(baseline, []) if r.kind == kind]
        for name in order:
            records = [r for r in runs[name] if r.kind == kind]
            if not records:
                continue
            answerable = kind != "unanswerable"
            keyed = [r.scores.answer for r in records if r.scores.answer is not None]
            cached = [r for r in records if r.cached_prompt_tokens is not None]
            rows.append(
                StrategyRow(
                    strategy=name,
                    kind=kind,
                    questions=len(records),
                    passed=pass_rate(records),
                    answer_accuracy=round(sum(keyed) / len(keyed), 6) if keyed else None,
                    exact_match=core(records, ScoringProtocol.FIRST).get("exact_match") if answerable else None,
                    calls_per_question=_mean([r.scores.calls_made for r in records]),
                    false_abstention=_mean([float(bool(r.scores.refused)) for r in records]) if answerable else None,
                    prompt_tokens=_mean([r.prompt_tokens for r in records]),
                    new_prompt_tokens=_mean([r.prompt_tokens - (r.cached_prompt_tokens or 0) for r in cached])
                    if cached
                    else None,
                    completion_tokens=_mean([r.completion_tokens for r in records]),
                    p50_latency_s=round(statistics.median(r.latency_s for r in records), 2),
                    model_errors=sum(r.outcome in (Outcome.MODEL_ERROR, Outcome.TIMEOUT) for r in records),
                    baseline=baseline,
                    versus_baseline=paired_comparison(base, records) if base and name != baseline else None,
                )
            )
    return rows


def _tokens(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0f}"


def strategy_markdown(rows: Sequence[StrategyRow], model: str, command: str, date: str) -> str:
    baseline = rows[0].baseline if rows else BASELINE_STRATEGY
    lines = [
        f"Agent strategies, model {model}, {date}. Command: `{command}`",
        "",
        "Pass: the answer-level verdict (an unanswerable question passes when the answer says it cannot be "
        f"answered), with its Wilson 95% interval. Against {baseline}: questions only {baseline} / only this "
        "strategy passed, and the exact McNemar p. Tokens and p50 are per question.",
        "",
        "| strategy | kind | n | pass (95% CI) | answer right | exact match (first) | calls | false abstention "
        f"| prompt tok | new prompt tok | completion tok | p50 s | only {baseline} / only this | p |",
        "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for row in rows:
        low, high = row.passed["interval"] or (0.0, 0.0)
        versus = row.versus_baseline
        paired = "—" if versus is None else f"{versus['only_a_passed']} / {versus['only_b_passed']}"
        p_value = "—" if versus is None else f"{versus['p_value']:.3f}"
        errors = f" ({row.model_errors} model errors)" if row.model_errors else ""
        lines.append(
            f"| {row.strategy} | {row.kind} | {row.questions} | {percent(row.passed['rate'])} "
            f"[{100 * low:.1f}, {100 * high:.1f}]{errors} | {percent(row.answer_accuracy)} "
            f"| {percent(row.exact_match)} | {row.calls_per_question if row.calls_per_question is not None else 'n/a'} "
            f"| {percent(row.false_abstention)} | {_tokens(row.prompt_tokens)} | {_tokens(row.new_prompt_tokens)} "
            f"| {_tokens(row.completion_tokens)} | {row.p50_latency_s} | {paired} | {p_value} |"
        )
    return "\n".join(lines) + "\n"
