"""The `query_database` tool, built from the live database schema within a token budget.

The description follows the paper's Appendix A; the collection enum does the routing; the
parameters come from `executors.arguments` (one source of truth). Variants are the paper's
ablations: one unified tool or one tool per collection, an optional required `rationale`,
parallel calls on or off, and structured output instead of native tool calls.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from agent.tokens import TokenCounter, estimate_counter
from executors import CollectionSchema, DatabaseSchema, PropertyKind, tool_parameters_schema
from executors.vocabulary import (
    AGGREGATION_FIELDS,
    CONDITIONS_FIELD,
    DATE_DATA_TYPE,
    FIELD_KIND,
    GROUPBY_FIELD,
    REFERENCE_FILTER_FIELD,
    ToolOperations,
)
from llm import ToolDefinition

TOOL_NAME = "query_database"
DEFAULT_TOKEN_BUDGET = 1024
MAX_KEYS_PER_LEVEL = 16
DESCRIPTION_HEAD = (
    "Query a database with an optional search query or optional filters or aggregations on the results.\n\n"
    "IMPORTANT! Please be mindful of the available query APIs you can use such as search queries, filters, "
    "aggregations, and groupby!\n\nAvailable collections in this database:\n"
)


#: The tool every door offers unless told otherwise (`ask`, `eval`, the demo, MCP, `QueryAgent`): one place.
DEFAULT_OPERATIONS = ToolOperations.COMPOUND


class ToolVariant(str, Enum):
    UNIFIED = "unified"
    PER_COLLECTION = "per-collection"


@dataclass(frozen=True)
class ToolDesign:
    """Which tool interface the model gets; every field is one of the paper's ablations."""

    variant: ToolVariant = ToolVariant.UNIFIED
    rationale: bool = False
    parallel_calls: bool | None = None  # None: do not send `parallel_tool_calls` at all
    structured_output: bool = False
    token_budget: int = DEFAULT_TOKEN_BUDGET
    #: `compound` (`DEFAULT_OPERATIONS`, every door's default): any number of conditions joined by and/or,
    #: dates and a sort; `paper`: the paper's tool exactly, for the paper's comparisons; `related`: the
    #: paper's and three optional slots (a filter through a reference, a date filter, a sort with a limit).
    operations: ToolOperations = field(default_factory=lambda: DEFAULT_OPERATIONS)

    def label(self) -> str:
        parts = [self.variant.value]
        if self.operations is not ToolOperations.PAPER:
            parts.append(self.operations.value)
        if self.rationale:
            parts.append("rationale")
        if self.parallel_calls is not None:
            parts.append("parallel" if self.parallel_calls else "sequential")
        if self.structured_output:
            parts.append("structured")
        return "+".join(parts)


