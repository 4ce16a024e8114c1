"""Execution match: the rows Weaviate returns for each protocol's call against the ground truth's
(`evaluation.execution_match`), over the cases whose ground truth ran and is not vacuous."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from evaluation.columns import Column
from evaluation.evaluators.base import Evaluator, Results, ScoreContext, mean
from evaluation.execution_match import compare, vacuity
from evaluation.protocols import PROTOCOLS, ScoringProtocol, protocol_calls
from evaluation.records import EvalRecord
from evaluation.statistics import unstable
from executors import QueryResult

DISAGREEMENT_EXAMPLES = 5


def executed(records: Sequence[EvalRecord]) -> list[EvalRecord]:
    """Cases whose execution match was scored: ground truth ran and is not vacuous."""
    return [r for r in records if r.scores.first.execution_exact is not None and r.scores.ground_truth_vacuous is None]


class Execution(Evaluator):
    name = "execution"
    expects = frozenset({"call"})
    needs_execution = True
    columns = (
        Column("first.execution_match_exact", "Exec exact (first)", "rate"),
        Column("final.execution_match_exact", "Exec exact (final)", "rate"),
        Column("final.execution_match_subset", "Exec subset (final)", "rate"),
        Column("final.execution_f1", "Exec F1 (final)", "score"),
    )
    kind_columns = (Column("final.execution_match_exact", "Exec exact (final)", "rate"),)
    caption = (
        "Exec compares the rows Weaviate returned for the prediction and the ground truth, over cases whose ground "
        "truth ran and is not vacuous: exact = the same rows; subset = the same rows with extra columns allowed; "
        "F1 over rows."
    )

    def evaluate(self, ctx: ScoreContext) -> Results:
        results: dict[str, Any] = {}
        if ctx.search_cut is not None and ctx.search_cut.unstable:  # the gold is arbitrary at this size
            return {"scoring_error": ctx.executions.infrastructure_error}
        for protocol in PROTOCOLS:
            truth = ctx.targets(protocol)[1]
            if not isinstance(truth, QueryResult):
                continue
            scores: dict[str, Any] = dict.fromkeys(("execution_exact", "execution_subset"), False)
            scores |= dict.fromkeys(("precision", "recall", "f1"), 0.0)
            calls = ctx.calls(protocol)
            # no call, several calls at once, or one the executor rejects: no rows to compare
            result = ctx.executions.run(calls[0].arguments) if ctx.predicted(protocol) is not None else None
            if isinstance(result, QueryResult):
                match = compare(truth, result)
                scores.update(execution_exact=match.exact, execution_subset=match.subset)
                scores.update(precision=match.precision, recall=match.recall, f1=round(match.f1, 6))
            results[protocol.value] = scores
        got = ctx.got
        if isinstance(ctx.truth, QueryResult):
            results["ground_truth_vacuous"] = vacuity(ctx.truth, ctx.collection_size)
            results["any_call_execution_exact"] = any(compare(ctx.truth, r).exact for r in got)
        results["scoring_error"] = ctx.executions.infrastructure_error
        return results

    def failures(self, record: EvalRecord) -> list[str]:
        return ["results differ"] if record.scores.final.execution_exact is False else []

    def protocol_numbers(self, records: Sequence[EvalRecord], protocol: ScoringProtocol) -> dict[str, Any]:
        scored = [r.scores.of(protocol.value) for r in executed(records)]
        return {
            "execution_match_exact": mean(float(bool(s.execution_exact)) for s in scored),
            "execution_match_subset": mean(float(bool(s.execution_subset)) for s in scored),
            "execution_precision": mean(s.precision or 0.0 for s in scored),
            "execution_recall": mean(s.recall or 0.0 for s in scored),
            "execution_f1": mean(s.f1 or 0.0 for s in scored),
        }

    def summary(self, records: Sequence[EvalRecord], executed_scoring: bool) -> dict[str, Any]:
        if not executed_scoring:
            return {}
        scored = executed(records)
        return {
            "execution_scored_cases": len(scored),
            "vacuous_ground_truths": dict(
                Counter(r.scores.ground_truth_vacuous for r in records if r.scores.ground_truth_vacuous)
            ),
            "ground_truth_errors": sum(1 for r in records if r.ground_truth_error),
            #: Questions unstable at this size (`evaluation.search_cut`): not scored, named.
            "unstable": unstable_questions(records),
            "moved_search_cuts": sum(1 for r in records if r.search_cut is not None and r.search_cut.moved),
            "scoring_errors": sum(1 for r in records if r.scores.scoring_error),
            "diagnostics": {
                "any_call_execution_exact": mean(float(bool(r.scores.any_call_execution_exact)) for r in scored),
                "avg_calls_made": mean(r.scores.calls_made for r in records),
            },
            "disagreement": {p.value: disagreement(records, p) for p in PROTOCOLS},
        }


def unstable_questions(records: Sequence[EvalRecord]) -> list[str]:
    """The ids of the questions unstable on this data (left out of execution scores and the pass rate)."""
    return [r.id for r in records if unstable(r)]


def disagreement(records: Sequence[EvalRecord], protocol: ScoringProtocol | str) -> dict[str, Any]:
    """Where argument match and execution match disagree, both ways, under one protocol."""
    name = ScoringProtocol(protocol).value
    scored = executed(records)
    args_only = [r for r in scored if r.scores.of(name).exact_match and not r.scores.of(name).execution_exact]
    exec_only = [r for r in scored if r.scores.of(name).execution_exact and not r.scores.of(name).exact_match]

    def example(record: EvalRecord) -> dict[str, Any]:
        return {
            "id": record.id,
            "query": record.query,
            "ground_truth": record.ground_truth,
            "prediction": [c.arguments for c in protocol_calls(record, ScoringProtocol(name))],
        }

    return {
        "cases": len(scored),
        "argument_match_but_execution_differs": len(args_only),
        "execution_match_but_arguments_differ": len(exec_only),
        "rate": mean(float(r in args_only or r in exec_only) for r in scored),
        "examples_argument_only": [example(r) for r in args_only[:DISAGREEMENT_EXAMPLES]],
        "examples_execution_only": [example(r) for r in exec_only[:DISAGREEMENT_EXAMPLES]],
    }
