"""Scoring one record: every evaluator (`evaluation.evaluators`) over one shared context.

The same code scores a live eval, a rescoring of a results file (`dbgorilla score`) and the audit's
gameability probes, so a probe that earns nothing here earns nothing in an eval.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evaluation.argument_match import try_canonical
from evaluation.evaluators import Executions, ScoreContext, evaluate
from evaluation.ground_truth import Gold, GroundTruthCache
from evaluation.records import EvalRecord, Scores
from evaluation.search_cut import at_cut
from executors import CollectionSchema, DatabaseSchema, ExecutorError, PropertySchema, QueryResult, WeaviateExecutor
from executors.vocabulary import FIELD_KIND, GROUPBY_FIELD, PropertyKind

#: The schema a record's calls are validated against (None: derive one from the calls themselves).
SchemaFor = Callable[[EvalRecord], DatabaseSchema | None]


def schema_from_calls(calls: list[dict[str, Any]]) -> DatabaseSchema:
    """A schema in which every property the calls name has the kind of the slot that first names it.

    For predictions of a dataset whose schema is not at hand (the paper's result files): a call is
    then judged on its own structure, as the executor would judge it against such a database.
    """
    properties: dict[str, dict[str, PropertySchema]] = {}
    data_types = {PropertyKind.TEXT: "text", PropertyKind.NUMBER: "number", PropertyKind.BOOLEAN: "boolean"}
    for call in calls:
        collection = properties.setdefault(str(call.get("collection_name", "")), {})
        for slot, kind in FIELD_KIND.items():
            part = call.get(slot)
            name = part.get("property_name") if isinstance(part, dict) else None
            if isinstance(name, str) and name not in collection:
                collection[name] = PropertySchema(name=name, data_type=data_types[kind], tokenization="word")
        group = call.get(GROUPBY_FIELD)
        if isinstance(group, str) and group.strip() and group not in collection:
            collection[group] = PropertySchema(name=group, data_type="text", tokenization="word")
    collections = [CollectionSchema(name=name, properties=tuple(props.values())) for name, props in properties.items()]
    return DatabaseSchema(collections=tuple(sorted(collections, key=lambda c: c.name)))


class Scorer:
    """Scores records; with a live `executor` (and its ground-truth cache) execution match too."""

    def __init__(
        self,
        schema_for: SchemaFor,
        executor: WeaviateExecutor | None = None,
        truths: GroundTruthCache | None = None,
    ) -> None:
        self.schema_for = schema_for
        self.executor = executor
        self.truths = truths

    def score(self, record: EvalRecord) -> EvalRecord:
        ctx = self.context(record)
        scores = Scores.model_validate(evaluate(ctx))
        return record.model_copy(update={**_resolved(ctx), "scores": scores})

    def context(self, record: EvalRecord) -> ScoreContext:
        """What the record's scores read: its schema and ground truths, the label and gold executed once."""
        ctx = ScoreContext(record, Executions(self.executor))
        if record.expected == "abstain":  # no ground truth to run: the answer alone is graded
            return ctx
        schema = self.schema_for(record)
        if schema is None:
            calls = [record.ground_truth, *record.alternatives, *(c.arguments for c in record.predicted_calls)]
            schema = schema_from_calls([c for c in calls if isinstance(c, dict)])
        ctx.schema = schema
        ctx.truths = [t for t in (try_canonical(a, schema) for a in [record.ground_truth, *record.alternatives]) if t]
        if self.executor is not None and self.truths is not None:
            try:  # the calls made for the question run at its search cut, as its gold does
                ctx.search_cut = self.truths.search_cut(record)
                ctx.executions = Executions(at_cut(self.executor, ctx.search_cut))
            except ExecutorError:
                pass  # the ground truth's execution below fails the same way and reports it
            ctx.truth = self.truths.result(record)
            if isinstance(ctx.truth, QueryResult):
                ctx.collection_size = self.truths.collection_size(record.collection)
            ctx.gold = self.truths.gold(record)
        ctx.final_truths, ctx.final_truth = ctx.truths, ctx.truth
        if record.chain:  # the answer's calls are scored against the chain's last gold call
            gold = ctx.gold
            last = gold.calls[-1] if isinstance(gold, Gold) else (record.gold_calls or [None])[-1]
            ctx.final_truths = [t for t in [try_canonical(last, schema)] if t] if last else []
            ctx.final_truth = gold.results[-1] if isinstance(gold, Gold) else gold
        return ctx


def _resolved(ctx: ScoreContext) -> dict[str, Any]:
    """What scoring learnt about the record itself: its search cut, the label's result (or error), the
    gold calls and key."""
    update: dict[str, Any] = {"search_cut": ctx.search_cut}
    if isinstance(ctx.truth, QueryResult):
        update["ground_truth_result"] = ctx.truth.model_dump(mode="json")
    elif ctx.truth is not None:
        update["ground_truth_error"] = f"{ctx.truth.code}: {ctx.truth.message}"
    if isinstance(ctx.gold, Gold):
        update.update(gold_calls=ctx.gold.calls, answer_key=ctx.gold.key)
    return update
