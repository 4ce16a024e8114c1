"""The live schema the executor validates against: collections, property names, types, descriptions.

It is read from Weaviate (`client.collections.list_all(simple=False)`), never from the benchmark
files, so validation always matches what the server will actually do. Weaviate data types map to
the tool's three property kinds: text -> text, number/int -> number, boolean -> boolean; other
types (dates, arrays, objects, references, geo) are listed but cannot be used by the tool.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ConfigDict, field_serializer

from executors.ownership import CollectionNames, marker_of, unmarked
from executors.vocabulary import DATE_DATA_TYPE, PropertyKind, ToolOperations

DATA_TYPE_KINDS: dict[str, PropertyKind] = {
    "text": PropertyKind.TEXT,
    "number": PropertyKind.NUMBER,
    "int": PropertyKind.NUMBER,
    "boolean": PropertyKind.BOOLEAN,
}

#: Weaviate's `en` stopword preset (adapters/repos/db/inverted/stopwords/presets.go, v1.39).
# fmt: off
EN_STOPWORDS: frozenset[str] = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no", "not",
    "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to", "was",
    "will", "with",
})
# fmt: on
STOPWORD_PRESETS: dict[str, frozenset[str]] = {"en": EN_STOPWORDS, "none": frozenset()}


class PropertySchema(BaseModel):
    """One property as Weaviate reports it."""

    model_config = ConfigDict(frozen=True)

    name: str
    data_type: str
    description: str | None = None
    tokenization: str | None = None
    index_filterable: bool = True
    index_searchable: bool = True
    index_range_filters: bool = False
    ascii_fold: bool = False

    @property
    def kind(self) -> PropertyKind | None:
        """The tool's property kind, or None if the tool cannot query this property."""
        return DATA_TYPE_KINDS.get(self.data_type)

    @property
    def is_int(self) -> bool:
        return self.data_type == "int"

    def label(self) -> str:
        """`name (kind)` as shown to the model in error messages."""
        kind = self.kind.value if self.kind else f"{self.data_type}, not queryable"
        return f"{self.name} ({kind})"


class ReferenceSchema(BaseModel):
    """One cross-reference property: its name and the collections it may point to (logical names)."""

    model_config = ConfigDict(frozen=True)

    name: str
    targets: tuple[str, ...]
    description: str | None = None

    def label(self) -> str:
        return f"{self.name} (reference to {' or '.join(self.targets)})"


