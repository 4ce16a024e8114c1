"""The `query_database` tool arguments (the paper's Appendix A) as pydantic v2 models.

These models are the single source of truth: the agent derives the JSON schema the LLM sees
from them (`tool_parameters_schema`), the executor consumes them, the benchmark's ground truth
is stored in their shape, and the scorer compares them. Operators, metrics and slot names come
from `executors.vocabulary`, so richer operators (`!=`, `contains_any`, ranges, AND/OR trees,
sort, limit) are added there and in the translator, not by new tool builders.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from executors.vocabulary import (
    AGGREGATION_FIELDS,
    COMPONENT_FIELDS,
    COMPOUND_FIELDS,
    DATE_FILTER_FIELD,
    FILTER_FIELDS,
    MAX_SORT_LIMIT,
    RELATED_FIELDS,
    BooleanMetric,
    BooleanOperator,
    ConditionOperator,
    DateOperator,
    Match,
    NumberMetric,
    NumberOperator,
    ReferenceOperator,
    SortOrder,
    TextMetric,
    TextOperator,
    ToolOperations,
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_enum_values=False)


class IntPropertyFilter(_Strict):
    """Filter numeric properties using comparison operators."""

    property_name: str
    operator: NumberOperator
    value: float


class TextPropertyFilter(_Strict):
    """Filter text properties using equality or LIKE operators (`*` and `?` are wildcards)."""

    property_name: str
    operator: TextOperator
    value: str


class BooleanPropertyFilter(_Strict):
    """Filter boolean properties using equality operators."""

    property_name: str
    operator: BooleanOperator
    value: bool


class IntAggregation(_Strict):
    """Aggregate numeric properties using statistical functions."""

    property_name: str
    metrics: NumberMetric


class TextAggregation(_Strict):
    """Aggregate text properties using frequency analysis."""

    property_name: str
    metrics: TextMetric
    top_occurrences_limit: int | None = Field(default=None, ge=1, le=100)


class BooleanAggregation(_Strict):
    """Aggregate boolean properties using statistical functions."""

    property_name: str
    metrics: BooleanMetric


class QueryDatabaseArguments(_Strict):
    """Query a database with an optional search query or optional filters or aggregations on the results."""

    collection_name: str = Field(description="The collection to query.")
    search_query: str | None = Field(
        default=None,
        description="Semantic search: only objects close in meaning to this text match; filters, aggregations "
        "and group-by then apply to those matches only.",
    )
    integer_property_filter: IntPropertyFilter | None = Field(
        default=None, description="Filter numeric properties using comparison operators."
    )
    text_property_filter: TextPropertyFilter | None = Field(
        default=None, description="Filter text properties using equality or LIKE operators"
    )
    boolean_property_filter: BooleanPropertyFilter | None = Field(
        default=None, description="Filter boolean properties using equality operators"
    )
    integer_property_aggregation: IntAggregation | None = Field(
        default=None, description="Aggregate numeric properties using statistical functions"
    )
    text_property_aggregation: TextAggregation | None = Field(
        default=None, description="Aggregate text properties using frequency analysis"
    )
    boolean_property_aggregation: BooleanAggregation | None = Field(
        default=None, description="Aggregate boolean properties using statistical functions"
    )
    groupby_property: str | None = Field(default=None, description="Group the results by a property.")

    @field_validator("search_query", "groupby_property")
    @classmethod
    def _blank_is_absent(cls, value: str | None) -> str | None:
        """Models often send "" for an argument they mean to leave out."""
        return value if value is None or value.strip() else None

    def components(self) -> list[str]:
        """The argument slots in use besides the collection, in the tool's order."""
        return [name for name in COMPONENT_FIELDS if getattr(self, name) is not None]

    @property
    def has_aggregation(self) -> bool:
        return any(getattr(self, name) is not None for name in AGGREGATION_FIELDS)

    def to_tool_arguments(self) -> dict[str, Any]:
        """The JSON object a model would send: absent slots omitted, enums as their values."""
        return self.model_dump(mode="json", exclude_none=True)


class ReferenceFilter(_Strict):
    """Keep objects whose referenced object matches: `reference` names the link, `property_name` a
    property of the object it points to (or `id`), compared as the property filters compare."""

    reference: str
    property_name: str
    operator: ReferenceOperator = Field(description="As the target property's kind allows (LIKE on text only).")
    value: str | float | bool


class DateFilter(_Strict):
    """Filter a date property: before or after a moment, or between two (inclusive)."""

    property_name: str
    operator: DateOperator
    value: str = Field(description="An RFC 3339 date-time such as 2025-03-01T00:00:00Z, or a date 2025-03-01.")
    value_to: str | None = Field(default=None, description="The end of the range, for between only.")


class SortBy(_Strict):
    """List the objects ordered by a number or date property, keeping the first `limit`."""

    property_name: str
    order: SortOrder
    limit: int = Field(ge=1, le=MAX_SORT_LIMIT)


