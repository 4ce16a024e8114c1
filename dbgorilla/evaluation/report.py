"""`dbgorilla report`: run directories to a leaderboard, per-slice tables, plots and one HTML page.

Every number comes from `metrics.summarize`/`metrics.core`, so a report can never disagree with the
summary `eval` printed; this module only gathers runs, prices them and lays the numbers out.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dbgorilla.errors import ConfigError
from dbgorilla.evaluation.metrics import COMPONENTS, component_accuracy, core, summarize
from dbgorilla.evaluation.records import EvalRecord, Outcome

RESULTS_FILE = "results.jsonl"
RUN_FILE = "run.json"
DEFAULT_PRICES = Path(__file__).with_name("prices.json")
COMPLEXITIES = ("simple", "moderate", "complex")
TOKENS_PER_PRICE_UNIT = 1_000_000


# ---------------------------------------------------------------------------------------------- prices


class Price(BaseModel):
    """USD per 1M tokens, the unit providers publish, so the file can be edited from a price page."""

    model_config = ConfigDict(extra="forbid")
    prompt: float = Field(ge=0)
    completion: float = Field(ge=0)


def load_prices(path: Path | None = None) -> dict[str, Price]:
    """The shipped table, with the entries of `path` (same layout) replacing or adding models."""
    prices = _read_prices(DEFAULT_PRICES)
    if path is not None:
        prices.update(_read_prices(path))
    return prices


def _read_prices(path: Path) -> dict[str, Price]:
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"price table not found: {path}") from None
    except json.JSONDecodeError as error:
        raise ConfigError(f"price table {path} is not JSON: {error}") from None
    models = payload.get("models") if isinstance(payload, dict) else None
    if not isinstance(models, dict):
        raise ConfigError(f'price table {path} needs {{"models": {{"<model>": {{"prompt": .., "completion": ..}}}}}}')
    try:
        return {name.lower(): Price.model_validate(entry) for name, entry in models.items()}
    except ValidationError as error:
        raise ConfigError(f"price table {path}: {error}") from None


def find_price(model: str, prices: dict[str, Price]) -> Price | None:
    """Exact name, then the name after a `provider/` prefix, then the longest listed prefix (dated versions)."""
    for name in (model.lower(), model.lower().rsplit("/", 1)[-1]):
        if name in prices:
            return prices[name]
        prefixes = [key for key in prices if name.startswith(key)]
        if prefixes:
            return prices[max(prefixes, key=len)]
    return None


def cost_usd(records: Iterable[EvalRecord], prices: dict[str, Price]) -> float | None:
    """Total cost of the records' tokens; None (unknown, not free) when any model has no price."""
    total = 0.0
    for record in records:
        price = find_price(record.model, prices)
        if price is None:
            return None
        total += (record.prompt_tokens * price.prompt + record.completion_tokens * price.completion) / (
            TOKENS_PER_PRICE_UNIT
        )
    return round(total, 6)


# ------------------------------------------------------------------------------------------------ runs


@dataclass
class Run:
    """One `dbgorilla eval` output directory, read back."""

    name: str
    path: Path
    records: list[EvalRecord]
    meta: dict[str, Any]
    summary: dict[str, Any]
    skipped_lines: int = 0
    cost_usd: float | None = None

    @property
    def model(self) -> str:
        return str(self.meta.get("model") or ", ".join(self.summary["models"]))

    @property
    def tool_design(self) -> str:
        design = self.meta.get("tool_design") or ", ".join(self.summary["tool_designs"])
        return design if isinstance(design, str) else json.dumps(design, sort_keys=True)


def load_run(path: Path, name: str | None = None) -> Run:
    """Like the runner's resume: a later line for an id wins, a line cut off by a crash is skipped (and counted)."""
    if not path.is_dir():
        raise ConfigError(f"run directory not found: {path}")
    results = path / RESULTS_FILE
    if not results.is_file():
        raise ConfigError(f"{path} has no {RESULTS_FILE}: is it a `dbgorilla eval` output directory?")
    by_id: dict[str, EvalRecord] = {}
    skipped = 0
    for line in results.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            record = EvalRecord.model_validate_json(line)
        except ValueError:
            skipped += 1
            continue
        by_id[record.id] = record
    if not by_id:
        detail = f" ({skipped} unreadable lines)" if skipped else ""
        raise ConfigError(f"{results} holds no results{detail}")
    records = [by_id[key] for key in sorted(by_id)]
    return Run(name or path.name, path, records, _read_meta(path / RUN_FILE), summarize(records), skipped)


