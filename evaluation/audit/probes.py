"""Gameability probes: predictors built to be wrong must earn nothing, and the gold labels everything.

Each probe turns a case into zero or more predicted runs, and every run is scored by the same
`Scorer` an eval uses, under both protocols. A probe applies only to the questions its component
belongs to (dropping a search is judged on the questions that have one); a probe with several
variants per question (each operator swapped in turn) is judged on every variant.

- `gold`: the label itself; must earn 100% on every score.
- `no_call`: no call at all.
- `collection_only`: only the right collection.
- `everything`: the label without its search and filters (the most a query can return).
- `drop_<component>`: the label with one component removed.
- `swap_operator`, `swap_metric`: the label with one filter's operator, or one aggregation's metrics,
  replaced by another of the kind (the audit's operator and metric mutants).
- `hedge`: the label and the collection-only call made at once, in one step.

A probe fails when any score it earns on the questions it applies to is above `PROBE_LIMIT`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from evaluation.ground_truth import Gold
from evaluation.protocols import PROTOCOLS
from evaluation.records import EvalRecord, Outcome, PredictedCall
from evaluation.scorer import Scorer
from executors.vocabulary import (
    COMPONENT_FIELDS,
    COMPONENT_OF_FIELD,
    DATE_FILTER_FIELD,
    REFERENCE_FILTER_FIELD,
    RELATED_FIELDS,
    Component,
)
from fixtures.authoring.mutants import Mutant
from fixtures.datasets import Case

#: The most a probe built to be wrong may earn, on any score, on the questions it applies to.
PROBE_LIMIT = 0.02
#: The scores each probe is read on, under each protocol.
PROBE_SCORES = ("exact_match", "execution_exact", "execution_subset")
GOLD = "gold"
RELATED_FILTERS = (REFERENCE_FILTER_FIELD, DATE_FILTER_FIELD)

#: A run: the steps of calls a predictor makes (an empty list: no call at all).
Run = list[list[dict[str, Any]]]


@dataclass(frozen=True)
class Probe:
    name: str
    #: The questions it applies to: those with this component (None: every question).
    component: Component | None
    runs: Callable[[Case, list[Mutant]], Iterable[Run]]


class ProbeSummary(BaseModel):
    """One probe's share of predictions that earned each score, per protocol."""

    questions: int = 0
    predictions: int = 0
    #: protocol -> score -> share of predictions earning it
    rates: dict[str, dict[str, float]] = {}
    #: up to five question ids that earned a score, for a reader to look at
    examples: list[str] = []

    @property
    def worst(self) -> float:
        return max((v for scores in self.rates.values() for v in scores.values()), default=0.0)

    @property
    def least(self) -> float:
        return min((v for scores in self.rates.values() for v in scores.values()), default=0.0)


def _label(case: Case) -> dict[str, Any]:
    return case.ground_truth.to_tool_arguments()


def _without(case: Case, fields: Iterable[str]) -> dict[str, Any]:
    dropped = set(fields)
    return {k: v for k, v in _label(case).items() if k not in dropped}


def _drop(field: str) -> Callable[[Case, list[Mutant]], Iterable[Run]]:
    return lambda case, _mutants: [[[_without(case, [field])]]]


def _drop_related(field: str) -> Callable[[Case, list[Mutant]], Iterable[Run]]:
    """A related slot dropped, on the questions whose label has it (no run for the others)."""
    return lambda case, _mutants: [[[_without(case, [field])]]] if field in _label(case) else []


def _swapped(kind: str) -> Callable[[Case, list[Mutant]], Iterable[Run]]:
    return lambda _case, mutants: [[[m.arguments.to_tool_arguments()]] for m in mutants if m.kind == kind]


#: What narrows a label's objects: search and every filter, the related tool's included.
NARROWING = (*(f for f in COMPONENT_FIELDS if "filter" in f or f == "search_query"), *RELATED_FILTERS)


def _everything(case: Case, _mutants: list[Mutant]) -> Iterable[Run]:
    return [[[_without(case, NARROWING)]]]


PROBES: tuple[Probe, ...] = (
    Probe(GOLD, None, lambda case, _m: [[[_label(case)]]]),
    Probe("no_call", None, lambda _c, _m: [[]]),
    Probe("collection_only", None, lambda case, _m: [[[{"collection_name": case.collection}]]]),
    Probe("hedge", None, lambda case, _m: [[[_label(case), {"collection_name": case.collection}]]]),
    *(Probe(f"drop_{COMPONENT_OF_FIELD[f].value}", COMPONENT_OF_FIELD[f], _drop(f)) for f in COMPONENT_FIELDS),
    *(Probe(f"drop_{f}", None, _drop_related(f)) for f in RELATED_FIELDS),
    Probe("swap_operator", None, _swapped("operator")),
    Probe("swap_metric", None, _swapped("metric")),
)


