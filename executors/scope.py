"""Scoping filters: what the caller ANDs into every query the model makes, as Weaviate's Query Agent does.

A demo over one tenant's data, or an assistant that may only see one owner's objects, needs a
bound the model cannot talk its way out of. The scope is applied below the model's arguments:
after a call is validated, its filters gain the scope's (`QuerySpec.scope`), and the plan passes
them to every Weaviate call it makes (the search's hits, the listing and its count, aggregates,
groups and their samples). A collection without an entry is out of scope: the executor's schema
leaves it out, so the tool never offers it and a call naming it is an unknown collection.

    scope = Scope(filters={"Restaurants": [ScopeFilter(property_name="city", operator="=", value="Lisbon")]})
    executor = WeaviateExecutor(client, scope=scope)
    executor = WeaviateExecutor(client, scope=parse_scope(["Restaurants.city=Lisbon"]))   # the same
"""

from __future__ import annotations

import dataclasses

from pydantic import BaseModel, ConfigDict, Field

from executors._resolve import check_filter_value
from executors.errors import Blame, ExecutorError
from executors.schema import CollectionSchema, DatabaseSchema
from executors.spec import FilterSpec, QuerySpec
from executors.vocabulary import OPERATORS, PropertyKind

SCOPE_SLOT = "scope"


class ScopeError(ExecutorError):
    """The caller's scope does not fit the database: a fault of the configuration, not the model."""

    code = "invalid_scope"
    blame = Blame.EXECUTOR


class ScopeFilter(BaseModel):
    """`property_name operator value`, with the tool's operators for the property's type."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    property_name: str
    operator: str
    value: str | bool | float


class Scope(BaseModel):
    """Per collection, the filters ANDed into every call; collections not named are out of scope."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    filters: dict[str, list[ScopeFilter]] = Field(min_length=1)

    def schema_in_scope(self, schema: DatabaseSchema) -> DatabaseSchema:
        """The collections the model may see: only those the scope names (every filter is checked)."""
        self.resolve(schema)
        return schema.only(self.filters)

    def resolve(self, schema: DatabaseSchema) -> dict[str, tuple[FilterSpec, ...]]:
        """Each collection's filters checked against the schema; `ScopeError` names what does not fit."""
        missing = sorted(set(self.filters) - set(schema.names()))
        if missing:
            raise ScopeError(f"the scope names collections the database does not have: {', '.join(missing)}")
        resolved = {}
        for name, items in self.filters.items():
            collection = schema.get(name)
            assert collection is not None
            resolved[name] = tuple(_filter_spec(collection, item) for item in items)
        return resolved

    def apply(self, spec: QuerySpec) -> QuerySpec:
        """`spec` with the scope's filters of its collection attached."""
        collection = spec.collection
        if collection.name not in self.filters:  # the schema in scope already hides it; never widen
            raise ScopeError(f"collection {collection.name} is out of scope")
        specs = tuple(_filter_spec(collection, item) for item in self.filters[collection.name])
        return dataclasses.replace(spec, scope=specs)


def _filter_spec(collection: CollectionSchema, item: ScopeFilter) -> FilterSpec:
    prop = collection.get_property(item.property_name)
    if prop is None or prop.kind is None:
        raise ScopeError(f"the scope filters {collection.name} on '{item.property_name}', which it cannot")
    if item.operator not in OPERATORS[prop.kind]:
        raise ScopeError(
            f"the scope's operator {item.operator!r} does not apply to {prop.kind.value} property "
            f"'{prop.name}' (use one of {', '.join(OPERATORS[prop.kind])})"
        )
    try:
        value = check_filter_value(collection, prop, SCOPE_SLOT, item.operator, _typed(prop.kind, item.value))
    except (ExecutorError, TypeError, ValueError) as error:
        raise ScopeError(f"the scope's value for '{prop.name}' is invalid: {error}") from None
    return FilterSpec(prop=prop, operator=item.operator, value=value, slot=SCOPE_SLOT)


def _typed(kind: PropertyKind, value: str | bool | float) -> str | bool | float:
    """The value as the property's type; text from a command line ("12", "true") is converted."""
    if kind is PropertyKind.BOOLEAN:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
    elif kind is PropertyKind.NUMBER:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return value
        if isinstance(value, str):
            return float(value)
    elif isinstance(value, str):
        return value
    raise ValueError(f"must be {kind.value}; got {value!r}")


#: The tool's operators as written in `Collection.property<op>value` (words need spaces around them),
#: longest first so ">=" is not read as ">".
_WRITTEN_OPERATORS = tuple(
    sorted({f" {op} " if op.isalpha() else op for ops in OPERATORS.values() for op in ops}, key=len, reverse=True)
)


def parse_scope(items: list[str]) -> Scope | None:
    """`["Restaurants.city=Lisbon", "Reservations.partySize<=4"]` -> a `Scope` (None for no items)."""
    filters: dict[str, list[ScopeFilter]] = {}
    for item in items:
        target, operator, value = _split(item)
        collection, _, prop = target.partition(".")
        if not collection or not prop:
            raise ScopeError(f"scope {item!r}: write Collection.property<operator>value, e.g. Restaurants.city=Lisbon")
        filters.setdefault(collection, []).append(ScopeFilter(property_name=prop, operator=operator, value=value))
    return Scope(filters=filters) if filters else None


def _split(item: str) -> tuple[str, str, str]:
    for written in _WRITTEN_OPERATORS:
        target, found, value = item.partition(written)
        if found and value:
            return target.strip(), written.strip(), value.strip()
    raise ScopeError(f"scope {item!r} has no operator (one of: {', '.join(o.strip() for o in _WRITTEN_OPERATORS)})")


def visible_schema(scope: Scope | None, schema: DatabaseSchema) -> DatabaseSchema:
    """What an executor shows and validates against: the whole schema, or the part in scope."""
    return schema if scope is None else scope.schema_in_scope(schema)


def scoped(scope: Scope | None, spec: QuerySpec) -> QuerySpec:
    """A validated call as it runs: unchanged, or with the scope's filters attached."""
    return spec if scope is None else scope.apply(spec)
