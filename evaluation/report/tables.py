"""The report's tables: the leaderboard and the per use case, complexity and component slices.

Every number comes from `metrics.summarize`/`metrics.core`, so a table can never disagree with
the summary `eval` printed; this module only lays the numbers out (markdown, CSV, HTML cells).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from evaluation.columns import Column
from evaluation.evaluators import EVALUATORS, evaluator, failures
from evaluation.evaluators.arguments import COMPLEXITIES, COMPONENTS, component_accuracy
from evaluation.protocols import ScoringProtocol
from evaluation.records import EvalRecord, Outcome
from evaluation.report.runs import Run
from evaluation.statistics import paired_comparison, pass_rate, repeat_summary
from evaluation.summary import core


@dataclass
class Table:
    name: str
    title: str
    caption: str
    columns: list[Column]
    rows: list[dict[str, Any]] = field(default_factory=list)

    def markdown(self) -> str:
        def cell(text: str) -> str:
            return text.replace("|", "\\|").replace("\n", " ")

        lines = [f"# {self.title}", "", self.caption, ""]
        lines.append("| " + " | ".join(c.header for c in self.columns) + " |")
        lines.append("|" + "|".join("---" if c.kind == "text" else "---:" for c in self.columns) + "|")
        for row in self.rows:
            lines.append("| " + " | ".join(cell(c.show(row.get(c.key))) for c in self.columns) + " |")
        return "\n".join(lines) + "\n"

    def csv(self) -> str:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow([c.key for c in self.columns])
        for row in self.rows:
            writer.writerow(["" if row.get(c.key) is None else row[c.key] for c in self.columns])
        return buffer.getvalue()


RUN_COLUMNS = [Column("run", "Run"), Column("model", "Model")]
MATCH_COLUMNS = [
    Column("cases", "Cases", "int"),
    Column("first.exact_match", "Exact Match (first)", "rate"),
    Column("first.ast_score", "AST Score (first)", "score"),
    Column("first.execution_match_exact", "Exec exact (first)", "rate"),
    Column("final.execution_match_exact", "Exec exact (final)", "rate"),
    Column("final.execution_match_subset", "Exec subset (final)", "rate"),
    Column("final.execution_f1", "Exec F1 (final)", "score"),
]
LEADERBOARD_COLUMNS = [
    *RUN_COLUMNS,
    Column("tool_design", "Tool design"),
    *(column for each in EVALUATORS for column in each.columns),
    Column("pass_interval", "Pass rate, 95% CI", "text"),
    Column("cost_usd", "Cost (USD)", "usd"),
    Column("latency_p50_s", "Latency p50 (s)", "seconds"),
    Column("latency_p95_s", "Latency p95 (s)", "seconds"),
    Column("cases", "Cases", "int"),
]
LEADERBOARD_CAPTION = " ".join(
    [
        "Every number names its protocol: first = the model's first call (the DBGorilla paper's one-step "
        "protocol), final = the calls the final answer rests on.",
        *(each.caption for each in EVALUATORS if each.caption),
        "Pass = answer right (said it cannot, where the tool cannot answer), or for a question without a key Exec "
        "exact (final); its Wilson 95% interval shows how far a run of this many questions can be trusted. Cost "
        "uses the price table (USD per 1M tokens). Sorted by Exec exact (final), then AST Score.",
    ]
)


def flat(blocks: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """`{"first": {"exact_match": x}}` -> `{"first.exact_match": x}` for table rows."""
    return {f"{protocol}.{key}": value for protocol, numbers in blocks.items() for key, value in numbers.items()}


def _rank_key(row: dict[str, Any]) -> tuple[Any, ...]:
    """Best first; a run without execution scores sorts after every run with them."""
    execution, ast = row.get("final.execution_match_exact"), row.get("first.ast_score")
    return (execution is None, -(execution or 0.0), ast is None, -(ast or 0.0), row["run"])


def leaderboard(runs: Sequence[Run]) -> Table:
    rows = []
    for run in runs:
        s = run.summary
        row = {"run": run.name, "model": run.model, "tool_design": run.tool_design, **flat(s["protocols"])}
        for each in EVALUATORS:
            row.update(each.leaderboard_values(s))
        verdicts = pass_rate(run.records)
        row.update(
            pass_interval=f"{verdicts['rate']:.1%} {interval_text(verdicts)}" if verdicts["n"] else None,
            cost_usd=run.cost_usd,
            latency_p50_s=s.get("latency_p50_s"),
            latency_p95_s=s.get("latency_p95_s"),
            cases=s["cases"],
        )
        if s.get("infrastructure_failure"):
            row = _infrastructure_failure_row(row)
        rows.append(row)
    return Table("leaderboard", "Leaderboard", LEADERBOARD_CAPTION, LEADERBOARD_COLUMNS, sorted(rows, key=_rank_key))


#: Leaderboard cells a run of nothing but infrastructure failures keeps: who ran, and how many cases.
_KEPT_WHEN_INFRASTRUCTURE_FAILED = ("run", "model", "tool_design", "cases", "latency_p50_s", "latency_p95_s")


def _infrastructure_failure_row(row: dict[str, Any]) -> dict[str, Any]:
    """Every case failed on the model server or Weaviate: its zeros measure a dead server, so the row
    shows no score at all and says why in the pass column."""
    kept = {key: row.get(key) for key in _KEPT_WHEN_INFRASTRUCTURE_FAILED}
    return {**kept, "pass_interval": f"infrastructure failure ({row.get('cases')} cases; --resume)"}


COMPARISON_COLUMNS = [
    Column("run", "Run"),
    Column("baseline", "Against"),
    Column("shared", "Shared questions", "int"),
    Column("rate", "Pass rate", "rate"),
    Column("baseline_rate", "Against: pass rate", "rate"),
    Column("only_run", "Only this run passed", "int"),
    Column("only_baseline", "Only the other passed", "int"),
    Column("p_value", "McNemar p", "score"),
    Column("verdict", "Difference"),
]


def comparison_table(runs: Sequence[Run]) -> Table:
    """Every run against the leaderboard's first, paired on the questions both answered."""
    rows = []
    for run in runs[1:]:
        paired = paired_comparison(runs[0].records, run.records)
        rows.append(
            {
                "run": run.name,
                "baseline": runs[0].name,
                "shared": paired["shared"],
                "rate": paired["b"]["rate"],
                "baseline_rate": paired["a"]["rate"],
                "only_run": paired["only_b_passed"],
                "only_baseline": paired["only_a_passed"],
                "p_value": paired["p_value"],
                "verdict": "outside the noise" if paired["outside_noise"] else "within the noise",
            }
        )
    caption = (
        "Each run against the leaderboard's first, on the questions both answered: the exact McNemar test on the "
        "questions only one of the two passed. p < 0.05 is outside the noise; otherwise the runs cannot be told apart "
        "on these questions."
    )
    return Table("comparison", "Paired comparison", caption, COMPARISON_COLUMNS, rows)


