"""The committed benchmark: complete, versioned, type-correct, and distinguishing on the default data."""

from __future__ import annotations

import re
from collections import Counter
from functools import cache

import pytest

from executors import CollectionSchema, DatabaseSchema, PropertySchema, ReferenceExecutor
from fixtures import (
    DEFAULT_OBJECTS_PER_COLLECTION,
    DEFAULT_SEED,
    Case,
    Complexity,
    case_schema_issues,
    generate_objects,
    get_use_cases,
    load_split,
    read_meta,
    split_path,
)
from fixtures.authoring.compose import NATURAL_ID_OFFSET, VERSION, combinations, compose
from fixtures.authoring.sanity import filtered, the_filter
from fixtures.datasets import file_sha256, render
from llm.encoder import MiniLMEncoder

#: The explicit split: the wording that spells out arguments (the natural split is tested below).
BENCHMARK_PATH = split_path("explicit")
RECORDS = load_split(BENCHMARK_PATH)
NATURAL_PATH = split_path("natural")
NATURAL = load_split(NATURAL_PATH)
NON_SEARCH = [r for r in RECORDS if r.ground_truth.search_query is None]


@cache
def default_objects(collection: str) -> list[dict]:
    for case in get_use_cases():
        spec = case.get_collection(collection)
        if spec is not None:
            return [o.properties for o in generate_objects(spec, DEFAULT_OBJECTS_PER_COLLECTION, DEFAULT_SEED)]
    raise KeyError(collection)


def test_315_records_63_per_use_case_21_per_collection() -> None:
    assert len(RECORDS) == 315
    assert Counter(r.use_case for r in RECORDS) == dict.fromkeys(get_use_case_names(), 63)
    assert set(Counter(r.collection for r in RECORDS).values()) == {21}
    assert len(Counter(r.collection for r in RECORDS)) == 15


def get_use_case_names() -> list[str]:
    return [case.name for case in get_use_cases()]


@pytest.mark.parametrize("use_case", ["courses", "health_clinics", "restaurants", "travel_planning", "visual_art"])
def test_every_combination_is_present_in_each_use_case(use_case: str) -> None:
    def signature(record: Case) -> tuple:
        g = record.ground_truth
        kind = lambda *fields: next((f.split("_")[0] for f in fields if getattr(g, f) is not None), None)  # noqa: E731
        return (
            g.search_query is not None,
            kind("integer_property_filter", "text_property_filter", "boolean_property_filter"),
            kind("integer_property_aggregation", "text_property_aggregation", "boolean_property_aggregation"),
            g.groupby_property is not None,
        )

    present = Counter(signature(r) for r in RECORDS if r.use_case == use_case)
    assert sorted(present, key=str) == sorted(combinations(), key=str)
    assert set(present.values()) == {1}
    assert len(present) == 63


def test_ids_versions_and_meta_header() -> None:
    meta = read_meta(BENCHMARK_PATH)
    assert meta.version == VERSION and meta.records == len(RECORDS)
    assert meta.seed == DEFAULT_SEED and meta.objects_per_collection == DEFAULT_OBJECTS_PER_COLLECTION
    assert meta.sha256 == file_sha256(BENCHMARK_PATH), "edit the templates and re-run the composer"
    assert all(r.version == VERSION for r in RECORDS)
    for use_case in get_use_case_names():
        ids = [r.id for r in RECORDS if r.use_case == use_case]
        assert ids == [f"{use_case}-{n:03d}" for n in range(1, 64)]


def test_the_committed_file_is_what_the_composer_writes() -> None:
    assert BENCHMARK_PATH.read_text() == render(compose(MiniLMEncoder().encode))


def test_the_file_round_trips_through_the_models() -> None:
    assert BENCHMARK_PATH.read_text() == "".join(r.to_json_line() + "\n" for r in RECORDS)


def test_complexity_and_components_match_the_ground_truth() -> None:
    for record in RECORDS:
        used = record.ground_truth.components()
        assert len(record.components) == len(used)
        expected = {1: Complexity.SIMPLE, 2: Complexity.MODERATE}.get(len(used), Complexity.COMPLEX)
        assert record.complexity is expected, record.id
    assert Counter(r.complexity for r in RECORDS) == {
        Complexity.SIMPLE: 40,
        Complexity.MODERATE: 110,
        Complexity.COMPLEX: 165,
    }


def test_every_ground_truth_type_checks_against_its_schema() -> None:
    assert [issue for record in RECORDS for issue in case_schema_issues(record)] == []


