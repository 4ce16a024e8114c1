"""The paper's tool-design ablations (its Table 6): a baseline and one change each, on the same
questions, compared with intervals and a paired test rather than by eye.

The paper ran each ablation once with GPT-4o and read differences of about one point as "minimal".
Here every row carries its Wilson interval, and every ablation is tested against the baseline on
the questions both ran (exact McNemar), so a table says which differences are outside the noise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from pydantic import BaseModel

from agent import ToolDesign
from agent.tooldef import ToolVariant
from evaluation.protocols import ScoringProtocol
from evaluation.records import EvalRecord, Outcome
from evaluation.statistics import paired_comparison, pass_rate
from evaluation.summary import core

BASELINE = "original"


class Ablation(BaseModel):
    """One row of the table: its name (also its run directory) and the paper's title for it."""

    name: str
    title: str


#: The paper's rows, in its order.
ABLATIONS: tuple[Ablation, ...] = (
    Ablation(name=BASELINE, title="Original"),
    Ablation(name="rationale", title="Original + Tool Rationale"),
    Ablation(name="parallel", title="Original + Parallel Tool Calls Enabled"),
    Ablation(name="per-collection", title="One Tool per Collection"),
    Ablation(name="structured", title="Structured Generation"),
)


def ablation_names() -> list[str]:
    return [a.name for a in ABLATIONS]


def design_of(name: str, baseline: ToolDesign) -> ToolDesign:
    """The baseline with one of the paper's changes (KeyError for a name that is not one)."""
    changes: dict[str, dict[str, Any]] = {
        BASELINE: {},
        "rationale": {"rationale": True},
        "parallel": {"parallel_calls": True},
        "per-collection": {"variant": ToolVariant.PER_COLLECTION},
        "structured": {"structured_output": True},
    }
    return replace(baseline, **changes[name])


class AblationRow(BaseModel):
    name: str
    title: str
    tool_design: str
    questions: int
    exact_match: float | None
    routing_accuracy: float | None
    execution_exact: float | None
    answer_accuracy: float | None
    calls_per_question: float | None
    passed: dict[str, Any]
    #: Questions that ended because the model endpoint failed (an error status or a timeout): a design
    #: the endpoint refuses fails every question without the model being asked.
    model_errors: int = 0
    #: Against the baseline on the questions both ran (None for the baseline itself).
    versus_baseline: dict[str, Any] | None = None


def ablation_table(
    runs: Mapping[str, Sequence[EvalRecord]], titles: Mapping[str, str] | None = None
) -> list[AblationRow]:
    """One row per run (the baseline first if present), scored on the answerable questions.

    Exact match and routing are the paper's columns, under `first` (its one predicted call);
    `pass` is the answer-level verdict of `evaluation.statistics.passed`, the one the paired test uses."""
    titles = {a.name: a.title for a in ABLATIONS} | dict(titles or {})
    base = [r for r in runs.get(BASELINE, []) if r.expected == "call"]
    rows = []
    for name in sorted(runs, key=lambda n: (n != BASELINE, _order(n))):
        records = [r for r in runs[name] if r.expected == "call"]
        first = core(records, ScoringProtocol.FIRST) if records else {}
        final = core(records, ScoringProtocol.FINAL) if records else {}
        keyed = [r.scores.answer for r in records if r.scores.answer is not None]
        rows.append(
            AblationRow(
                name=name,
                title=titles.get(name, name),
                tool_design=records[0].tool_design if records else "",
                questions=len(records),
                exact_match=first.get("exact_match"),
                routing_accuracy=first.get("routing_accuracy"),
                execution_exact=final.get("execution_match_exact"),
                answer_accuracy=round(sum(keyed) / len(keyed), 6) if keyed else None,
                calls_per_question=round(sum(r.scores.calls_made for r in records) / len(records), 3)
                if records
                else None,
                passed=pass_rate(records),
                model_errors=sum(r.outcome in (Outcome.MODEL_ERROR, Outcome.TIMEOUT) for r in records),
                versus_baseline=paired_comparison(base, records) if base and name != BASELINE else None,
            )
        )
    return rows


def _order(name: str) -> int:
    names = ablation_names()
    return names.index(name) if name in names else len(names)


def percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def markdown_table(rows: Sequence[AblationRow], model: str) -> str:
    """The paper's Table 6 with what it lacked: intervals, and whether a difference is noise."""
    lines = [
        f"Tool-design ablations, model {model}. Pass: the answer-level verdict, with its Wilson 95% interval. "
        "Against the original: questions only one of the two passed, and the exact McNemar test.",
        "",
        "| experiment | questions | exact match | routing | execution exact (final) | answer right "
        "| calls per question | pass (95% CI) | only original / only this | p | verdict |",
        "|---|---:|---:|---:|---:|---:|---:|---|---|---:|---|",
    ]
    for row in rows:
        low, high = row.passed["interval"] or (0.0, 0.0)
        versus = row.versus_baseline
        if versus is None:
            paired, p_value, verdict = "—", "—", "baseline"
        else:
            paired = f"{versus['only_a_passed']} / {versus['only_b_passed']}"
            p_value = f"{versus['p_value']:.3f}"
            verdict = "outside the noise" if versus["outside_noise"] else "within the noise"
        if row.model_errors:
            verdict += f"; {row.model_errors} of {row.questions} ended in a model error"
        rate = row.passed["rate"]
        calls = "n/a" if row.calls_per_question is None else f"{row.calls_per_question:.2f}"
        lines.append(
            f"| {row.title} | {row.questions} | {percent(row.exact_match)} | {percent(row.routing_accuracy)} "
            f"| {percent(row.execution_exact)} | {percent(row.answer_accuracy)} | {calls} "
            f"| {percent(rate)} [{100 * low:.1f}, {100 * high:.1f}] | {paired} | {p_value} | {verdict} |"
        )
    return "\n".join(lines) + "\n"