def _read_meta(path: Path) -> dict[str, Any]:
    """run.json is optional (older or interrupted runs): without it everything comes from the records."""
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return {}
    return payload if isinstance(payload, dict) else {}


def run_names(paths: Sequence[Path]) -> list[str]:
    """Directory names, lengthened with parents only where two runs would share one."""
    resolved = [p.resolve() for p in paths]
    for depth in range(1, max(len(p.parts) for p in resolved) + 1):
        names = ["/".join(p.parts[-depth:]) for p in resolved]
        if len(set(names)) == len(names):
            return names
    return [str(p) for p in resolved]  # the same directory twice


# ---------------------------------------------------------------------------------------------- tables


@dataclass(frozen=True)
class Column:
    key: str
    header: str
    kind: str = "text"  # text | int | rate | score | usd | seconds

    def show(self, value: Any) -> str:
        """Markdown/HTML text; the CSV keeps raw values (fractions, not percentages)."""
        if value is None:
            return "n/a"
        if self.kind == "rate":
            return f"{value * 100:.1f}%"
        if self.kind == "score":
            return f"{value:.3f}"
        if self.kind == "usd":  # local runs cost fractions of a cent: keep them visible
            return f"${value:.4f}" if value == 0 or value >= 0.01 else f"${value:.6f}"
        if self.kind == "seconds":
            return f"{value:.2f}"
        return str(value)


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
    Column("exact_match", "Exact Match", "rate"),
    Column("ast_score", "AST Score", "score"),
    Column("execution_match_exact", "Exec Match (exact)", "rate"),
    Column("execution_match_subset", "Exec Match (subset)", "rate"),
]
LEADERBOARD_COLUMNS = [
    *RUN_COLUMNS,
    Column("tool_design", "Tool design"),
    Column("exact_match", "Exact Match", "rate"),
    Column("ast_score", "AST Score", "score"),
    Column("simple", "Simple", "rate"),
    Column("moderate", "Moderate", "rate"),
    Column("complex", "Complex", "rate"),
    Column("routing_accuracy", "Collection Routing", "rate"),
    Column("no_tool_rate", "No Tool Call", "rate"),
    Column("execution_match_exact", "Exec Match (exact)", "rate"),
    Column("execution_match_subset", "Exec Match (subset)", "rate"),
    Column("cost_usd", "Cost (USD)", "usd"),
    Column("latency_p50_s", "Latency p50 (s)", "seconds"),
    Column("latency_p95_s", "Latency p95 (s)", "seconds"),
    Column("cases", "Cases", "int"),
]
LEADERBOARD_CAPTION = (
    "Exact Match, AST Score, Simple/Moderate/Complex (Exact Match by the ground truth's 1, 2, 3+ arguments) and "
    "Collection Routing are the columns of the DBGorilla paper's Figure 1; No Tool Call is its Table 4. "
    "Exec Match compares the rows Weaviate returned for the prediction and the ground truth, over cases whose "
    "ground truth ran and is not vacuous. Cost uses the price table (USD per 1M tokens). "
    "Sorted by Exec Match (exact), then AST Score."
)


def _rank_key(row: dict[str, Any]) -> tuple[Any, ...]:
    """Best first; a run without execution scores sorts after every run with them."""
    execution, ast = row.get("execution_match_exact"), row.get("ast_score")
    return (execution is None, -(execution or 0.0), ast is None, -(ast or 0.0), row["run"])


def leaderboard(runs: Sequence[Run]) -> Table:
    rows = []
    for run in runs:
        s = run.summary
        row = {"run": run.name, "model": run.model, "tool_design": run.tool_design}
        row.update({key: s.get(key) for key in ("exact_match", "ast_score", "routing_accuracy", "no_tool_rate")})
        row.update({c: s["by_complexity"].get(c, {}).get("exact_match") for c in COMPLEXITIES})
        row.update(
            execution_match_exact=s.get("execution_match_exact"),
            execution_match_subset=s.get("execution_match_subset"),
            cost_usd=run.cost_usd,
            latency_p50_s=s.get("latency_p50_s"),
            latency_p95_s=s.get("latency_p95_s"),
            cases=s["cases"],
        )
        rows.append(row)
    return Table("leaderboard", "Leaderboard", LEADERBOARD_CAPTION, LEADERBOARD_COLUMNS, sorted(rows, key=_rank_key))


