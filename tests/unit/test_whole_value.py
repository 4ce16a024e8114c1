"""A text `=` whose value is stored whole excludes the longer stored values holding its words
(`executors.whole_value`), the same way in the plan, the reference executor and the shown program."""

from __future__ import annotations

import uuid
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from executors import (
    CollectionSchema,
    DatabaseSchema,
    ExecutorOptions,
    FilterSpec,
    PropertySchema,
    ReferenceExecutor,
    Scope,
    ScopeFilter,
    WeaviateExecutor,
    tokenize,
)
from executors._plan import build_plan
from executors.schema import EN_STOPWORDS
from executors.snippet import Snippet
from executors.whole_value import (
    STORED_VALUES_LIMIT,
    StoredValues,
    applies_to,
    distinct_values,
    whole_value,
)

ROUNDS = ["Jeopardy!"] * 3 + ["Double Jeopardy!"] * 4 + ["Final Jeopardy!"] * 2
STORED = ("Double Jeopardy!", "Final Jeopardy!", "Jeopardy!")


def text(tokenization: str | None = "word", **flags: Any) -> PropertySchema:
    return PropertySchema(name="round", data_type="text", tokenization=tokenization, **flags)


def equal(value: str, tokenization: str | None = "word", operator: str = "=", **flags: Any) -> FilterSpec:
    return FilterSpec(prop=text(tokenization, **flags), operator=operator, value=value, slot="text_property_filter")


def schema(tokenization: str = "word") -> DatabaseSchema:
    props = (
        text(tokenization),
        PropertySchema(name="points", data_type="int"),
        text("field").model_copy(update={"name": "season"}),
    )
    return DatabaseSchema(collections=(CollectionSchema(name="Clues", properties=props),))


def objects(rounds: list[str | None]) -> list[dict[str, Any]]:
    """Each round in season 1, except "Final Jeopardy!" (season 2)."""
    return [
        {
            "uuid": str(uuid.UUID(int=i + 1)),
            "properties": {"round": r, "points": 100 * i, "season": "2" if r == "Final Jeopardy!" else "1"},
        }
        for i, r in enumerate(rounds)
    ]


def call(value: str, operator: str = "=") -> dict[str, Any]:
    flt = {"property_name": "round", "operator": operator, "value": value}
    return {"collection_name": "Clues", "text_property_filter": flt}


# ---------------------------------------------------------------------------------------------
# The rule


def test_word_tokenization_finds_the_longer_values_and_the_words_that_exclude_them() -> None:
    whole = whole_value(equal("Jeopardy!"), STORED, EN_STOPWORDS)
    assert whole is not None
    assert whole.others == ("Double Jeopardy!", "Final Jeopardy!")
    assert whole.words == (("double",), ("final",))
    assert [expr.source for expr in whole.exprs()] == [
        "Filter.by_property('round').not_equal('double')",
        "Filter.by_property('round').not_equal('final')",
    ]
    assert [value for value in ROUNDS if whole.keeps(value)] == ["Jeopardy!"] * 3
    assert whole.keeps(None)  # a missing value passes not_equal (the `=` already drops it)


def test_a_longer_value_itself_and_a_value_with_no_longer_one_are_untouched() -> None:
    assert whole_value(equal("Double Jeopardy!"), STORED, EN_STOPWORDS) is None
    assert whole_value(equal("Final Jeopardy!"), STORED, EN_STOPWORDS) is None


def test_a_value_not_stored_whole_is_untouched() -> None:
    assert whole_value(equal("Jeopardy"), ("Double Jeopardy!", "Final Jeopardy!"), EN_STOPWORDS) is None
    assert whole_value(equal("The Jeopardy!"), STORED, EN_STOPWORDS) is None  # its token list has `the`
    assert whole_value(equal("Jeopardy!"), None, EN_STOPWORDS) is None  # the values are not all known


