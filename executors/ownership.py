"""Which collections are the project's, and where each dataset's collections live in Weaviate.

The project points at Weaviates it does not own (`--backend url`, `ask --collections`), and its
datasets share collection names (the DBGorilla paper set and the `restaurants` use case both have
`Restaurants`). Two rules keep every collection safe:

- **A marker.** Every collection the project creates ends its description with
  `[dbgorilla-live: <dataset>]` (`usecase/restaurants`, `paper/<file name>`, `smoke`). Nothing that
  lacks it, or names another dataset, is ever dropped, recreated, trimmed or written into
  (`NotOurCollection`). `collection_from_config` strips the marker, so no model ever sees it.
- **Physical names.** Questions, the model, results, errors and scopes use logical names
  (`Restaurants`); Weaviate holds `[<Namespace>_][Paper_]<logical>`. The paper set's own prefix
  keeps it beside the use cases; a namespace (`--namespace`, `DBGORILLA_NAMESPACE`) keeps the
  project's collections beside a user's that happen to share their names. `CollectionNames` is
  the one place that maps between the two.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

MARKER_TAG = "dbgorilla-live"
_MARKER = re.compile(r"\s*\[" + re.escape(MARKER_TAG) + r": ([^\]]+)\]\s*$")
#: Where the DBGorilla paper's format is stored, after any namespace: `Paper_Restaurants`.
PAPER_PREFIX = "Paper_"
NAMESPACE_ENV = "DBGORILLA_NAMESPACE"
_NAMESPACE = re.compile(r"^[A-Za-z][A-Za-z0-9]{0,39}$")


def usecase_dataset(name: str) -> str:
    """The marker's dataset for one of our synthetic use cases."""
    return f"usecase/{name}"


def paper_dataset(source: str | PurePath) -> str:
    """The marker's dataset for a paper-format file (two files with one schema name are two datasets)."""
    return f"paper/{PurePath(source).name}"


def is_paper(dataset: str) -> bool:
    return dataset.startswith("paper/")


def mark(description: str | None, dataset: str) -> str:
    """`description` with the project's ownership marker for `dataset` at its end."""
    text = unmarked(description)
    return f"{text} [{MARKER_TAG}: {dataset}]" if text else f"[{MARKER_TAG}: {dataset}]"


def marker_of(description: str | None) -> str | None:
    """The dataset a collection's description says it holds, or None: not the project's."""
    found = _MARKER.search(description or "")
    return found.group(1).strip() if found else None


def unmarked(description: str | None) -> str:
    """The description as written, without the marker (what a model is shown)."""
    return _MARKER.sub("", description or "")


class InvalidNamespace(ValueError):
    """A namespace that cannot start a Weaviate collection name."""


def check_namespace(namespace: str | None) -> str:
    """'' for none; else letters and digits, first one a letter, given Weaviate's capital."""
    value = (namespace or "").strip()
    if not value:
        return ""
    if not _NAMESPACE.match(value):
        raise InvalidNamespace(
            f"namespace {value!r}: use up to 40 letters and digits, starting with a letter (e.g. Bench)"
        )
    return value[:1].upper() + value[1:]


def namespace_from_env() -> str:
    return check_namespace(os.environ.get(NAMESPACE_ENV))


@dataclass(frozen=True)
class CollectionNames:
    """Logical collection names (questions, the model, results) to physical ones (Weaviate) and back."""

    prefix: str = ""

    @classmethod
    def for_dataset(cls, dataset: str, namespace: str | None = None) -> CollectionNames:
        space = check_namespace(namespace)
        return cls((f"{space}_" if space else "") + (PAPER_PREFIX if is_paper(dataset) else ""))

    def physical(self, logical: str) -> str:
        return self.prefix + logical

    def logical(self, physical: str) -> str | None:
        """The logical name of a physical one, or None when it lies outside this prefix."""
        if not self.prefix:
            return physical
        if physical.startswith(self.prefix) and len(physical) > len(self.prefix):
            return physical[len(self.prefix) :]
        return None


def load_arguments(dataset: str) -> str:
    """The `dbgorilla load` arguments that load `dataset`."""
    kind, _, name = dataset.partition("/")
    return f"--dataset {name}" if kind == "paper" else f"--use-case {name}" if kind == "usecase" else ""


