"""A pure-Python executor with Weaviate's filter, search, aggregate and group-by semantics.

It runs the same calls over an in-memory list of objects and returns the same `QueryResult` as
`WeaviateExecutor`, so `compare_results(reference, live)` is a differential test of the
translation. Semantics follow Weaviate v1.39's source:

- filters: `_text` for text tokenization (`field`, `word`, `whitespace`, `lowercase`); numbers and
  booleans never match a missing value, except boolean `!=`, which Weaviate runs as a deny list
  and so also matches objects without the property.
- search (near_text only): the objects whose cosine distance to the query's vector is at most
  `search_max_distance`, closest first, ties by UUID. It needs the objects' vectors and an `embed`
  callable that gives the query's vector from the same model Weaviate's vectorizer uses; without
  them a search is an `UnsupportedQueryError`. Hybrid and BM25 ranking are not modelled.
- metrics: see `_metrics`; group-by buckets objects by their whole value; groups are ordered by
  size then value.
- a text `=` whose value is stored whole excludes the longer stored values holding its words, as the
  live executor's `not_equal` filters do (`whole_value`, over the distinct values of its objects).
"""

from __future__ import annotations

import math
import uuid as uuid_lib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator
from weaviate.classes.query import QueryReference

from executors import _text
from executors._assemble import Hit, attach_samples, groups_total, notes_for, order_groups, ranked_objects, to_object
from executors._metrics import aggregate
from executors._plan import NIL_UUID, build_plan
from executors._validate import parse_arguments, validate_arguments
from executors.errors import UnsupportedQueryError
from executors.options import ExecutorOptions, SearchMode
from executors.ownership import CollectionNames
from executors.read_only import ReadOnlyWeaviate, typed_errors
from executors.results import GroupResult, QueryResult, group_key
from executors.schema import CollectionSchema, DatabaseSchema
from executors.scope import Scope, scoped, visible_schema
from executors.spec import FilterSpec, QuerySpec, SortSpec
from executors.vocabulary import NUMBER_COMPARISONS, PropertyKind, ToolOperations
from executors.weaviate_executor import RawArguments
from executors.whole_value import StoredValues, WholeValue, distinct_values, whole_values

#: text -> its vector, from the model the collections were vectorized with.
Embed = Callable[[str], Sequence[float]]


class DataObject(BaseModel):
    """One stored object: its UUID, its property values (missing or None = null) and its vector."""

    model_config = ConfigDict(frozen=True)

    uuid: str
    properties: dict[str, Any]
    vector: tuple[float, ...] | None = None

    @field_validator("uuid", mode="before")
    @classmethod
    def _canonical_uuid(cls, value: Any) -> str:
        return str(uuid_lib.UUID(str(value)))


def _as_data_object(item: DataObject | Mapping[str, Any] | Any) -> DataObject:
    if isinstance(item, DataObject):
        return item
    if isinstance(item, Mapping):
        return DataObject.model_validate(item)
    vector = getattr(item, "vector", None)
    if isinstance(vector, Mapping):  # weaviate-client: {"default": [...]}
        vector = next(iter(vector.values()), None)
    properties = dict(item.properties or {})
    for name, ref in (getattr(item, "references", None) or {}).items():
        if ref.objects:
            properties[name] = ", ".join(str(o.uuid) for o in ref.objects)
    return DataObject(uuid=item.uuid, properties=properties, vector=vector)


def cosine_distance(left: Sequence[float], right: Sequence[float]) -> float:
    """1 - cos(left, right), as Weaviate's `cosine` distance."""
    dot = sum(a * b for a, b in zip(left, right, strict=True))
    norms = math.sqrt(sum(a * a for a in left)) * math.sqrt(sum(b * b for b in right))
    return 1.0 - dot / norms if norms else 1.0


