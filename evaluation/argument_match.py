"""Argument match on what the executor accepts: strict exact match, the paper's AST score, routing and
per-component accuracy.

Both sides are parsed and validated by the executors' own code (`parse_arguments`,
`validate_arguments`) against the schema, then compared in the executor's canonical form
(`executors.equivalence`), so:

- a call the executor rejects (`"metrics": "mean"`, `"operator": "like"`, a list of metrics, an
  unknown key, `"value": true` on a number filter) is never a match;
- forms the executor treats as equal are equal: numbers as numbers (`"3"` == 3 == 3.0), a slot
  sent as a JSON string, a whitespace-only group-by as absent, boolean `!= true` == `= false`,
  text `=` == LIKE without wildcards, `Italian` == `italian` on a `word` property, `< 3.5` ==
  `< 4` on an `int` property, TOP_OCCURRENCES without a limit == the default limit;
- search matches on presence, as in the paper; the similarity of the texts is reported apart.

AST score (paper weights): a wrong collection scores 0; otherwise the collection is worth 0.4
and each of search, filters (all three slots), aggregations (all three slots) and group-by 0.15.
A component present on only one side is a mismatch. `ast_score_lenient` reproduces the reference
implementation, which skipped such one-sided slots; it is for comparison with published numbers.
`exact_match_as_written` compares the raw JSON, the definition before validation (kept to show
how much the two disagree).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from executors import DatabaseSchema, ExecutorError, parse_arguments, validate_arguments
from executors.equivalence import ANY_OF_KEY, FILTERS_KEY, canonical_form, filter_set, is_compound
from executors.vocabulary import (
    AGGREGATION_FIELDS,
    COMPONENT_FIELDS,
    COMPONENT_OF_FIELD,
    DATE_FILTER_FIELD,
    FILTER_FIELDS,
    GROUPBY_FIELD,
    REFERENCE_FILTER_FIELD,
    RELATED_FIELDS,
    SEARCH_FIELD,
    ToolOperations,
)

COMPONENT_LABELS = {field: component.value for field, component in COMPONENT_OF_FIELD.items()}
SLOT_GROUPS: dict[str, tuple[str, ...]] = {
    "search": (SEARCH_FIELD,),
    "filters": FILTER_FIELDS,
    "aggregations": AGGREGATION_FIELDS,
    "groupby": (GROUPBY_FIELD,),
}
COLLECTION_WEIGHT = 0.4
GROUP_WEIGHT = 0.15


@dataclass(frozen=True)
class Canonical:
    """A validated call in the executor's canonical form (`executors.equivalence`)."""

    collection: str
    slots: dict[str, Any]  # slot name -> canonical value (absent slots left out)
    search_text: str | None = None
    #: Every filter the call ANDs, as one set, and its alternatives (`match: any`): how a compound call
    #: is compared, with any call (`compound`: this one holds `conditions`).
    filters: frozenset[Any] = frozenset()
    any_of: frozenset[Any] = frozenset()
    compound: bool = False

    def slot(self, field: str) -> Any:
        return self.slots.get(field)


def canonical(arguments: Any, schema: DatabaseSchema) -> Canonical:
    """The canonical form of a call; raises the executor's `ExecutorError` when it would reject it."""
    spec = validate_arguments(parse_arguments(arguments, schema.operations or ToolOperations.PAPER), schema)
    form = canonical_form(spec)
    stopwords = spec.collection.stopwords
    alternatives = frozenset(filter_set(a, stopwords) for a in spec.any_of)
    return Canonical(
        form.pop("collection_name"),
        form,
        spec.search_query,
        filter_set(spec.filters, stopwords),
        alternatives,
        is_compound(spec),
    )


def search_similarity(truth: Any, predicted: Any) -> float | None:
    """None unless both are search strings: a prediction (or a result file's label) can hold anything."""
    if not isinstance(truth, str) or not isinstance(predicted, str) or not truth or not predicted:
        return None
    return difflib.SequenceMatcher(None, truth.lower().strip(), predicted.lower().strip()).ratio()


@dataclass(frozen=True)
class ArgumentScores:
    exact_match: bool = False
    ast_score: float = 0.0
    ast_score_lenient: float = 0.0
    routing: bool = False
    components: dict[str, bool] | None = None


def score_canonical(truths: list[Canonical], predicted: Canonical | None) -> ArgumentScores:
    """The best score of `predicted` against any accepted ground truth (the label and its alternatives).

    No valid ground truth (a paper label that cannot run) scores nothing."""
    if not truths:
        return ArgumentScores(components={})
    scored = [_score_one(truth, predicted) for truth in truths]
    return max(scored, key=lambda s: (s.exact_match, s.ast_score, s.ast_score_lenient))


