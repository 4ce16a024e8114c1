"""The query memory: examples read off a run of a user's own questions, and only those the offered tool can write."""

from __future__ import annotations

from pathlib import Path

from agent.strategies.examples import SolvedExample, fitting
from evaluation.public_run import PublicRecord
from evaluation.strategies import examples_from_run

CALL = {
    "collection_name": "Cars",
    "text_property_filter": {"property_name": "origin", "operator": "=", "value": "Japan"},
}


def _record(id: str, **fields: object) -> PublicRecord:
    base = {"id": id, "dataset": "cars", "kind": "single", "query": f"question {id}", "collections": ["Cars"]}
    return PublicRecord.model_validate(
        base | {"model": "m", "strategy": "s", "correct": True, "calls": [CALL]} | fields
    )


def test_a_run_of_own_questions_gives_its_right_single_questions_of_one_call(tmp_path: Path) -> None:
    records = [
        _record("cars-001"),
        _record("cars-002", correct=False),
        _record("cars-003", kind="multi"),
        _record("cars-004", refused=True),
        _record("cars-005", calls=[CALL, CALL]),
        _record("cars-006", calls=[{"raw": "{not json"}]),
        _record("cars-007", kind="unanswerable", calls=[]),
    ]
    run = tmp_path / "runA"
    run.mkdir()
    (run / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8")
    examples = examples_from_run(run)
    assert [(e.question, e.use_case, e.source, e.arguments) for e in examples] == [
        ("question cars-001", "cars", "run/runA/cars-001", CALL)
    ]


def test_an_example_the_offered_tool_cannot_write_is_not_shown() -> None:
    paper = {"properties": {"collection_name": {}, "text_property_filter": {}}}
    near = SolvedExample(question="q1", arguments={"collection_name": "A", "conditions": []})
    far = SolvedExample(question="q2", arguments=CALL)
    assert [e.question for e in fitting([near, far], paper)] == ["q2"]
    assert [e.question for e in fitting([near, far], None)] == ["q1", "q2"]