def _sliced(runs: Sequence[Run], table: Table, summary_key: str, order: Callable[[str], Any]) -> Table:
    """Rows slice × run, runs in leaderboard order; a run without a slice has no row for it."""
    key = table.columns[0].key
    slices = sorted({k for run in runs for k in run.summary[summary_key]}, key=order)
    table.rows = [
        {key: k, "run": run.name, "model": run.model, **run.summary[summary_key][k]}
        for k in slices
        for run in runs
        if k in run.summary[summary_key]
    ]
    return table


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
    """Per component: `core` numbers over the cases whose ground truth uses it (the paper's Figure 5 is
    Exact Match there), plus how often the component itself was right and how often it was added unasked."""
    accuracy = component_accuracy(run.records)
    values = {}
    for component in COMPONENTS:
        numbers = core([r for r in run.records if component in r.components])
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
        Column("component_accuracy", "Component correct", "rate"),
        Column("spurious", "Added unasked", "int"),
    ]
    caption = (
        "Cases whose ground truth uses the component. Component correct: that argument alone matched; "
        "Added unasked: predictions that used the component where the ground truth did not."
    )
    return Table("components", "By component", caption, columns, rows)


# -------------------------------------------------------------------------------------------- failures


def failure_reasons(record: EvalRecord) -> list[str]:
    """Why a case counts against the model; empty for a case that passed everything scored."""
    reasons = [] if record.outcome is Outcome.OK else [record.outcome.value.replace("_", " ")]
    if not record.scores.exact_match and record.first_arguments is not None:
        reasons.append("arguments differ")
    if record.scores.execution_exact is False:
        reasons.append("results differ")
    return reasons


# ---------------------------------------------------------------------------------------------- report


@dataclass
class Report:
    runs: list[Run]
    tables: list[Table]
    images: dict[str, bytes]
    files: list[Path]
    generated: str

    def table(self, name: str) -> Table:
        return next(t for t in self.tables if t.name == name)


def build_report(run_dirs: Sequence[Path], out_dir: Path, prices_path: Path | None = None) -> Report:
    """Read every run, write the tables (md + csv), the plots (png), report.json and index.html into `out_dir`."""
    from dbgorilla.evaluation import _html, report_plots

    if not run_dirs:
        raise ConfigError("give at least one run directory")
    prices = load_prices(prices_path)
    paths = [Path(p) for p in run_dirs]
    if len({p.resolve() for p in paths}) < len(paths):
        raise ConfigError("a run directory is given twice")
    runs = [load_run(path, name) for path, name in zip(paths, run_names(paths), strict=True)]
    for run in runs:
        run.cost_usd = cost_usd(run.records, prices)
    board = leaderboard(runs)
    order = {row["run"]: i for i, row in enumerate(board.rows)}
    runs.sort(key=lambda run: order[run.name])
    tables = [board, use_case_table(runs), complexity_table(runs), component_table(runs)]
    images = {
        "radar.png": report_plots.radar_png({run.name: component_values(run) for run in runs}),
        "use_cases.png": report_plots.use_case_png(tables[1].rows, [run.name for run in runs]),
    }
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")

    out_dir.mkdir(parents=True, exist_ok=True)
    files = []
    for table in tables:
        files.append(_write(out_dir / f"{table.name}.md", table.markdown()))
        files.append(_write(out_dir / f"{table.name}.csv", table.csv()))
    for name, png in images.items():
        (out_dir / name).write_bytes(png)
        files.append(out_dir / name)
    report = Report(runs, tables, images, files, generated)
    files.append(_write(out_dir / "report.json", json.dumps(_json_payload(report), indent=2, default=str)))
    files.append(_write(out_dir / "index.html", _html.render(report)))
    return report


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _json_payload(report: Report) -> dict[str, Any]:
    """The same numbers for scripts: every table's raw rows and each run's full summary."""
    return {
        "generated": report.generated,
        "tables": {t.name: t.rows for t in report.tables},
        "runs": [
            {"name": r.name, "path": str(r.path), "meta": r.meta, "cost_usd": r.cost_usd, "summary": r.summary}
            for r in report.runs
        ],
    }
