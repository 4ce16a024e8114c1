"""The query vocabulary of `query_database`, owned here and nowhere else.

Property kinds, the operators and metrics each kind takes, the argument slots and the benchmark
component each slot is, and the weaviate-client attribute behind each metric. Validation,
planning, result assembly, the reference executor, the dataset importers, benchmark authoring,
the label audit and the scorer all read these tables, so a new operator or metric is added here
(and to the two interpreters), never spelled out again elsewhere.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from enum import Enum


class PropertyKind(str, Enum):
    """The three property kinds the tool distinguishes (Weaviate: text, number/int, boolean)."""

    TEXT = "text"
    NUMBER = "number"
    BOOLEAN = "boolean"


class Tokenization(str, Enum):
    """The Weaviate tokenizations we create text properties with."""

    WORD = "word"
    FIELD = "field"
    LOWERCASE = "lowercase"
    WHITESPACE = "whitespace"


class NumberOperator(str, Enum):
    EQUAL = "="
    LESS = "<"
    GREATER = ">"
    LESS_EQUAL = "<="
    GREATER_EQUAL = ">="


class TextOperator(str, Enum):
    EQUAL = "="
    LIKE = "LIKE"


class BooleanOperator(str, Enum):
    EQUAL = "="
    NOT_EQUAL = "!="


class NumberMetric(str, Enum):
    COUNT = "COUNT"
    TYPE = "TYPE"
    MIN = "MIN"
    MAX = "MAX"
    MEAN = "MEAN"
    MEDIAN = "MEDIAN"
    MODE = "MODE"
    SUM = "SUM"


class TextMetric(str, Enum):
    COUNT = "COUNT"
    TYPE = "TYPE"
    TOP_OCCURRENCES = "TOP_OCCURRENCES"


class BooleanMetric(str, Enum):
    COUNT = "COUNT"
    TYPE = "TYPE"
    TOTAL_TRUE = "TOTAL_TRUE"
    TOTAL_FALSE = "TOTAL_FALSE"
    PERCENTAGE_TRUE = "PERCENTAGE_TRUE"
    PERCENTAGE_FALSE = "PERCENTAGE_FALSE"


#: A statistic as a reader names it (the `check` strategy's words) -> the metrics that compute it.
STATISTIC_METRICS: dict[str, frozenset[str]] = {
    "count": frozenset({NumberMetric.COUNT.value, BooleanMetric.TOTAL_TRUE.value, BooleanMetric.TOTAL_FALSE.value}),
    "average": frozenset({NumberMetric.MEAN.value}),
    "median": frozenset({NumberMetric.MEDIAN.value}),
    "minimum": frozenset({NumberMetric.MIN.value}),
    "maximum": frozenset({NumberMetric.MAX.value}),
    "sum": frozenset({NumberMetric.SUM.value}),
    "most common": frozenset({TextMetric.TOP_OCCURRENCES.value, NumberMetric.MODE.value}),
    "percentage": frozenset({BooleanMetric.PERCENTAGE_TRUE.value, BooleanMetric.PERCENTAGE_FALSE.value}),
}

#: A metric as the sentence a person reads names it ("the average bill length").
METRIC_WORDS: dict[str, str] = {
    NumberMetric.MEAN.value: "average",
    NumberMetric.MEDIAN.value: "median",
    NumberMetric.MIN.value: "lowest",
    NumberMetric.MAX.value: "highest",
    NumberMetric.SUM.value: "total",
    NumberMetric.MODE.value: "most frequent",
    NumberMetric.COUNT.value: "number of values of",
    BooleanMetric.TOTAL_TRUE.value: "number with",
    BooleanMetric.TOTAL_FALSE.value: "number without",
    BooleanMetric.PERCENTAGE_TRUE.value: "share with",
    BooleanMetric.PERCENTAGE_FALSE.value: "share without",
}

#: The metrics whose value is a share: an answer may state them as a percentage or a fraction.
PERCENT_METRICS = frozenset({BooleanMetric.PERCENTAGE_TRUE.value, BooleanMetric.PERCENTAGE_FALSE.value})

OPERATOR_ENUMS: dict[PropertyKind, type[Enum]] = {
    PropertyKind.NUMBER: NumberOperator,
    PropertyKind.TEXT: TextOperator,
    PropertyKind.BOOLEAN: BooleanOperator,
}
METRIC_ENUMS: dict[PropertyKind, type[Enum]] = {
    PropertyKind.NUMBER: NumberMetric,
    PropertyKind.TEXT: TextMetric,
    PropertyKind.BOOLEAN: BooleanMetric,
}
OPERATORS: dict[PropertyKind, tuple[str, ...]] = {
    kind: tuple(member.value for member in enum) for kind, enum in OPERATOR_ENUMS.items()
}
METRICS: dict[PropertyKind, tuple[str, ...]] = {
    kind: tuple(member.value for member in enum) for kind, enum in METRIC_ENUMS.items()
}

#: The slot prefix of each kind (`integer_property_filter` takes every number, not only ints).
KIND_PREFIX: dict[PropertyKind, str] = {
    PropertyKind.NUMBER: "integer",
    PropertyKind.TEXT: "text",
    PropertyKind.BOOLEAN: "boolean",
}
KIND_OF_PREFIX: dict[str, PropertyKind] = {prefix: kind for kind, prefix in KIND_PREFIX.items()}
FILTER_SLOT: dict[PropertyKind, str] = {kind: f"{prefix}_property_filter" for kind, prefix in KIND_PREFIX.items()}
AGGREGATION_SLOT: dict[PropertyKind, str] = {
    kind: f"{prefix}_property_aggregation" for kind, prefix in KIND_PREFIX.items()
}
SEARCH_FIELD = "search_query"
GROUPBY_FIELD = "groupby_property"
FILTER_FIELDS: tuple[str, ...] = tuple(FILTER_SLOT.values())
AGGREGATION_FIELDS: tuple[str, ...] = tuple(AGGREGATION_SLOT.values())
#: The argument slots besides the collection, in the tool's order.
COMPONENT_FIELDS: tuple[str, ...] = (SEARCH_FIELD, *FILTER_FIELDS, *AGGREGATION_FIELDS, GROUPBY_FIELD)
FIELD_KIND: dict[str, PropertyKind] = {
    **{slot: kind for kind, slot in FILTER_SLOT.items()},
    **{slot: kind for kind, slot in AGGREGATION_SLOT.items()},
}
#: The keys of each object-valued slot, in the tool's order.
SLOT_KEYS: dict[str, tuple[str, ...]] = {
    **{slot: ("property_name", "operator", "value") for slot in FILTER_FIELDS},
    **{slot: ("property_name", "metrics") for slot in AGGREGATION_FIELDS},
    AGGREGATION_SLOT[PropertyKind.TEXT]: ("property_name", "metrics", "top_occurrences_limit"),
}
VALUE_TYPES: dict[PropertyKind, str] = {
    PropertyKind.NUMBER: "a number",
    PropertyKind.TEXT: "a string",
    PropertyKind.BOOLEAN: "true or false",
}


class Component(str, Enum):
    """A benchmark component: one argument slot, named for the per-component tables."""

    SEARCH = "search"
    INTEGER_FILTER = "integer_filter"
    TEXT_FILTER = "text_filter"
    BOOLEAN_FILTER = "boolean_filter"
    INTEGER_AGGREGATION = "integer_aggregation"
    TEXT_AGGREGATION = "text_aggregation"
    BOOLEAN_AGGREGATION = "boolean_aggregation"
    GROUPBY = "groupby"


COMPONENT_OF_FIELD: dict[str, Component] = dict(zip(COMPONENT_FIELDS, Component, strict=True))
FIELD_OF_COMPONENT: dict[Component, str] = {component: field for field, component in COMPONENT_OF_FIELD.items()}

#: Metrics that come from the schema (the property's data type), not from an aggregation.
SCHEMA_METRICS = frozenset({"TYPE"})
#: Tool metric -> the weaviate-client name for it: the flag of `Metrics(prop).number/integer/
#: text/boolean(...)` and the attribute of the `Aggregate*` result that carries its value.
METRIC_ATTRIBUTES: dict[str, str] = {
    "COUNT": "count",
    "MIN": "minimum",
    "MAX": "maximum",
    "MEAN": "mean",
    "MEDIAN": "median",
    "MODE": "mode",
    "SUM": "sum_",
    "TOP_OCCURRENCES": "top_occurrences",
    "TOTAL_TRUE": "total_true",
    "TOTAL_FALSE": "total_false",
    "PERCENTAGE_TRUE": "percentage_true",
    "PERCENTAGE_FALSE": "percentage_false",
}
#: What each number operator means (the reference executor evaluates filters with these).
NUMBER_COMPARISONS: dict[str, Callable[[float, float], bool]] = {
    NumberOperator.EQUAL.value: operator.eq,
    NumberOperator.LESS.value: operator.lt,
    NumberOperator.GREATER.value: operator.gt,
    NumberOperator.LESS_EQUAL.value: operator.le,
    NumberOperator.GREATER_EQUAL.value: operator.ge,
}
#: Filter operator -> the method of weaviate-client's `Filter.by_property(...)`.
FILTER_METHODS: dict[str, str] = {
    "=": "equal",
    "!=": "not_equal",
    "<": "less_than",
    "<=": "less_or_equal",
    ">": "greater_than",
    ">=": "greater_or_equal",
    "LIKE": "like",
}


class ToolOperations(str, Enum):
    """Which operations the tool offers: the paper's (Appendix A, exactly as published), the paper's
    plus `related`'s optional slots (a filter through a reference, a date filter, a sort with a limit), or
    `compound`: those plus any number of `conditions` on any property, joined by all (and) or any (or).

    An executor is built for one of them: under `paper` it shows and accepts nothing beyond the paper's
    tool (date properties and references are hidden, the new slots are unknown arguments), so runs on
    the existing splits are the same whatever the data gained."""

    PAPER = "paper"
    RELATED = "related"
    COMPOUND = "compound"

    @property
    def sees_related(self) -> bool:
        """Dates, references and sorting are offered (every set but the paper's)."""
        return self is not ToolOperations.PAPER


class DateOperator(str, Enum):
    BEFORE = "before"
    AFTER = "after"
    BETWEEN = "between"


class SortOrder(str, Enum):
    ASCENDING = "ascending"
    DESCENDING = "descending"


#: Every filter operator, in one list: a reference filter takes those its target property's kind takes.
ReferenceOperator = Enum(  # type: ignore[misc]
    "ReferenceOperator",
    [(f"OP_{i}", op) for i, op in enumerate(dict.fromkeys(m.value for e in OPERATOR_ENUMS.values() for m in e))],
    type=str,
)
#: What a date filter compares with: before is `<`, after `>`, between both bounds inclusive.
DATE_BOUNDS: dict[DateOperator, tuple[str, ...]] = {
    DateOperator.BEFORE: (NumberOperator.LESS.value,),
    DateOperator.AFTER: (NumberOperator.GREATER.value,),
    DateOperator.BETWEEN: (NumberOperator.GREATER_EQUAL.value, NumberOperator.LESS_EQUAL.value),
}
#: The operators a date compares with (through a reference): the order comparisons of numbers.
DATE_OPERATORS: tuple[str, ...] = tuple(op.value for op in NumberOperator if op is not NumberOperator.EQUAL)
#: Weaviate's data type of a date property; dates are sent and shown as RFC 3339 date-times.
DATE_DATA_TYPE = "date"
#: The extra slots of the `related` operations, in the tool's order.
REFERENCE_FILTER_FIELD = "reference_filter"
DATE_FILTER_FIELD = "date_filter"
SORT_FIELD = "sort"
RELATED_FIELDS: tuple[str, ...] = (REFERENCE_FILTER_FIELD, DATE_FILTER_FIELD, SORT_FIELD)
RELATED_SLOT_KEYS: dict[str, tuple[str, ...]] = {
    REFERENCE_FILTER_FIELD: ("reference", "property_name", "operator", "value"),
    DATE_FILTER_FIELD: ("property_name", "operator", "value", "value_to"),
    SORT_FIELD: ("property_name", "order", "limit"),
}
#: The largest `sort.limit` (a "top N" question lists at most this many).
MAX_SORT_LIMIT = 100


# What a `conditions` entry compares with; which ones a property takes is `CONDITION_OPERATORS`. (No
# docstring: a class's docstring becomes the tool's description of the field, which the model reads.)
class ConditionOperator(str, Enum):
    EQUAL = "="
    NOT_EQUAL = "!="
    LESS = "<"
    LESS_EQUAL = "<="
    GREATER = ">"
    GREATER_EQUAL = ">="
    LIKE = "LIKE"
    BETWEEN = "between"


# How the `conditions` are joined: every one holds (and), or at least one does (or).
class Match(str, Enum):
    ALL = "all"
    ANY = "any"


#: The `compound` operations' slots, after the related ones: the list of conditions and how it is joined.
CONDITIONS_FIELD = "conditions"
MATCH_FIELD = "match"
COMPOUND_FIELDS: tuple[str, ...] = (CONDITIONS_FIELD, MATCH_FIELD)
CONDITION_KEYS: tuple[str, ...] = ("property_name", "operator", "value", "value_to")
#: The most conditions one call holds (a 1.5B model under a grammar writes short lists reliably).
MAX_CONDITIONS = 6
_ORDER = ("<", "<=", ">", ">=")
#: The operators a condition takes on each kind of property; "date" is a date property.
CONDITION_OPERATORS: dict[str, tuple[str, ...]] = {
    PropertyKind.TEXT.value: ("=", "!=", "LIKE"),
    PropertyKind.NUMBER.value: ("=", "!=", *_ORDER, "between"),
    PropertyKind.BOOLEAN.value: ("=", "!="),
    DATE_DATA_TYPE: ("=", *_ORDER, "between"),
}
#: Which end of a date's span each order operator compares with: before March is before it starts (0),
#: after 2025 after it ends (1).
SPAN_END: dict[str, int] = {"<": 0, ">=": 0, ">": 1, "<=": 1}

# -- The hosted Query Agent's and weaviate-client's names for ours (`dbgorilla serve` reads and writes them).
#: Our metric names -> the Query Agent client's (`NumericMetrics`, `DateMetrics`); the rest are spelled alike.
QUERY_AGENT_METRICS = {NumberMetric.MIN.value: "MINIMUM", NumberMetric.MAX.value: "MAXIMUM"}
#: weaviate-client's serialised filter operators (`_Operator`) -> the tool's.
CLIENT_FILTER_OPERATORS = {
    "Equal": ConditionOperator.EQUAL.value,
    "NotEqual": ConditionOperator.NOT_EQUAL.value,
    "LessThan": ConditionOperator.LESS.value,
    "LessThanEqual": ConditionOperator.LESS_EQUAL.value,
    "GreaterThan": ConditionOperator.GREATER.value,
    "GreaterThanEqual": ConditionOperator.GREATER_EQUAL.value,
    "Like": ConditionOperator.LIKE.value,
}
#: A date bound's operator -> which end of the client's `DateRangeFrom`/`DateRangeTo` it is, and inclusive.
DATE_RANGE_ENDS = {
    ConditionOperator.GREATER.value: ("from", False),
    ConditionOperator.GREATER_EQUAL.value: ("from", True),
    ConditionOperator.LESS.value: ("to", False),
    ConditionOperator.LESS_EQUAL.value: ("to", True),
}
