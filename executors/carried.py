"""A conversation's earlier conditions, kept by a follow-up: "and how many of those are female?".

The earlier turn found its objects with filters; a follow-up that refers back ("those", "them",
"there") counts, lists or averages within them. The agent carries the earlier call's conditions
(`Carried`) instead of asking the model to write them again, and the executor ANDs them into the
follow-up's call below the model, as it does a scope: only on a call to the same collection, and
only on the properties the call does not filter itself (a follow-up naming another value of a
property replaces the earlier one). They are the `compound` tool's conditions, so they are checked
against the live schema exactly as a model's would be, and they are stored as plain JSON.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from executors._validate import parse_arguments, validate_arguments
from executors.schema import DatabaseSchema
from executors.spec import FilterSpec, QuerySpec
from executors.vocabulary import ToolOperations


class Carried(BaseModel):
    """The conditions a follow-up keeps, on one collection (`compound` conditions, joined by and)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    collection: str
    conditions: tuple[dict[str, Any], ...]

    def specs(self, schema: DatabaseSchema) -> tuple[FilterSpec, ...]:
        """The conditions checked against `schema`; an `ExecutorError` when one no longer fits."""
        call = {"collection_name": self.collection, "conditions": list(self.conditions)}
        arguments = parse_arguments(call, ToolOperations.COMPOUND)
        return validate_arguments(arguments, schema.for_operations(ToolOperations.COMPOUND)).filters

    def apply(self, spec: QuerySpec, schema: DatabaseSchema) -> QuerySpec:
        """`spec` with the carried filters on the properties it does not filter itself (same collection only)."""
        if spec.collection.name != self.collection:
            return spec
        own = {(f.via, f.prop.name) for f in spec.all_filters}
        kept = tuple(f for f in self.specs(schema) if (f.via, f.prop.name) not in own)
        return dataclasses.replace(spec, carried=kept)


def condition_of(spec: FilterSpec) -> dict[str, Any] | None:
    """One filter as a `compound` condition (None: one read through a reference, which conditions cannot hold)."""
    if spec.via is not None:
        return None
    value = spec.value
    if isinstance(value, datetime):
        value = value.isoformat().replace("+00:00", "Z")
    return {"property_name": spec.prop.name, "operator": spec.operator, "value": value}


def carried_from(spec: QuerySpec, also: tuple[dict[str, Any], ...] = ()) -> Carried | None:
    """What a follow-up of this call keeps: its own filters and those it carried (alternatives are not
    carried: an `or` cannot be ANDed), plus `also` (e.g. the group the answer named); None when nothing."""
    names = {c["property_name"] for c in also}
    own = [condition_of(f) for f in (*spec.filters, *spec.carried)]
    conditions = [c for c in own if c is not None and c["property_name"] not in names] + list(also)
    return Carried(collection=spec.collection.name, conditions=tuple(conditions)) if conditions else None
