"""The canonical result: normalisation, JSON round trip, comparison and the bounded LLM rendering."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from executors import GroupResult, QueryResult, ResultObject, TopOccurrence, compare_results
from executors.results import group_key, normalize_property_value, number_text


def sample_result(objects: int = 3, text: str = "pizza") -> QueryResult:
    return QueryResult(
        collection="Restaurants",
        operator_class="filter+aggregate+group_by",
        objects=[
            ResultObject(
                uuid=f"00000000-0000-0000-0000-{i:012d}", properties={"title": f"{text} {i}", "price": 1.5 * i}
            )
            for i in range(objects)
        ],
        aggregations={
            "price": {"MEAN": 2.25, "TYPE": "number"},
            "cuisine": {"TOP_OCCURRENCES": [TopOccurrence(value="Thai", count=3)]},
        },
        group_by="open_late",
        groups={"true": GroupResult(value="true", count=3, aggregations={"price": {"MAX": 4.0}})},
        total_count=3,
        calls=["collection.aggregate.over_all(total_count=True)"],
    )


def test_json_round_trip() -> None:
    result = sample_result()
    again = QueryResult.model_validate_json(result.model_dump_json())
    assert again == result
    assert isinstance(again.aggregations["cuisine"]["TOP_OCCURRENCES"][0], TopOccurrence)
    json.loads(result.model_dump_json())  # plain JSON, no NaN


def test_normalisation_helpers() -> None:
    assert [group_key(v) for v in (True, False, 4, 4.0, 4.5, "Thai", None)] == [
        "true",
        "false",
        "4",
        "4",
        "4.5",
        "Thai",
        "null",
    ]
    assert number_text(1e20) == "1e+20"
    assert normalize_property_value(3) == 3.0 and isinstance(normalize_property_value(3), float)
    assert normalize_property_value(True) is True


def test_compare_results_tolerates_float_noise_only() -> None:
    left = sample_result()
    right = sample_result()
    right.aggregations["price"]["MEAN"] = 2.25 * (1 + 1e-12)
    assert compare_results(left, right) == []
    right.aggregations["price"]["MEAN"] = 2.26
    assert compare_results(left, right) == ["result.aggregations.price.MEAN: expected 2.25, got 2.26"]
    right = sample_result(objects=2)
    assert "result.objects: expected 3 items, got 2" in compare_results(left, right)
    right = sample_result()
    right.groups = {"false": GroupResult(value="false", count=3)}
    assert any("groups" in d for d in compare_results(left, right))


def test_comparable_ignores_scores_calls_and_notes() -> None:
    left = sample_result()
    right = sample_result()
    right.calls = ["something else"]
    right.notes = ["a note"]
    right.objects[0].score = 0.5
    assert compare_results(left, right) == []


def test_llm_text_is_readable() -> None:
    text = sample_result().to_llm_text()
    assert text.splitlines() == [
        "Collection: Restaurants",
        "Total count: 3",
        "Aggregations:",
        '- price: MEAN=2.25, TYPE="number"',
        "- cuisine: TOP_OCCURRENCES=['Thai': 3]",
        "Groups by open_late (1):",
        '- "true": count=3; price MAX=4',
        "Objects (3 shown); cite one by its [id]:",
        '1. [00000000] {title: "pizza 0", price: 0}',
        '2. [00000000] {title: "pizza 1", price: 1.5}',
        '3. [00000000] {title: "pizza 2", price: 3}',
    ]


@settings(max_examples=200, deadline=None)
@given(objects=st.integers(0, 60), text=st.text(max_size=500), max_chars=st.integers(1, 3000))
def test_llm_text_never_exceeds_max_chars(objects: int, text: str, max_chars: int) -> None:
    rendered = sample_result(objects, text).to_llm_text(max_chars=max_chars)
    assert len(rendered) <= max(max_chars, 20)
    if len(sample_result(objects, text).to_llm_text(max_chars=10**9)) > max(max_chars, 20):
        assert "more lines cut" in rendered or len(rendered) == max(max_chars, 20)


def test_long_values_are_cut() -> None:
    text = sample_result(1, "x" * 5000).to_llm_text(max_chars=100_000)
    assert "x" * 150 in text and "x" * 200 not in text


def test_llm_text_says_how_many_objects_it_leaves_out() -> None:
    result = sample_result(8)
    shown = result.to_llm_text(max_objects=5).splitlines()
    assert "Objects (5 shown) (more exist); cite one by its [id]:" in shown
    assert sum(line[:2] in {f"{i}." for i in range(1, 9)} for line in shown) == 5
    assert "Objects (8 shown); cite one by its [id]:" in result.to_llm_text(max_objects=10)


def test_llm_text_rounds_numbers_no_finer_than_the_answer_scorer_reads_them() -> None:
    result = sample_result(0)
    result.aggregations = {"price": {"MEAN": 24.506756756756754, "SUM": 1234.0}, "share": {"PERCENTAGE_TRUE": 0.123456}}
    text = result.to_llm_text()
    assert "MEAN=24.51" in text and "SUM=1234" in text and "PERCENTAGE_TRUE=0.1235" in text


def test_groups_show_counts_and_metrics_but_no_sample_objects() -> None:
    result = sample_result(0)
    result.groups = {
        "true": GroupResult(
            value="true",
            count=3,
            samples=[ResultObject(uuid="00000000-0000-0000-0000-000000000001", properties={"title": "sample"})],
        )
    }
    text = result.to_llm_text()
    assert '- "true": count=3' in text and "sample" not in text


@pytest.mark.parametrize("max_chars", [200, 400])
def test_cut_marker_keeps_whole_lines(max_chars: int) -> None:
    rendered = sample_result(40).to_llm_text(max_chars=max_chars, max_objects=40)
    assert rendered.endswith("more lines cut]")
    full = sample_result(40).to_llm_text(max_chars=10**9, max_objects=40).splitlines()
    assert rendered.splitlines()[:-1] == full[: len(rendered.splitlines()) - 1]


def test_a_listing_says_how_many_of_the_matches_it_shows() -> None:
    listing = QueryResult(
        collection="Restaurants",
        operator_class="fetch_objects",
        objects=[ResultObject(uuid=f"{i:08x}-0000-4000-8000-000000000000") for i in range(10)],
        total_count=253,
        truncated=True,
    )
    assert "Objects (5 of 253 shown) (more exist); cite one by its [id]:" in listing.to_llm_text().splitlines()
