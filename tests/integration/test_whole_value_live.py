"""`round = "Jeopardy!"` on a word-tokenized property counts the "Jeopardy!" objects only, live and in
the reference, and the program shown says why it has `not_equal` filters (`executors.whole_value`)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from weaviate.classes.config import Configure, DataType, Property, Tokenization
from weaviate.classes.data import DataObject
from weaviate.classes.query import Filter

from executors import ReferenceExecutor, WeaviateExecutor, compare_results
from executors.testing import unique_name

pytestmark = pytest.mark.integration

ROUNDS = {"Jeopardy!": 3, "Double Jeopardy!": 4, "Final Jeopardy!": 2}


@pytest.fixture(scope="module")
def clues(weaviate_stack: Any) -> Iterator[tuple[Any, str]]:
    """A throwaway collection: `round` word-tokenized (Weaviate's default), a few objects per round."""
    from dbgorilla.connection import connect

    client = connect(weaviate_stack.settings)
    name = unique_name("WholeValue")
    rounds = [value for value, count in ROUNDS.items() for _ in range(count)]
    try:
        collection = client.collections.create(
            name,
            vector_config=Configure.Vectors.self_provided(),
            properties=[
                Property(name="round", data_type=DataType.TEXT, tokenization=Tokenization.WORD),
                Property(name="points", data_type=DataType.INT),
            ],
        )
        collection.data.insert_many(
            [
                DataObject(uuid=uuid.UUID(int=i + 1), properties={"round": value, "points": 200 * i}, vector=[1.0, 0.0])
                for i, value in enumerate(rounds)
            ]
        )
        yield client, name
    finally:
        client.collections.delete(name)
        client.close()


def count_call(name: str, value: str) -> dict[str, Any]:
    flt = {"property_name": "round", "operator": "=", "value": value}
    return {"collection_name": name, "text_property_filter": flt}


def test_equal_counts_the_whole_value_live_and_in_the_reference(clues: tuple[Any, str]) -> None:
    client, name = clues
    live = WeaviateExecutor(client)
    reference = ReferenceExecutor.from_weaviate(client, [name])
    expected, actual = reference.execute(count_call(name, "Jeopardy!")), live.execute(count_call(name, "Jeopardy!"))
    assert actual.total_count == expected.total_count == ROUNDS["Jeopardy!"]
    assert {obj.properties["round"] for obj in actual.objects} == {"Jeopardy!"}
    assert compare_results(expected, actual) == []
    assert expected.calls == actual.calls
    program = actual.program()
    assert "Whole value: word tokenization would also match 'Double Jeopardy!', 'Final Jeopardy!'" in program
    assert "Filter.by_property('round').not_equal('double')" in program
    assert "Filter.by_property('round').not_equal('final')" in program
    # A longer value is itself whole already: nothing is added.
    double = live.execute(count_call(name, "Double Jeopardy!"))
    assert double.total_count == ROUNDS["Double Jeopardy!"]
    assert "not_equal" not in double.program()


def test_not_equal_on_a_whole_other_value_would_drop_every_object(clues: tuple[Any, str]) -> None:
    """Why the exclusion names words: Weaviate's `not_equal("Double Jeopardy!")` on a word-tokenized
    property means "holds neither `double` nor `jeopardy`", so "Jeopardy!" would go too."""
    client, name = clues
    aggregate = client.collections.use(name).aggregate
    equal = Filter.by_property("round").equal("Jeopardy!")
    naive = Filter.all_of([equal, Filter.by_property("round").not_equal("Double Jeopardy!")])
    assert aggregate.over_all(filters=equal, total_count=True).total_count == sum(ROUNDS.values())
    assert aggregate.over_all(filters=naive, total_count=True).total_count == 0
