"""A pure-Python executor with Weaviate's filter, aggregate and group-by semantics.

It runs every call without `search_query` over an in-memory list of objects and returns the
same `QueryResult` as `WeaviateExecutor`, so `compare_results(reference, live)` is a
differential test of the translation. Semantics follow Weaviate v1.39's source:

- filters: `_text` for text tokenization (`field`, `word`, `whitespace`, `lowercase`); numbers and
  booleans never match a missing value, except boolean `!=`, which Weaviate runs as a deny list
  and so also matches objects without the property.
- COUNT counts objects with a non-null value; MEDIAN is the middle value (mean of the two middle
  ones for an even count); MODE is the most frequent value, the smallest on ties; MEAN/SUM/MIN/MAX
  and PERCENTAGE_* (a fraction) are undefined (None) over no values, TOTAL_* are 0.
- TOP_OCCURRENCES counts whole values (not tokens), most frequent first, ties by value.
- group-by buckets objects by their whole value; groups are ordered by size then value.
"""

from __future__ import annotations

import uuid as uuid_lib
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from executors import _text
from executors._assemble import Hit, attach_samples, groups_total, notes_for, order_groups, to_object
from executors._plan import NIL_UUID, build_plan, top_occurrences_limit
from executors._validate import parse_arguments, validate_arguments
from executors.errors import UnsupportedQueryError
from executors.options import ExecutorOptions
from executors.results import GroupResult, MetricValue, QueryResult, TopOccurrence, group_key
from executors.schema import CollectionSchema, DatabaseSchema
from executors.spec import AggregationSpec, FilterSpec, QuerySpec
from executors.vocabulary import NUMBER_COMPARISONS, SCHEMA_METRICS, PropertyKind
from executors.weaviate_executor import RawArguments, ReadOnlyWeaviate, typed_errors


class DataObject(BaseModel):
    """One stored object: its UUID and its property values (missing or None = null)."""

    model_config = ConfigDict(frozen=True)

    uuid: str
    properties: dict[str, Any]

    @field_validator("uuid", mode="before")
    @classmethod
    def _canonical_uuid(cls, value: Any) -> str:
        return str(uuid_lib.UUID(str(value)))


def _as_data_object(item: DataObject | Mapping[str, Any] | Any) -> DataObject:
    if isinstance(item, DataObject):
        return item
    if isinstance(item, Mapping):
        return DataObject.model_validate(item)
    return DataObject(uuid=item.uuid, properties=dict(item.properties or {}))


class ReferenceExecutor:
    """Evaluates non-search tool calls over in-memory objects, as Weaviate would."""

    def __init__(
        self,
        schema: DatabaseSchema,
        objects: Mapping[str, Iterable[DataObject | Mapping[str, Any]]],
        options: ExecutorOptions | None = None,
    ) -> None:
        self._schema = schema
        self._options = options or ExecutorOptions()
        self._objects = {
            name: sorted((_as_data_object(item) for item in items), key=lambda o: o.uuid)
            for name, items in objects.items()
        }

    @classmethod
    def from_weaviate(
        cls, client: Any, collections: Iterable[str] | None = None, options: ExecutorOptions | None = None
    ) -> ReferenceExecutor:
        """Snapshot collections (all by default) of a live Weaviate with read-only iterators."""
        with typed_errors():
            schema = ReadOnlyWeaviate(client).read_schema()
            names = list(collections) if collections is not None else schema.names()
            objects = {
                name: [
                    DataObject(uuid=str(obj.uuid), properties=dict(obj.properties))
                    for obj in client.collections.use(name).iterator()
                ]
                for name in names
            }
        return cls(schema, objects, options)

    @property
    def schema(self) -> DatabaseSchema:
        return self._schema

    def with_options(self, options: ExecutorOptions) -> ReferenceExecutor:
        """A sibling with other limits over the same objects (like `WeaviateExecutor.with_options`)."""
        sibling = object.__new__(ReferenceExecutor)
        sibling._schema, sibling._objects, sibling._options = self._schema, self._objects, options
        return sibling

    @property
    def options(self) -> ExecutorOptions:
        return self._options

    def validate(self, arguments: RawArguments) -> QuerySpec:
        with typed_errors():
            return validate_arguments(parse_arguments(arguments), self._schema)

    def execute(self, arguments: RawArguments) -> QueryResult:
        with typed_errors():
            spec = self.validate(arguments)
            if spec.has_search:
                raise UnsupportedQueryError(
                    "The reference executor cannot rank search results; leave out search_query.",
                    field="search_query",
                )
            return self._run(spec)

    def _run(self, spec: QuerySpec) -> QueryResult:
        options = self._options
        collection = spec.collection
        matched = [
            obj
            for obj in self._objects.get(collection.name, [])
            if all(matches(f, obj.properties, collection) for f in spec.filters)
        ]
        result = QueryResult(
            collection=collection.name,
            operator_class=spec.operator_class(),
            group_by=spec.group_by.name if spec.group_by is not None else None,
            calls=build_plan(spec, options).rendered(),
            notes=notes_for(spec, options),
        )
        # Unfiltered fetches use Weaviate's cursor, which starts after the nil UUID.
        listed = matched if spec.filters else [o for o in matched if o.uuid != NIL_UUID]
        if spec.group_by is None and not spec.aggregations:
            matched = listed
            result.truncated = len(matched) > options.fetch_limit
            result.objects = [to_object(collection, Hit(o.uuid, o.properties)) for o in matched[: options.fetch_limit]]
            result.total_count = None if result.truncated else len(matched)
            return result
        if spec.group_by is None:
            result.aggregations = {a.prop.name: aggregate(a, matched, options) for a in spec.aggregations}
            result.total_count = len(matched)
            return result
        buckets: dict[str, list[DataObject]] = {}
        for obj in matched:
            value = obj.properties.get(spec.group_by.name)
            if value is not None:
                buckets.setdefault(group_key(_normalised(value)), []).append(obj)
        groups = [
            GroupResult(
                value=key,
                count=len(members),
                aggregations={a.prop.name: aggregate(a, members, options) for a in spec.aggregations},
            )
            for key, members in buckets.items()
        ]
        result.groups, result.truncated = order_groups(groups, options.max_groups)
        result.total_count = groups_total(result.groups, result.truncated)
        if not spec.aggregations and options.samples_per_group > 0:
            scanned = [Hit(o.uuid, o.properties) for o in listed[: options.group_sample_scan_limit]]
            attach_samples(collection, result.groups, scanned, spec.group_by, options.samples_per_group, False)
        return result


