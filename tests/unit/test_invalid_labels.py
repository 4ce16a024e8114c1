"""A ground truth that does not fit its schema is left out of every argument metric, and offline scoring
checks a paper result file against the schema it carries (the one `--execute` reads once it is loaded).

Before, offline scoring read a schema off the calls, in which every label fits, while `--execute` read
the loaded schema, in which 38 of the paper's labels do not: one file, two routing accuracies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evaluation.evaluators.arguments import Arguments
from evaluation.predictions import read_predictions, rescore, unknown_schemas
from evaluation.protocols import ScoringProtocol
from evaluation.summary import summarize
from fixtures.datasets import PAPER_EXAMPLE_PATH, paper_case_id
from fixtures.datasets.paper import load_paper_dataset, weaviate_property_name

RECORDS = json.loads(PAPER_EXAMPLE_PATH.read_text())


def predictions_file(path: Path, predict: Any) -> Path:
    """A DBGorilla result file for the paper example, `predict(index, label)` giving each prediction."""
    results = []
    for index, record in enumerate(RECORDS):
        truth = dict(record["query"])
        results.append(
            {
                "query_index": index,
                "natural_language_query": truth["corresponding_natural_language_query"],
                "ground_truth_query": {**truth, "database_schema": record["database_schema"]},
                "predicted_query": predict(index, truth),
            }
        )
    path.write_text(json.dumps({"model_name": "m", "detailed_results": results}))
    return path


def as_loaded(truth: dict[str, Any]) -> dict[str, Any]:
    """The label with its property names as the loader creates them (`StaffName` -> `staffName`): a
    prediction keeps the names it gives."""
    return {
        k: {**v, "property_name": weaviate_property_name(v["property_name"])}
        if isinstance(v, dict) and "property_name" in v
        else weaviate_property_name(v)
        if k == "groupby_property" and isinstance(v, str)
        else v
        for k, v in truth.items()
    }


def scored(path: Path) -> dict[str, Any]:
    read = read_predictions(path)
    return summarize(rescore(read.records, None, schemas=read.schemas), executed_scoring=False)


def test_the_labels_the_audit_flags_are_the_ones_left_out(tmp_path: Path) -> None:
    summary = scored(predictions_file(tmp_path / "p.json", lambda _i, truth: as_loaded(truth)))
    flagged = sorted(paper_case_id(i) for i in load_paper_dataset(PAPER_EXAMPLE_PATH).mislabeled)
    assert flagged and summary["labels"]["excluded_ids"] == flagged
    assert summary["labels"]["valid"] + summary["labels"]["excluded"] == len(RECORDS)
    assert sum(summary["labels"]["excluded_by_reason"].values()) == len(flagged)
    # The label copied is right on every valid one: no excluded label drags a metric down.
    for protocol in ("first", "final"):
        numbers = summary["protocols"][protocol]
        assert numbers["exact_match"] == numbers["routing_accuracy"] == numbers["ast_score"] == 1.0
    assert summary["exact_match_as_written"] == 1.0
    assert all(c["accuracy"] in (None, 1.0) for c in summary["by_component"]["first"].values())


def test_excluded_labels_move_no_argument_metric(tmp_path: Path) -> None:
    """Whatever is predicted for an invalid label, the argument metrics stay where the valid ones put them."""
    invalid = set(load_paper_dataset(PAPER_EXAMPLE_PATH).mislabeled)
    wrong = {"target_collection": "Nowhere"}
    base = scored(predictions_file(tmp_path / "a.json", lambda i, t: t if i % 2 else wrong))
    other = scored(predictions_file(tmp_path / "b.json", lambda i, t: wrong if i in invalid else t if i % 2 else wrong))
    keys = [*Arguments().protocol_numbers([], ScoringProtocol.FIRST), "exact_match_as_written", "by_component"]
    assert base["labels"] == other["labels"]
    for key in keys:
        assert [base["protocols"][p].get(key, base.get(key)) for p in ("first", "final")] == [
            other["protocols"][p].get(key, other.get(key)) for p in ("first", "final")
        ]
    # the no-tool rate reads no label: it counts every question
    none = scored(predictions_file(tmp_path / "c.json", lambda i, t: None if i in invalid else as_loaded(t)))
    assert none["no_tool_rate"] == len(invalid) / len(RECORDS)


def test_a_prediction_is_checked_against_the_schema_the_file_carries(tmp_path: Path) -> None:
    """A number property used as text is rejected offline, as the executor rejects it on the loaded set
    (a schema read off the calls gave it the kind of the slot that named it)."""
    index, label = next(
        (i, r["query"]) for i, r in enumerate(RECORDS) if r["query"]["integer_property_filter"] and i % 2 == 0
    )
    number = label["integer_property_filter"]["property_name"]
    as_text = {"target_collection": label["target_collection"], "text_property_filter": {
        "property_name": number, "operator": "=", "value": "4"}}  # fmt: skip
    path = predictions_file(tmp_path / "p.json", lambda i, t: as_text if i == index else t)
    read = read_predictions(path)
    assert not unknown_schemas(read.records, read.schemas)
    [record] = [r for r in rescore(read.records, None, schemas=read.schemas) if r.id == paper_case_id(index)]
    assert record.scores.invalid_label is None
    assert record.scores.first.routing and not record.scores.first.exact_match and record.scores.first.ast_score == 0


def test_a_file_without_a_schema_is_named(tmp_path: Path) -> None:
    path = predictions_file(tmp_path / "p.json", lambda _i, t: t)
    payload = json.loads(path.read_text())
    for entry in payload["detailed_results"]:
        entry["ground_truth_query"]["database_schema"] = "{}"
    path.write_text(json.dumps(payload))
    read = read_predictions(path)
    assert not read.schemas and len(unknown_schemas(read.records, read.schemas)) == len(RECORDS)