def test_queries_are_unique_and_name_their_values() -> None:
    assert len({r.query for r in RECORDS}) == len(RECORDS)
    for record in RECORDS:
        g, query = record.ground_truth, record.query
        if g.search_query:
            assert f'"{g.search_query}"' in query, record.id
        if g.integer_property_filter:
            value = g.integer_property_filter.value
            assert re.search(rf"\b{value:g}\b", query), record.id
        if g.text_property_filter:
            assert g.text_property_filter.value.strip("*") in query, record.id
        if g.text_property_aggregation and g.text_property_aggregation.top_occurrences_limit:
            limit = g.text_property_aggregation.top_occurrences_limit
            assert ("is the most common" if limit == 1 else f"{limit} most common") in query, record.id
        assert query.endswith((".", "?")) and query[0].isupper()


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r.id)
def test_labels_are_distinguishing_on_the_default_data(record: Case) -> None:
    objects = default_objects(record.collection)
    g = record.ground_truth
    kept = filtered(objects, g)
    if the_filter(g) is not None:
        assert 0 < len(kept) < len(objects), "a filter keeps some but not all objects"
    if g.text_property_filter:
        assert kept == filtered(objects, g, "field"), "same answer under word and field tokenization"
    if g.groupby_property:
        assert len({o[g.groupby_property] for o in kept}) >= 2
    if g.text_property_aggregation and g.text_property_aggregation.top_occurrences_limit:
        values = {o[g.text_property_aggregation.property_name] for o in kept}
        assert len(values) > g.text_property_aggregation.top_occurrences_limit
    if g.boolean_property_aggregation and g.boolean_property_aggregation.metrics.value != "COUNT":
        assert len({o[g.boolean_property_aggregation.property_name] for o in kept}) == 2


def reference_executor() -> ReferenceExecutor:
    schemas, objects = [], {}
    for case in get_use_cases():
        for spec in case.collections:
            properties = tuple(
                PropertySchema(
                    name=p.name,
                    data_type=p.kind.value,
                    description=p.description,
                    tokenization=p.effective_tokenization.value if p.kind.value == "text" else None,
                )
                for p in spec.properties
            )
            schemas.append(CollectionSchema(name=spec.name, description=spec.description, properties=properties))
            objects[spec.name] = [{"uuid": str(o.uuid), "properties": o.properties} for o in generate_objects(spec)]
    return ReferenceExecutor(DatabaseSchema(collections=tuple(sorted(schemas, key=lambda s: s.name))), objects)


def test_the_reference_executor_gives_non_vacuous_answers_without_search() -> None:
    """Weaviate's semantics in pure Python: every non-search label answers with something real."""
    executor = reference_executor()
    vacuous = []
    for record in NON_SEARCH:
        result = executor.execute(record.ground_truth)
        metrics = [v for per in result.aggregations.values() for v in per.values()]
        groups = result.groups or {}
        if not (result.objects or any(m not in (None, []) for m in metrics) or len(groups) >= 2):
            vacuous.append(record.id)
        if the_filter(record.ground_truth) is not None and result.total_count is not None:
            assert 0 < result.total_count < DEFAULT_OBJECTS_PER_COLLECTION, record.id
    assert len(NON_SEARCH) == 155
    assert vacuous == []


# ----------------------------------------------------------------------------------------------
# The natural split: the same combinations on the same data, worded as users ask


def test_natural_split_is_the_default_and_what_the_composer_writes() -> None:
    assert split_path() == NATURAL_PATH
    meta = read_meta(NATURAL_PATH)
    assert meta.version == VERSION and meta.records == len(NATURAL) == 315
    assert meta.sha256 == file_sha256(NATURAL_PATH)
    assert NATURAL_PATH.read_text() == render(compose(MiniLMEncoder().encode, split="natural"))
    for use_case in get_use_case_names():
        ids = [r.id for r in NATURAL if r.use_case == use_case]
        assert ids == [f"{use_case}-{NATURAL_ID_OFFSET + n:03d}" for n in range(1, 64)]
    # the same combination per position, so results of the two splits compare component by component
    for explicit, natural in zip(RECORDS, NATURAL, strict=True):
        assert explicit.components == natural.components and explicit.collection == natural.collection


def test_natural_questions_read_like_users_questions() -> None:
    cues = re.compile(r'"|semantically|matching the search|relevant to|best match|starts with|ends with|contains the')
    openings = Counter(" ".join(r.query.split()[:2]) for r in NATURAL)
    assert len(openings) >= 40, openings
    assert max(openings.values()) <= 0.1 * len(NATURAL)
    for record in NATURAL:
        if record.ground_truth.search_query:  # worded into the sentence, never quoted
            assert f'"{record.ground_truth.search_query}"' not in record.query, record.id
    # a text filter no natural phrasing can label keeps its explicit wording: few, and counted here
    cued = [r.id for r in NATURAL if cues.search(r.query)]
    assert all(NATURAL[[r.id for r in NATURAL].index(i)].ground_truth.text_property_filter for i in cued)
    assert len(cued) <= 0.1 * len(NATURAL), cued
