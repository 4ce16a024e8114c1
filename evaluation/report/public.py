"""`dbgorilla report` over runs of a question file of the user's own collections (`eval --dataset FILE
--collections A,B`): the table a team decides from.

Per run: the pass rate with its Wilson interval, overall, by kind and by shape (what `compose-split
--collections` wrote each question as; a hand-written file's questions by form); the calls' argument and
execution scores where the questions carry gold calls; tokens, cost and time per question. Each run after the
first is paired with the first on the questions both ran (exact McNemar).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evaluation.public_run import (
    RESULTS_FILE,
    PublicRecord,
    holds_public_records,
    paired,
    read_records,
    summarize_public,
)
from evaluation.report.errors import ReportError
from evaluation.report.prices import cost_usd, load_prices

REPORT_MD = "public_report.md"
REPORT_JSON = "public_report.json"


def is_public_run(path: Path) -> bool:
    """A run of `eval` over a question file of named collections."""
    return holds_public_records(path / RESULTS_FILE)


def _rate(rate: dict[str, Any]) -> str:
    if not rate.get("n"):
        return "-"
    low, high = rate["interval"]
    return f"{rate['rate']:.2f} ({round(rate['rate'] * rate['n'])}/{rate['n']}, {low:.2f}-{high:.2f})"


def public_report(run_dirs: Sequence[Path], out_dir: Path, prices_path: Path | None = None) -> dict[str, Any]:
    """Read each run, write `public_report.md` and `public_report.json` into `out_dir`; returns the JSON."""
    runs: list[tuple[str, list[PublicRecord], dict[str, Any]]] = []
    for path in run_dirs:
        records = read_records(path / RESULTS_FILE)
        if not records:
            raise ReportError(f"{path} holds no readable results of a question file over named collections")
        meta = json.loads((path / "run.json").read_text()) if (path / "run.json").is_file() else {}
        runs.append((path.name, records, meta))
    prices = load_prices(prices_path)
    payload: dict[str, Any] = {"runs": []}
    for name, records, meta in runs:
        summary = summarize_public(records)
        answered = [r for r in records if r.error is None]
        payload["runs"].append(
            {
                "run": name,
                "model": meta.get("model") or (records[0].model if records else ""),
                "strategy": meta.get("strategy") or records[0].strategy,
                "dataset": meta.get("dataset"),
                "data": meta.get("data"),
                "summary": summary,
                "cost_usd": cost_usd(answered, prices),  # type: ignore[arg-type]  # the same token fields
                "mean_latency_s": round(sum(r.latency_s for r in records) / len(records), 2),
                "paired_with_first": paired(runs[0][1], records) if name != runs[0][0] else None,
            }
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / REPORT_JSON).write_text(json.dumps(payload, indent=2, default=str), encoding="utf-8")
    (out_dir / REPORT_MD).write_text(render(payload), encoding="utf-8")
    return payload


def render(payload: dict[str, Any]) -> str:
    """The Markdown tables: pass rates by slice (a row each, a column per run), then calls, cost and time."""
    runs = payload["runs"]
    head = "| | " + " | ".join(r["run"] for r in runs) + " |\n|---|" + "---:|" * len(runs) + "\n"
    summaries = [r["summary"] for r in runs]
    rows = [("pass", [s["pass"] for s in summaries])]
    for slice_name in ("kind", "shape", "dataset"):
        keys = sorted({k for s in summaries for k in s[f"by_{slice_name}"]})
        rows += [(f"{slice_name} {k}", [s[f"by_{slice_name}"].get(k, {}) for s in summaries]) for k in keys]
    rows.append(("answerable refused", [s["answerable_refused"] for s in summaries]))
    text = "Pass rate (right/questions, 95% Wilson interval):\n\n" + head
    text += "".join(f"| {label} | " + " | ".join(_rate(r) for r in rates) + " |\n" for label, rates in rows)
    text += "\nCalls, cost and time per question:\n\n" + head
    details = {
        "arguments exact (last call)": [_rate(s["calls"]["exact_match"]) for s in summaries],
        "AST (last call)": [str(s["calls"]["ast_score"]) for s in summaries],
        "execution exact (last call)": [_rate(s["calls"]["execution_exact"]) for s in summaries],
        "prompt tokens": [str(s["tokens_per_question"]["prompt"]) for s in summaries],
        "new prompt tokens": [str(s["tokens_per_question"]["new_prompt"]) for s in summaries],
        "generated tokens": [str(s["tokens_per_question"]["completion"]) for s in summaries],
        "p50 latency s": [str(s["p50_latency_s"]) for s in summaries],
        "cost USD (all questions)": [str(r["cost_usd"]) if r["cost_usd"] is not None else "n/a" for r in runs],
        "model": [str(r["model"]) for r in runs],
        "strategy": [str(r["strategy"]) for r in runs],
    }
    text += "".join(f"| {label} | " + " | ".join(values) + " |\n" for label, values in details.items())
    for run in runs[1:]:
        pair = run["paired_with_first"]
        text += (
            f"\n{run['run']} against {runs[0]['run']} on {pair['questions']} questions: "
            f"{len(pair['only_second'])} right only here, {len(pair['only_first'])} only there "
            f"(exact McNemar p = {pair['p']:.4g})\n"
        )
    return text
