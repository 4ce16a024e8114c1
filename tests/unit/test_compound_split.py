"""The `compound` split and the near misses of conditions: the committed file is what the composer writes,
every question needs the compound tool, and each condition of a label is mutated on its own."""

from __future__ import annotations

import hashlib
from typing import Any

from executors import compare_results
from executors.arguments import CompoundQueryArguments
from executors.vocabulary import ToolOperations
from fixtures.authoring.compound import CompoundComposer, compose
from fixtures.authoring.mutants import derive_mutants
from fixtures.datasets import SPLITS_DIR, read_dataset, read_meta
from fixtures.datasets.cases import operations_needed, operations_of

CALL: dict[str, Any] = {
    "collection_name": "Reservations",
    "conditions": [
        {"property_name": "occasion", "operator": "=", "value": "Anniversary"},
        {"property_name": "reservationDate", "operator": "=", "value": "2025-03"},
        {"property_name": "partySize", "operator": "between", "value": 2, "value_to": 5},
    ],
    "integer_property_aggregation": {"property_name": "partySize", "metrics": "MEAN"},
}


def test_the_compound_split_is_what_the_composer_writes() -> None:
    """60 questions (12 per use case) composed from the data; the committed file and its meta agree."""
    path = SPLITS_DIR / "compound.jsonl"
    assert [case.to_json_line() for case in compose()] == path.read_text().splitlines()
    assert read_meta(path).sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    cases = read_dataset("compound").cases
    assert len(cases) == 60 and operations_needed(cases) is ToolOperations.COMPOUND
    calls = [c.ground_truth.to_tool_arguments() for c in cases]
    assert all(operations_of(call) is ToolOperations.COMPOUND for call in calls)
    conditions = [cond for call in calls for cond in call["conditions"]]
    operators = {cond["operator"] for cond in conditions}
    assert {"=", "!=", "LIKE", "between"} <= operators
    assert sum(call.get("match") == "any" for call in calls) >= 10  # "or"
    assert sum(len(call["conditions"]) >= 2 for call in calls) >= 40
    dated = [c for c in conditions if isinstance(c["value"], str) and c["value"][:4].isdigit()]
    assert len(dated) >= 10
    assert not any('"' in c.query or "_" in c.query for c in cases)  # no quoted arguments, no property names


def test_each_condition_is_mutated_on_its_own_and_match_is_flipped() -> None:
    composer = CompoundComposer("restaurants")
    mutants, skipped = derive_mutants(CompoundQueryArguments.model_validate(CALL), composer.context)
    fields = {m.field for m in mutants}
    for index in range(3):
        assert f"conditions[{index}]" in fields  # dropped, the others kept
        assert f"conditions[{index}].value" in fields
    assert "conditions[0].operator" in fields and "conditions[1].operator" in fields
    assert "conditions[2].value_to" in fields  # a between's end moves too
    assert "match" in fields
    assert {m.component for m in mutants if m.field.startswith("conditions")} == {"conditions"}
    moved = next(m for m in mutants if m.field == "conditions[1].value")
    assert moved.after in {"2025-04", "2025-02"}
    dropped = next(m for m in mutants if m.field == "conditions[0]").arguments.to_tool_arguments()
    assert [c["property_name"] for c in dropped["conditions"]] == ["reservationDate", "partySize"]
    # `=` and `LIKE` are not each other's near miss on text: the tokenizer makes them agree.
    assert not any(m.field == "conditions[0].operator" and m.after == "LIKE" for m in mutants)
    assert "operator:conditions[2].operator" in skipped  # a between takes no other operator as written


def test_every_label_of_the_split_tells_each_near_miss_apart_on_the_data() -> None:
    """What the composer checked, checked again from the file: each mutant gives another result."""
    for name in ("restaurants", "visual_art"):
        composer = CompoundComposer(name)
        for case in read_dataset("compound").cases:
            if case.use_case != name:
                continue
            truth = composer.run(case.ground_truth.to_tool_arguments())
            mutants, _ = derive_mutants(case.ground_truth, composer.context)
            assert mutants, case.id
            for mutant in mutants:
                other = composer.run(mutant.arguments.to_tool_arguments())
                assert compare_results(truth, other), (case.id, mutant.description)