class CollectionSchema(BaseModel):
    """One collection: its properties in schema order plus the stopwords text filters use."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str | None = None
    properties: tuple[PropertySchema, ...] = ()
    stopwords: frozenset[str] = EN_STOPWORDS
    references: tuple[ReferenceSchema, ...] = ()
    #: Created by this project (its description carries the ownership marker).
    ours: bool = False
    #: A vectorizer makes its vectors, so a `search_query` (near_text) can run on it; a collection of
    #: one's own with self-provided vectors or none cannot be searched by text.
    searchable: bool = True

    def get_reference(self, name: str) -> ReferenceSchema | None:
        return next((r for r in self.references if r.name == name), None)

    def dates(self) -> list[PropertySchema]:
        return [p for p in self.properties if p.data_type == DATE_DATA_TYPE]

    def paper_view(self) -> CollectionSchema:
        """What the paper's tool sees: no references (it never saw them), and on our own collections no
        date properties either (they were added for the `related` operations; a collection of
        anyone else's keeps showing its dates as before, listed and not queryable)."""
        hidden = self.ours and any(p.data_type == DATE_DATA_TYPE for p in self.properties)
        if not self.references and not hidden:
            return self
        kept = tuple(p for p in self.properties if not (self.ours and p.data_type == DATE_DATA_TYPE))
        # A new instance, not model_copy: the cached names of this one must not carry over.
        return CollectionSchema(
            name=self.name, description=self.description, properties=kept, stopwords=self.stopwords, ours=self.ours
        )

    @field_serializer("stopwords")
    def _sorted_stopwords(self, stopwords: frozenset[str]) -> list[str]:
        return sorted(stopwords)

    @cached_property
    def names(self) -> tuple[str, ...]:
        """Property names in schema order (cached: read for every result object)."""
        return tuple(prop.name for prop in self.properties)

    @cached_property
    def shown_names(self) -> tuple[str, ...]:
        """What a result object shows: the properties, then the references (their targets' ids)."""
        return self.names + tuple(reference.name for reference in self.references)

    @cached_property
    def _by_name(self) -> dict[str, PropertySchema]:
        return {prop.name: prop for prop in self.properties}

    def get_property(self, name: str) -> PropertySchema | None:
        return self._by_name.get(name)

    def property_names(self) -> list[str]:
        return [prop.name for prop in self.properties]

    def properties_of_kind(self, kind: PropertyKind) -> list[PropertySchema]:
        return [prop for prop in self.properties if prop.kind == kind]

    def describe_properties(self) -> str:
        """`name (text), price (number), ...`: the fix-it list used in error messages."""
        return ", ".join(prop.label() for prop in self.properties) or "(none)"

    def describe(self) -> str:
        """A short description of the collection for a tool description or a prompt."""
        lines = [f"{self.name}: {self.description}" if self.description else self.name]
        for prop in self.properties:
            lines.append(f"  - {prop.label()}" + (f": {prop.description}" if prop.description else ""))
        return "\n".join(lines)


class DatabaseSchema(BaseModel):
    """All collections of one Weaviate, in name order."""

    model_config = ConfigDict(frozen=True)

    collections: tuple[CollectionSchema, ...] = ()
    #: The operations this schema is the view of (`for_operations`); None for the whole schema as read.
    #: Calls are parsed with them (`paper`: the paper's arguments only) wherever only a schema is at hand.
    operations: ToolOperations | None = None

    def get(self, name: str) -> CollectionSchema | None:
        for collection in self.collections:
            if collection.name == name:
                return collection
        return None

    def names(self) -> list[str]:
        return [collection.name for collection in self.collections]

    def only(self, names: Iterable[str]) -> DatabaseSchema:
        """The collections named here (names it lacks are skipped), in name order."""
        wanted = set(names)
        kept = tuple(c for c in self.collections if c.name in wanted)
        return DatabaseSchema(collections=kept, operations=self.operations)

    def describe(self) -> str:
        return "\n".join(collection.describe() for collection in self.collections)

    def for_operations(self, operations: ToolOperations) -> DatabaseSchema:
        """The schema a tool with these operations sees (`paper`: without dates and references)."""
        if operations is self.operations:
            return self
        if operations.sees_related:
            return self._full_views[operations]
        return self._paper_view

    @cached_property
    def _full_views(self) -> dict[ToolOperations, DatabaseSchema]:
        return {ops: DatabaseSchema(collections=self.collections, operations=ops) for ops in ToolOperations}

    @cached_property
    def _paper_view(self) -> DatabaseSchema:
        views = tuple(c.paper_view() for c in self.collections)
        return DatabaseSchema(collections=views, operations=ToolOperations.PAPER)


def _enum_value(value: Any) -> Any:
    return getattr(value, "value", value)


def stopwords_from_config(inverted_config: Any) -> frozenset[str]:
    """The stopword set Weaviate applies to `=` filters on word-tokenized properties."""
    config = getattr(inverted_config, "stopwords", None)
    if config is None:
        return EN_STOPWORDS
    presets = dict(STOPWORD_PRESETS)
    for name, words in (getattr(inverted_config, "stopword_presets", None) or {}).items():
        presets[name] = frozenset(words)
    words = set(presets.get(str(_enum_value(config.preset)), EN_STOPWORDS))
    words |= set(config.additions or ())
    words -= set(config.removals or ())
    return frozenset(words)


def collection_from_config(
    config: Any, name: str | None = None, names: CollectionNames | None = None
) -> CollectionSchema:
    """Convert a weaviate-client `CollectionConfig` (from `list_all(simple=False)`), under its logical
    `name` when given; the project's ownership marker is dropped from the description (no model sees it)."""
    properties = tuple(
        PropertySchema(
            name=prop.name,
            data_type=str(_enum_value(prop.data_type)),
            description=prop.description or None,
            tokenization=str(_enum_value(prop.tokenization)) if prop.tokenization is not None else None,
            index_filterable=bool(prop.index_filterable),
            index_searchable=bool(prop.index_searchable),
            index_range_filters=bool(getattr(prop, "index_range_filters", False)),
            ascii_fold=bool(getattr(getattr(prop, "text_analyzer", None), "ascii_fold", False)),
        )
        for prop in config.properties
    )
    references = tuple(
        ReferenceSchema(
            name=ref.name,
            targets=tuple(
                (names.logical(target) or target) if names is not None else target for target in ref.target_collections
            ),
            description=ref.description or None,
        )
        for ref in getattr(config, "references", None) or ()
    )
    return CollectionSchema(
        name=name or config.name,
        description=unmarked(config.description) or None,
        properties=properties,
        stopwords=stopwords_from_config(getattr(config, "inverted_index_config", None)),
        references=references,
        ours=marker_of(config.description) is not None,
        searchable=text_searchable(config),
    )


def text_searchable(config: Any) -> bool:
    """Whether a collection has a vectorizer (any named vector's, or the legacy one): a near_text search
    needs one. Unknown (neither is read) counts as searchable: the search is tried, and Weaviate says."""
    named = getattr(config, "vector_config", None) or {}
    kinds = [str(_enum_value(getattr(getattr(v, "vectorizer", None), "vectorizer", ""))) for v in named.values()]
    legacy = getattr(config, "vectorizer", None)
    if legacy is not None:
        kinds.append(str(_enum_value(legacy)))
    return not kinds or any(kind not in ("none", "") for kind in kinds)


def schema_from_configs(
    configs: Mapping[str, Any] | Iterable[Any], names: CollectionNames | None = None
) -> DatabaseSchema:
    """The collections under `names`' prefix (all without one), by their logical names."""
    values = configs.values() if isinstance(configs, Mapping) else configs
    names = names or CollectionNames()
    collections = sorted(
        (
            collection_from_config(config, logical, names)
            for config in values
            if (logical := names.logical(config.name)) is not None
        ),
        key=lambda c: c.name,
    )
    return DatabaseSchema(collections=tuple(collections))


class SchemaCache:
    """Caches one `DatabaseSchema` per executor; `refresh()` re-reads it after collections change."""

    def __init__(self, loader: Callable[[], DatabaseSchema]) -> None:
        self._loader = loader
        self._schema: DatabaseSchema | None = None
        self._lock = threading.Lock()

    def get(self) -> DatabaseSchema:
        with self._lock:
            if self._schema is None:
                self._schema = self._loader()
            return self._schema

    def refresh(self) -> DatabaseSchema:
        with self._lock:
            self._schema = self._loader()
            return self._schema