@dataclass(frozen=True)
class Conflict:
    """A collection that stands where the project would write: not ours, or holding another dataset."""

    collection: str
    logical: str
    wanted: str
    #: The dataset its marker names; None: no marker, not the project's.
    found: str | None = None
    objects: int | None = None
    #: Unmarked, but with exactly the schema the project would create (a version before markers?).
    schema_is_ours: bool = False

    def describe(self) -> str:
        size = f" ({self.objects} objects)" if self.objects is not None else ""
        if self.found is not None:
            return f"{self.collection}{size} holds dbgorilla-live's {self.found}, not {self.wanted}"
        return f"{self.collection}{size} was not created by dbgorilla-live (no [{MARKER_TAG}: …] in its description)"

    def label(self) -> str:
        notes = ([f"{self.objects} objects"] if self.objects is not None else []) + (
            [f"holding {self.found}"] if self.found is not None else []
        )
        return f"{self.collection} ({', '.join(notes)})" if notes else self.collection


class NotOurCollection(RuntimeError):
    """The project would drop, recreate, trim or write into a collection that is not its own (or holds
    another of its datasets). Raised before anything is changed; the message says how to proceed."""

    def __init__(self, conflicts: Sequence[Conflict], *, action: str = "load into", hint: str | None = None) -> None:
        self.conflicts = list(conflicts)
        super().__init__(
            f"refusing to {action} {', '.join(self.collections)}: {self.reasons()}. {hint or self._way_out()}"
        )

    @property
    def collections(self) -> list[str]:
        return [c.collection for c in self.conflicts]

    def reasons(self) -> str:
        """Which collections stand in the way, and why, in one sentence."""
        foreign = [c for c in self.conflicts if c.found is None]
        other = [c for c in self.conflicts if c.found is not None]
        parts = []
        if foreign:
            were = "was" if len(foreign) == 1 else "were"
            parts.append(
                f"{', '.join(c.label() for c in foreign)} {were} not created by dbgorilla-live "
                f"(no [{MARKER_TAG}: …] at the end of the description)"
            )
            if all(c.schema_is_ours for c in foreign):
                its, it = ("its", "it") if len(foreign) == 1 else ("their", "them")
                parts.append(f"{its} schema is the project's: a dbgorilla-live from before markers may have made {it}")
        if other:
            holds = "holds" if len(other) == 1 else "hold"
            parts.append(f"{', '.join(c.label() for c in other)} {holds} another dataset of dbgorilla-live")
        return "; ".join(parts)

    def _way_out(self) -> str:
        replace = " ".join(f"--replace {c.collection}" for c in self.conflicts)
        datasets = " ".join(dict.fromkeys(load_arguments(c.wanted) for c in self.conflicts))
        them = "it" if len(self.conflicts) == 1 else "them"
        return (
            f"Nothing was changed. To keep {them} and put ours beside {them}, choose a namespace: "
            f"`--namespace NAME` (or {NAMESPACE_ENV}=NAME) stores ours as NAME_…; to delete {them} and load "
            f"ours in {'its' if them == 'it' else 'their'} place: `dbgorilla load {datasets} {replace}`"
        ).replace("  ", " ")


@dataclass(frozen=True)
class Target:
    """Where one collection of a dataset goes: its physical and logical names."""

    physical: str
    logical: str
    dataset: str


def conflicts_in(client: Any, targets: Iterable[Target]) -> list[Conflict]:
    """The targets whose collection exists and is not marked as holding that target's dataset."""
    found = []
    for target in targets:
        if not client.collections.exists(target.physical):
            continue
        collection = client.collections.use(target.physical)
        marker = marker_of(collection.config.get().description)
        if marker != target.dataset:
            found.append(Conflict(target.physical, target.logical, target.dataset, marker, _size(collection)))
    return found


def require_ours(client: Any, name: str, *, action: str) -> str:
    """The dataset collection `name` is marked with; `NotOurCollection` when it carries no marker."""
    collection = client.collections.use(name)
    marker = marker_of(collection.config.get().description)
    if marker is None:
        hint = "dbgorilla-live only changes collections it created; it was left untouched."
        raise NotOurCollection(
            [Conflict(name, name, "data of dbgorilla-live", None, _size(collection))], action=action, hint=hint
        )
    return marker


def our_collections(client: Any) -> dict[str, str]:
    """Every collection that carries the marker: physical name -> dataset."""
    configs = client.collections.list_all(simple=True)
    values = configs.values() if isinstance(configs, dict) else configs
    return {c.name: marker for c in values if (marker := marker_of(c.description)) is not None}


def _size(collection: Any) -> int | None:
    try:
        return int(collection.aggregate.over_all(total_count=True).total_count or 0)
    except Exception:  # the size only decorates the message
        return None
