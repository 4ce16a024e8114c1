"""Argument match: each protocol's call against the accepted ground truths, on what the executor accepts
(`evaluation.argument_match`): exact match, the paper's AST score, routing and per-component accuracy.

A ground truth that does not fit the schema it is scored on (a text filter on a number, an unknown
property: 38 of the paper's 315 labels) measures the label, not the model. It is left out of every
argument metric, offline and with `--execute` alike, and the summary's `labels` names it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from evaluation.argument_match import (
    COMPONENT_LABELS,
    exact_as_written,
    rejection,
    score_canonical,
    score_rejected,
    search_similarity,
)
from evaluation.columns import Column
from evaluation.evaluators.base import Evaluator, Results, ScoreContext, mean
from evaluation.protocols import PROTOCOLS, ScoringProtocol, protocol_calls
from evaluation.records import EvalRecord, Outcome
from executors import Component
from fixtures.datasets import Complexity

COMPONENTS = tuple(component.value for component in Component)
COMPLEXITIES = tuple(c.value for c in Complexity)


class Arguments(Evaluator):
    name = "arguments"
    expects = frozenset({"call"})
    columns = (
        Column("first.exact_match", "Exact Match", "rate"),
        Column("first.ast_score", "AST Score", "score"),
        Column("simple", "Simple", "rate"),
        Column("moderate", "Moderate", "rate"),
        Column("complex", "Complex", "rate"),
        Column("first.routing_accuracy", "Collection Routing", "rate"),
        Column("no_tool_rate", "No Tool Call", "rate"),
    )
    kind_columns = (Column("first.exact_match", "Exact Match (first)", "rate"),)
    caption = (
        "Exact Match, AST Score, Simple/Moderate/Complex (Exact Match by the ground truth's 1, 2, 3+ arguments) "
        "and Collection Routing are the paper's Figure 1 columns, under first; No Tool Call is its Table 4."
    )

    def evaluate(self, ctx: ScoreContext) -> Results:
        first_call = ctx.record.first_arguments
        results: dict[str, Any] = {
            "invalid_label": _invalid_label(ctx),
            "exact_match_as_written": exact_as_written(ctx.record.ground_truth, first_call),
            "search_similarity": search_similarity(
                ctx.record.ground_truth.get("search_query"), (first_call or {}).get("search_query")
            ),
        }
        for protocol in PROTOCOLS:
            calls, predicted, truths = ctx.calls(protocol), ctx.predicted(protocol), ctx.targets(protocol)[0]
            scores = score_canonical(truths, predicted) if truths else score_canonical([], None)
            if (
                predicted is None
                and len(calls) == 1
                and isinstance(calls[0].arguments, dict)
                and ctx.schema is not None
            ):
                scores = score_rejected(truths, calls[0].arguments, ctx.schema)  # routing still counts
            results[protocol.value] = {
                "calls": len(calls),
                "exact_match": scores.exact_match,
                "ast_score": scores.ast_score,
                "ast_score_lenient": scores.ast_score_lenient,
                "routing": scores.routing,
                "components": scores.components or {},
            }
        return results

    def failures(self, record: EvalRecord) -> list[str]:
        return (
            ["arguments differ"] if not record.scores.first.exact_match and record.first_arguments is not None else []
        )

    def protocol_numbers(self, records: Sequence[EvalRecord], protocol: ScoringProtocol) -> dict[str, Any]:
        scores = [r.scores.of(protocol.value) for r in valid_labels(records)]
        return {
            "exact_match": mean(float(s.exact_match) for s in scores),
            "ast_score": mean(s.ast_score for s in scores),
            "ast_score_lenient": mean(s.ast_score_lenient for s in scores),
            "routing_accuracy": mean(float(s.routing) for s in scores),
        }

    def summary(self, records: Sequence[EvalRecord], executed_scoring: bool) -> dict[str, Any]:
        valid = valid_labels(records)
        similarities = [r.scores.search_similarity for r in valid if r.scores.search_similarity is not None]
        return {
            # The one number that reads no label: over every question.
            "no_tool_rate": mean(float(r.outcome is Outcome.NO_TOOL_CALL) for r in records),
            "exact_match_as_written": mean(float(r.scores.exact_match_as_written) for r in valid),
            "search_similarity": mean(similarities),
            "labels": label_summary(records),
            "by_component": {p.value: component_accuracy(records, p) for p in PROTOCOLS},
        }

    def leaderboard_values(self, summary: Mapping[str, Any]) -> dict[str, Any]:
        values = {c: summary["by_complexity"].get(c, {}).get("first", {}).get("exact_match") for c in COMPLEXITIES}
        return {**values, "no_tool_rate": summary.get("no_tool_rate")}


def _invalid_label(ctx: ScoreContext) -> str | None:
    """Why no accepted ground truth fits the record's schema ("code: message"); None when one does."""
    if ctx.truths or ctx.schema is None:
        return None
    return rejection(ctx.record.ground_truth, ctx.schema) or "invalid_label: the ground truth cannot be scored"


def valid_labels(records: Sequence[EvalRecord]) -> list[EvalRecord]:
    """The records whose ground truth fits the schema: the only ones an argument metric reads."""
    return [r for r in records if r.scores.invalid_label is None]


def label_summary(records: Sequence[EvalRecord]) -> dict[str, Any]:
    """What the argument metrics scored on: the valid labels, and the ids left out and why (by error code)."""
    invalid = [r for r in records if r.scores.invalid_label is not None]
    return {
        "valid": len(records) - len(invalid),
        "excluded": len(invalid),
        "excluded_ids": sorted(r.id for r in invalid),
        "excluded_by_reason": dict(sorted(Counter(str(r.scores.invalid_label).split(":")[0] for r in invalid).items())),
    }


def component_accuracy(records: Sequence[EvalRecord], protocol: ScoringProtocol | str) -> dict[str, dict[str, Any]]:
    """Per component: how often it was right where the ground truth used it, and how often the
    prediction added it where the ground truth did not (the paper's per-component view)."""
    name = ScoringProtocol(protocol).value
    records = valid_labels(records)
    table = {}
    for component in COMPONENTS:
        needed = [r for r in records if component in r.components]
        added = [r for r in records if component not in r.components and component in _predicted(r, name)]
        table[component] = {
            "cases": len(needed),
            "accuracy": mean(float(r.scores.of(name).components.get(component, False)) for r in needed),
            "spurious": len(added),
        }
    return table


def _predicted(record: EvalRecord, protocol: str) -> set[str]:
    """The components the protocol's calls used."""
    used: set[str] = set()
    for call in protocol_calls(record, ScoringProtocol(protocol)):
        arguments = call.arguments or {}
        used |= {label for field, label in COMPONENT_LABELS.items() if arguments.get(field) not in (None, "", {})}
    return used