@dataclass
class ToolSet:
    tools: list[dict[str, Any]]
    design: ToolDesign
    description: str
    description_tokens: int
    token_counter: str
    shortening: list[str] = field(default_factory=list)
    tool_to_collection: dict[str, str] = field(default_factory=dict)

    def tool_names(self) -> list[str]:
        return [tool.name for tool in self.definitions()]

    def definitions(self) -> list[ToolDefinition]:
        """The tools as the model seam offers them (`llm.ToolDefinition`)."""
        return [ToolDefinition.model_validate(tool["function"]) for tool in self.tools]

    def to_call_arguments(self, tool_name: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
        """Map a call of any variant back to `query_database` arguments; split off the rationale."""
        arguments = dict(arguments)
        rationale = arguments.pop("rationale", None) if self.design.rationale else None
        if tool_name in self.tool_to_collection:  # the tool's own collection, whatever the model wrote
            own = self.tool_to_collection[tool_name]
            arguments = {"collection_name": own, **arguments_without_collection(arguments)}
        return arguments, rationale if isinstance(rationale, str) else None


def _describe(collection: CollectionSchema, level: int, related: bool = False) -> str:
    """The collection for the tool description; dates and references only for the `related` tool
    (the paper's lists the properties it can query, as it always did)."""
    head = collection.name
    description = collection.description or ""
    if level >= 2:
        description = description.split(". ")[0].rstrip(".")
    if level < 3 and description:
        head += f": {description}"
    lines = [head]
    for prop in collection.properties:
        kind = (
            prop.kind.value if prop.kind is not None else DATE_DATA_TYPE if prop.data_type == DATE_DATA_TYPE else None
        )
        if kind is None:
            continue
        line = f"  - {prop.name} ({kind})"
        if level == 0 and prop.description:
            line += f": {prop.description}"
        lines.append(line)
    for reference in collection.references if related else ():
        line = f"  - {reference.label()}"
        if level == 0 and reference.description:
            line += f": {reference.description}"
        lines.append(line)
    return "\n".join(lines)


SHORTENING_STEPS = (
    "dropped property descriptions",
    "cut collection descriptions to their first sentence",
    "dropped collection descriptions",
)


def collections_description(
    collections: list[CollectionSchema], budget: int, counter: TokenCounter, related: bool = False
) -> tuple[str, int, list[str]]:
    """The longest description that fits `budget` tokens, and the shortening steps it took."""
    shortening: list[str] = []
    for level in range(len(SHORTENING_STEPS) + 1):
        text = DESCRIPTION_HEAD + "\n".join(_describe(c, level, related) for c in collections)
        tokens = counter.count(text)
        if tokens <= budget:
            return text, tokens, shortening
        if level < len(SHORTENING_STEPS):
            shortening.append(SHORTENING_STEPS[level])
    kept = list(collections)
    while len(kept) > 1:
        kept.pop()
        listed = "\n".join(_describe(c, len(SHORTENING_STEPS), related) for c in kept)
        others = ", ".join(c.name for c in collections[len(kept) :])
        text = f"{DESCRIPTION_HEAD}{listed}\nAlso available (properties not listed): {others}"
        tokens = counter.count(text)
        if tokens <= budget:
            shortening.append(f"listed properties for {len(kept)} of {len(collections)} collections only")
            return text, tokens, shortening
    text = DESCRIPTION_HEAD + ", ".join(c.name for c in collections)
    shortening.append("listed collection names only")
    return text, counter.count(text), shortening


def tool_function_name(collection: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", f"query_{collection}")[:64]


def build_tools(
    schema: DatabaseSchema, design: ToolDesign = ToolDesign(), counter: TokenCounter | None = None
) -> ToolSet:
    counter = counter or estimate_counter()
    collections = list(schema.collections)
    names = [c.name for c in collections]
    related = design.operations.sees_related
    if not names:
        raise ValueError("the database has no collections: load data first (`dbgorilla load`)")
    if design.variant is ToolVariant.UNIFIED:
        description, tokens, shortening = collections_description(collections, design.token_budget, counter, related)
        parameters = tool_parameters_schema(names, rationale=design.rationale, operations=design.operations)
        tool = _function(TOOL_NAME, description, parameters)
        return ToolSet([tool], design, description, tokens, counter.name, shortening)
    tools, mapping, total = [], {}, 0
    shortening: list[str] = []
    per_tool_budget = max(64, design.token_budget // len(collections))
    for collection in collections:
        description, tokens, steps = collections_description([collection], per_tool_budget, counter, related)
        parameters = tool_parameters_schema([collection.name], rationale=design.rationale, operations=design.operations)
        without_collection(parameters)
        name = tool_function_name(collection.name)
        tools.append(_function(name, description, parameters))
        mapping[name] = collection.name
        total += tokens
        shortening += [f"{collection.name}: {step}" for step in steps]
    return ToolSet(
        tools,
        design,
        "\n\n".join(t["function"]["description"] for t in tools),
        total,
        counter.name,
        shortening,
        mapping,
    )


def property_names_by_kind(collections: Iterable[CollectionSchema]) -> dict[PropertyKind, list[str]]:
    """Each kind's property names over `collections`, in schema order, each once."""
    names: dict[PropertyKind, dict[str, None]] = {kind: {} for kind in PropertyKind}
    for collection in collections:
        for prop in collection.properties:
            if prop.kind is not None:
                names[prop.kind][prop.name] = None
    return {kind: list(found) for kind, found in names.items()}


def typed_slot(
    slot: str, spec: dict[str, Any], names: dict[PropertyKind, list[str]], dates: Sequence[str] = ()
) -> dict[str, Any] | None:
    """A copy of the slot's schema whose property name is an enum of the properties of the slot's kind (the
    group-by: text and boolean ones); None when there is none, so the slot is dropped; other slots as they are.
    A grammar then cannot put a text property into a number aggregation."""
    if slot == GROUPBY_FIELD:
        choices = names.get(PropertyKind.TEXT, []) + names.get(PropertyKind.BOOLEAN, [])
        return {**spec, "enum": choices} if choices else None
    if slot == CONDITIONS_FIELD:  # a condition takes any property the tool lists, dates included
        every = list(dict.fromkeys([*(name for found in names.values() for name in found), *dates]))
        typed = copy.deepcopy(spec)
        typed["items"]["properties"]["property_name"] = {"type": "string", "enum": every}
        return typed if every else None
    if slot not in FIELD_KIND:
        return copy.deepcopy(spec)
    choices = names.get(FIELD_KIND[slot], [])
    if not choices:
        return None
    typed = copy.deepcopy(spec)
    typed["properties"]["property_name"] = {"type": "string", "enum": choices}
    return typed


def arguments_without_collection(arguments: dict[str, Any]) -> dict[str, Any]:
    """A call's arguments without the collection slot: what a tool held to one collection is written with."""
    return {k: v for k, v in arguments.items() if k != "collection_name"}


def without_collection(parameters: dict[str, Any]) -> None:
    """Drop the collection slot from a tool's parameters: the tool answers for one collection
    (`ToolSet.tool_to_collection`), and a slot with one choice is not the model's to write."""
    parameters["properties"].pop("collection_name", None)
    parameters["required"] = [r for r in parameters.get("required", []) if r != "collection_name"]


def typed_tools(tools: ToolSet, schema: DatabaseSchema, about: str = "", required: Sequence[str] = ()) -> ToolSet:
    """The same tools with every property name an enum of the properties of its slot's kind: those of the
    collection the question is `about` when it is offered, else of every collection offered (a
    per-collection tool: its own collection's), and the `required` slots it has made required. The
    collection name is held to the one it is `about` too: with its properties only, a call naming another
    collection cannot be right (the model wrote `visaRequired` on Accommodations once the check had named
    Destinations, 2026-11-30). A tool held to one collection has no collection slot at all: the name is forced,
    so the model wrote ~7 tokens a call that decided nothing (`"collection_name":"Courses",`); the tool answers
    for it (`tool_to_collection`) as a per-collection tool does. The descriptions and the order of the
    other slots are unchanged."""
    typed, held = [], dict(tools.tool_to_collection)
    for tool in tools.tools:
        function = copy.deepcopy(tool["function"])
        parameters = function["parameters"]
        own = tools.tool_to_collection.get(function["name"])
        offered = [own] if own else list(parameters["properties"].get("collection_name", {}).get("enum", []))
        offered = [about] if about in offered else offered
        chosen = [c for c in schema.collections if c.name in offered]
        names, dates = property_names_by_kind(chosen), [p.name for c in chosen for p in c.dates()]
        slots = {slot: typed_slot(slot, spec, names, dates) for slot, spec in parameters["properties"].items()}
        if "collection_name" in slots and len(offered) > 1:  # a per-collection tool has none
            slots["collection_name"] = {**slots["collection_name"], "enum": offered}
        elif "collection_name" in slots and offered:
            held[function["name"]] = offered[0]
        if not any(c.references for c in chosen):  # nothing to filter through: the slot only misleads
            slots.pop(REFERENCE_FILTER_FIELD, None)
        parameters["properties"] = {slot: spec for slot, spec in slots.items() if spec is not None}
        if function["name"] in held:  # the tool answers for its one collection
            without_collection(parameters)
        needed = [slot for slot in required if slot in parameters["properties"]]
        # last, after the slots: a question's required slots vary, and a prompt cache keeps what comes before
        written = [slot for slot in parameters.pop("required", []) if slot in parameters["properties"]]
        parameters["required"] = list(dict.fromkeys([*written, *needed]))
        typed.append({**tool, "function": function})  # copied in the order `_function` gave it
    return replace(tools, tools=typed, tool_to_collection=held)


def prefix_order(function: dict[str, Any]) -> dict[str, Any]:
    """The function's keys in the order whose prompt prefix a cache shares longest: the parameters, the
    same for every database but their collection enum (which comes last), before the description,
    which is all about the database. A typed tool's parameters name one collection's properties, so
    its description first would let a database's other collections reuse it (the main job cold: 381
    -> 340 s), but the model read that order worse: 4 of the committed sample's 60 single-step first
    calls lost their exact match, none gained (2026-11-26, docs/results). Parameters first, always."""
    ordered = {key: function[key] for key in ("name", "parameters", "description") if key in function}
    return {**ordered, **function}


def _function(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    """A tool function in `prefix_order`."""
    return {
        "type": "function",
        "function": prefix_order({"name": name, "parameters": parameters, "description": description}),
    }


def schema_limit_violations(schema: Any, path: str = "parameters") -> list[str]:
    """Constructs OpenAI-compatible providers reject: $ref, anyOf/oneOf, more than 16 keys a level."""
    problems: list[str] = []
    if isinstance(schema, dict):
        for banned in ("$ref", "anyOf", "oneOf", "allOf", "$defs"):
            if banned in schema:
                problems.append(f"{path}: uses {banned}")
        properties = schema.get("properties")
        if isinstance(properties, dict) and len(properties) > MAX_KEYS_PER_LEVEL:
            problems.append(f"{path}: {len(properties)} properties on one level (max {MAX_KEYS_PER_LEVEL})")
        for key, value in schema.items():
            problems += schema_limit_violations(value, f"{path}.{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            problems += schema_limit_violations(value, f"{path}[{index}]")
    return problems


#: The kinds of operation `decompose` chooses between (`agent.strategies.decompose`), and how a call's
#: arguments show which one it is: a group-by, an aggregation, a search, or a plain (filtered) listing.
OPERATION_KINDS = ("list", "search", "aggregate", "group")


def operation_kind(arguments: dict[str, Any]) -> str:
    if arguments.get("groupby_property"):
        return "group"
    if any(arguments.get(slot) for slot in AGGREGATION_FIELDS):
        return "aggregate"
    return "search" if arguments.get("search_query") else "list"
