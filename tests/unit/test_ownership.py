"""The ownership marker and the logical-to-physical names, without a server (tests/integration/test_ownership.py
runs them against a real Weaviate)."""

from __future__ import annotations

import pytest

from executors.ownership import (
    CollectionNames,
    Conflict,
    InvalidNamespace,
    NotOurCollection,
    check_namespace,
    mark,
    marker_of,
    paper_dataset,
    unmarked,
)
from fixtures.datasets import PAPER_EXAMPLE_PATH, load_paper_dataset
from fixtures.use_cases import get_use_case
from tests.conftest import run_cli


def test_the_marker_is_read_back_and_stripped_only_at_the_end() -> None:
    text = mark("Restaurants in town.", "usecase/restaurants")
    assert text == "Restaurants in town. [dbgorilla-live: usecase/restaurants]"
    assert marker_of(text) == "usecase/restaurants" and unmarked(text) == "Restaurants in town."
    assert mark(text, "paper/x.json") == "Restaurants in town. [dbgorilla-live: paper/x.json]", "never two markers"
    assert marker_of(mark(None, "smoke")) == "smoke" and unmarked(mark(None, "smoke")) == ""
    # a user's description that merely mentions the project, or brackets, is not ours
    for description in (None, "", "[dbgorilla-live: x] then more text", "notes [dbgorilla: usecase/x]"):
        assert marker_of(description) is None
        assert unmarked(description) == (description or "")


def test_physical_names_per_dataset_and_namespace() -> None:
    assert CollectionNames.for_dataset("usecase/restaurants").physical("Restaurants") == "Restaurants"
    paper = CollectionNames.for_dataset(paper_dataset("/some/dir/data.json"))
    assert paper.physical("Restaurants") == "Paper_Restaurants" and paper.logical("Paper_Restaurants") == "Restaurants"
    assert paper.logical("Restaurants") is None and paper.logical("Paper_") is None
    bench = CollectionNames.for_dataset("usecase/courses", "bench")
    assert bench.physical("Instructors") == "Bench_Instructors" and bench.logical("Instructors") is None
    assert CollectionNames.for_dataset("paper/a.json", "Bench").physical("Menus") == "Bench_Paper_Menus"
    assert check_namespace(" ") == "" and check_namespace("team2") == "Team2"
    for bad in ("2team", "my-space", "a_b", "x" * 41):
        with pytest.raises(InvalidNamespace):
            check_namespace(bad)


def test_each_dataset_names_its_marker() -> None:
    assert get_use_case("courses").dataset == "usecase/courses"
    imported = load_paper_dataset(PAPER_EXAMPLE_PATH).use_cases
    assert {u.dataset for u in imported} == {"paper/paper_example.json"}
    assert imported[0].names().physical("Restaurants") == "Paper_Restaurants"


def test_a_refusal_names_the_collections_and_the_ways_out() -> None:
    foreign = Conflict("Instructors", "Instructors", "usecase/courses", None, 3)
    message = str(NotOurCollection([foreign]))
    assert message.startswith("refusing to load into Instructors: Instructors (3 objects) was not created")
    assert "Nothing was changed" in message and "--namespace NAME" in message
    assert message.endswith("`dbgorilla load --use-case courses --replace Instructors`")
    other = Conflict("Paper_Menus", "Menus", "paper/b.json", "paper/a.json", 100)
    both = str(NotOurCollection([foreign, other], action="use"))
    assert "Paper_Menus (100 objects, holding paper/a.json) holds another dataset of dbgorilla-live" in both
    assert both.endswith(
        "`dbgorilla load --use-case courses --dataset b.json --replace Instructors --replace Paper_Menus`"
    )


def test_bad_namespace_and_replace_arguments_are_usage_errors_before_any_connection() -> None:
    env = {"DBGORILLA_WEAVIATE_PORT": "9", "PATH": "/usr/bin:/bin"}
    bad = run_cli("load", "--use-case", "courses", "--namespace", "my-space", env=env)
    assert bad.returncode == 2 and "namespace" in bad.stderr
    typo = run_cli("load", "--use-case", "courses", "--replace", "Instructor", env=env)
    assert typo.returncode == 2 and "Instructor" in typo.stderr and "Instructors" in typo.stderr
