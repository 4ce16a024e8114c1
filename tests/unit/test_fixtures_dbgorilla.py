"""DBGorilla-format import: schemas become use cases, and labels that cannot run are flagged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from executors import PropertyKind
from fixtures import PAPER_EXAMPLE_PATH, generate_objects, load_paper_dataset
from tests.conftest import fresh_settings, run_cli, settings_env

#: The records of the example file that were written wrong on purpose (see the file's queries).
MISLABELED = [1, 3, 4, 6, 7, 9]


def test_the_example_flags_exactly_the_mislabeled_records() -> None:
    dataset = load_paper_dataset(PAPER_EXAMPLE_PATH)
    assert len(dataset.records) == 10
    assert dataset.mislabeled == MISLABELED
    fields = {issue.record: issue.field for issue in dataset.issues}
    assert fields == {
        1: "text_property_filter",
        3: "integer_property_filter",
        4: "text_property_aggregation",
        6: "target_collection",
        7: "integer_property_filter",
        9: "groupby_property",
    }
    assert "text filter on boolean property 'openNow'" in str(dataset.records[1].issues[0])


def test_runnable_labels_become_tool_arguments_with_weaviate_names() -> None:
    dataset = load_paper_dataset(PAPER_EXAMPLE_PATH)
    runnable = [r for r in dataset.records if r.runnable]
    assert all(r.arguments is not None for r in runnable)
    assert all(r.arguments is None for r in dataset.records if not r.runnable)
    staff = dataset.records[8].arguments
    assert staff is not None
    assert staff.to_tool_arguments() == {
        "collection_name": "StaffMembers",
        "boolean_property_filter": {"property_name": "isOnDuty", "operator": "=", "value": True},
        "integer_property_aggregation": {"property_name": "experienceYears", "metrics": "MEAN"},
    }


def test_schemas_are_deduplicated_into_use_cases_the_generator_can_fill() -> None:
    dataset = load_paper_dataset(PAPER_EXAMPLE_PATH)
    assert [u.name for u in dataset.use_cases] == ["dbgorilla-000", "dbgorilla-001"]
    assert [r.use_case for r in dataset.records].count("dbgorilla-001") == 2
    staff = dataset.use_cases[1].collections[0]
    assert [p.name for p in staff.properties] == ["staffName", "experienceYears", "isOnDuty"]
    assert [p.kind for p in staff.properties] == [PropertyKind.TEXT, PropertyKind.NUMBER, PropertyKind.BOOLEAN]
    for case in dataset.use_cases:
        for collection in case.collections:
            objects = list(generate_objects(collection, 20))
            assert len(objects) == 20 and all(len(o.properties) == len(collection.properties) for o in objects)


def test_wrong_value_types_bad_metrics_and_unsupported_types_are_reported(tmp_path: Path) -> None:
    schema = {
        "weaviate_collections": [
            {
                "name": "items",
                "properties": [
                    {"name": "title", "data_type": ["string"], "description": "Title"},
                    {"name": "tags", "data_type": ["text[]"], "description": "Tags"},
                    {"name": "price", "data_type": ["number"], "description": "Price"},
                    {"name": "inStock", "data_type": ["boolean"], "description": "In stock"},
                ],
                "envisioned_use_case_overview": "A shop.",
            }
        ]
    }

    def record(**query: object) -> dict:
        base = {"corresponding_natural_language_query": "q", "target_collection": "Items"}
        return {"database_schema": json.dumps(schema), "query": base | query}

    records = [
        record(boolean_property_filter={"property_name": "inStock", "operator": "=", "value": "yes"}),
        record(text_property_aggregation={"property_name": "title", "metrics": "MEAN"}),
        record(integer_property_filter={"property_name": "price", "operator": ">", "value": True}),
        record(
            text_property_aggregation={
                "property_name": "title",
                "metrics": "TOP_OCCURRENCES",
                "top_occurrences_limit": 0,
            }
        ),
        record(integer_property_aggregation={"property_name": "price", "metrics": "SUM"}),
    ]
    path = tmp_path / "shop.json"
    path.write_text(json.dumps(records))
    dataset = load_paper_dataset(path)
    messages = {r.index: [i.message for i in r.issues if i.field != "database_schema"] for r in dataset.records}
    assert "is not a boolean" in messages[0][0]
    assert "metric 'MEAN'" in messages[1][0]
    assert "is not a number" in messages[2][0]
    assert "top_occurrences_limit" in messages[3][0]
    assert messages[4] == []
    assert all(any("unsupported data type" in i.message for i in r.issues) for r in dataset.records)
    assert [p.name for p in dataset.use_cases[0].collections[0].properties] == ["title", "price", "inStock"]
    assert dataset.use_cases[0].collections[0].name == "Items"


def test_a_file_that_is_not_a_list_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text("{}")
    with pytest.raises(ValueError, match="JSON list"):
        load_paper_dataset(path)


def test_lint_dataset_command(tmp_path: Path) -> None:
    env = settings_env(fresh_settings(tmp_path))
    result = run_cli("lint-dataset", str(PAPER_EXAMPLE_PATH), "--json", env=env)
    assert result.returncode == 1, result.stderr
    payload = json.loads(result.stdout)
    assert payload["mislabeled"] == MISLABELED and payload["records"] == 10
