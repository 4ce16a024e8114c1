"""Bad input files get a clear error (issue 30): each reader names the file, the line (or JSON path), what
it found and what it expected; the CLI prints that without a traceback and exits 10 (bad input), before
it connects to anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dbgorilla.errors import ExitCode
from evaluation.predictions import PredictionFileError, read_predictions
from evaluation.records import EvalRecord, Outcome, PredictedCall, ResultsFileError, read_jsonl, read_results
from evaluation.report import ReportError, load_prices
from evaluation.report.prices import PriceTableError
from evaluation.runner import prepare_run_dir
from fixtures.datasets import (
    PAPER_EXAMPLE_PATH,
    DatasetFileError,
    PaperFileError,
    load_paper_dataset,
    read_dataset,
    read_split,
    split_path,
)
from tests.conftest import fresh_settings, run_cli, settings_env

SPLIT_LINES = split_path("natural").read_text(encoding="utf-8").splitlines()


def results_lines(count: int = 3) -> list[str]:
    """`count` results as `eval` writes them: one line each."""
    lines = []
    for case in read_dataset().cases[:count]:
        arguments = case.ground_truth.to_tool_arguments()
        call = PredictedCall(tool_name="query_database", raw_arguments=json.dumps(arguments), arguments=arguments)
        record = EvalRecord.for_case(case, model="m", tool_design="unified", predicted_calls=[call], outcome=Outcome.OK)
        lines.append(record.model_dump_json())
    return lines


def write(path: Path, *lines: str, end: str = "\n") -> Path:
    path.write_text("\n".join(lines) + end, encoding="utf-8")
    return path


@pytest.fixture()
def env(tmp_path: Path) -> dict[str, str]:
    """Settings on free ports where nothing runs: a command that connected first would exit 3, not 10."""
    return settings_env(fresh_settings(tmp_path / "state"))


# --- a dataset split ---------------------------------------------------------------------------------


def test_a_split_names_its_first_five_bad_lines_and_counts_the_rest(tmp_path: Path) -> None:
    bad = [f'{{"id": "x-{i:03d}"' for i in range(7)]  # seven torn lines among good ones
    path = write(tmp_path / "split.jsonl", SPLIT_LINES[0], "not json", SPLIT_LINES[1], *bad)
    with pytest.raises(DatasetFileError) as raised:
        read_split(path)
    message = str(raised.value)
    assert message.startswith(f"{path}: 8 of 10 lines are not benchmark questions")
    assert "line 2: found 'not json', which is not JSON" in message and "expected a JSON object" in message
    assert [p.item for p in raised.value.problems] == [2, 4, 5, 6, 7]  # the first five bad lines, in order
    assert message.endswith("... and 3 more") and raised.value.total == 8


def test_a_split_line_with_a_wrong_field_says_where_and_what_was_expected(tmp_path: Path) -> None:
    case = json.loads(SPLIT_LINES[0])
    wrong = {**case, "version": "three", "ground_truth": {**case["ground_truth"], "collection_name": 7}}
    path = write(tmp_path / "split.jsonl", SPLIT_LINES[1], json.dumps(wrong))
    with pytest.raises(DatasetFileError) as raised:
        read_split(path)
    assert str(raised.value).splitlines()[1:] == [
        "  line 2, version: found 'three'; expected an integer",
        "  line 2, ground_truth.collection_name: found 7; expected a string",
    ]


def test_a_split_with_an_unknown_use_case_or_an_id_twice(tmp_path: Path) -> None:
    other = {**json.loads(SPLIT_LINES[0]), "use_case": "spaceships"}
    path = write(tmp_path / "split.jsonl", SPLIT_LINES[0], json.dumps(other), SPLIT_LINES[0])
    with pytest.raises(DatasetFileError) as raised:
        read_split(path)
    message = str(raised.value)
    assert "line 2, use_case: found 'spaceships'; expected one of courses" in message
    assert "line 3, id: found " in message and "again (first on line 1); expected each id once" in message


def test_an_empty_or_binary_split(tmp_path: Path) -> None:
    with pytest.raises(DatasetFileError, match="holds no questions"):
        read_split(write(tmp_path / "empty.jsonl", "", end=""))
    (tmp_path / "binary.jsonl").write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    with pytest.raises(DatasetFileError, match="bytes that are not UTF-8 text"):
        read_dataset(tmp_path / "binary.jsonl")


def test_the_shipped_splits_still_read() -> None:
    for name in ("natural", "explicit", "multistep", "abstention"):
        cases, abstentions = read_split(split_path(name))
        assert len(cases) + len(abstentions) == len(split_path(name).read_text().splitlines())


# --- the paper's JSON --------------------------------------------------------------------------------


def test_a_paper_file_names_the_json_path_of_each_bad_record(tmp_path: Path) -> None:
    records = json.loads(PAPER_EXAMPLE_PATH.read_text())
    records[1]["query"]["target_collection"] = ["Restaurants"]
    records[3] = "a record"
    path = tmp_path / "paper.json"
    path.write_text(json.dumps(records))
    with pytest.raises(PaperFileError) as raised:
        load_paper_dataset(path)
    message = str(raised.value)
    assert message.startswith(f"{path}: 2 of 10 records are not records of the DBGorilla paper's format")
    assert '[1].query.target_collection: found ["Restaurants"]; expected a string' in message
    assert "[3]: found a string 'a record'; expected a record: a JSON object" in message


def test_a_paper_file_that_is_not_json_or_not_a_list(tmp_path: Path) -> None:
    path = tmp_path / "paper.json"
    path.write_text('[{"query": 1},\n {"query": }]')
    with pytest.raises(PaperFileError, match=r"line 2: found .*which is not JSON \(expecting value, column 12\)"):
        load_paper_dataset(path)
    path.write_text(SPLIT_LINES[0])  # a split of ours given to lint-dataset
    with pytest.raises(PaperFileError, match=r"line 1: found .*expected one JSON list of records"):
        load_paper_dataset(path)
    assert load_paper_dataset(PAPER_EXAMPLE_PATH).records  # the shipped example still reads


# --- a run's results.jsonl ---------------------------------------------------------------------------


def test_a_torn_line_in_the_middle_is_skipped_and_its_case_runs_again_on_resume(tmp_path: Path) -> None:
    good = results_lines(3)
    results = write(tmp_path / "results.jsonl", good[0], good[1][:40], good[2])
    read = read_results(results)
    assert [r.id for r in read.records] == [json.loads(good[0])["id"], json.loads(good[2])["id"]]
    assert read.unreadable_lines == [2] and read_jsonl(results)[1] == 1
    done = prepare_run_dir(tmp_path, resume=True, overwrite=False)
    assert done == {json.loads(good[0])["id"], json.loads(good[2])["id"]}  # the torn one runs again
    assert results.read_text().splitlines() == [good[0], good[2]]  # nothing else is lost


def test_a_crash_during_the_first_write_is_not_an_error(tmp_path: Path) -> None:
    write(tmp_path / "results.jsonl", results_lines(1)[0][:50], end="")
    assert prepare_run_dir(tmp_path, resume=True, overwrite=False) == set()


def test_a_file_that_is_not_a_results_file_is_refused_and_kept(tmp_path: Path) -> None:
    results = write(tmp_path / "results.jsonl", *SPLIT_LINES[:3])  # a dataset where results should be
    with pytest.raises(ResultsFileError) as raised:
        prepare_run_dir(tmp_path, resume=True, overwrite=False)
    assert str(raised.value).startswith(f"{results}: 3 of 3 lines are not results")
    assert "line 1: found no 'model' field; expected one (it is required)" in str(raised.value)
    assert results.read_text().splitlines() == SPLIT_LINES[:3]  # not rewritten to nothing


# --- a prediction file -------------------------------------------------------------------------------


def test_predictions_from_a_text_file_are_an_error(tmp_path: Path) -> None:
    path = write(tmp_path / "notes.txt", "hello world", "these are my notes")
    with pytest.raises(PredictionFileError) as raised:
        read_predictions(path)
    message = str(raised.value)
    assert message.startswith(f"{path}: 2 of 2 lines are not predictions (nothing to score)")
    assert "line 1: found 'hello world', which is not JSON" in message


def test_predictions_with_a_torn_first_line_score_the_rest_unless_strict(tmp_path: Path) -> None:
    good = results_lines(3)
    path = write(tmp_path / "results.jsonl", good[0][:30], good[1], good[2])
    read = read_predictions(path)
    assert len(read.records) == 2 and read.skipped_count == 1 and read.first_skipped()[0].item == 1
    with pytest.raises(PredictionFileError, match=r"1 of 3 lines is not a prediction \(--strict"):
        read_predictions(path, strict=True)
    torn_only = write(tmp_path / "torn.jsonl", good[0][:30], end="")
    with pytest.raises(PredictionFileError, match="nothing to score"):
        read_predictions(torn_only)
    with pytest.raises(PredictionFileError, match="holds no predictions"):
        read_predictions(write(tmp_path / "empty.jsonl", "", end=""))


def test_paper_result_entries_that_are_not_results_are_skipped_and_named(tmp_path: Path) -> None:
    payload = {
        "model_name": "m",
        "detailed_results": [
            {"query_index": 0, "ground_truth_query": {"target_collection": "menus"}, "predicted_query": None},
            {"query_index": "first", "ground_truth_query": {"target_collection": "menus"}},
            [],
        ],
    }
    path = tmp_path / "paper_results.json"
    path.write_text(json.dumps(payload))
    read = read_predictions(path)
    assert len(read.records) == 1 and read.skipped_count == 2
    assert str(read.skipped[0]) == "detailed_results[1].query_index: found 'first'; expected an integer"
    path.write_text(json.dumps({**payload, "detailed_results": "none"}))
    with pytest.raises(PredictionFileError, match=r"detailed_results: found 'none'; expected a JSON list"):
        read_predictions(path)


# --- a price table -----------------------------------------------------------------------------------


def test_a_price_table_names_the_json_path(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    path.write_text('{"models": {"my-model": {"prompt": -1, "completion": "cheap"}}}')
    with pytest.raises(PriceTableError) as raised:
        load_prices(path)
    message = str(raised.value)
    assert "models.my-model.prompt: found -1; expected greater than or equal to 0" in message
    assert "models.my-model.completion: found 'cheap'; expected a number" in message
    assert isinstance(raised.value, ReportError)  # what report callers caught before
    path.write_text('{"models": {"my-model": {"prompt": 1, "completion": 2}}')
    with pytest.raises(PriceTableError, match=r"line 1: found .*which is not JSON"):
        load_prices(path)


# --- the CLI: one message, exit 10, no traceback, nothing connected ----------------------------------


def test_every_dataset_command_reports_a_bad_first_line_without_a_traceback(
    tmp_path: Path, env: dict[str, str]
) -> None:
    path = write(tmp_path / "bad.jsonl", "this is not JSON", SPLIT_LINES[0])
    for command in (
        ["eval", "--dataset", str(path), "--model", "oracle"],
        ["audit-dataset", str(path)],
        ["load", "--dataset", str(path)],
        ["ablate", "--dataset", str(path), "--model", "oracle"],
    ):
        result = run_cli(*command, env=env)
        assert result.returncode == ExitCode.BAD_INPUT, (command, result.stderr)
        assert "Traceback" not in result.stderr and "JSONDecodeError" not in result.stderr
        assert f"error: {path}: 1 of 2 lines is not a benchmark question" in result.stderr, result.stderr
        assert "line 1: found 'this is not JSON', which is not JSON" in result.stderr
    result = run_cli("lint-dataset", str(path), env=env)
    assert result.returncode == ExitCode.BAD_INPUT and "Traceback" not in result.stderr
    assert f"{path}: is not a dataset in the DBGorilla paper's format" in result.stderr


def test_score_exits_10_when_nothing_can_be_read_and_names_skipped_lines(tmp_path: Path, env: dict[str, str]) -> None:
    text = write(tmp_path / "notes.txt", "hello world")
    result = run_cli("score", "--predictions", str(text), env=env)
    assert result.returncode == ExitCode.BAD_INPUT and "nothing to score" in result.stderr
    assert "Traceback" not in result.stderr and "results (0 cases)" not in result.stdout

    good = results_lines(3)
    torn_first = write(tmp_path / "results.jsonl", good[0][:30], good[1], good[2])
    result = run_cli("score", "--predictions", str(torn_first), "--json", env=env)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["cases"] == 2
    assert "skipped 1 of 3 lines that are not predictions" in result.stderr and "line 1: found" in result.stderr
    strict = run_cli("score", "--predictions", str(torn_first), "--strict", env=env)
    assert strict.returncode == ExitCode.BAD_INPUT and "--strict" in strict.stderr


def test_report_and_judge_name_a_bad_price_table_and_a_bad_results_file(tmp_path: Path, env: dict[str, str]) -> None:
    run = tmp_path / "run"
    run.mkdir()
    write(run / "results.jsonl", *results_lines(2))
    prices = tmp_path / "prices.json"
    prices.write_text('{"models": {"m": {"prompt": "[red]free"}}}')  # markup in a user's file is printed as is
    result = run_cli("report", str(run), "--prices", str(prices), "--out", str(tmp_path / "out"), env=env)
    assert result.returncode == ExitCode.BAD_INPUT and "Traceback" not in result.stderr
    assert "models.m.prompt: found '[red]free'; expected a number" in result.stderr, result.stderr

    other = tmp_path / "other"
    other.mkdir()
    write(other / "results.jsonl", "<html>", "</html>")
    result = run_cli("judge", str(run), str(other), env=env)
    assert result.returncode == ExitCode.BAD_INPUT and "Traceback" not in result.stderr
    assert f"{other / 'results.jsonl'}: 2 of 2 lines are not results" in result.stderr
