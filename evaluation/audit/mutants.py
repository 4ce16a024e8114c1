"""Single-component mutants of a label: the near misses a model could plausibly have made.

Mutants (`derive_mutants`) change exactly one component and are valid calls for the live schema:

- `operator`: every other operator of the filter's kind. Rewrites that mean the same on any data
  are not mutants: text `=` <-> `LIKE` for a value without wildcards.
- `value`: one plausible other value, picked on the observed objects: booleans flip; a number
  threshold moves to the nearest existing value that moves at least `MIN_CROSSED_SHARE` of the
  objects across it (`=`: the nearest other existing value); text takes another existing value of
  a short text, or another word of a prose text, in the same LIKE shape (`P*` -> `H*`,
  `*Sciences` -> `*Engineering`, `*python*` -> `*essays*`), the most frequent one first. The
  new filter keeps some but not all of the observed objects, and not the same ones.
- `property`: every other property of the same kind, in a filter or aggregation slot.
- `metric`: every other metric of the aggregation's kind.
- `groupby`: every other property that can be grouped by, except prose (one group per object).
- `collection`: every other collection of the same use case that has the label's properties under
  the same names and kinds.

A mutation kind with no valid alternative for a component is skipped and counted as such.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from executors import (
    SUPPORTED_TOKENIZATIONS,
    CollectionSchema,
    DatabaseSchema,
    ExecutorError,
    FilterSpec,
    PropertyKind,
    PropertySchema,
    QueryDatabaseArguments,
    go_trim_space,
    tokenize,
    validate_arguments,
)
from executors.reference import matches
from executors.vocabulary import AGGREGATION_FIELDS, FIELD_KIND, FILTER_FIELDS, METRICS, OPERATORS
from fixtures.use_cases import TextRole, UseCase

MUTATION_KINDS = ("operator", "value", "property", "metric", "groupby", "collection")
#: A moved number threshold must move at least this share of the observed objects across it.
MIN_CROSSED_SHARE = 0.05
#: Words of prose shorter than this are not offered as replacement values.
MIN_WORD_LENGTH = 4


class Mutant(BaseModel):
    """One single-component change of a label: `field` (e.g. `text_property_filter.value`) `before` -> `after`."""

    model_config = ConfigDict(frozen=True)

    kind: str
    field: str
    before: Any
    after: Any
    arguments: QueryDatabaseArguments

    @property
    def description(self) -> str:
        return f"{self.field}: {json.dumps(_plain(self.before))} -> {json.dumps(_plain(self.after))}"


def _plain(value: Any) -> Any:
    """25.0 -> 25 for display (tool arguments hold numbers as floats)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


@dataclass(frozen=True)
class MutationContext:
    """What mutants are checked against: the live schema and the objects observed in each collection."""

    schema: DatabaseSchema
    #: collection -> property dicts of its objects (values and thresholds are picked from these)
    objects: Mapping[str, list[Mapping[str, Any]]] = field(default_factory=dict)
    #: collection -> the other collections of its use case (collection mutants)
    siblings: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: collection -> its prose properties (not offered as group-by; values are their words)
    prose: Mapping[str, frozenset[str]] = field(default_factory=dict)


def flatten(arguments: QueryDatabaseArguments) -> dict[str, Any]:
    """`{"collection_name": ..., "integer_property_filter.operator": ">", ...}`: one key per component."""
    flat: dict[str, Any] = {}
    for key, value in arguments.to_tool_arguments().items():
        if isinstance(value, dict):
            flat.update({f"{key}.{inner}": item for inner, item in value.items()})
        else:
            flat[key] = value
    return flat


def unflatten(flat: Mapping[str, Any]) -> QueryDatabaseArguments:
    data: dict[str, Any] = {}
    for key, value in flat.items():
        slot, _, inner = key.partition(".")
        if inner:
            data.setdefault(slot, {})[inner] = value
        else:
            data[slot] = value
    return QueryDatabaseArguments.model_validate(data)


def with_component(arguments: QueryDatabaseArguments, key: str, value: Any) -> QueryDatabaseArguments:
    """`arguments` with the one component `key` set to `value`."""
    flat = flatten(arguments)
    flat[key] = value
    return unflatten(flat)


def _valid(arguments: QueryDatabaseArguments, schema: DatabaseSchema) -> bool:
    try:
        validate_arguments(arguments, schema)
    except ExecutorError:
        return False
    return True


