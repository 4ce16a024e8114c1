"""Argument match: strict exact match, the paper's AST score, routing and per-component accuracy.

Predictions are compared as normalised dicts, not parsed models, because a wrong prediction is
often not a valid call at all. Numbers compare as floats (20 == 20.0), operators and metrics
case-insensitively, and search matches on presence only (as in the paper); the similarity of the
search text is reported separately.

AST score (paper weights): a wrong collection scores 0; otherwise the collection is worth 0.4
and each of search, filters (all three slots), aggregations (all three slots) and group-by 0.15.
A component present on only one side is a mismatch. `ast_score_lenient` reproduces the reference
implementation, which skipped such one-sided slots and so gave them full credit; it is offered
for comparison with published numbers only.
"""

from __future__ import annotations

import difflib
from typing import Any

from executors.vocabulary import AGGREGATION_FIELDS, COMPONENT_OF_FIELD, FILTER_FIELDS, GROUPBY_FIELD, SEARCH_FIELD

COMPONENT_LABELS = {field: component.value for field, component in COMPONENT_OF_FIELD.items()}
SLOT_GROUPS: dict[str, tuple[str, ...]] = {
    "search": (SEARCH_FIELD,),
    "filters": FILTER_FIELDS,
    "aggregations": AGGREGATION_FIELDS,
    "groupby": (GROUPBY_FIELD,),
}
COLLECTION_WEIGHT = 0.4
GROUP_WEIGHT = 0.15


def _present(value: Any) -> bool:
    return value is not None and value != "" and value != {}


def _scalar(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        stripped = value.strip()
        return stripped.upper() if stripped.upper() in ("LIKE",) else stripped
    return value


def _normalise_slot(field: str, value: Any) -> Any:
    if not _present(value):
        return None
    if field == SEARCH_FIELD:
        return True  # presence only
    if field == GROUPBY_FIELD:
        return str(value).strip()
    if not isinstance(value, dict):
        return ("malformed", repr(value))
    slot = {"property_name": str(value.get("property_name", "")).strip()}
    if field in FILTER_FIELDS:
        slot["operator"] = str(value.get("operator", "")).strip().upper()
        slot["value"] = _scalar(value.get("value"))
    else:
        metrics = value.get("metrics")
        metrics = metrics if isinstance(metrics, list) else [metrics]
        slot["metrics"] = tuple(sorted(str(m).strip().upper() for m in metrics if m is not None))
        if value.get("top_occurrences_limit") is not None:
            slot["top_occurrences_limit"] = _scalar(value.get("top_occurrences_limit"))
    return slot


def slot_matches(field: str, truth: dict[str, Any], predicted: dict[str, Any]) -> bool:
    expected = _normalise_slot(field, truth.get(field))
    actual = _normalise_slot(field, predicted.get(field))
    if isinstance(expected, dict) and isinstance(actual, dict) and "top_occurrences_limit" not in expected:
        actual = {k: v for k, v in actual.items() if k != "top_occurrences_limit"}  # unspecified in the label
    return expected == actual


def search_similarity(truth: dict[str, Any], predicted: dict[str, Any] | None) -> float | None:
    expected, actual = (truth or {}).get("search_query"), (predicted or {}).get("search_query")
    if not (_present(expected) and _present(actual)):
        return None
    return difflib.SequenceMatcher(None, str(expected).lower().strip(), str(actual).lower().strip()).ratio()


def score_arguments(truth: dict[str, Any], predicted: dict[str, Any] | None) -> dict[str, Any]:
    """exact_match, ast_score, ast_score_lenient, routing, per-component correctness."""
    components = {COMPONENT_LABELS[f]: False for f in COMPONENT_LABELS if _present(truth.get(f))}
    if predicted is None:
        return {
            "exact_match": False,
            "ast_score": 0.0,
            "ast_score_lenient": 0.0,
            "routing": False,
            "components": components,
            "search_similarity": None,
        }
    routing = str(predicted.get("collection_name", "")).strip() == truth.get("collection_name")
    matches = {field: slot_matches(field, truth, predicted) for field in COMPONENT_LABELS}
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
            elif all(matches[f] or not (_present(truth.get(f)) and _present(predicted.get(f))) for f in fields):
                lenient += GROUP_WEIGHT  # the reference skipped slots present on one side only
    return {
        "exact_match": routing and all(matches.values()),
        "ast_score": round(ast, 6),
        "ast_score_lenient": round(lenient, 6),
        "routing": routing,
        "components": components,
        "search_similarity": search_similarity(truth, predicted),
    }
