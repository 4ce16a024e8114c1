"""`dbgorilla audit-dataset FILE --collections A,B`: the audit of a composed file (`compose-split --collections`)
on the user's own collections, read-only, held to the targets our splits' labels are held to.

Per answerable question, on the live collection:
- its gold calls run, and what they state is its key (the rows and the executor agree now, not only when
  it was composed);
- its last gold call is not vacuous (`execution_match.vacuity`) and its TOP_OCCURRENCES does not cut
  through a tie;
- each of its last call's components mutated on its own (`derive_mutants`, the mutants our splits' audit
  makes: another value, operator, property, metric, a condition dropped) changes the executed result, as
  the eval compares it (`public_calls.same_result`: for a count, the count).

And probes that try to game the scores: the gold answers and calls score 1; committing 0 everywhere,
refusing everything (on the answerable questions) and calling the collection alone score at most
`PROBE_LIMIT`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, computed_field

from agent.answer import FinalAnswer
from evaluation.answers import grade_committed
from evaluation.audit.probes import PROBE_LIMIT
from evaluation.audit.report import TARGETS
from evaluation.execution_match import vacuity
from evaluation.own_split import executed_answer, rows_hash, stored_rows
from evaluation.public_calls import same_result, score_calls
from evaluation.public_run import answer_key, grade
from evaluation.search_cut import top_occurrences_tie
from executors import ExecutorError, QueryResult, WeaviateExecutor
from fixtures.authoring.mutants import derive_mutants
from fixtures.authoring.mutation_context import MutationContext
from fixtures.datasets.cases import typed_call
from fixtures.datasets.public import PublicQuestion

#: The targets of `TARGETS` this audit holds a composed file to, and the key checks of its own.
OWN_TARGETS = {
    "execution_errors": TARGETS["execution_errors"],
    "disagreements": 0,
    "non_vacuous_rate": TARGETS["non_vacuous_rate"],
    "mutation_sensitivity": TARGETS["mutation_sensitivity"],
    "ties": TARGETS["ties"],
}
GOLD = "gold"


class OwnAudit(BaseModel):
    """The audit of one composed file: what ran, what failed and the probes' rates."""

    dataset: str
    questions: int
    answerable: int
    #: Each collection's data hash now, and the questions composed on other data than it holds.
    data: dict[str, str]
    other_data: list[str] = []
    execution_errors: list[str] = []
    disagreements: list[str] = []
    vacuous: list[str] = []
    ties: list[str] = []
    mutants: int = 0
    killed: int = 0
    survivors: list[str] = []
    probes: dict[str, float] = {}

    @computed_field  # type: ignore[prop-decorator]
    @property
    def non_vacuous_rate(self) -> float:
        return 1 - len(self.vacuous) / self.answerable if self.answerable else 1.0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def mutation_sensitivity(self) -> float:
        return self.killed / self.mutants if self.mutants else 1.0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def failed_targets(self) -> list[str]:
        failed = [f"{len(self.other_data)} questions composed on other data" for _ in self.other_data[:1]]
        failed += [f"execution_errors {len(self.execution_errors)} > 0" for _ in self.execution_errors[:1]]
        failed += [f"disagreements {len(self.disagreements)} > 0" for _ in self.disagreements[:1]]
        failed += [f"ties {len(self.ties)} > 0" for _ in self.ties[:1]]
        if self.non_vacuous_rate < OWN_TARGETS["non_vacuous_rate"]:
            failed.append(f"non_vacuous_rate {self.non_vacuous_rate:.3f} < {OWN_TARGETS['non_vacuous_rate']:g}")
        if self.mutation_sensitivity < OWN_TARGETS["mutation_sensitivity"]:
            target = OWN_TARGETS["mutation_sensitivity"]
            failed.append(f"mutation_sensitivity {self.mutation_sensitivity:.3f} < {target:g}")
        for name, rate in self.probes.items():
            if name.startswith(GOLD) and rate < 1:
                failed.append(f"probe {name} {rate:.3f} < 1")
            elif not name.startswith(GOLD) and rate > PROBE_LIMIT:
                failed.append(f"probe {name} {rate:.3f} > {PROBE_LIMIT:g}")
        return failed

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ok(self) -> bool:
        return not self.failed_targets


