"""The report as one self-contained HTML page: inline CSS and JS, plots as base64 PNG, no external assets,
so it can be mailed, attached to CI or opened offline. Everything from the records is escaped."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from html import escape
from typing import TYPE_CHECKING, Any

from dbgorilla.evaluation.records import EvalRecord

if TYPE_CHECKING:
    from dbgorilla.evaluation.report import Report, Run, Table

MAX_OBJECTS = 5
MAX_GROUPS = 10
MAX_JSON_CHARS = 4000
QUESTION_PREVIEW = 110

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;max-width:1400px;padding:16px 28px;
color:#1d232a;background:#fff}
h1{font-size:24px;margin:8px 0 2px}
h2{font-size:19px;margin:30px 0 6px;border-bottom:1px solid #e3e6ea;padding-bottom:4px}
nav a{margin-right:14px;color:#2458a6;text-decoration:none}.muted{color:#6a737d}.caption{color:#555;max-width:1100px}
table{border-collapse:collapse;margin:8px 0 4px;font-size:13px}th,td{padding:4px 9px;border-bottom:1px solid #eceff2}
th{background:#f4f6f8;text-align:left;position:sticky;top:0}td.num{text-align:right;font-variant-numeric:tabular-nums}
tr:hover td{background:#f8fafc}.scroll{overflow-x:auto}img{max-width:100%;border:1px solid #eceff2;margin:6px 0}
details.failure{border:1px solid #e3e6ea;border-radius:6px;margin:5px 0;padding:4px 10px}
details.failure[open]{background:#fbfcfd}summary{cursor:pointer}summary code{font-weight:600}
.tag{display:inline-block;font-size:11px;padding:0 6px;border-radius:9px;background:#eef1f4;margin-left:4px}
.tag.bad{background:#fde8e8;color:#a01c1c}.grid{display:grid;grid-template-columns:1fr 1fr;gap:10px}
pre{background:#f6f8fa;padding:8px;border-radius:4px;overflow:auto;max-height:380px;font-size:12px;margin:2px 0}
h4{margin:8px 0 2px;font-size:13px}#filters select,#filters button{margin-right:10px;font-size:13px}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:1px 12px;margin:4px 0 10px;font-size:13px}
dt{color:#6a737d}dd{margin:0;word-break:break-all}
"""

JS = """
const selects=[...document.querySelectorAll('#filters select')];
function applyFilters(){let shown=0;
 document.querySelectorAll('details.failure').forEach(d=>{
  const ok=selects.every(s=>!s.value||(d.dataset[s.name]||'').split('|').includes(s.value));
  d.hidden=!ok;if(ok)shown++;});
 document.getElementById('shown').textContent=shown;}
selects.forEach(s=>s.addEventListener('change',applyFilters));
function openAll(open){document.querySelectorAll('details.failure:not([hidden])').forEach(d=>d.open=open);}
"""


def render(report: Report) -> str:
    from dbgorilla.evaluation.report import failure_reasons

    failures = [(run, record, failure_reasons(record)) for run in report.runs for record in run.records]
    failures = [item for item in failures if item[2]]
    board, *slices = report.tables
    sections = [
        "<h1>DBGorilla report</h1>",
        f'<p class="muted">{len(report.runs)} run(s), generated {escape(report.generated)}</p>',
        '<nav><a href="#leaderboard">Leaderboard</a><a href="#plots">Plots</a><a href="#slices">Tables</a>'
        f'<a href="#failures">Failures ({len(failures)})</a><a href="#runs">Runs</a></nav>',
        '<h2 id="leaderboard">Leaderboard</h2>',
        _table(board),
        '<h2 id="plots">Per component and per use case</h2>',
        _image(report.images["radar.png"], "Radar plot: per-component scores, one polygon per run"),
        _image(report.images["use_cases.png"], "Bar chart: scores per use case and run"),
        '<h2 id="slices">Tables</h2>',
        *(f"<h3>{escape(t.title)}</h3>{_table(t)}" for t in slices),
        f'<h2 id="failures">Failures <span class="muted">({len(failures)})</span></h2>',
        _failures(failures),
        '<h2 id="runs">Runs</h2>',
        *(_run_meta(run) for run in report.runs),
    ]
    body = "\n".join(sections)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>DBGorilla report</title><style>{CSS}</style></head>\n<body>\n{body}\n<script>{JS}</script>\n"
        "</body></html>\n"
    )


def _table(table: Table) -> str:
    head = "".join(f"<th>{escape(c.header)}</th>" for c in table.columns)
    rows = []
    for row in table.rows:
        cells = "".join(
            f'<td class="{"" if c.kind == "text" else "num"}">{escape(c.show(row.get(c.key)))}</td>'
            for c in table.columns
        )
        rows.append(f"<tr>{cells}</tr>")
    caption = f'<p class="caption">{escape(table.caption)}</p>'
    body = "".join(rows)
    return f'{caption}<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _image(png: bytes, alt: str) -> str:
    return f'<img alt="{escape(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode("ascii")}">'