def _sliced(runs: Sequence[Run], table: Table, summary_key: str, order: Callable[[str], Any]) -> Table:
    """Rows slice × run, runs in leaderboard order; a run without a slice has no row for it."""
    key = table.columns[0].key
    slices = sorted({k for run in runs for k in run.summary[summary_key]}, key=order)
    table.rows = [
        {key: k, "run": run.name, "model": run.model, **_slice_row(run.summary[summary_key][k])}
        for k in slices
        for run in runs
        if k in run.summary[summary_key]
    ]
    return table


def _slice_row(numbers: dict[str, Any]) -> dict[str, Any]:
    return {"cases": numbers["cases"], **flat({p: v for p, v in numbers.items() if isinstance(v, dict)})}


def use_case_table(runs: Sequence[Run]) -> Table:
    columns = [Column("use_case", "Use case"), *RUN_COLUMNS, *MATCH_COLUMNS]
    table = Table("use_cases", "By use case", "Each use case is one schema of three related collections.", columns)
    return _sliced(runs, table, "by_use_case", str)


def complexity_table(runs: Sequence[Run]) -> Table:
    order = {c: i for i, c in enumerate(COMPLEXITIES)}
    caption = "Simple, moderate, complex: the ground truth uses 1, 2, 3 or more arguments besides the collection."
    columns = [Column("complexity", "Complexity"), *RUN_COLUMNS, *MATCH_COLUMNS]
    table = Table("complexity", "By complexity", caption, columns)
    return _sliced(runs, table, "by_complexity", lambda c: (order.get(c, len(order)), c))


def component_values(run: Run) -> dict[str, dict[str, Any]]:
    """Per component, under `first` (the paper's Figure 5 is Exact Match there): the numbers over the
    cases whose ground truth uses it, how often the component itself was right, how often it was
    added unasked, and the execution numbers under `final`."""
    accuracy = component_accuracy(run.records, ScoringProtocol.FIRST)
    values = {}
    for component in COMPONENTS:
        cases = [r for r in run.records if component in r.components]
        numbers: dict[str, Any] = {"cases": len(cases), **core(cases, ScoringProtocol.FIRST)}
        numbers.update(flat({p.value: core(cases, p) for p in ScoringProtocol}))
        numbers.update(component_accuracy=accuracy[component]["accuracy"], spurious=accuracy[component]["spurious"])
        values[component] = numbers
    return values


def component_table(runs: Sequence[Run]) -> Table:
    per_run = {run.name: component_values(run) for run in runs}
    rows = [
        {"component": component, "run": run.name, "model": run.model, **per_run[run.name][component]}
        for component in COMPONENTS
        for run in runs
    ]
    columns = [
        Column("component", "Component"),
        *RUN_COLUMNS,
        *MATCH_COLUMNS,
        Column("component_accuracy", "Component correct (first)", "rate"),
        Column("spurious", "Added unasked (first)", "int"),
    ]
    caption = (
        "Cases whose ground truth uses the component. Component correct: that argument alone matched; "
        "Added unasked: predictions that used the component where the ground truth did not."
    )
    return Table("components", "By component", caption, columns, rows)