def audit_own(
    client: Any,
    executor: WeaviateExecutor,
    path: str,
    questions: Sequence[PublicQuestion],
    on_progress: Callable[[str, int, int], None] | None = None,
) -> OwnAudit:
    """Every check above over the questions, read-only (`executor`: the largest tool, on `client`)."""
    names = sorted({name for q in questions for name in q.collections})
    rows = {name: stored_rows(client, name) for name in names}
    data = {name: rows_hash(found) for name, found in rows.items()}
    answerable = [q for q in questions if q.kind != "unanswerable"]
    audit = OwnAudit(dataset=path, questions=len(questions), answerable=len(answerable), data=data)
    audit.other_data = [q.id for q in questions if q.data and q.data != data.get(q.collections[0])]
    context = MutationContext(schema=executor.schema, objects=rows)
    for done, question in enumerate(answerable, start=1):
        _check(executor, context, question, rows, audit)
        if on_progress is not None:
            on_progress("questions", done, len(answerable))
    audit.probes = _probes(executor, questions)
    return audit


def _check(
    executor: WeaviateExecutor,
    context: MutationContext,
    question: PublicQuestion,
    rows: dict[str, list[dict[str, Any]]],
    audit: OwnAudit,
) -> None:
    """One question's gold calls run, agree with its key, mean something and do not tie."""
    if not question.gold_calls:
        audit.execution_errors.append(f"{question.id}: no gold call")
        return
    key = answer_key(question)
    results: list[QueryResult] = []
    for step in question.gold_calls:
        try:
            results.append(executor.execute(step.call))
        except ExecutorError as error:
            audit.execution_errors.append(f"{question.id}: {error.code}: {error.message}")
            return
    stated = [executed_answer(s.read, r) for s, r in zip(question.gold_calls, results, strict=True)]
    merged = FinalAnswer(
        numbers=stated[-1].numbers if stated[-1] else [],
        names=[n for s in stated if s is not None for n in s.names],
        groups=stated[-1].groups if stated[-1] else {},
    )
    verdict = grade_committed(merged, key)
    if not verdict.correct:
        audit.disagreements.append(f"{question.id}: {verdict.reason}")
    last, truth = question.gold_calls[-1].call, results[-1]
    collection = str(last.get("collection_name"))
    if (reason := vacuity(truth, len(rows.get(collection, [])) or None)) is not None:
        audit.vacuous.append(f"{question.id}: {reason}")
    typed = typed_call(last)
    try:
        tie = top_occurrences_tie(executor, typed)
    except ExecutorError:
        tie = ""
    if tie:
        audit.ties.append(f"{question.id}: {tie}")
    mutants, _skipped = derive_mutants(typed, context)
    for mutant in mutants:
        try:
            outcome = executor.execute(mutant.arguments)
        except ExecutorError:
            continue  # a mutant the executor refuses tells nothing about the label
        audit.mutants += 1
        if same_result(truth, outcome, question.gold_calls[-1].read):  # as the eval scores it
            audit.survivors.append(f"{question.id}: {mutant.description}")
        else:
            audit.killed += 1


def _probes(executor: WeaviateExecutor, questions: Sequence[PublicQuestion]) -> dict[str, float]:
    """The gold answers and calls, and three answers and calls that try to score without the question."""
    answerable = [q for q in questions if q.kind != "unanswerable"]
    refusal = FinalAnswer(cannot_answer="The data cannot answer this.")

    def gold_answer(question: PublicQuestion) -> FinalAnswer:
        return refusal if question.answer is None else answer_key(question).committed()

    def answers(commit: Callable[[PublicQuestion], FinalAnswer], over: Sequence[PublicQuestion]) -> float:
        return sum(bool(grade(q, None, commit(q)).correct) for q in over) / len(over) if over else 0.0

    def calls(call: Callable[[PublicQuestion], list[dict[str, Any]]]) -> float:
        scored = [score_calls(q, call(q), executor) for q in answerable]
        return sum(bool(s and s.execution_exact) for s in scored) / len(scored) if scored else 0.0

    return {
        f"{GOLD}_answers": answers(gold_answer, questions),
        f"{GOLD}_calls": calls(lambda q: [g.call for g in q.gold_calls]),
        "zero_everywhere": answers(lambda _q: FinalAnswer(numbers=[0.0]), questions),
        "refuse_answerable": answers(lambda _q: refusal, answerable),
        "collection_alone": calls(lambda q: [{"collection_name": q.gold_calls[-1].call["collection_name"]}]),
    }