def _select(name: str, label: str, values: list[str]) -> str:
    options = "".join(f'<option value="{escape(v)}">{escape(v)}</option>' for v in values)
    return f'<label>{escape(label)} <select name="{name}"><option value="">all</option>{options}</select></label>'


def _failures(failures: list[tuple[Run, EvalRecord, list[str]]]) -> str:
    if not failures:
        return "<p>No failures: every case matched on every scored metric.</p>"
    filters = (
        '<div id="filters">'
        + _select("run", "Run", sorted({run.name for run, _, _ in failures}))
        + _select("usecase", "Use case", sorted({record.use_case for _, record, _ in failures}))
        + _select("outcome", "Outcome", sorted({record.outcome.value for _, record, _ in failures}))
        + _select("reason", "Reason", sorted({reason for _, _, reasons in failures for reason in reasons}))
        + '<button onclick="openAll(true)">expand</button><button onclick="openAll(false)">collapse</button>'
        + f'<span class="muted">showing <span id="shown">{len(failures)}</span></span></div>'
    )
    return filters + "\n".join(_failure(run, record, reasons) for run, record, reasons in failures)


def _failure(run: Run, record: EvalRecord, reasons: list[str]) -> str:
    question = record.query if len(record.query) <= QUESTION_PREVIEW else record.query[: QUESTION_PREVIEW - 1] + "…"
    tags = "".join(f'<span class="tag bad">{escape(r)}</span>' for r in reasons)
    summary = (
        f'<summary><code>{escape(record.id)}</code> <span class="tag">{escape(run.name)}</span>'
        f'<span class="tag">{escape(record.use_case)}</span>{tags} {escape(question)}</summary>'
    )
    s = record.scores
    score_line = (
        f"exact match {_yes(s.exact_match)} · AST {s.ast_score:.3f} · routing {_yes(s.routing)} · "
        f"exec exact {_yes(s.execution_exact)} · exec subset {_yes(s.execution_subset)}"
        + (f" · search recall {s.search_recall:.3f}" if s.search_recall is not None else "")
        + (f" · vacuous ground truth: {s.ground_truth_vacuous}" if s.ground_truth_vacuous else "")
        + f" · {record.steps} step(s), {record.corrections} correction(s), {record.latency_s:.2f} s"
    )
    parts = [
        f"<p><b>Question:</b> {escape(record.query)}</p>",
        f'<p class="muted">{escape(score_line)} · outcome {escape(record.outcome.value)}</p>',
    ]
    if record.error:
        parts.append(f"<p><b>Error:</b> {escape(record.error)}</p>")
    truth_result = record.ground_truth_result if record.ground_truth_result is not None else record.ground_truth_error
    parts.append(
        '<div class="grid">'
        + _block("Ground truth", record.ground_truth)
        + _block("Prediction (first parsed call, the one scored by argument match)", record.first_arguments)
        + _block("Ground truth result", truth_result, _result_text)
        + _block("Prediction result (first call that returned one)", _first_result(record), _result_text)
        + "</div>"
    )
    calls = record.predicted_calls
    if len(calls) > 1 or any(c.arguments is None or c.error_code for c in calls):
        parts.append(_block("All calls (execution match takes the best of them)", [_call(c) for c in calls]))
    if record.final_answer:
        parts.append(f"<h4>Final answer</h4><pre>{escape(record.final_answer)}</pre>")
    data = f'data-run="{escape(run.name)}" data-usecase="{escape(record.use_case)}" '
    data += f'data-outcome="{escape(record.outcome.value)}" data-reason="{escape("|".join(reasons))}"'
    anchor = escape(f"{run.name}:{record.id}")
    return f'<details class="failure" id="{anchor}" {data}>{summary}{"".join(parts)}</details>'


def _yes(value: bool | None) -> str:
    return "n/a" if value is None else ("yes" if value else "no")


def _first_result(record: EvalRecord) -> dict[str, Any] | None:
    return next((c.result for c in record.predicted_calls if c.result is not None), None)


def _call(call: Any) -> dict[str, Any]:
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


def _block(title: str, value: Any, show: Callable[[Any], str] = _json) -> str:
    text = "none" if value is None else show(value)
    if len(text) > MAX_JSON_CHARS:
        text = text[:MAX_JSON_CHARS] + f"\n… ({len(text) - MAX_JSON_CHARS} more characters)"
    return f"<div><h4>{escape(title)}</h4><pre>{escape(text)}</pre></div>"


def _run_meta(run: Run) -> str:
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
    rows = "".join(f"<dt>{escape(str(k))}</dt><dd>{escape(_plain(v))}</dd>" for k, v in items.items())
    return f'<h3>{escape(run.name)}</h3><dl class="meta">{rows}</dl>'


def _plain(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)