class ReferenceExecutor:
    """Evaluates tool calls over in-memory objects, as Weaviate would."""

    def __init__(
        self,
        schema: DatabaseSchema,
        objects: Mapping[str, Iterable[DataObject | Mapping[str, Any]]],
        options: ExecutorOptions | None = None,
        *,
        embed: Embed | None = None,
        scope: Scope | None = None,
        operations: ToolOperations = ToolOperations.PAPER,
    ) -> None:
        self._schema = schema
        self._scope = scope
        self._operations = operations
        self._options = options or ExecutorOptions()
        self._embed = embed
        #: (collection, query) -> distances: the objects never change, so neither do these
        self._distances: dict[tuple[str, str], dict[str, float]] = {}
        self._objects = {
            name: sorted((_with_dates(_as_data_object(item), schema.get(name)) for item in items), key=lambda o: o.uuid)
            for name, items in objects.items()
        }
        #: collection -> uuid -> object: what a reference points to
        self._by_uuid = {name: {o.uuid: o for o in items} for name, items in self._objects.items()}
        self._stored_values = StoredValues(self._read_stored_values)

    @classmethod
    def from_weaviate(
        cls,
        client: Any,
        collections: Iterable[str] | None = None,
        options: ExecutorOptions | None = None,
        *,
        embed: Embed | None = None,
        scope: Scope | None = None,
        names: CollectionNames | None = None,
        operations: ToolOperations = ToolOperations.PAPER,
    ) -> ReferenceExecutor:
        """Snapshot collections (all by default; logical names under `names`), vectors and references
        included, with read-only iterators."""
        names = names or CollectionNames()
        with typed_errors():
            schema = ReadOnlyWeaviate(client, names=names).read_schema()
            wanted = list(collections) if collections is not None else schema.names()
            objects: dict[str, list[DataObject]] = {}
            for name in wanted:
                collection = schema.get(name)
                links = [r.name for r in collection.references] if collection is not None else []
                refs = [QueryReference(link_on=link, return_properties=[]) for link in links] or None
                objects[name] = [
                    _as_data_object(obj)
                    for obj in client.collections.use(names.physical(name)).iterator(
                        include_vector=True, return_references=refs
                    )
                ]
        return cls(schema, objects, options, embed=embed, scope=scope, operations=operations)

    @property
    def schema(self) -> DatabaseSchema:
        """The schema its operations see; with a scope, only the collections in it."""
        return visible_schema(self._scope, self._schema.for_operations(self._operations))

    @property
    def operations(self) -> ToolOperations:
        return self._operations

    def with_operations(self, operations: ToolOperations) -> ReferenceExecutor:
        """A sibling over the same objects that offers other operations."""
        sibling = self.with_options(self._options)
        sibling._operations = operations
        return sibling

    def with_options(self, options: ExecutorOptions) -> ReferenceExecutor:
        """A sibling with other limits over the same objects (like `WeaviateExecutor.with_options`)."""
        sibling = object.__new__(ReferenceExecutor)
        sibling._schema, sibling._objects, sibling._embed = self._schema, self._objects, self._embed
        sibling._scope, sibling._operations, sibling._by_uuid = self._scope, self._operations, self._by_uuid
        sibling._distances, sibling._stored_values = self._distances, self._stored_values
        sibling._options = options
        return sibling

    @property
    def options(self) -> ExecutorOptions:
        return self._options

    def validate(self, arguments: RawArguments) -> QuerySpec:
        with typed_errors():
            return scoped(self._scope, validate_arguments(parse_arguments(arguments, self._operations), self.schema))

    def execute(self, arguments: RawArguments) -> QueryResult:
        with typed_errors():
            return self._run(self.validate(arguments))

    def search_distances(self, collection: str, query: str) -> dict[str, float]:
        """Every object's cosine distance to `query` (for audits of the relevance cut)."""
        if self._embed is None:
            raise UnsupportedQueryError("The reference executor needs an `embed` callable to search.")
        cached = self._distances.get((collection, query))
        if cached is not None:
            return dict(cached)
        vector = list(self._embed(query))
        distances = {}
        for obj in self._objects.get(collection, []):
            if obj.vector is None:
                raise UnsupportedQueryError(f"Object {obj.uuid} of '{collection}' has no vector to search with.")
            distances[obj.uuid] = cosine_distance(vector, obj.vector)
        self._distances[(collection, query)] = distances
        return dict(distances)

    def _hits(self, spec: QuerySpec, matched: list[DataObject]) -> list[Hit]:
        options = self._options
        if options.search_mode is not SearchMode.NEAR_TEXT:
            raise UnsupportedQueryError(
                f"The reference executor models near_text search only, not {options.search_mode.value}.",
                field="search_query",
            )
        assert spec.search_query is not None
        distances = self.search_distances(spec.collection.name, spec.search_query)
        hits = [
            Hit(o.uuid, o.properties, distance=distances[o.uuid])
            for o in matched
            if distances[o.uuid] <= options.search_max_distance
        ]
        hits.sort(key=lambda hit: (hit.distance, hit.uuid))
        return hits[: options.search_hit_limit]

    def _read_stored_values(self, collection: str, prop: str, scope: tuple[FilterSpec, ...]) -> tuple[str, ...] | None:
        """What the live executor's TOP_OCCURRENCES read gives: the distinct values in the scope (None: too many)."""
        schema = self._schema.get(collection)
        objects = self._objects.get(collection, [])
        if scope and schema is not None:
            objects = [o for o in objects if all(self._matches(f, o.properties, schema) for f in scope)]
        return distinct_values(o.properties.get(prop) for o in objects)

    def _run(self, spec: QuerySpec) -> QueryResult:
        options = self._options
        collection = spec.collection
        wholes = whole_values(spec, self._stored_values)
        matched = [
            obj
            for obj in self._objects.get(collection.name, [])
            if self._holds(spec.applied_filters, wholes, obj.properties, collection)
            and (
                not spec.any_of
                or any(self._holds(alternative, wholes, obj.properties, collection) for alternative in spec.any_of)
            )
        ]
        result = QueryResult(
            collection=collection.name,
            operator_class=spec.operator_class(),
            search_mode=options.search_mode if spec.has_search else None,
            group_by=spec.group_by.name if spec.group_by is not None else None,
            calls=build_plan(spec, options, wholes).rendered(),
            notes=notes_for(spec, options),
        )
        hits: list[Hit] | None = self._hits(spec, matched) if spec.has_search else None
        if hits is not None:
            by_uuid = {o.uuid: o for o in matched}
            matched = [by_uuid[hit.uuid] for hit in hits]
        # Unfiltered fetches use Weaviate's cursor, which starts after the nil UUID.
        listed = matched if spec.is_filtered else [o for o in matched if o.uuid != NIL_UUID]
        if spec.group_by is None and not spec.aggregations:
            if hits is not None:
                result.objects = ranked_objects(collection, hits[: options.search_limit])
                result.truncated = len(hits) > options.search_limit
                result.total_count = None if len(hits) >= options.search_hit_limit else len(hits)
                return result
            if spec.sort is not None:
                ordered = sort_objects(matched, spec.sort)[: spec.sort.limit]
                result.objects = [to_object(collection, Hit(o.uuid, o.properties)) for o in ordered]
                result.total_count = len(matched)
                result.truncated = len(matched) > len(ordered)
                return result
            result.truncated = len(listed) > options.fetch_limit
            result.objects = [to_object(collection, Hit(o.uuid, o.properties)) for o in listed[: options.fetch_limit]]
            result.total_count = len(matched)  # the count call counts every match, as Weaviate's aggregate does
            return result
        if spec.group_by is None:
            if spec.sort is not None:  # over the sort's first `limit` objects
                matched = sort_objects(matched, spec.sort)[: spec.sort.limit]
            result.aggregations = {
                a.prop.name: aggregate(a, [o.properties for o in matched], options) for a in spec.aggregations
            }
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
                aggregations={
                    a.prop.name: aggregate(a, [o.properties for o in members], options) for a in spec.aggregations
                },
            )
            for key, members in buckets.items()
        ]
        result.groups, result.truncated = order_groups(groups, options.max_groups)
        result.total_count = groups_total(result.groups, result.truncated)
        if not spec.aggregations and options.samples_per_group > 0:
            if hits is not None:
                samples = hits
            else:
                samples = [Hit(o.uuid, o.properties) for o in listed[: options.group_sample_scan_limit]]
            attach_samples(
                collection, result.groups, samples, spec.group_by, options.samples_per_group, hits is not None
            )
        return result

    def _holds(
        self,
        filters: tuple[FilterSpec, ...],
        wholes: tuple[WholeValue, ...],
        properties: Mapping[str, Any],
        collection: CollectionSchema,
    ) -> bool:
        """Every one of `filters` holds, each text `=` among them as its whole value (`wholes`)."""
        return all(self._matches(f, properties, collection) for f in filters) and all(
            _kept(whole, properties) for whole in wholes if whole.filter in filters
        )

    def _matches(self, spec: FilterSpec, properties: Mapping[str, Any], collection: CollectionSchema) -> bool:
        """`matches`, through a reference when the filter has one: an object matches when the object
        its reference points to does (Weaviate: any of them; ours point to one)."""
        if spec.via is None:
            return matches(spec, properties, collection)
        reference = collection.get_reference(spec.via)
        target = self._schema.get(reference.targets[0]) if reference is not None else None
        if target is None:
            return False
        link = properties.get(spec.via)
        ids = [part.strip() for part in str(link).split(",")] if link else []
        found = self._by_uuid.get(target.name, {})
        return any(uid in found and matches(spec, found[uid].properties, target) for uid in ids)