def _score_one(truth: Canonical, predicted: Canonical | None) -> ArgumentScores:
    components = {COMPONENT_LABELS[f]: False for f in COMPONENT_FIELDS if truth.slot(f) is not None}
    if predicted is None:
        return ArgumentScores(components=components)
    routing = predicted.collection == truth.collection
    if truth.compound or predicted.compound:
        return _score_compound(truth, predicted, components, routing)
    # The related slots (absent on both sides of every paper call) count for exact match, not for AST.
    matches = {field: truth.slot(field) == predicted.slot(field) for field in (*COMPONENT_FIELDS, *RELATED_FIELDS)}
    for field, label in COMPONENT_LABELS.items():
        if label in components:
            components[label] = routing and matches[field]
    ast = lenient = 0.0
    if routing:
        ast = lenient = COLLECTION_WEIGHT
        for fields in SLOT_GROUPS.values():
            if all(matches[f] for f in fields):
                ast += GROUP_WEIGHT
                lenient += GROUP_WEIGHT
            elif all(matches[f] or truth.slot(f) is None or predicted.slot(f) is None for f in fields):
                lenient += GROUP_WEIGHT  # the reference skipped slots present on one side only
    return ArgumentScores(
        exact_match=routing and all(matches.values()),
        ast_score=round(ast, 6),
        ast_score_lenient=round(lenient, 6),
        routing=routing,
        components=components,
    )


#: Every key under which a call's filters can sit: compared as one set when either call is compound.
_FILTER_KEYS = frozenset({*FILTER_FIELDS, REFERENCE_FILTER_FIELD, DATE_FILTER_FIELD, FILTERS_KEY, ANY_OF_KEY})


def _score_compound(
    truth: Canonical, predicted: Canonical, components: dict[str, bool], routing: bool
) -> ArgumentScores:
    """Either call holds `conditions`: the filters are one set (order aside, a one-condition list is its
    slot, a between its two bounds), the filters group's AST credit is the share of filters both hold, and
    a paper label's filter component is right when its filter is among the prediction's."""
    others = [f for f in {*truth.slots, *predicted.slots} if f not in _FILTER_KEYS]
    matches = {field: truth.slot(field) == predicted.slot(field) for field in others}
    held = truth.filters | {("any_of", a) for a in truth.any_of}
    said = predicted.filters | {("any_of", a) for a in predicted.any_of}
    for field, label in COMPONENT_LABELS.items():
        if label in components:
            inside = field in FILTER_FIELDS and truth.slot(field) in said
            components[label] = routing and (matches.get(field, False) or inside)
    if not routing:
        return ArgumentScores(components=components)
    share = len(held & said) / max(len(held), len(said)) if held or said else 1.0
    ast = COLLECTION_WEIGHT + GROUP_WEIGHT * share
    for name, fields in SLOT_GROUPS.items():
        if name != "filters" and all(matches.get(f, True) for f in fields):
            ast += GROUP_WEIGHT
    exact = held == said and all(matches.values())
    return ArgumentScores(
        exact_match=exact, ast_score=round(ast, 6), ast_score_lenient=round(ast, 6), routing=True, components=components
    )


#: A slot of a rejected call that the executor rejects on its own: equal to no slot of a label.
REJECTED_SLOT = ("<rejected>",)


def score_rejected(truths: list[Canonical], arguments: Mapping[str, Any], schema: DatabaseSchema) -> ArgumentScores:
    """Routing and per-component scores of one call the executor rejects, read from what it names.

    A call rejected for a wrong property still names a collection: routing is right when that is the
    label's, and each component is right when its slot, validated on its own on that collection,
    equals the label's. Exact match and the AST scores stay 0: the call as a whole cannot run."""
    if not truths:
        return ArgumentScores(components={})
    named = arguments.get("collection_name")
    collection = try_canonical({"collection_name": named}, schema) if isinstance(named, str) else None
    slots: dict[str, Any] = {}
    if collection is not None:
        for field in COMPONENT_FIELDS:
            if arguments.get(field) in (None, "", {}):
                continue
            alone = try_canonical({"collection_name": named, field: arguments[field]}, schema)
            slots[field] = alone.slot(field) if alone is not None else REJECTED_SLOT
    scored = []
    for truth in truths:
        routing = collection is not None and collection.collection == truth.collection
        components = {
            COMPONENT_LABELS[f]: routing and slots.get(f) == truth.slot(f)
            for f in COMPONENT_FIELDS
            if truth.slot(f) is not None
        }
        scored.append(ArgumentScores(routing=routing, components=components))
    return max(scored, key=lambda s: (s.routing, sum((s.components or {}).values())))


def try_canonical(arguments: Any, schema: DatabaseSchema) -> Canonical | None:
    """The canonical form, or None for a call the executor rejects."""
    try:
        return canonical(arguments, schema)
    except ExecutorError:
        return None


def rejection(arguments: Any, schema: DatabaseSchema) -> str | None:
    """Why the executor rejects a call on `schema` ("code: message"), or None when it accepts it: a
    label rejected so cannot be scored, and the summary says why."""
    try:
        canonical(arguments, schema)
    except ExecutorError as error:
        return f"{error.code}: {error.message}"
    return None


def exact_as_written(truth: Mapping[str, Any], predicted: Mapping[str, Any] | None) -> bool:
    """The old definition: the raw JSON equal after dropping empty slots, search on presence."""

    def norm(arguments: Mapping[str, Any]) -> dict[str, Any]:
        kept = {k: v for k, v in arguments.items() if v not in (None, "", {})}
        if SEARCH_FIELD in kept:
            kept[SEARCH_FIELD] = True
        return kept

    return predicted is not None and norm(truth) == norm(predicted)