def derive_mutants(arguments: QueryDatabaseArguments, context: MutationContext) -> tuple[list[Mutant], list[str]]:
    """The label's valid single-component mutants, and the components where a mutation kind had none.

    Skipped entries read `kind:field`, e.g. `property:integer_property_filter.property_name`.
    """
    mutants: list[Mutant] = []
    skipped: list[str] = []
    collection = context.schema.get(arguments.collection_name)
    if collection is None or not _valid(arguments, context.schema):
        return [], []
    current = flatten(arguments)

    def emit(kind: str, key: str, candidates: Iterable[Any]) -> None:
        made = 0
        for candidate in candidates:
            if candidate == current[key]:
                continue
            try:
                mutated = with_component(arguments, key, candidate)
            except ValidationError:
                continue
            if _valid(mutated, context.schema):
                mutants.append(Mutant(kind=kind, field=key, before=current[key], after=candidate, arguments=mutated))
                made += 1
        if not made:
            skipped.append(f"{kind}:{key}")

    for slot in FILTER_FIELDS:
        flt = getattr(arguments, slot)
        if flt is None:
            continue
        prop = collection.get_property(flt.property_name)
        operators = [
            op
            for op in OPERATORS[FIELD_KIND[slot]]
            if not _equivalent_operator(slot, flt.operator.value, op, flt.value)
        ]
        emit("operator", f"{slot}.operator", operators)
        value = plausible_value(arguments, slot, context)
        emit("value", f"{slot}.value", [] if value is None else [value])
        emit("property", f"{slot}.property_name", _same_kind(collection, prop))
    for slot in AGGREGATION_FIELDS:
        aggregation = getattr(arguments, slot)
        if aggregation is None:
            continue
        emit("metric", f"{slot}.metrics", METRICS[FIELD_KIND[slot]])
        emit(
            "property",
            f"{slot}.property_name",
            _same_kind(collection, collection.get_property(aggregation.property_name)),
        )
    if arguments.groupby_property is not None:
        prose = context.prose.get(collection.name, frozenset())
        emit(
            "groupby",
            "groupby_property",
            [p.name for p in collection.properties if p.kind is not None and p.name not in prose],
        )
    siblings = [
        name
        for name in context.siblings.get(collection.name, ())
        if (other := context.schema.get(name)) is not None and _has_same_properties(arguments, collection, other)
    ]
    emit("collection", "collection_name", siblings)
    return mutants, skipped


def _equivalent_operator(slot: str, before: str, after: str, value: Any) -> bool:
    """Text `=` and `LIKE` of a value without wildcards select the same objects on any data."""
    if slot != "text_property_filter" or {before, after} != {"=", "LIKE"}:
        return False
    return "*" not in str(value) and "?" not in str(value)


def _same_kind(collection: CollectionSchema, prop: PropertySchema | None) -> list[str]:
    if prop is None or prop.kind is None:
        return []
    return [p.name for p in collection.properties if p.kind == prop.kind and p.name != prop.name]


def _has_same_properties(
    arguments: QueryDatabaseArguments, collection: CollectionSchema, other: CollectionSchema
) -> bool:
    names = [getattr(arguments, slot).property_name for slot in FIELD_KIND if getattr(arguments, slot) is not None]
    if arguments.groupby_property:
        names.append(arguments.groupby_property)
    for name in names:
        mine, theirs = collection.get_property(name), other.get_property(name)
        if mine is None or theirs is None or mine.kind != theirs.kind:
            return False
    return True


def plausible_value(arguments: QueryDatabaseArguments, slot: str, context: MutationContext) -> Any:
    """Another value for the filter in `slot` that a model could plausibly have written, or None."""
    flt = getattr(arguments, slot)
    if FIELD_KIND[slot] is PropertyKind.BOOLEAN:
        return not flt.value
    try:
        spec = validate_arguments(arguments, context.schema)
    except ExecutorError:
        return None
    collection = spec.collection
    original = next(f for f in spec.filters if f.slot == slot)
    objects = list(context.objects.get(collection.name, []))
    if not objects:
        return None
    try:
        kept = _kept(original, objects, collection)
    except ExecutorError:  # a tokenization the reference does not model
        return None
    if FIELD_KIND[slot] is PropertyKind.NUMBER:
        return _number_value(arguments, slot, original, objects, kept, context)
    return _text_value(arguments, slot, original, objects, kept, context)


def _kept(flt: FilterSpec, objects: list[Mapping[str, Any]], collection: CollectionSchema) -> frozenset[int]:
    return frozenset(i for i, obj in enumerate(objects) if matches(flt, obj, collection))