def test_field_like_and_other_kinds_are_untouched() -> None:
    assert not applies_to(equal("Jeopardy!", "field"))
    assert whole_value(equal("Jeopardy!", "field"), STORED, EN_STOPWORDS) is None
    assert not applies_to(equal("Jeopardy!", operator="LIKE"))
    assert not applies_to(equal("Jeopardy!", ascii_fold=True))
    assert not applies_to(equal("Jeopardy!", index_filterable=False, index_searchable=False))
    assert not applies_to(FilterSpec(text(), "=", "Jeopardy!", "related_filter", via="show"))
    points = PropertySchema(name="points", data_type="int")
    assert not applies_to(FilterSpec(points, "=", 200, "integer_property_filter"))
    daily = PropertySchema(name="daily", data_type="boolean")
    assert not applies_to(FilterSpec(daily, "=", True, "boolean_property_filter"))
    assert applies_to(equal("Jeopardy!", None))  # Weaviate's default is word
    assert applies_to(equal("Jeopardy!", "lowercase")) and applies_to(equal("Jeopardy!", "whitespace"))


def test_case_follows_the_tokenization() -> None:
    word = whole_value(equal("JEOPARDY"), ("jeopardy!", "Double Jeopardy!"), EN_STOPWORDS)
    assert word is not None and word.others == ("Double Jeopardy!",)  # word: case and `!` do not matter
    assert whole_value(equal("jeopardy!", "whitespace"), STORED, EN_STOPWORDS) is None  # case-sensitive
    lower = whole_value(equal("JEOPARDY!", "lowercase"), STORED, EN_STOPWORDS)
    assert lower is not None and lower.words == (("double",), ("final",))
    assert not lower.keeps("double JEOPARDY!") and lower.keeps("jeopardy!")


def test_values_told_apart_by_several_words_and_the_smallest_sets_only() -> None:
    stored = ("Jeopardy!", "Double Jeopardy!", "Super Double Jeopardy!", "Celebrity Tournament Jeopardy!")
    whole = whole_value(equal("Jeopardy!"), stored, EN_STOPWORDS)
    assert whole is not None
    assert whole.others == ("Celebrity Tournament Jeopardy!", "Double Jeopardy!", "Super Double Jeopardy!")
    assert whole.words == (("double",), ("celebrity", "tournament"))  # `double` covers "Super Double ..."
    assert [expr.source for expr in whole.exprs()][1] == (
        "Filter.any_of([Filter.by_property('round').not_equal('celebrity'), "
        "Filter.by_property('round').not_equal('tournament')])"
    )
    assert [value for value in stored if whole.keeps(value)] == ["Jeopardy!"]
    assert whole.keeps("Celebrity Jeopardy!")  # holds one word of the pair only: not a stored value


def test_values_no_filter_can_tell_apart_stay() -> None:
    # Only a stopword more, or the same words in another order: a not_equal cannot exclude them.
    assert whole_value(equal("Jeopardy!"), ("Jeopardy!", "The Jeopardy!"), EN_STOPWORDS) is None
    assert whole_value(equal("Double Jeopardy"), ("Double Jeopardy", "Jeopardy Double"), EN_STOPWORDS) is None
    whole = whole_value(equal("Jeopardy!"), ("Jeopardy!", "The Jeopardy!", "Double Jeopardy!"), EN_STOPWORDS)
    assert whole is not None and whole.others == ("Double Jeopardy!",)


def test_distinct_values_are_none_beyond_the_limit() -> None:
    assert distinct_values(["b", "a", None, "b"]) == ("a", "b")
    assert distinct_values(str(i) for i in range(STORED_VALUES_LIMIT)) is not None
    assert distinct_values(str(i) for i in range(STORED_VALUES_LIMIT + 1)) is None


def test_stored_values_are_read_once_per_collection_property_and_scope() -> None:
    reads: list[tuple[str, str, tuple[FilterSpec, ...]]] = []
    stored = StoredValues(lambda collection, prop, scope: reads.append((collection, prop, scope)) or ("x",))
    assert stored("C", "p") == stored("C", "p") == ("x",)
    stored("C", "q")
    stored("C", "p", (equal("x"),))
    assert reads == [("C", "p", ()), ("C", "q", ()), ("C", "p", (equal("x"),))]


WORDS = ["jeopardy", "double", "final", "the", "of", "kids", "week"]