def _kept(whole: WholeValue, properties: Mapping[str, Any]) -> bool:
    """Does an object pass the `not_equal` filters that make a text `=` its whole value?"""
    return whole.keeps(properties.get(whole.filter.prop.name))


def sort_objects(objects: list[DataObject], sort: SortSpec) -> list[DataObject]:
    """By the property (missing values last), then by id ascending, as `Sort.by_property(...).by_id()`."""
    sign = -1.0 if sort.descending else 1.0
    present = [o for o in objects if o.properties.get(sort.prop.name) is not None]
    missing = [o for o in objects if o.properties.get(sort.prop.name) is None]
    ordered = sorted(present, key=lambda o: (sign * _sort_key(o.properties[sort.prop.name]), o.uuid))
    return ordered + sorted(missing, key=lambda o: o.uuid)


def _sort_key(value: Any) -> float:
    return value.timestamp() if isinstance(value, datetime) else float(value)


def _with_dates(obj: DataObject, collection: CollectionSchema | None) -> DataObject:
    """Date properties as aware datetimes (stored objects give RFC 3339 text or datetimes)."""
    if collection is None:
        return obj
    dates = {p.name for p in collection.dates()}
    changed = {
        name: _as_datetime(value)
        for name, value in obj.properties.items()
        if name in dates and value is not None and not isinstance(value, datetime)
    }
    return obj if not changed else obj.model_copy(update={"properties": {**obj.properties, **changed}})


def _as_datetime(value: Any) -> datetime:
    parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=timezone.utc)


def _normalised(value: Any) -> Any:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


def matches(spec: FilterSpec, properties: Mapping[str, Any], collection: CollectionSchema) -> bool:
    """Does one object satisfy one filter, by Weaviate's rules?"""
    value = properties.get(spec.prop.name)
    if spec.is_date:
        if value is None:
            return False
        moment = value if isinstance(value, datetime) else _as_datetime(value)
        assert isinstance(spec.value, datetime)
        return NUMBER_COMPARISONS[spec.operator](moment.timestamp(), spec.value.timestamp())
    if spec.operator == "!=":  # Weaviate's not_equal is the complement of equal: a missing value passes
        return not matches(replace(spec, operator="="), properties, collection)
    if spec.kind == PropertyKind.BOOLEAN:
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
