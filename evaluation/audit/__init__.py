"""The label audit: on live data, every label runs, answers something, and tells near misses apart.

`audit_dataset(client, path)` executes every ground truth through `WeaviateExecutor` with the
eval's `SCORING_OPTIONS` (filter results are complete sets) and reports:

- execution errors: the typed `ExecutorError` code and message of each label that fails;
- vacuous answers: `execution_match.vacuity` (empty, or every object of the collection), the same
  verdict the eval records as `ground_truth_vacuous`;
- mutation sensitivity: each label's single-component mutants are executed and compared with the
  label's own result by `execution_match.compare`; the share whose result differs (`exact` is
  False) is the sensitivity, and the mutants whose result equals the label's are the *survivors*:
  near-miss answers the eval would score as correct. Each component (search included, through
  its drop mutant) is held to its own rate;
- ties, alternatives and search relevance (`checks`): no expected result depends on a tie at a
  cut, every accepted alternative gives the label's result, and the search labels' hits are
  compared with the generator topics they mean;
- search cuts (`evaluation.search_cut`): each search label runs, with its mutants and checks, at
  its own cut on this data, the one the eval scores it at; the moved ones are listed with their
  cut, and a label unstable at this size (no cut holds, or its TOP_OCCURRENCES ties at every admissible
  cut) is listed under `unstable`, not audited further and not held against the exit;
- gameability probes (`probes`): predictors built to be wrong, scored by the eval's own `Scorer`
  under both protocols, must earn nothing; the gold labels must earn everything.

Mutants are derived in `mutants`; the report and its targets are in `report`. A mutant that fails
to execute is listed under `mutant_errors` and left out of the rate. Metric, group-by and
collection mutants are told apart by `compare` by construction (results are keyed by metric,
group value and collection); `by_kind` shows each kind's own rate, the filter kinds being the
informative ones. Queries run on a small thread pool sharing one executor: on the default data
(100 objects per collection, 2 cores) our 315 labels and their ~2,300 mutants take 15-40 s.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluation.audit.answer_probes import answer_probe_rates, citation_probe_rates
from evaluation.audit.checks import (
    AlternativeMismatch,
    Tie,
    alternative_mismatches,
    moved_cut_executors,
    relevance_by_use_case,
    search_cut_tie,
    search_relevance,
    top_occurrences_tie,
    topics_of,
)
from evaluation.audit.probes import ProbeSummary, run_probes
from evaluation.audit.report import TARGETS, AuditReport, SizeMismatch, UnstableQuestion
from evaluation.audit.tally import Cut, Job, moved_cuts, mutant_jobs, sort_truths, tally_mutants
from evaluation.execution_match import SCORING_OPTIONS
from evaluation.ground_truth import Gold, GroundTruthCache
from evaluation.records import EvalRecord, Outcome
from evaluation.scorer import Scorer
from evaluation.search_cut import SearchCut, at_cut
from executors import ExecutorError, QueryDatabaseArguments, QueryResult, WeaviateExecutor
from fixtures.authoring.mutants import (
    MIN_CROSSED_SHARE,
    MUTATION_KINDS,
    Mutant,
    derive_mutants,
    flatten,
    like_variant,
    unflatten,
    use_case_context,
    with_component,
)
from fixtures.authoring.mutation_context import MutationContext
from fixtures.datasets import Case, read_dataset
from fixtures.datasets.cases import operations_needed
from fixtures.loader import DEFAULT_OBJECTS_PER_COLLECTION, ensure_loaded, names_of
from fixtures.use_cases import UseCase

DEFAULT_WORKERS = 8
#: on_progress(stage, done, total); stages "ground truth", "mutants", "label checks", "probes"
ProgressCallback = Callable[[str, int, int], None]


def audit_dataset(
    client: Any,
    path: str | Path | None = None,
    *,
    workers: int = DEFAULT_WORKERS,
    on_progress: ProgressCallback | None = None,
    namespace: str | None = None,
    use_cases: list[str] | None = None,
    objects_per_collection: int | None = None,
) -> AuditReport:
    """Execute every label of `path` (default: the default split) and its mutants on the loaded data.

    Use cases whose collections are missing or empty are loaded first (at `objects_per_collection`,
    default 100, and the default seed), under `namespace`; a collection they need that the project did
    not create stops it (`NotOurCollection`). `use_cases` keeps only their questions. Given a size, the
    collections must hold exactly that many objects (`SizeMismatch` otherwise): the audit is of that size.
    """
    started = time.perf_counter()
    dataset = read_dataset(path)
    cases = [c for c in dataset.cases if use_cases is None or c.use_case in use_cases]
    executor = _loaded_executor(client, dataset.use_cases, cases, namespace, objects_per_collection)
    collections = sorted({case.collection for case in cases})

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        observed = _observed(pool, executor, collections, objects_per_collection)
        # Each label, its mutants and checks run at its own search cut on this data, as the eval scores it.
        gold = GroundTruthCache(executor, client)
        cut_of, executor_of, unstable = _search_cuts(pool, gold, executor, cases)
        stable = [c for c in cases if c.id not in {u.id for u in unstable}]
        truths = _run_all(
            pool, [(executor_of.get(c.id, executor), c.ground_truth) for c in stable], "ground truth", on_progress
        )
        errors, vacuous, answered = sort_truths(stable, truths, cut_of, observed)
        context = use_case_context(
            executor.schema, dataset.use_cases, {name: objs for name, (_, objs) in observed.items()}
        )
        jobs, by_kind = mutant_jobs(answered, context)
        outcomes = _run_all(pool, [(executor_of[c.id], m.arguments) for c, _, m in jobs], "mutants", on_progress)
        checks = _label_checks(pool, executor_of, answered, dataset.use_cases, observed, on_progress)
        probed = _probed(pool, executor, gold, answered, jobs, on_progress)

    survivors, mutant_errors, by_component = tally_mutants(jobs, outcomes, by_kind)
    mutants = sum(s.mutants for s in by_kind.values())
    killed = sum(s.killed for s in by_kind.values())
    selected = dataset.size if use_cases is None else len(cases)
    return AuditReport(
        dataset=dataset.source,
        queries=selected,
        use_cases=sorted({c.use_case for c in cases}),
        objects_per_collection={name: n for name, (n, _) in observed.items()},
        invalid_labels=len(dataset.invalid),
        invalid_label_ids=dataset.invalid,
        executed=len(stable),
        execution_errors=len(errors),
        errors=errors,
        non_vacuous_rate=(len(answered) - len(vacuous)) / len(answered) if answered else 0.0,
        vacuous=vacuous,
        mutants=mutants,
        killed=killed,
        mutation_sensitivity=killed / mutants if mutants else 0.0,
        survivors=survivors,
        mutant_errors=mutant_errors,
        by_kind=by_kind,
        by_component=dict(sorted(by_component.items())),
        ties=checks.ties,
        search_cuts=moved_cuts(cut_of),
        unstable=unstable,
        alternative_mismatches=checks.mismatches,
        alternatives_checked=checks.alternatives,
        search_relevance=relevance_by_use_case(checks.relevance),
        probes=probed.probes,
        chain_issues=probed.chain_issues,
        answer_probes=probed.answers,
        citation_probes=probed.citations,
        seconds=round(time.perf_counter() - started, 2),
    )


def _loaded_executor(
    client: Any,
    use_cases: list[UseCase],
    cases: list[Case],
    namespace: str | None,
    objects_per_collection: int | None,
) -> WeaviateExecutor:
    """The collections the chosen questions ask over, loaded when missing or empty (default size and seed),
    and the executor that runs their labels: the smallest tool they are written in (the paper's for the
    paper's labels), with the eval's scoring options."""
    used = [u for u in use_cases if u.name in {case.use_case for case in cases}]
    size = DEFAULT_OBJECTS_PER_COLLECTION if objects_per_collection is None else objects_per_collection
    ensure_loaded(client, used, echo=lambda _: None, namespace=namespace, objects_per_collection=size)
    operations = operations_needed(cases)
    return WeaviateExecutor(client, SCORING_OPTIONS, names=names_of(used, namespace), operations=operations)


def _observed(
    pool: ThreadPoolExecutor, executor: WeaviateExecutor, collections: list[str], objects_per_collection: int | None
) -> dict[str, tuple[int | None, list[dict[str, Any]]]]:
    """Each collection's size and objects; given a size, every collection must hold exactly that many."""
    sizes_and_objects = pool.map(lambda name: _observe(executor, name), collections)
    observed = dict(zip(collections, sizes_and_objects, strict=True))
    if objects_per_collection is not None:
        wrong = {name: n for name, (n, _) in observed.items() if n != objects_per_collection}
        if wrong:
            raise SizeMismatch(objects_per_collection, wrong)
    return observed


def _search_cuts(
    pool: ThreadPoolExecutor, gold: GroundTruthCache, executor: WeaviateExecutor, cases: list[Case]
) -> tuple[dict[str, Cut], dict[str, WeaviateExecutor], list[UnstableQuestion]]:
    """Each label's search cut on this data, an executor at it for each label whose cut could be read, and
    the labels no cut holds stable at this size."""
    cut_of = dict(zip((c.id for c in cases), pool.map(lambda c: _cut(gold, c), cases), strict=True))
    executor_of = {
        c.id: at_cut(executor, cut)
        for c, cut in zip(cases, cut_of.values(), strict=True)
        if not isinstance(cut, ExecutorError)
    }
    unstable = [
        UnstableQuestion(id=case_id, detail=cut.unstable)
        for case_id, cut in cut_of.items()
        if isinstance(cut, SearchCut) and cut.unstable
    ]
    return cut_of, executor_of, unstable


@dataclass
class _Probed:
    """What the probes came to, for the report."""

    probes: dict[str, ProbeSummary]
    chain_issues: list[str]
    answers: dict[str, dict[str, float | int]]
    citations: dict[str, dict[str, float | int]]


def _probed(
    pool: ThreadPoolExecutor,
    executor: WeaviateExecutor,
    gold: GroundTruthCache,
    answered: list[tuple[Case, QueryResult]],
    jobs: list[Job],
    on_progress: ProgressCallback | None,
) -> _Probed:
    """The gameability probes scored by the eval's own scorer (mutants among the wrong predictors), the gold
    chains this data leaves untrustworthy, and the final-answer and citation probes."""
    mutants_of: dict[str, list[Mutant]] = {}
    for case, _, mutant in jobs:
        mutants_of.setdefault(case.id, []).append(mutant)
    scorer = Scorer(lambda _record: executor.schema, executor, gold)
    probes = run_probes(scorer, [case for case, _ in answered], mutants_of, pool.map)
    records = [
        EvalRecord.for_case(case, model="probe", tool_design="probe", outcome=Outcome.OK) for case, _ in answered
    ]
    golds = [gold.gold(record) for record in records if record.chain]
    chain_issues = [g.key.unscored for g in golds if isinstance(g, Gold) and g.key.unscored]
    answers = answer_probe_rates(records, gold)
    citations = citation_probe_rates(records, gold)
    if on_progress is not None:
        on_progress("probes", 1, 1)
    return _Probed(probes, chain_issues, answers, citations)


@dataclass
class _Checks:
    ties: list[Tie] = field(default_factory=list)
    mismatches: list[AlternativeMismatch] = field(default_factory=list)
    alternatives: int = 0
    relevance: dict[str, list[tuple[float, float]]] = field(default_factory=dict)


def _cut(gold: GroundTruthCache, case: Case) -> SearchCut | ExecutorError | None:
    try:
        return gold.search_cut(case)
    except ExecutorError as error:
        return error


def _label_checks(
    pool: ThreadPoolExecutor,
    executor_of: dict[str, WeaviateExecutor],
    answered: list[tuple[Case, QueryResult]],
    use_cases: list[UseCase],
    observed: dict[str, tuple[int | None, list[dict[str, Any]]]],
    on_progress: ProgressCallback | None,
) -> _Checks:
    """Ties at a cut, alternatives that must agree, and the search's precision and recall per use case,
    each question on its executor (at its search cut)."""
    sizes = {name: size for name, (size, _) in observed.items()}
    topics = {c: t for u in use_cases for c, t in topics_of(u, sizes).items()}

    def check(item: tuple[Case, QueryResult]) -> tuple[list[Tie], list[AlternativeMismatch], Any]:
        case, truth = item
        executor = executor_of[case.id]
        moved = moved_cut_executors(executor)
        ties = [t for t in (top_occurrences_tie(executor, case), search_cut_tie(moved, case, truth)) if t]
        relevance = search_relevance(executor, case, topics.get(case.collection, {}))
        return ties, alternative_mismatches(executor, case, truth), relevance

    checks = _Checks()
    for done, ((case, _), (ties, mismatches, relevance)) in enumerate(
        zip(answered, pool.map(check, answered), strict=True), start=1
    ):
        checks.ties.extend(ties)
        checks.mismatches.extend(mismatches)
        checks.alternatives += len(case.alternatives)
        if relevance is not None:
            checks.relevance.setdefault(case.use_case, []).append(relevance)
        if on_progress is not None:
            on_progress("label checks", done, len(answered))
    return checks


def _observe(executor: WeaviateExecutor, name: str) -> tuple[int | None, list[dict[str, Any]]]:
    """A collection's size (counted as the eval counts it) and the properties of its objects.

    The objects are read through the executor (the first `SCORING_OPTIONS.fetch_limit` in UUID order).
    """
    size = executor.collection_size(name)  # best effort, as in the eval: vacuity then only detects empty answers
    try:
        result = executor.execute({"collection_name": name})
    except ExecutorError:
        return size, []
    return size, [dict(obj.properties) for obj in result.objects]


def _run_all(
    pool: ThreadPoolExecutor,
    calls: list[tuple[WeaviateExecutor, QueryDatabaseArguments]],
    stage: str,
    on_progress: ProgressCallback | None,
) -> list[QueryResult | ExecutorError]:
    def run(call: tuple[WeaviateExecutor, QueryDatabaseArguments]) -> QueryResult | ExecutorError:
        executor, arguments = call
        try:
            return executor.execute(arguments)
        except ExecutorError as error:
            return error

    results: list[QueryResult | ExecutorError] = []
    for done, outcome in enumerate(pool.map(run, calls), start=1):
        results.append(outcome)
        if on_progress is not None:
            on_progress(stage, done, len(calls))
    if on_progress is not None and not calls:
        on_progress(stage, 0, 0)
    return results


__all__ = [
    "MIN_CROSSED_SHARE",
    "MUTATION_KINDS",
    "TARGETS",
    "AuditReport",
    "Mutant",
    "MutationContext",
    "audit_dataset",
    "derive_mutants",
    "flatten",
    "like_variant",
    "unflatten",
    "use_case_context",
    "with_component",
]
