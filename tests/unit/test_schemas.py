"""The committed JSON Schemas of our output formats are current, valid, and say what summaries hold.

`python -m dbgorilla.schemas` regenerates docs/schemas from the models; a model changed without
regenerating fails here. Real summaries of scored records validate against the summary models
(which forbid unknown keys), so a key added to a summary without its field fails here too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from dbgorilla.schemas import FORMATS, SCHEMA_DIR, main, render, stale
from evaluation.formats import RunSummary
from evaluation.records import EvalRecord, Outcome, PredictedCall
from evaluation.scorer import Scorer
from evaluation.summary import summarize
from fixtures.datasets import read_dataset


def test_the_committed_schemas_are_current() -> None:
    assert stale() == [], "run `python -m dbgorilla.schemas` and commit docs/schemas"


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_each_schema_is_valid_json_schema(name: str) -> None:
    schema = json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text())
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"].endswith("2020-12/schema") and schema["title"] == name and schema["description"]


def test_check_names_what_is_stale(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--out", str(tmp_path)]) == 0
    assert main(["--check", "--out", str(tmp_path)]) == 0
    (tmp_path / "score.schema.json").write_text(render("score").replace('"cases"', '"kases"'))
    (tmp_path / "gone.schema.json").write_text("{}")
    assert main(["--check", "--out", str(tmp_path)]) == 1
    assert set(stale(tmp_path)) == {"score.schema.json", "gone.schema.json"}
    assert "score.schema.json" in capsys.readouterr().err


def scored_records() -> list[EvalRecord]:
    """Three natural questions scored offline (no executor): one right, one wrong, one without a call."""
    cases = read_dataset("natural").cases[:3]
    right, wrong, silent = (EvalRecord.for_case(c, model="m", tool_design="unified", outcome=Outcome.OK) for c in cases)
    right.predicted_calls = [
        PredictedCall(
            tool_name="query_database", raw_arguments="{}", arguments=cases[0].ground_truth.to_tool_arguments(), ok=True
        )
    ]
    right.final_answer = "Here it is."
    wrong.predicted_calls = [
        PredictedCall(tool_name="query_database", raw_arguments="{}", arguments={"collection_name": "Nope"}, ok=True)
    ]
    silent.outcome = Outcome.NO_TOOL_CALL
    scorer = Scorer(lambda _record: None)
    return [scorer.score(r) for r in (right, wrong, silent)]


def test_a_real_summary_validates_against_the_model_and_the_schema() -> None:
    summary = json.loads(json.dumps(summarize(scored_records(), executed_scoring=False), default=str))
    RunSummary.model_validate(summary)
    schema = json.loads((SCHEMA_DIR / "score.schema.json").read_text())
    Draft202012Validator(schema).validate(summary)
    assert summary["protocols"]["first"]["exact_match"] == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="not_a_key"):
        RunSummary.model_validate({**summary, "not_a_key": 1})  # a key the model lacks is caught


def test_an_empty_summary_validates() -> None:
    RunSummary.model_validate(json.loads(json.dumps(summarize([]), default=str)))
