"""What `dbgorilla audit-dataset --json` prints, and the targets it is held to."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, computed_field

from evaluation.audit.answer_probes import CITING_RECEIVED
from evaluation.audit.checks import AlternativeMismatch, SearchRelevance, Tie
from evaluation.audit.probes import GOLD, PROBE_LIMIT, ProbeSummary, probe_failures

#: exit-code targets of `dbgorilla audit-dataset`
TARGETS: dict[str, float] = {
    "execution_errors": 0,
    "non_vacuous_rate": 0.95,
    "mutation_sensitivity": 0.90,
    #: each component's own mutation sensitivity (search included)
    "component_sensitivity": 0.95,
    "ties": 0,
    "alternative_mismatches": 0,
}


class ExecutionFailure(BaseModel):
    id: str
    code: str
    message: str
    field: str | None = None


class SizeMismatch(ValueError):
    """The audit was asked for a size the loaded collections do not hold."""

    def __init__(self, expected: int, found: dict[str, int | None]) -> None:
        self.expected, self.found = expected, found
        listed = ", ".join(
            f"{name} holds {count if count is not None else 'an unknown number of'}" for name, count in found.items()
        )
        super().__init__(
            f"asked to audit {expected} objects per collection, but {listed}: load that size first "
            f"(`dbgorilla load --objects-per-collection {expected}` with the same --namespace and --use-case)"
        )


class UnstableQuestion(BaseModel):
    """A label with no stable result at this size (`evaluation.search_cut`: no cut holds, or its
    TOP_OCCURRENCES ties at every admissible cut): not audited further, not scored by the eval, and
    not held against the audit's exit (its gold is arbitrary here, not wrong)."""

    id: str
    detail: str


class VacuousQuery(BaseModel):
    id: str
    reason: str


class MutantOutcome(BaseModel):
    id: str
    kind: str
    field: str
    mutation: str
    arguments: dict[str, Any]


class MutantFailure(MutantOutcome):
    code: str
    message: str


class KindSummary(BaseModel):
    mutants: int = 0
    killed: int = 0
    skipped: int = 0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def sensitivity(self) -> float | None:
        return self.killed / self.mutants if self.mutants else None


class AuditReport(BaseModel):
    """The audit of one dataset. Rates are fractions in [0, 1]."""

    dataset: str
    queries: int
    #: The use cases audited, and each collection's object count as observed (the size audited).
    use_cases: list[str] = []
    objects_per_collection: dict[str, int | None] = {}
    invalid_labels: int
    invalid_label_ids: list[str] = []
    #: Labels executed: those stable at this size (the unstable ones are listed apart, in `unstable`).
    executed: int
    execution_errors: int
    errors: list[ExecutionFailure] = []
    non_vacuous_rate: float
    vacuous: list[VacuousQuery] = []
    mutants: int
    killed: int
    mutation_sensitivity: float
    survivors: list[MutantOutcome] = []
    mutant_errors: list[MutantFailure] = []
    by_kind: dict[str, KindSummary] = {}
    by_component: dict[str, KindSummary] = {}
    ties: list[Tie] = []
    #: Search labels run at a cut other than the default on this data: id -> the cut.
    search_cuts: dict[str, float] = {}
    #: Questions unstable at this size: listed apart from ties, not counted against the exit.
    unstable: list[UnstableQuestion] = []
    alternatives_checked: int = 0
    alternative_mismatches: list[AlternativeMismatch] = []
    #: use case -> the search labels' precision and recall against their generator topics
    search_relevance: dict[str, SearchRelevance] = {}
    probes: dict[str, ProbeSummary] = {}
    #: Multi-step questions whose gold chain cannot be trusted on this data (a tie in a pick, say).
    chain_issues: list[str] = []
    #: Final-answer probes (`answer_probes`): probe -> questions and share graded right.
    answer_probes: dict[str, dict[str, float | int]] = {}
    #: Citation probes (`answer_probes.citation_probe_rates`): probe -> questions and mean precision.
    citation_probes: dict[str, dict[str, float | int]] = {}
    seconds: float = 0.0
    targets: dict[str, float] = dict(TARGETS)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def failed_targets(self) -> list[str]:
        failed = []
        if self.execution_errors > self.targets["execution_errors"]:
            failed.append(f"execution_errors {self.execution_errors} > {self.targets['execution_errors']:g}")
        if self.non_vacuous_rate < self.targets["non_vacuous_rate"]:
            failed.append(f"non_vacuous_rate {self.non_vacuous_rate:.3f} < {self.targets['non_vacuous_rate']:g}")
        if self.mutation_sensitivity < self.targets["mutation_sensitivity"]:
            failed.append(
                f"mutation_sensitivity {self.mutation_sensitivity:.3f} < {self.targets['mutation_sensitivity']:g}"
                + (" (no mutants)" if not self.mutants else "")
            )
        for component, summary in self.by_component.items():
            rate = summary.sensitivity
            if rate is not None and rate < self.targets["component_sensitivity"]:
                failed.append(
                    f"{component} mutation_sensitivity {rate:.3f} < {self.targets['component_sensitivity']:g}"
                )
        if len(self.ties) > self.targets["ties"]:
            failed.append(f"ties {len(self.ties)} > {self.targets['ties']:g}")
        if len(self.alternative_mismatches) > self.targets["alternative_mismatches"]:
            failed.append(f"alternative_mismatches {len(self.alternative_mismatches)} > 0")
        failed.extend(probe_failures(self.probes))
        if self.chain_issues:
            failed.append(f"chain_issues {len(self.chain_issues)} > 0")
        for name, rate in self.answer_probes.items():
            if name == GOLD and rate["right"] < 1.0:
                failed.append(f"answer probe gold is right on {rate['right']:.3f} < 1")
            elif name != GOLD and rate["right"] > PROBE_LIMIT:
                failed.append(f"answer probe {name} is right on {rate['right']:.3f} > {PROBE_LIMIT:g}")
        for name, rate in self.citation_probes.items():
            if name in CITING_RECEIVED and rate["precision"] < 1.0:
                failed.append(f"citation probe {name} has precision {rate['precision']:.3f} < 1")
            elif name not in CITING_RECEIVED and rate["precision"] > PROBE_LIMIT:
                failed.append(f"citation probe {name} has precision {rate['precision']:.3f} > {PROBE_LIMIT:g}")
        return failed

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ok(self) -> bool:
        return not self.failed_targets
