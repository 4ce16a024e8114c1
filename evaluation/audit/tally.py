"""What the label audit's executions came to (`evaluation.audit.audit_dataset` runs them): each label's
result sorted into an error, a vacuous answer or an answer; each label's mutants to run; each mutant's
result against its label's, as survivors, failures and kill counts; the search cuts that moved."""

from __future__ import annotations

from typing import Any

from evaluation.audit.report import ExecutionFailure, KindSummary, MutantFailure, MutantOutcome, VacuousQuery
from evaluation.execution_match import compare, vacuity
from evaluation.search_cut import SearchCut
from executors import ExecutorError, QueryResult
from fixtures.authoring.mutants import MUTATION_KINDS, Mutant, derive_mutants
from fixtures.authoring.mutation_context import MutationContext
from fixtures.datasets import Case

#: A stable label's search cut as the audit read it: the cut, the error reading it, or None (no search).
Cut = SearchCut | ExecutorError | None
#: A mutant to execute: its label, the label's own result, and the mutant.
Job = tuple[Case, QueryResult, Mutant]


def sort_truths(
    stable: list[Case],
    truths: list[QueryResult | ExecutorError],
    cut_of: dict[str, Cut],
    observed: dict[str, tuple[int | None, list[dict[str, Any]]]],
) -> tuple[list[ExecutionFailure], list[VacuousQuery], list[tuple[Case, QueryResult]]]:
    """Each stable label's result as an execution error (its cut unreadable, or its call failing), and
    otherwise as an answer, vacuous when empty or all of its collection (as the eval records it)."""
    errors: list[ExecutionFailure] = []
    vacuous: list[VacuousQuery] = []
    answered: list[tuple[Case, QueryResult]] = []
    for case, outcome in zip(stable, truths, strict=True):
        cut = cut_of[case.id]
        result = cut if isinstance(cut, ExecutorError) else outcome  # the cut could not be read: an error
        if isinstance(result, ExecutorError):
            errors.append(ExecutionFailure(id=case.id, code=result.code, message=result.message, field=result.field))
            continue
        answered.append((case, result))
        reason = vacuity(result, observed.get(case.collection, (None, []))[0])
        if reason is not None:
            vacuous.append(VacuousQuery(id=case.id, reason=reason))
    return errors, vacuous, answered


def mutant_jobs(
    answered: list[tuple[Case, QueryResult]], context: MutationContext
) -> tuple[list[Job], dict[str, KindSummary]]:
    """Every answered label's single-component mutants to execute, and a summary per mutation kind that
    so far counts the mutants skipped (a kind that does not apply to the label, say)."""
    by_kind = {kind: KindSummary() for kind in MUTATION_KINDS}
    jobs: list[Job] = []
    for case, truth in answered:
        mutants, skipped = derive_mutants(case.ground_truth, context, case.alternatives)
        jobs.extend((case, truth, mutant) for mutant in mutants)
        for entry in skipped:
            by_kind[entry.split(":", 1)[0]].skipped += 1
    return jobs, by_kind


def tally_mutants(
    jobs: list[Job], outcomes: list[QueryResult | ExecutorError], by_kind: dict[str, KindSummary]
) -> tuple[list[MutantOutcome], list[MutantFailure], dict[str, KindSummary]]:
    """Each mutant's result against its label's: the survivors (the same result, a near miss the eval
    would pass) and the mutants that failed to run; executed and killed mutants are counted into
    `by_kind` (updated in place) and into a summary per component, which is returned."""
    survivors: list[MutantOutcome] = []
    mutant_errors: list[MutantFailure] = []
    by_component: dict[str, KindSummary] = {}
    for (case, truth, mutant), outcome in zip(jobs, outcomes, strict=True):
        described = {
            "id": case.id,
            "kind": mutant.kind,
            "field": mutant.field,
            "mutation": mutant.description,
            "arguments": mutant.arguments.to_tool_arguments(),
        }
        if isinstance(outcome, ExecutorError):
            mutant_errors.append(MutantFailure(**described, code=outcome.code, message=outcome.message))
            continue
        for summary in (by_kind[mutant.kind], by_component.setdefault(mutant.component, KindSummary())):
            summary.mutants += 1
            summary.killed += not compare(truth, outcome).exact
        if compare(truth, outcome).exact:
            survivors.append(MutantOutcome(**described))
    return survivors, mutant_errors, by_component


def moved_cuts(cut_of: dict[str, Cut]) -> dict[str, float]:
    """The search labels run at a cut other than the default on this data (the unstable ones aside): id -> cut."""
    return {
        case_id: cut.value
        for case_id, cut in cut_of.items()
        if isinstance(cut, SearchCut) and cut.moved and not cut.unstable
    }
