"""Citations in answers: what counts as one, when it was received, and that ids are never numbers."""

from __future__ import annotations

import uuid

import pytest

from agent.citations import check_citations, cited_ids, received_uuids, strip_citations
from evaluation.answers import AnswerKey, KeyNumber, grade, numbers_in
from executors import QueryResult, ResultObject, short_id

A = "1a2b3c4d-0000-4000-8000-000000000001"
B = "9f8e7d6c-0000-4000-8000-000000000002"
DIGITS = "12345678-0000-4000-8000-000000000003"


def result(*uuids: str) -> dict:
    listed = QueryResult(
        collection="Restaurants",
        operator_class="fetch_objects",
        objects=[ResultObject(uuid=u, properties={"name": "x"}) for u in uuids],
    )
    return listed.model_dump(mode="json")


def test_the_tool_text_shows_the_short_id_the_answer_cites() -> None:
    text = QueryResult.model_validate(result(A)).to_llm_text()
    assert f"[{short_id(A)}]" in text
    assert cited_ids(f"Try Luigi's [{short_id(A)}].") == [short_id(A)]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (f"Luigi's [{short_id(A)}] and Mario's [{short_id(B)}]", [short_id(A), short_id(B)]),
        (f"see {A}", [A]),
        (f"see {A.upper()}", [A]),
        ("bare 1a2b3c4d cited", ["1a2b3c4d"]),
        (f"[{short_id(DIGITS)}] bracketed digits", ["12345678"]),
        ("the date 20140101 is a number", []),
        ("deadbeefs is a word, 1a2b3c4 is too short", []),
        (f"twice [{short_id(A)}] [{short_id(A)}]", [short_id(A)]),
        ("", []),
    ],
)
def test_what_counts_as_a_citation(answer: str, expected: list[str]) -> None:
    assert cited_ids(answer) == expected


def test_precision_counts_ids_the_run_received() -> None:
    received = received_uuids([result(A), None, result(B)])
    assert received == {A, B}
    both = check_citations(f"[{short_id(A)}] and {B}", received)
    assert both.precision == 1.0
    invented = check_citations(f"[{uuid.uuid4().hex[:8]}] and [{uuid.uuid4().hex[:8]}]", received)
    assert invented.precision == 0.0
    half = check_citations(f"[{short_id(A)}] and [{'0' * 7}f]", received)
    assert half.precision == 0.5 and half.received == [short_id(A)]
    assert check_citations("no ids here", received).precision is None


def test_group_samples_are_received_too() -> None:
    grouped = result()
    grouped["groups"] = {"Thai": {"value": "Thai", "count": 1, "samples": [{"uuid": A, "properties": {}}]}}
    assert received_uuids([grouped]) == {A}


def test_a_full_uuid_must_match_exactly_a_short_one_as_a_prefix() -> None:
    received = {A}
    assert check_citations(A[:-1] + "9", received).precision == 0.0
    assert check_citations(f"[{A[:8]}]", received).precision == 1.0


def test_cited_ids_are_never_read_as_numbers() -> None:
    answer = f"There are 3 of them: [{short_id(DIGITS)}], [4e5d6c7b] and [1a2b3c4d]."
    assert [n.value for n in numbers_in(answer)] == [3.0]
    assert strip_citations(answer).count("[") == 0
    key = AnswerKey(numbers=[KeyNumber(value=3)])
    assert grade(answer, key, "How many are there?").correct is True