REPEAT_COLUMNS = [
    Column("runs", "Repeated run"),
    Column("model", "Model"),
    Column("repeats", "Repeats", "int"),
    Column("questions", "Questions", "int"),
    Column("pass_at_1", "pass@1", "rate"),
    Column("pass_k", "pass^k", "rate"),
    Column("pass_k_interval", "pass^k 95% CI", "text"),
    Column("flaky", "Flaky questions", "int"),
    Column("flaky_ids", "Flaky", "text"),
]


def repeats_table(runs: Sequence[Run]) -> Table:
    """Runs named `<dir>/repeat-N` grouped by `<dir>`: pass@1, pass^k with its interval, and the questions
    whose verdict flipped between repeats (the same numbers `eval --repeats` wrote to repeats.json)."""
    groups: dict[str, list[Run]] = {}
    for run in runs:
        parent, _, last = run.name.rpartition("/")
        if parent and last.startswith("repeat-"):
            groups.setdefault(parent, []).append(run)
    rows = []
    for parent, members in groups.items():
        if len(members) < 2:
            continue
        summary = repeat_summary([m.records for m in members])
        every = summary["pass^k"]
        rows.append(
            {
                "runs": parent,
                "model": members[0].model,
                "repeats": summary["repeats"],
                "questions": summary["questions"],
                "pass_at_1": summary["pass@1"],
                "pass_k": every["rate"],
                "pass_k_interval": interval_text(every),
                "flaky": len(summary["flaky"]),
                "flaky_ids": ", ".join(summary["flaky"]) or "none",
            }
        )
    caption = (
        "Runs of `eval --repeats K`: pass@1 is the mean pass rate of one run, pass^k the share of questions passed "
        "in every repeat, with its Wilson 95% interval; flaky questions passed in some repeats and not others."
    )
    return Table("repeats", "Repeated runs", caption, REPEAT_COLUMNS, rows)


KINDS = ("single-step", "multi-step", "unanswerable")
#: The scores the table by question kind shows, in its order (each evaluator's `kind_columns`).
KIND_SCORES = tuple(evaluator(name) for name in ("answer", "arguments", "execution", "trajectory", "citations"))
KIND_COLUMNS = [
    Column("kind", "Questions"),
    *RUN_COLUMNS,
    Column("cases", "Cases", "int"),
    Column("pass_rate", "Pass rate", "rate"),
    Column("pass_interval", "95% CI", "text"),
    *(column for each in KIND_SCORES for column in each.kind_columns),
]


def kind_table(runs: Sequence[Run]) -> Table:
    """Single-step, multi-step and unanswerable questions side by side: a run can do well on one call and
    still fail every chain, and the leaderboard's totals would hide it."""
    rows = []
    for kind in KINDS:
        for run in runs:
            records = [r for r in run.records if r.kind == kind]
            if not records:
                continue
            verdicts = pass_rate(records)
            answerable = [r for r in records if r.expected == "call"]
            row = {
                "kind": kind,
                "run": run.name,
                "model": run.model,
                "cases": len(records),
                "pass_rate": verdicts["rate"],
                "pass_interval": interval_text(verdicts),
                "pass_bounds": verdicts["interval"],
                **(flat({p.value: core(answerable, p) for p in ScoringProtocol}) if answerable else {}),
            }
            for each in KIND_SCORES:
                row.update(each.kind_values(records))
            rows.append(row)
    caption = (
        "Multi-step questions need two or more dependent calls (a later call uses a value only an earlier result "
        "reveals); unanswerable ones ask for what the tool cannot do, and saying so passes. Pass and its Wilson 95% "
        "interval as in the leaderboard. Every gold call reached: some call of the run got each gold call's exact "
        "result. Citation precision: of the object ids an answer cites, the share that were in a result the agent "
        "received, over answers that cite any."
    )
    return Table("kinds", "By question kind", caption, KIND_COLUMNS, rows)


def interval_text(rate: dict[str, Any]) -> str:
    """`[15.0%, 85.0%]`: a `rate_with_interval` interval as the tables print it."""
    low, high = rate["interval"] or (0.0, 0.0)
    return f"[{low:.1%}, {high:.1%}]"


# -------------------------------------------------------------------------------------------- failures


def failure_reasons(record: EvalRecord) -> list[str]:
    """Why a case counts against the model; empty for a case that passed everything scored."""
    if record.expected == "abstain":  # no call is right here; only the answer counts
        return failures(record)
    reasons = [] if record.outcome is Outcome.OK else [record.outcome.value.replace("_", " ")]
    return reasons + failures(record)
