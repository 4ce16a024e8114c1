"""`dbgorilla report` on two hand-made runs: every expected number below is computed by hand from the records."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dbgorilla.errors import ExitCode
from evaluation.records import EvalRecord, Outcome, PredictedCall, ProtocolScores, Scores
from evaluation.report import Price, ReportError, build_report, cost_usd, find_price, load_prices

REPO = Path(__file__).resolve().parents[2]
OK, NO_TOOL = Outcome.OK, Outcome.NO_TOOL_CALL


def record(
    id: str,
    use_case: str,
    complexity: str,
    components: list[str],
    scores: Scores,
    *,
    model: str,
    outcome: Outcome = OK,
    tokens: tuple[int, int],
    latency: float,
) -> EvalRecord:
    truth = {
        "collection_name": "Menus",
        "integer_property_filter": {"property_name": "price", "operator": "<", "value": 20},
    }
    calls = []
    if outcome is OK:
        predicted = {"collection_name": "Menus", "search_query": f"prediction of {id}"}
        result = {
            "collection": "Menus",
            "operator_class": "search",
            "objects": [{"uuid": f"u-{id}", "properties": {"name": "soup"}}],
        }
        calls = [
            PredictedCall(
                tool_name="query_database",
                raw_arguments=json.dumps(predicted),
                arguments=predicted,
                ok=True,
                result=result,
            )
        ]
    return EvalRecord(
        id=id, use_case=use_case, query=f"Question {id}: <b>cheap</b> dishes?", complexity=complexity,
        components=components, ground_truth=truth, ground_truth_result={"collection": "Menus", "objects": [], "total_count": 7},
        model=model, tool_design="unified", predicted_calls=calls, outcome=outcome,
        prompt_tokens=tokens[0], completion_tokens=tokens[1], latency_s=latency, scores=scores,
    )  # fmt: skip


def scored(ground_truth_vacuous: str | None = None, **protocol: Any) -> Scores:
    """The same scores under both protocols (one call, scored the same whether first or final);
    F1 over rows is 1 for an exact result and 0 otherwise."""
    exact = protocol.get("execution_exact")
    protocol.setdefault("f1", None if exact is None else float(exact))
    same = ProtocolScores(**protocol)
    return Scores(first=same, final=same, ground_truth_vacuous=ground_truth_vacuous)


def alpha_records() -> list[EvalRecord]:
    m = "gpt-4o-mini-2024-07-18"  # priced by the shipped table's "gpt-4o-mini" prefix: 0.15 / 0.60 per 1M
    return [
        record("alpha-001", "restaurants", "simple", ["integer_filter"],
               scored(exact_match=True, ast_score=1.0, routing=True, components={"integer_filter": True},
                      execution_exact=True, execution_subset=True), model=m, tokens=(1000, 100), latency=1.0),
        record("alpha-002", "restaurants", "moderate", ["search", "integer_filter"],
               scored(exact_match=False, ast_score=0.7, routing=True, components={"search": True, "integer_filter": False},
                      execution_exact=False, execution_subset=True), model=m, tokens=(2000, 200), latency=2.0),
        record("alpha-003", "courses", "complex", ["search", "boolean_filter", "groupby"],
               scored(exact_match=False, ast_score=0.0, routing=False, execution_exact=False, execution_subset=False),
               model=m, outcome=NO_TOOL, tokens=(500, 50), latency=3.0),
        # Vacuous ground truth: counted in argument metrics, left out of execution match.
        record("alpha-004", "courses", "simple", ["text_aggregation"],
               scored(exact_match=True, ast_score=1.0, routing=True, components={"text_aggregation": True},
                      execution_exact=True, execution_subset=True, ground_truth_vacuous="empty"),
               model=m, tokens=(1500, 150), latency=4.0),
    ]  # fmt: skip


def beta_records() -> list[EvalRecord]:
    m = "my-finetune"  # priced only by the test's --prices file: 2.00 / 8.00 per 1M
    return [
        record("beta-001", "restaurants", "simple", ["integer_filter"],
               scored(exact_match=True, ast_score=1.0, routing=True, components={"integer_filter": True},
                      execution_exact=True, execution_subset=True), model=m, tokens=(10_000, 1000), latency=0.5),
        record("beta-002", "courses", "moderate", ["search", "groupby"],
               scored(exact_match=True, ast_score=1.0, routing=True, components={"search": True, "groupby": True},
                      execution_exact=True, execution_subset=True), model=m, tokens=(20_000, 3000), latency=1.5),
    ]  # fmt: skip


def write_run(directory: Path, records: list[EvalRecord], meta: dict[str, Any] | None = None) -> Path:
    directory.mkdir(parents=True)
    # Completion order, not id order, as the concurrent runner writes them.
    (directory / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in reversed(records)))
    if meta is not None:
        (directory / "run.json").write_text(json.dumps(meta))
    return directory


@pytest.fixture()
def runs(tmp_path: Path) -> dict[str, Path]:
    alpha = write_run(
        tmp_path / "runs" / "alpha", alpha_records(), {"model": "gpt-4o-mini-2024-07-18", "wall_time_s": 12.5}
    )
    beta = write_run(tmp_path / "runs" / "beta", beta_records())
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {"my-finetune": {"prompt": 2.0, "completion": 8.0}}}))
    return {"alpha": alpha, "beta": beta, "prices": prices, "out": tmp_path / "report"}


EXPECTED = {
    # beta: everything right; cost (30000 * 2.00 + 4000 * 8.00) / 1e6; latency quantiles of [0.5, 1.5].
    "beta": {
        "model": "my-finetune", "tool_design": "unified", "first.exact_match": 1.0, "first.ast_score": 1.0,
        "simple": 1.0, "moderate": 1.0, "complex": None, "first.routing_accuracy": 1.0, "no_tool_rate": 0.0,
        "first.execution_match_exact": 1.0, "final.execution_match_exact": 1.0, "final.execution_match_subset": 1.0,
        "final.execution_f1": 1.0, "cost_usd": 0.092, "latency_p50_s": 1.0, "latency_p95_s": 1.45, "cases": 2,
        # no answer keys here: both pass on execution; Wilson of 2/2 by hand: [0.342, 1]
        "answer_accuracy": None, "abstained": None, "citation_precision": None, "pass_interval": "100.0% [34.2%, 100.0%]",
    },
    # alpha: exact 2/4, AST (1 + 0.7 + 0 + 1)/4, routing 3/4, no tool 1/4; execution over alpha-001..003 only
    # (alpha-004 is vacuous): exact 1/3, subset 2/3, F1 1/3; simple = alpha-001, alpha-004; cost
    # (5000 * 0.15 + 500 * 0.60) / 1e6; latency quantiles of [1, 2, 3, 4] (inclusive method).
    "alpha": {
        "model": "gpt-4o-mini-2024-07-18", "tool_design": "unified", "first.exact_match": 0.5,
        "first.ast_score": 0.675, "simple": 1.0, "moderate": 0.0, "complex": 0.0, "first.routing_accuracy": 0.75,
        "no_tool_rate": 0.25, "first.execution_match_exact": 0.333333, "final.execution_match_exact": 0.333333,
        "final.execution_match_subset": 0.666667, "final.execution_f1": 0.333333, "cost_usd": 0.00105,
        "latency_p50_s": 2.5, "latency_p95_s": 3.85, "cases": 4,
        # 2 of 4 pass: alpha-001 on execution, alpha-004 (vacuous truth) on its exact call; Wilson of 2/4
        # by hand: 0.5 +- 1.96 * sqrt(0.0625 + 0.0600) / 1.9604 = [0.150, 0.850]
        "answer_accuracy": None, "abstained": None, "citation_precision": None, "pass_interval": "50.0% [15.0%, 85.0%]",
    },
}  # fmt: skip


def parse_csv(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text())))


def as_csv_value(value: Any) -> str:
    return "" if value is None else str(value)


def test_leaderboard_numbers_order_and_cost(runs: dict[str, Path]) -> None:
    report = build_report([runs["alpha"], runs["beta"]], runs["out"], runs["prices"])
    rows = report.table("leaderboard").rows
    assert [row["run"] for row in rows] == ["beta", "alpha"]  # execution match exact 1.0 > 1/3
    for row in rows:
        expected = EXPECTED[row["run"]]
        actual = {k: row[k] for k in expected}
        assert actual == pytest.approx(expected, abs=1e-9), row["run"]

    written = parse_csv(runs["out"] / "leaderboard.csv")
    assert [row["run"] for row in written] == ["beta", "alpha"]
    for row in written:
        assert row == {"run": row["run"], **{k: as_csv_value(v) for k, v in EXPECTED[row["run"]].items()}}

    markdown = (runs["out"] / "leaderboard.md").read_text()
    header = next(line for line in markdown.splitlines() if line.startswith("| Run"))
    for column in ("Exact Match", "AST Score", "Simple", "Moderate", "Complex", "Collection Routing", "No Tool Call",
                   "Exec exact (first)", "Exec exact (final)", "Exec subset (final)", "Exec F1 (final)", "Cost (USD)",
                   "Latency p50 (s)", "Latency p95 (s)", "Cases"):  # fmt: skip
        assert f"| {column} |" in header
    assert "| alpha | gpt-4o-mini-2024-07-18 | unified | 50.0% | 0.675 | 100.0% | 0.0% | 0.0% | 75.0% | 25.0% | 33.3% | 33.3% | 66.7% | 0.333 | n/a | n/a | n/a | 50.0% [15.0%, 85.0%] | $0.001050 | 2.50 | 3.85 | 4 |" in markdown  # fmt: skip
    assert "| beta | my-finetune | unified | 100.0% | 1.000 | 100.0% | 100.0% | n/a |" in markdown


def test_slices_by_use_case_complexity_and_component(runs: dict[str, Path]) -> None:
    build_report([runs["alpha"], runs["beta"]], runs["out"], runs["prices"])
    use_cases = {(r["use_case"], r["run"]): r for r in parse_csv(runs["out"] / "use_cases.csv")}
    assert set(use_cases) == {
        ("courses", "beta"),
        ("courses", "alpha"),
        ("restaurants", "beta"),
        ("restaurants", "alpha"),
    }
    # alpha/restaurants: alpha-001 (right), alpha-002 (AST 0.7, results differ).
    assert use_cases["restaurants", "alpha"] == {
        "use_case": "restaurants", "run": "alpha", "model": "gpt-4o-mini-2024-07-18", "cases": "2",
        "first.exact_match": "0.5", "first.ast_score": "0.85", "first.execution_match_exact": "0.5",
        "final.execution_match_exact": "0.5", "final.execution_match_subset": "1.0", "final.execution_f1": "0.5",
    }  # fmt: skip
    # alpha/courses: alpha-003 (no call) and the vacuous alpha-004: execution over alpha-003 alone.
    assert use_cases["courses", "alpha"]["first.exact_match"] == "0.5"
    assert use_cases["courses", "alpha"]["final.execution_match_exact"] == "0.0"
    assert (runs["out"] / "use_cases.md").read_text().count("| restaurants |") == 2

    complexity = [
        (r["complexity"], r["run"], r["first.exact_match"]) for r in parse_csv(runs["out"] / "complexity.csv")
    ]
    assert complexity == [
        ("simple", "beta", "1.0"), ("simple", "alpha", "1.0"), ("moderate", "beta", "1.0"),
        ("moderate", "alpha", "0.0"), ("complex", "alpha", "0.0"),
    ]  # fmt: skip

    components = {(r["component"], r["run"]): r for r in parse_csv(runs["out"] / "components.csv")}
    assert len(components) == 8 * 2
    # integer_filter in alpha: alpha-001 exact and component right, alpha-002 neither.
    assert components["integer_filter", "alpha"]["first.exact_match"] == "0.5"
    assert components["integer_filter", "alpha"]["component_accuracy"] == "0.5"
    assert components["search", "alpha"]["cases"] == "2"
    assert components["integer_aggregation", "beta"]["cases"] == "0"
    assert components["integer_aggregation", "beta"]["first.exact_match"] == ""


def test_ranking_is_execution_match_then_ast_with_unscored_runs_last(runs: dict[str, Path], tmp_path: Path) -> None:
    def case(id: str, exact: bool, ast: float, execution: bool | None) -> EvalRecord:
        scores = scored(
            exact_match=exact, ast_score=ast, routing=True, execution_exact=execution, execution_subset=execution
        )
        return record(id, "courses", "simple", ["search"], scores, model="oracle", tokens=(1, 1), latency=1.0)

    # gamma: exec 1/2, AST 1.0; delta: exec 1/2, AST 0.5; epsilon: AST 1.0 but execution never scored; zeta: all 0.
    gamma = write_run(tmp_path / "gamma", [case("g-1", True, 1.0, True), case("g-2", True, 1.0, False)])
    delta = write_run(tmp_path / "delta", [case("d-1", True, 1.0, True), case("d-2", False, 0.0, False)])
    epsilon = write_run(tmp_path / "epsilon", [case("e-1", True, 1.0, None)])
    zeta = write_run(tmp_path / "zeta", [case("z-1", False, 0.0, False)])  # scored 0 still ranks above unscored
    paths = [epsilon, zeta, runs["alpha"], delta, runs["beta"], gamma]
    report = build_report(paths, tmp_path / "out", runs["prices"])
    rows = report.table("leaderboard").rows
    ranked = [(r["run"], r["final.execution_match_exact"], r["first.ast_score"]) for r in rows]
    assert ranked == [
        ("beta", 1.0, 1.0), ("gamma", 0.5, 1.0), ("delta", 0.5, 0.5), ("alpha", 0.333333, 0.675), ("zeta", 0.0, 0.0),
        ("epsilon", None, 1.0),
    ]  # fmt: skip
    assert [run.name for run in report.runs] == [name for name, _, _ in ranked]  # tables and plots follow the ranking
    assert report.table("leaderboard").rows[-1]["cost_usd"] == 0.0  # the oracle is free


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_plots_are_real_pngs(runs: dict[str, Path]) -> None:
    build_report([runs["alpha"], runs["beta"]], runs["out"], runs["prices"])
    for name in ("radar.png", "use_cases.png", "pass_rates.png"):
        data = (runs["out"] / name).read_bytes()
        width, height = png_size(data)
        assert width >= 600 and height >= 300, name
        assert len(data) > 10_000, name  # an empty canvas compresses to a few KB
        assert data.endswith(b"IEND\xaeB`\x82")


def test_html_is_self_contained_and_lists_every_failure(runs: dict[str, Path]) -> None:
    build_report([runs["alpha"], runs["beta"]], runs["out"], runs["prices"])
    page = (runs["out"] / "index.html").read_text()
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", page, re.IGNORECASE)
    assert "<link" not in page and "@import" not in page and "url(" not in page
    assert page.count('src="data:image/png;base64,') == 3
    failures = re.findall(r'<details class="failure" id="([^"]+)"', page)
    assert failures == ["alpha:alpha-002", "alpha:alpha-003"]  # alpha-004 matched; its vacuity is no failure
    assert "alpha-001" not in page and "beta-001" not in page
    # Question, ground truth, prediction and both results are in the failure, escaped.
    assert "Question alpha-002: &lt;b&gt;cheap&lt;/b&gt; dishes?" in page and "<b>cheap</b>" not in page
    assert "prediction of alpha-002" in page and "u-alpha-002" in page and "total_count: 7" in page
    assert 'data-outcome="no_tool_call"' in page and 'data-reason="arguments differ|results differ"' in page
    trajectories = re.findall(r'data-trajectory="([^"]+)"', page)
    assert trajectories == ["no answer", "no call"] and '<select name="trajectory">' in page, trajectories
    for column in ("Exact Match", "Collection Routing", "No Tool Call", "Exec exact (final)"):
        assert f"<th>{column}</th>" in page


def test_prices_match_names_and_unknown_models_cost_nothing_known(runs: dict[str, Path], tmp_path: Path) -> None:
    prices = load_prices()
    assert find_price("gpt-4o-mini-2024-07-18", prices) == Price(prompt=0.15, completion=0.6)
    assert find_price("openai/GPT-4o", prices) == Price(prompt=2.5, completion=10.0)
    assert find_price("qwen2.5-coder-1.5b", prices) == Price(prompt=0.0, completion=0.0)
    assert find_price("my-finetune", prices) is None
    assert cost_usd(beta_records(), prices) is None
    assert cost_usd(beta_records(), load_prices(runs["prices"])) == 0.092

    report = build_report([runs["beta"]], tmp_path / "no-prices")
    assert report.table("leaderboard").rows[0]["cost_usd"] is None
    assert parse_csv(tmp_path / "no-prices" / "leaderboard.csv")[0]["cost_usd"] == ""


def test_unusable_inputs_are_report_errors(tmp_path: Path) -> None:
    with pytest.raises(ReportError, match="not found"):
        build_report([tmp_path / "nowhere"], tmp_path / "out")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ReportError, match=r"no results\.jsonl"):
        build_report([tmp_path / "empty"], tmp_path / "out")
    (tmp_path / "empty" / "results.jsonl").write_text("\n")
    with pytest.raises(ReportError, match="holds no results"):
        build_report([tmp_path / "empty"], tmp_path / "out")
    (tmp_path / "bad-prices.json").write_text('{"models": {"x": {"prompt": -1, "completion": 0}}}')
    write_run(tmp_path / "ok", beta_records())
    with pytest.raises(ReportError, match="price table"):
        build_report([tmp_path / "ok"], tmp_path / "out", tmp_path / "bad-prices.json")


def test_a_cut_off_line_is_skipped_and_a_later_line_wins(tmp_path: Path) -> None:
    records = beta_records()
    run = write_run(tmp_path / "run", records)
    rerun = records[0].model_copy(update={"latency_s": 9.0})
    with (run / "results.jsonl").open("a") as results:
        results.write(rerun.model_dump_json() + "\n" + '{"id": "beta-0')
    report = build_report([run], tmp_path / "out")
    assert report.runs[0].skipped_lines == 1
    assert [r.latency_s for r in report.runs[0].records] == [9.0, 1.5]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**{k: v for k, v in os.environ.items() if k != "COLUMNS"}, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "dbgorilla", "report", *args], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=120)  # fmt: skip


def test_cli_writes_the_same_report(runs: dict[str, Path], tmp_path: Path) -> None:
    build_report([runs["alpha"], runs["beta"]], runs["out"], runs["prices"])
    out = tmp_path / "cli-report"
    result = cli(str(runs["alpha"]), str(runs["beta"]), "--out", str(out), "--prices", str(runs["prices"]))
    assert result.returncode == 0, result.stderr
    for name in ("leaderboard.md", "leaderboard.csv", "use_cases.md", "use_cases.csv", "complexity.md",
                 "complexity.csv", "components.csv", "radar.png", "index.html", "report.json"):  # fmt: skip
        assert (out / name).stat().st_size > 0, name
    for name in ("leaderboard.csv", "use_cases.csv", "complexity.csv", "components.csv"):
        assert (out / name).read_text() == (runs["out"] / name).read_text(), name
    assert "beta" in result.stdout and "33.3%" in result.stdout
    # stdout is a pipe: the leaderboard keeps whole column names instead of wrapping them to 80 columns
    assert "Exec exact (first)" in result.stdout and "Collection Routing" in result.stdout


def test_cli_missing_run_dir_is_a_config_error(tmp_path: Path) -> None:
    result = cli(str(tmp_path / "nowhere"), "--out", str(tmp_path / "out"))
    assert result.returncode == ExitCode.CONFIG
    assert "run directory not found" in result.stderr
    assert not (tmp_path / "out").exists()