def _first_distinct(
    arguments: QueryDatabaseArguments,
    slot: str,
    candidates: Iterable[Any],
    objects: list[Mapping[str, Any]],
    kept: frozenset[int],
    context: MutationContext,
    min_crossed: int = 1,
) -> Any:
    """The first candidate whose filter keeps some but not all objects, and not the same ones."""
    for candidate in candidates:
        try:
            spec = validate_arguments(with_component(arguments, f"{slot}.value", candidate), context.schema)
            now = _kept(next(f for f in spec.filters if f.slot == slot), objects, spec.collection)
        except (ExecutorError, ValidationError):
            continue
        if 0 < len(now) < len(objects) and len(now ^ kept) >= min_crossed:
            return candidate
    return None


def _number_value(
    arguments: QueryDatabaseArguments,
    slot: str,
    original: FilterSpec,
    objects: list[Mapping[str, Any]],
    kept: frozenset[int],
    context: MutationContext,
) -> Any:
    name = original.prop.name
    present = [
        float(o[name]) for o in objects if isinstance(o.get(name), int | float) and not isinstance(o[name], bool)
    ]
    threshold = float(original.value)
    values = sorted({v for v in present if v != threshold}, key=lambda v: (abs(v - threshold), v))
    crossed = 1 if original.operator == "=" else max(1, math.ceil(MIN_CROSSED_SHARE * len(present)))
    chosen = _first_distinct(arguments, slot, values, objects, kept, context, crossed)
    if chosen is None:
        return None
    return int(chosen) if float(chosen).is_integer() else chosen


def _text_value(
    arguments: QueryDatabaseArguments,
    slot: str,
    original: FilterSpec,
    objects: list[Mapping[str, Any]],
    kept: frozenset[int],
    context: MutationContext,
) -> Any:
    name, pattern = original.prop.name, str(original.value)
    texts = [str(o[name]) for o in objects if o.get(name) is not None]
    prose = name in context.prose.get(arguments.collection_name, frozenset())
    tokenization = original.prop.tokenization or "word"
    if prose:
        stopwords = context.schema.get(arguments.collection_name).stopwords  # type: ignore[union-attr]
        frequency: Counter[str] = Counter()
        for text in texts:
            words = set(tokenize(text, tokenization)) if tokenization in SUPPORTED_TOKENIZATIONS else set()
            frequency.update(w for w in words if len(w) >= MIN_WORD_LENGTH and w.isalpha() and w not in stopwords)
        literals = frequency
    else:
        literals = Counter(go_trim_space(text) for text in texts)
    ordered = sorted(literals, key=lambda lit: (-literals[lit], lit))
    if original.operator == "LIKE":
        candidates = list(dict.fromkeys(v for lit in ordered if (v := like_variant(pattern, lit)) is not None))
    else:
        candidates = ordered
    same = pattern.strip("*").lower()
    candidates = [c for c in candidates if c.strip("*").lower() != same]
    return _first_distinct(arguments, slot, candidates, objects, kept, context)


def like_variant(pattern: str, literal: str) -> str | None:
    """`literal` in the shape of `pattern`: `P*` + History -> `H*`, `*Sciences` + Fine Arts -> `*Arts`."""
    lead, trail = pattern.startswith("*"), pattern.endswith("*")
    core = pattern.strip("*")
    literal = literal.strip()
    if not literal:
        return None
    whole_word = len(core) >= 4 and core.isalnum()
    if trail and not lead and "*" not in core and "?" not in core:
        words = literal.split()
        return (words[0] if whole_word else literal[: len(core)]) + "*"
    if lead and not trail and "*" not in core and "?" not in core:
        words = literal.split()
        return "*" + (words[-1] if whole_word else literal[-len(core) :])
    return ("*" if lead else "") + literal + ("*" if trail else "")


def use_case_context(
    schema: DatabaseSchema, use_cases: Iterable[UseCase], objects: Mapping[str, list[Mapping[str, Any]]]
) -> MutationContext:
    """Siblings and prose properties from the use-case specs (roles guessed for imported schemas)."""
    siblings: dict[str, tuple[str, ...]] = {}
    prose: dict[str, frozenset[str]] = {}
    for use_case in use_cases:
        names = [c.name for c in use_case.collections]
        for spec in use_case.collections:
            siblings.setdefault(spec.name, tuple(n for n in names if n != spec.name))
            prose.setdefault(spec.name, frozenset(p.name for p in spec.properties if p.role is TextRole.RICH))
    return MutationContext(schema=schema, objects=objects, siblings=siblings, prose=prose)