def _applies(probe: Probe, case: Case) -> bool:
    if probe.name == "everything":
        narrowed = any(c is Component.SEARCH or c.value.endswith("_filter") for c in case.components)
        return narrowed or any(f in _label(case) for f in RELATED_FILTERS)
    return probe.component is None or probe.component in case.components


def _record(case: Case, run: Run) -> EvalRecord:
    calls = [
        PredictedCall(step=step, tool_name="query_database", raw_arguments="{}", arguments=arguments, ok=True)
        for step, calls in enumerate(run)
        for arguments in calls
    ]
    outcome = Outcome.OK if calls else Outcome.NO_TOOL_CALL
    return EvalRecord.for_case(case, model="probe", tool_design="probe", predicted_calls=calls, outcome=outcome)


def _gold_chain(scorer: Scorer, case: Case) -> Run | None:
    """A multi-step question's gold: its whole chain as resolved on the data, one call per step."""
    if not case.chain or scorer.truths is None:
        return None
    gold = scorer.truths.gold(EvalRecord.for_case(case, model="probe", tool_design="probe", outcome=Outcome.OK))
    return [[call] for call in gold.calls] if isinstance(gold, Gold) else None


def run_probes(
    scorer: Scorer, cases: list[Case], mutants: dict[str, list[Mutant]], map_: Callable[..., Iterable[Any]] = map
) -> dict[str, ProbeSummary]:
    """Every probe's rates on `cases`, scored by `scorer` (which should execute: probes need results).

    `mutants` maps a case id to its mutants (swaps are read from them); `map_` may be a pool's map.
    """
    probes = (*PROBES, Probe("everything", None, _everything))
    jobs: list[tuple[str, Case, EvalRecord]] = []
    questions: dict[str, int] = {}
    for probe in probes:
        for case in cases:
            if not _applies(probe, case):
                continue
            chain = _gold_chain(scorer, case) if probe.name == GOLD else None
            runs = [chain] if chain else list(probe.runs(case, mutants.get(case.id, [])))
            questions[probe.name] = questions.get(probe.name, 0) + bool(runs)
            jobs.extend((probe.name, case, _record(case, run)) for run in runs)
    scored = list(map_(scorer.score, [record for _, _, record in jobs]))
    summaries = {probe.name: ProbeSummary(questions=questions.get(probe.name, 0)) for probe in probes}
    earned: dict[str, dict[str, dict[str, int]]] = {}
    for (name, case, _), record in zip(jobs, scored, strict=True):
        summary = summaries[name]
        summary.predictions += 1
        counts = earned.setdefault(name, {p.value: dict.fromkeys(PROBE_SCORES, 0) for p in PROTOCOLS})
        hit = False
        for protocol in PROTOCOLS:
            scores = record.scores.of(protocol.value)
            for score in PROBE_SCORES:
                if getattr(scores, score):
                    counts[protocol.value][score] += 1
                    hit = True
        if hit and name != GOLD and len(summary.examples) < 5 and case.id not in summary.examples:
            summary.examples.append(case.id)
    for name, summary in summaries.items():
        if summary.predictions:
            summary.rates = {
                protocol: {score: round(n / summary.predictions, 4) for score, n in scores.items()}
                for protocol, scores in earned[name].items()
            }
    # A probe that applies to none of the questions (a related slot's drop on the paper's splits) is no
    # evidence either way: it is left out of the report rather than shown as run.
    return {name: summary for name, summary in summaries.items() if summary.predictions}


def probe_failures(summaries: dict[str, ProbeSummary]) -> list[str]:
    """What fails the audit: gold below 100%, or any other probe above `PROBE_LIMIT`."""
    failed = []
    for name, summary in summaries.items():
        if not summary.predictions:
            continue
        if name == GOLD and summary.least < 1.0:
            failed.append(f"probe gold earns {summary.least:.3f} < 1 on some score")
        elif name != GOLD and summary.worst > PROBE_LIMIT:
            failed.append(f"probe {name} earns {summary.worst:.3f} > {PROBE_LIMIT:g}")
    return failed
