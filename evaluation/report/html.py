"""The report as one self-contained HTML page, rendered from `templates/` with jinja2.

Inline CSS and JS, plots as base64 PNG, no external assets, so it can be mailed, attached to CI or
opened offline. Autoescaping is on: everything from the records is escaped by the template engine.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from evaluation.evaluators.trajectory import TRAJECTORIES, trajectory
from evaluation.records import EvalRecord, PredictedCall
from evaluation.report.tables import failure_reasons

if TYPE_CHECKING:
    from evaluation.report.built import Report
    from evaluation.report.runs import Run

TEMPLATES = Path(__file__).with_name("templates")
MAX_OBJECTS = 5
MAX_GROUPS = 10
MAX_JSON_CHARS = 4000
QUESTION_PREVIEW = 110
IMAGE_ALTS = {
    "radar.png": "Radar plot: per-component scores, one polygon per run",
    "use_cases.png": "Bar chart: scores per use case and run",
    "pass_rates.png": "Pass rate per run and question kind, with Wilson 95% intervals",
}


@cache
def _environment() -> Environment:
    return Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True, undefined=StrictUndefined)


def render(report: Report) -> str:
    failures = [
        (run, record, reasons) for run in report.runs for record in run.records if (reasons := failure_reasons(record))
    ]
    board, *slices = report.tables
    return (
        _environment()
        .get_template("index.html.j2")
        .render(
            runs=report.runs,
            generated=report.generated,
            board=board,
            slices=slices,
            images=[(IMAGE_ALTS[name], base64.b64encode(png).decode("ascii")) for name, png in report.images.items()],
            failures=[_failure(run, record, reasons) for run, record, reasons in failures],
            filters=[
                ("run", "Run", sorted({run.name for run, _, _ in failures})),
                ("usecase", "Use case", sorted({record.use_case for _, record, _ in failures})),
                ("outcome", "Outcome", sorted({record.outcome.value for _, record, _ in failures})),
                ("reason", "Reason", sorted({reason for _, _, reasons in failures for reason in reasons})),
                ("trajectory", "Trajectory", [t for t in TRAJECTORIES if t in {trajectory(r) for _, r, _ in failures}]),
            ],
            run_meta=[(run.name, _run_meta(run)) for run in report.runs],
        )
    )


def run_view(run: Run) -> dict[str, Any]:
    """A run and each of its questions as the report shows a failure (gold against predicted, their
    results, why it failed), passed ones too: what the demo's run page browses (`dbgorilla.demo`)."""
    questions = [_failure(run, record, failure_reasons(record)) for record in run.records]
    return {"name": run.name, "meta": _run_meta(run), "questions": questions}


def _failure(run: Run, record: EvalRecord, reasons: list[str]) -> dict[str, Any]:
    s = record.scores
    score_line = " · ".join(
        f"{name}: exact match {_yes(p.exact_match)}, AST {p.ast_score:.3f}, routing {_yes(p.routing)}, "
        f"exec exact {_yes(p.execution_exact)}, subset {_yes(p.execution_subset)}"
        + (f", F1 {p.f1:.2f}" if p.f1 is not None else "")
        for name, p in (("first", s.first), ("final", s.final))
    )
    if s.answer is not None or s.answer_reason:
        score_line += f" · answer: {_yes(s.answer) if s.answer is not None else 'no key'}" + (
            f" ({s.answer_reason})" if s.answer_reason else ""
        )
        if s.answer_graded:
            score_line += f", the {s.answer_graded} part graded"
    score_line += (
        (f" · vacuous ground truth: {s.ground_truth_vacuous}" if s.ground_truth_vacuous else "")
        + f" · {s.calls_made} call(s), {record.steps} step(s), {record.corrections} correction(s), "
        + f"{record.latency_s:.2f} s"
    )
    truth_result = record.ground_truth_result if record.ground_truth_result is not None else record.ground_truth_error
    calls = record.predicted_calls
    shown_calls = len(calls) > 1 or any(c.arguments is None or c.error_code for c in calls)
    query = record.query
    return {
        "anchor": f"{run.name}:{record.id}",
        "id": record.id,
        "run": run.name,
        "use_case": record.use_case,
        "outcome": record.outcome.value,
        "reasons": reasons,
        "trajectory": trajectory(record),
        "preview": query if len(query) <= QUESTION_PREVIEW else query[: QUESTION_PREVIEW - 1] + "…",
        "question": query,
        "score_line": score_line,
        "error": record.error,
        "blocks": [
            ("Why the tool cannot answer it", record.abstention_reason)
            if record.expected == "abstain"
            else ("Ground truth", _shown(record.ground_truth)),
            ("Prediction (the first call, scored under first)", _shown(record.first_arguments)),
            ("Ground truth result", _shown(truth_result, _result_text)),
            ("Prediction result (first call that returned one)", _shown(_first_result(record), _result_text)),
        ],
        "calls": _shown([_call(c) for c in calls]) if shown_calls else None,
        "final_answer": record.final_answer,
        "committed_answer": _committed(record),
    }