@settings(max_examples=300, deadline=None)
@given(
    stored=st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join), min_size=1, max_size=8),
    pick=st.integers(min_value=0),
)
def test_the_whole_value_is_always_kept_and_every_excludable_other_value_dropped(stored: list[str], pick: int) -> None:
    value = stored[pick % len(stored)]
    flt = equal(value)
    whole = whole_value(flt, tuple(stored), EN_STOPWORDS)
    own = tokenize(value, "word")
    required = {token for token in own if token not in EN_STOPWORDS}
    for candidate in stored:
        tokens = tokenize(candidate, "word")
        if not required or not required <= set(tokens):
            continue  # the `=` itself does not match it
        kept = whole is None or whole.keeps(candidate)
        excludable = tokens != own and bool(set(tokens) - set(own) - EN_STOPWORDS)
        assert kept == (not excludable), (value, candidate)


# ---------------------------------------------------------------------------------------------
# The reference executor, the plan and the program


def test_the_reference_counts_the_whole_value_only_and_shows_the_not_equal_filters() -> None:
    executor = ReferenceExecutor(schema(), {"Clues": objects([*ROUNDS, None])})
    result = executor.execute(call("Jeopardy!"))
    assert result.total_count == 3
    assert {obj.properties["round"] for obj in result.objects} == {"Jeopardy!"}
    assert "Filter.by_property('round').not_equal('double')" in result.calls[0]
    assert executor.execute(call("Double Jeopardy!")).total_count == 4
    assert executor.execute(call("Jeopardy!", "LIKE")).total_count == 9  # LIKE is untouched
    aggregated = executor.execute({**call("Jeopardy!"), "integer_property_aggregation": _count("points")})
    assert aggregated.total_count == 3


def _count(prop: str) -> dict[str, str]:
    return {"property_name": prop, "metrics": "COUNT"}


def test_field_tokenization_is_untouched_by_the_reference() -> None:
    executor = ReferenceExecutor(schema("field"), {"Clues": objects(ROUNDS)})
    result = executor.execute(call("Jeopardy!"))
    assert result.total_count == 3
    assert "not_equal" not in " ".join(result.calls)


def test_beyond_the_limit_of_values_nothing_changes() -> None:
    many = ROUNDS + [f"Round {i}" for i in range(STORED_VALUES_LIMIT)]
    executor = ReferenceExecutor(schema(), {"Clues": objects(many)})
    assert executor.execute(call("Jeopardy!")).total_count == 9


def test_under_a_scope_only_the_values_in_it_count_and_the_scope_keeps_its_meaning() -> None:
    season_1 = Scope(filters={"Clues": [ScopeFilter(property_name="season", operator="=", value="1")]})
    executor = ReferenceExecutor(schema(), {"Clues": objects(ROUNDS)}, scope=season_1)
    result = executor.execute(call("Jeopardy!"))
    assert result.total_count == 3
    calls = " ".join(result.calls)
    assert "not_equal('double')" in calls and "final" not in calls.lower()  # season 2's value: not seen
    jeopardy = Scope(filters={"Clues": [ScopeFilter(property_name="round", operator="=", value="Jeopardy!")]})
    scoped = ReferenceExecutor(schema(), {"Clues": objects(ROUNDS)}, scope=jeopardy)
    assert scoped.execute({"collection_name": "Clues"}).total_count == 9  # the caller's `=`: by its tokens


class FakeClient:
    """A client whose collection answers TOP_OCCURRENCES with `values` and everything else with nothing."""

    def __init__(self, values: list[str]) -> None:
        self.values, self.reads, self.made = values, [], []
        self.collections = self

    def list_all(self, simple: bool = True) -> dict[str, Any]:
        props = [
            SimpleNamespace(
                name=name, data_type="text", description=None, tokenization=tokenization, index_filterable=True,
                index_searchable=True, index_range_filters=False,
            )
            for name, tokenization in (("round", "word"), ("season", "field"))
        ]  # fmt: skip
        return {"Clues": SimpleNamespace(name="Clues", description=None, properties=props, references=[])}

    def use(self, name: str, skip_argument_validation: bool = False) -> Any:
        return SimpleNamespace(query=SimpleNamespace(fetch_objects=self._fetch), aggregate=self)

    def _fetch(self, **kwargs: Any) -> Any:
        self.made.append(kwargs)
        return SimpleNamespace(objects=[])

    def over_all(self, **kwargs: Any) -> Any:
        if "total_count" not in kwargs:  # the stored values' read: JSON-escaped when unfiltered, as Weaviate's
            self.reads.append(kwargs.get("filters"))
            escaped = "filters" not in kwargs
            items = [SimpleNamespace(value=v.replace("&", "\\u0026") if escaped else v, count=1) for v in self.values]
            return SimpleNamespace(properties={"round": SimpleNamespace(top_occurrences=items)}, total_count=None)
        self.made.append(kwargs)
        return SimpleNamespace(properties={}, total_count=0)


