"""The five use cases: shape, descriptions and vocabularies that keep filter labels unambiguous."""

from __future__ import annotations

import itertools

import pytest

from executors import PropertyKind
from fixtures import TextRole, get_use_case, get_use_cases, use_case_names
from fixtures.authoring.sanity import words
from fixtures.hints import name_words, resolve_hints, singular_noun

FIVE = ["courses", "health_clinics", "restaurants", "travel_planning", "visual_art"]


def test_the_five_use_cases_are_there() -> None:
    assert use_case_names() == FIVE


@pytest.mark.parametrize("name", FIVE)
def test_each_use_case_has_three_described_collections_of_four_properties(name: str) -> None:
    case = get_use_case(name)
    assert case.overview and case.title
    assert len(case.collections) == 3
    for collection in case.collections:
        assert collection.name[0].isupper() and collection.name.isalnum()
        assert len(collection.description) > 40
        assert len(collection.properties) == 4
        assert all(len(p.description) > 10 for p in collection.properties)
        kinds = sorted(p.kind.value for p in collection.properties)
        assert kinds == ["boolean", "number", "text", "text"]
        assert collection.text_with_role(TextRole.SHORT) is not None
        assert collection.text_with_role(TextRole.RICH) is not None


def test_collection_names_are_unique_across_use_cases() -> None:
    names = [c.name for case in get_use_cases() for c in case.collections]
    assert len(names) == len(set(names)) == 15


@pytest.mark.parametrize("name", FIVE)
def test_short_values_never_contain_each_other(name: str) -> None:
    """Under word tokenization `=` matches all tokens of the value: no value may hide in another."""
    for collection in get_use_case(name).collections:
        short = collection.text_with_role(TextRole.SHORT)
        assert short is not None
        values = resolve_hints(short, collection).values or []
        assert 5 <= len(values) <= 15 and len(set(values)) == len(values)
        for a, b in itertools.permutations(values, 2):
            assert not set(words(a)) <= set(words(b)), (collection.name, a, b)


@pytest.mark.parametrize("name", FIVE)
def test_every_property_has_complete_generation_hints(name: str) -> None:
    for collection in get_use_case(name).collections:
        for prop in collection.properties:
            assert prop.generation is not None, (collection.name, prop.name)
            hints = resolve_hints(prop, collection)
            if prop.kind is PropertyKind.NUMBER:
                assert hints.minimum is not None and hints.maximum is not None
            elif prop.kind is PropertyKind.BOOLEAN:
                assert hints.true_ratio is not None and 0.2 <= hints.true_ratio <= 0.8


def test_describe_mentions_every_property() -> None:
    case = get_use_case("restaurants")
    text = case.describe()
    for collection in case.collections:
        assert collection.name in text
        assert all(p.name in text for p in collection.properties)


def test_with_prefix_renames_collections_only() -> None:
    case = get_use_case("courses").with_prefix("Test")
    assert [c.name for c in case.collections] == ["TestCourses", "TestInstructors", "TestEnrollments"]
    assert case.collections[0].properties == get_use_case("courses").collections[0].properties


def test_name_helpers() -> None:
    assert name_words("averageWaitMinutes") == ["average", "wait", "minutes"]
    assert name_words("Experience_Years") == ["experience", "years"]
    assert singular_noun("MenuItems") == "menu item"
    assert singular_noun("Activities") == "activity"
    assert singular_noun("Class") == "class"