def _normalised(value: Any) -> Any:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


def matches(spec: FilterSpec, properties: Mapping[str, Any], collection: CollectionSchema) -> bool:
    """Does one object satisfy one filter, by Weaviate's rules?"""
    value = properties.get(spec.prop.name)
    if spec.kind == PropertyKind.BOOLEAN:
        if spec.operator == "!=":
            return value is None or bool(value) != spec.value
        return value is not None and bool(value) == spec.value
    if value is None:
        return False
    if spec.kind == PropertyKind.NUMBER:
        return NUMBER_COMPARISONS[spec.operator](float(value), float(spec.value))
    tokenization = spec.prop.tokenization or "word"
    if tokenization not in _text.SUPPORTED_TOKENIZATIONS or spec.prop.ascii_fold:
        what = "ASCII folding" if spec.prop.ascii_fold else f"{tokenization!r} tokenization"
        raise UnsupportedQueryError(f"The reference executor does not model {what} (property '{spec.prop.name}').")
    if spec.operator == "LIKE":
        return _text.text_like(str(value), str(spec.value), tokenization)
    return _text.text_equal(str(value), str(spec.value), tokenization, collection.stopwords)


def aggregate(spec: AggregationSpec, objects: list[DataObject], options: ExecutorOptions) -> dict[str, MetricValue]:
    """The requested metrics of one property over `objects`, normalised like the live executor's."""
    values = [obj.properties.get(spec.prop.name) for obj in objects]
    present = [value for value in values if value is not None]
    out: dict[str, MetricValue] = {}
    for metric in spec.metrics:
        if metric in SCHEMA_METRICS:
            out[metric] = spec.prop.data_type
        elif metric == "COUNT":
            out[metric] = float(len(present))
        elif spec.kind == PropertyKind.NUMBER:
            out[metric] = _number_metric(metric, sorted(float(v) for v in present))
        elif spec.kind == PropertyKind.TEXT:
            out[metric] = _top_occurrences([str(v) for v in present], top_occurrences_limit(spec, options))
        else:
            out[metric] = _boolean_metric(metric, [bool(v) for v in present])
    return out


def _number_metric(metric: str, values: list[float]) -> float | None:
    if not values:
        return None
    if metric == "MIN":
        return values[0]
    if metric == "MAX":
        return values[-1]
    if metric == "SUM":
        return float(sum(values))
    if metric == "MEAN":
        return sum(values) / len(values)
    if metric == "MEDIAN":
        middle = len(values) // 2
        return values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2
    if metric == "MODE":
        counts = Counter(values)
        return min(counts, key=lambda v: (-counts[v], v))
    raise UnsupportedQueryError(f"Unknown number metric {metric}.")


def _top_occurrences(values: list[str], limit: int) -> list[TopOccurrence]:
    counts = Counter(values)
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [TopOccurrence(value=value, count=count) for value, count in ordered[:limit]]


def _boolean_metric(metric: str, values: list[bool]) -> float | None:
    true, total = sum(values), len(values)
    false = total - true
    if metric == "TOTAL_TRUE":
        return float(true)
    if metric == "TOTAL_FALSE":
        return float(false)
    if metric == "PERCENTAGE_TRUE":
        return true / total if total else None
    if metric == "PERCENTAGE_FALSE":
        return false / total if total else None
    raise UnsupportedQueryError(f"Unknown boolean metric {metric}.")