def _committed(record: EvalRecord) -> str | None:
    """The typed answer the model committed, as the grader read it, or why it committed none."""
    if record.commit is None:
        return None
    if record.commit.answer is None:
        return f"none: {record.commit.error}"
    answer = record.commit.answer
    extra = [f"sources {', '.join(answer.sources)}"] if answer.sources else []
    if answer.is_partial_answer or answer.missing_information:
        extra.append(f"partial, missing: {'; '.join(answer.missing_information) or 'unsaid'}")
    return answer.text() + "".join(f"\n{line}" for line in extra)


def _yes(value: bool | None) -> str:
    return "n/a" if value is None else ("yes" if value else "no")


def _first_result(record: EvalRecord) -> dict[str, Any] | None:
    return next((c.result for c in record.predicted_calls if c.result is not None), None)


def _call(call: PredictedCall) -> dict[str, Any]:
    shown: dict[str, Any] = {"tool": call.tool_name, "ok": call.ok}
    shown["arguments"] = call.arguments if call.arguments is not None else call.raw_arguments
    if call.error_code:
        shown["error"] = f"{call.error_code}: {call.error_message}"
    if call.recovered_from_text:
        shown["recovered_from_text"] = True
    if call.result is not None:
        shown["result"] = _trim(call.result)
    return shown


def _trim(result: Any) -> Any:
    """Results can hold hundreds of objects: show the first few and say how many were left out."""
    if not isinstance(result, dict):
        return result
    trimmed = dict(result)
    objects = trimmed.get("objects") or []
    if len(objects) > MAX_OBJECTS:
        trimmed["objects"] = [*objects[:MAX_OBJECTS], f"… {len(objects) - MAX_OBJECTS} more objects"]
    groups = trimmed.get("groups") or {}
    if len(groups) > MAX_GROUPS:
        kept = dict(list(groups.items())[:MAX_GROUPS])
        kept["…"] = f"{len(groups) - MAX_GROUPS} more groups"
        trimmed["groups"] = kept
    return trimmed


def _json(value: Any, indent: int | None = 2) -> str:
    return json.dumps(value, indent=indent, ensure_ascii=False, default=str)


def _result_text(result: Any) -> str:
    """One line per field, object and group: results are long lists of small dicts."""
    if not isinstance(result, dict):
        return _json(result)
    lines = []
    for key, value in _trim(result).items():
        if isinstance(value, list) and value:
            lines += [f"{key}:", *(f"  {_json(item, None)}" for item in value)]
        elif isinstance(value, dict) and value and key == "groups":
            lines += [f"{key}:", *(f"  {_json(group)}: {_json(item, None)}" for group, item in value.items())]
        else:
            lines.append(f"{key}: {_json(value, None)}")
    return "\n".join(lines)


def _shown(value: Any, show: Callable[[Any], str] = _json) -> str:
    text = "none" if value is None else show(value)
    if len(text) > MAX_JSON_CHARS:
        text = text[:MAX_JSON_CHARS] + f"\n… ({len(text) - MAX_JSON_CHARS} more characters)"
    return text


def _run_meta(run: Run) -> list[tuple[str, str]]:
    items = {
        "path": str(run.path),
        "model": run.model,
        "tool design": run.tool_design,
        "cases": run.summary["cases"],
        "outcomes": ", ".join(f"{k} {v}" for k, v in sorted(run.summary["outcomes"].items())),
        "tokens": f"{run.summary['prompt_tokens']} prompt, {run.summary['completion_tokens']} completion",
        **{k: v for k, v in run.meta.items() if k not in ("model", "tool_design")},
    }
    if run.skipped_lines:
        items["unreadable lines skipped"] = run.skipped_lines
    if not run.meta:
        items["run.json"] = "absent: metadata taken from the records"
    return [(str(k), v if isinstance(v, str) else json.dumps(v, default=str)) for k, v in items.items()]