def test_the_live_executor_reads_the_values_once_and_sends_the_not_equal_filters() -> None:
    client = FakeClient(["Jeopardy!", "Double Jeopardy!", "Final Jeopardy!", "Q & A Jeopardy!"])
    executor = WeaviateExecutor(client)
    result = executor.execute(call("Jeopardy!"))
    sibling = executor.with_options(ExecutorOptions(fetch_limit=3))
    sibling.execute(call("Jeopardy!"))
    assert client.reads == [None]  # unfiltered, cached, and shared with siblings
    sent = [(f.operator.name, f.value) for f in client.made[0]["filters"].filters]
    assert sent == [("EQUAL", "Jeopardy!"), ("NOT_EQUAL", "double"), ("NOT_EQUAL", "final"), ("NOT_EQUAL", "q")]
    program = result.program()
    assert "Whole value: word tokenization would also match 'Double Jeopardy!', 'Final Jeopardy!'" in program
    assert "'Q & A" in program  # unescaped
    assert "Filter.by_property('round').not_equal('double')" in program
    assert program.count("Whole value") == 1


def test_the_live_executor_reads_the_values_within_its_scope() -> None:
    client = FakeClient(["Jeopardy!", "Double Jeopardy!", "Q & A Jeopardy!"])
    season_1 = Scope(filters={"Clues": [ScopeFilter(property_name="season", operator="=", value="1")]})
    result = WeaviateExecutor(client, scope=season_1).execute(call("Jeopardy!"))
    (read,) = client.reads
    assert (read.target, read.operator.name, read.value) == ("season", "EQUAL", "1")
    sent = [(f.operator.name, f.value) for f in client.made[0]["filters"].filters]
    assert sent == [("EQUAL", "Jeopardy!"), ("NOT_EQUAL", "double"), ("NOT_EQUAL", "q"), ("EQUAL", "1")]
    assert "'Q & A" in result.program()


def test_the_live_executor_leaves_a_property_with_too_many_values_alone() -> None:
    client = FakeClient(["Jeopardy!", "Double Jeopardy!", *(f"R{i}" for i in range(STORED_VALUES_LIMIT))])
    plan = WeaviateExecutor(client).plan(call("Jeopardy!"))
    assert plan.whole_values == ()
    assert "not_equal" not in " ".join(plan.rendered())


@pytest.mark.parametrize("value", ["Jeopardy!", "Double Jeopardy!"])
def test_the_program_says_why_only_when_filters_were_added(value: str) -> None:
    executor = ReferenceExecutor(schema(), {"Clues": objects(ROUNDS)})
    spec = executor.validate(call(value))
    wholes = tuple(w for f in spec.applied_filters if (w := whole_value(f, STORED, EN_STOPWORDS)) is not None)
    program = Snippet(build_plan(spec, ExecutorOptions(), wholes), "Clues").program()
    assert ("Whole value" in program) == (value == "Jeopardy!")
    assert ("not_equal" in program) == (value == "Jeopardy!")


def test_a_session_s_strategies_share_one_reader_of_stored_categories() -> None:
    """chain, check and values read a collection's category values through one reader, once per session."""
    from agent.strategies import build_strategy

    readers = []
    strategy = build_strategy("chain+check+values+typed+grounded").strategy
    while strategy is not None:
        reader = getattr(strategy, "stored", None) or getattr(getattr(strategy, "_values", None), "stored", None)
        if reader is not None:
            readers.append((type(strategy).__name__, reader))
        strategy = getattr(strategy, "inner", None)
    assert [name for name, _ in readers] == ["Chain", "Check", "Values"]
    assert len({id(reader) for _, reader in readers}) == 1
    assert build_strategy("check+values").strategy.stored is not readers[0][1]  # a new session, a new reader
