"""What `dbgorilla eval` prints: a run's summary and a repeated run's pass rates (kept apart from the
orchestration in `evaluate`, which the module-size limit keeps small)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.table import Table

from dbgorilla.cli.console import out
from evaluation.evaluators.contract import contract_note
from evaluation.summary import CORE_KEYS


def show_repeats(repeated: dict[str, Any], run_dir: Path) -> None:
    """pass@1 and pass^k with their intervals, each run, and the questions whose verdict flipped."""
    table = Table("run", "pass rate", "95% interval", title=f"{repeated['repeats']} repeats in {run_dir}")
    for index, run in enumerate(repeated["runs"], start=1):
        low, high = run["interval"] or (0.0, 0.0)
        table.add_row(f"repeat {index}", f"{run['rate']:.3f}", f"[{low:.3f}, {high:.3f}] (width {run['width']:.3f})")
    every = repeated["pass^k"]
    low, high = every["interval"] or (0.0, 0.0)
    table.add_row("pass^k", f"{every['rate']:.3f}", f"[{low:.3f}, {high:.3f}] (width {every['width']:.3f})")
    out.print(table)
    out.print(f"pass@1 {repeated['pass@1']:.3f} over {repeated['questions']} questions", highlight=False)
    flaky = repeated["flaky"]
    out.print(f"flaky ({len(flaky)}): {', '.join(flaky) if flaky else 'none'}", highlight=False)


def show_summary(summary: dict[str, Any], run_dir: Path | None = None) -> None:
    """The headline numbers, one column per protocol (first: the first call; final: the answer's calls)."""
    protocols = summary["protocols"]
    table = Table(
        "metric", *protocols, title=f"results{f' in {run_dir}' if run_dir else ''} ({summary['cases']} cases)"
    )
    for key in CORE_KEYS:
        values = [protocols[p].get(key) for p in protocols]
        if any(v is not None for v in values):
            table.add_row(key, *("n/a" if v is None else f"{v:.3f}" for v in values))
    out.print(table)
    labels = summary.get("labels") or {}
    if labels.get("excluded"):
        ids = labels["excluded_ids"]
        shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
        reasons = ", ".join(f"{code} {count}" for code, count in labels["excluded_by_reason"].items())
        out.print(
            f"argument metrics over the {labels['valid']} valid labels; {labels['excluded']} ground truths that do "
            f"not fit the schema are left out ({reasons}): {shown}",
            highlight=False,
        )
    for key in ("no_tool_rate", "exact_match_as_written", "avg_calls_made", "avg_steps", "latency_p50_s"):
        if summary.get(key) is not None:
            out.print(f"{key}: {summary[key]:.3f}", highlight=False)
    tokens = summary.get("tokens_per_case") or {}
    if tokens.get("prompt") is not None:
        new = "" if tokens.get("new_prompt") is None else f" ({tokens['new_prompt']:,.0f} new, not reused)"
        out.print(
            f"tokens per question: {tokens['prompt']:,.0f} prompt{new}, {tokens['completion']:,.0f} completion",
            highlight=False,
        )
    _show_scores(summary)
    _show_conduct(summary)


def _show_scores(summary: dict[str, Any]) -> None:
    """The pass rate and the final answers' accuracy, and what was left out of them as unstable."""
    verdicts = summary.get("pass") or {}
    if verdicts.get("interval"):
        low, high = verdicts["interval"]
        left_out = verdicts.get("unstable") or 0
        out.print(
            f"pass rate {verdicts['rate']:.3f}, 95% interval [{low:.3f}, {high:.3f}] over {verdicts['n']} questions "
            f"(width {verdicts['width']:.3f})"
            + (f"; {left_out} unstable on this data, left out (neither passed nor failed)" if left_out else ""),
            highlight=False,
        )
    answers = summary.get("answers") or {}
    if answers.get("accuracy") is not None:
        out.print(
            f"final answer right: {answers['accuracy']:.3f} of {answers['keyed_cases']} questions with an answer key "
            f"({answers['unscored_cases']} listings and the like have none); every gold call's result reached: "
            f"{answers['all_gold_calls_reached']:.3f}" + contract_note(summary),
            highlight=False,
        )
    if summary.get("moved_search_cuts") or summary.get("unstable"):
        unstable = summary.get("unstable") or []
        shown = ", ".join(unstable[:5]) + (f" and {len(unstable) - 5} more" if len(unstable) > 5 else "")
        out.print(
            f"search cuts moved on this data: {summary.get('moved_search_cuts') or 0}; unstable, left out of "
            f"execution match and the pass rate: {len(unstable)}" + (f" ({shown})" if unstable else ""),
            highlight=False,
        )


def _show_conduct(summary: dict[str, Any]) -> None:
    """How the agent went about it, beside the scores: its calls, abstentions, citations and trajectories."""
    diagnostics = summary.get("diagnostics") or {}
    if diagnostics.get("any_call_execution_exact") is not None:
        out.print(
            f"diagnostic, not a score: any call of any step matched {diagnostics['any_call_execution_exact']:.3f} "
            f"with {diagnostics['avg_calls_made']:.2f} calls per case",
            highlight=False,
        )
    abstention = summary.get("abstention") or {}
    if abstention.get("cases"):
        right = abstention["accuracy"]
        low, high = right["interval"]
        out.print(
            f"said it cannot where the tool cannot answer: {right['rate']:.3f} of {abstention['cases']} questions, "
            f"95% interval [{low:.3f}, {high:.3f}] ({abstention['without_a_call']} without a call)",
            highlight=False,
        )
    if abstention.get("false_refusal_rate") is not None:
        out.print(
            f"said it cannot where the question is answerable: {abstention['false_refusal_rate']:.3f} "
            f"({abstention['false_refusals']} of {abstention['answers_to_answerable']} answers)",
            highlight=False,
        )
    cited = summary.get("citations") or {}
    if cited.get("answers_citing"):
        out.print(
            f"citations: {cited['answers_citing']} answers cite {cited['ids_cited']} object ids, "
            f"{cited['ids_received']} of them in a result the agent received (precision {cited['precision']:.3f} "
            "per answer)",
            highlight=False,
        )
    paths = summary.get("trajectories") or {}
    if paths.get("counts"):
        out.print(
            "trajectories: "
            + ", ".join(f"{label} {count}" for label, count in paths["counts"].items())
            + f"; failed calls per question {paths['failed_calls_per_question']:.2f}, "
            f"repeated {paths['redundant_calls_per_question']:.2f}",
            highlight=False,
        )
    if summary.get("outcomes"):
        out.print("outcomes: " + ", ".join(f"{k}={v}" for k, v in sorted(summary["outcomes"].items())))