class RelatedQueryArguments(QueryDatabaseArguments):
    """The paper's arguments plus three optional slots: a filter through a reference, a date filter,
    and a sort with a limit. A call that uses none of them is a paper call and runs as one."""

    reference_filter: ReferenceFilter | None = Field(
        default=None, description="Filter on a property of the object a reference points to."
    )
    date_filter: DateFilter | None = Field(default=None, description="Filter a date property: before, after, between.")
    sort: SortBy | None = Field(
        default=None, description="Order the objects by a number or date property and keep the first `limit`."
    )

    def components(self) -> list[str]:
        return [*super().components(), *(name for name in RELATED_FIELDS if getattr(self, name) is not None)]


class Condition(_Strict):
    """A condition on one property. between takes value and value_to, inclusive. A date may be 2002, 2002-03,
    2002-03-14 or 1990s: the whole span."""

    property_name: str
    operator: ConditionOperator
    value: str | float | bool
    value_to: str | float | None = Field(default=None, description="The end of the range, for between only.")


class CompoundQueryArguments(RelatedQueryArguments):
    """The related arguments plus any number of conditions on any property, joined by `match`: all of
    them (and, the default) or any of them (or). The single filter slots always apply besides, so a
    paper call is a compound call and runs as one."""

    # At most MAX_CONDITIONS, checked with the conditions (`executors._conditions`), not in the schema: not
    # every door's tool format keeps `maxItems` (inspect's drops it), and every door offers one tool.
    conditions: list[Condition] | None = Field(
        default=None,
        description="Conditions on any property (text, number, boolean or date), as many as the question "
        "names; the filters above apply besides.",
    )
    match: Match | None = Field(
        default=None, description="all: every condition holds (and, the default); any: at least one does (or)."
    )

    def components(self) -> list[str]:
        return [*super().components(), *(name for name in COMPOUND_FIELDS if getattr(self, name))]


#: The arguments model of each operations set: the paper's exactly, the paper's and the related slots, or
#: those and the conditions.
ARGUMENT_MODELS: dict[ToolOperations, type[QueryDatabaseArguments]] = {
    ToolOperations.PAPER: QueryDatabaseArguments,
    ToolOperations.RELATED: RelatedQueryArguments,
    ToolOperations.COMPOUND: CompoundQueryArguments,
}


def tool_parameters_schema(
    collection_names: list[str], rationale: bool = False, operations: ToolOperations = ToolOperations.PAPER
) -> dict[str, Any]:
    """The OpenAI `parameters` JSON schema, derived from `QueryDatabaseArguments` (or, for the
    `related` operations, `RelatedQueryArguments`: the same slots first, then the three new ones).

    Pydantic emits `$ref`/`$defs` and `anyOf: [X, null]` for optional slots; OpenAI-compatible
    servers (llama.cpp grammars, Databricks, Gemini) accept a smaller subset, so references are
    inlined and optionality is expressed by leaving a slot out of `required`.
    """
    raw = ARGUMENT_MODELS[operations].model_json_schema()
    definitions = raw.get("$defs", {})
    schema = _simplify(raw, definitions)
    schema.pop("title", None)
    schema.pop("description", None)
    # The collection slot, the only part that differs between databases, goes last: a server
    # that renders tools in order (llama.cpp) then reuses the cached prefix up to it across use
    # cases. Required slots are still generated first.
    properties = dict(schema["properties"])
    if operations is ToolOperations.COMPOUND:
        properties = _compound_order(properties)
    collection = {**properties.pop("collection_name"), "enum": list(collection_names)}
    schema["properties"] = {**properties, "collection_name": collection}
    schema["required"] = ["collection_name"]
    if rationale:
        schema["properties"] = {
            "rationale": {"type": "string", "description": "Why these arguments answer the question."},
            **schema["properties"],
        }
        schema["required"] = ["rationale", "collection_name"]
    schema["additionalProperties"] = False
    return schema


def _compound_order(properties: dict[str, Any]) -> dict[str, Any]:
    """The compound tool as the model sees it: the conditions beside the filter slots, where a model looks for
    a second condition, and no `date_filter` (a date is a condition, read as people write it; a call that
    sends one still runs)."""
    conditions = {name: properties.pop(name) for name in COMPOUND_FIELDS}
    properties.pop(DATE_FILTER_FIELD)
    ordered: dict[str, Any] = {}
    for name, spec in properties.items():
        ordered[name] = spec
        if name == FILTER_FIELDS[-1]:
            ordered.update(conditions)
    return ordered


def _simplify(node: Any, definitions: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_simplify(item, definitions) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = definitions[node["$ref"].split("/")[-1]]
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return _simplify(merged, definitions)
    if "anyOf" in node:
        options = [option for option in node["anyOf"] if option != {"type": "null"}]
        if len(options) == 1:
            merged = {**options[0], **{k: v for k, v in node.items() if k not in ("anyOf", "default")}}
            return _simplify(merged, definitions)
        if all(set(option) == {"type"} for option in options):  # a scalar of several types: a type list
            merged = {"type": [o["type"] for o in options], **{k: v for k, v in node.items() if k != "anyOf"}}
            return _simplify(merged, definitions)
    cleaned = {
        k: _simplify(v, definitions) for k, v in node.items() if k not in ("$defs", "title", "default", "properties")
    }
    if "properties" in node:
        cleaned["properties"] = {name: _simplify(sub, definitions) for name, sub in node["properties"].items()}
    if cleaned.get("type") == "object" and "properties" in cleaned:
        cleaned["additionalProperties"] = False
    return cleaned
