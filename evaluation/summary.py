"""Aggregate per-case scores into the run's numbers, overall and per slice (as in the paper's tables).

Rates are fractions in [0, 1]. Every score is under a named protocol (`evaluation.protocols`):
the summary holds one block per protocol, and every table or printout names the protocol of each
number. Execution match is reported over the cases whose ground truth executed and is not vacuous;
vacuous ground truths are counted apart.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from evaluation.argument_match import COMPONENT_LABELS
from evaluation.protocols import PROTOCOLS, Protocol, protocol_calls
from evaluation.records import EvalRecord, Outcome
from evaluation.statistics import rate_with_interval
from evaluation.trajectory import trajectory_summary
from executors import Blame, Component, codes_blaming

COMPONENTS = tuple(component.value for component in Component)
DISAGREEMENT_EXAMPLES = 5
#: The numbers of `core`, in the order tables show them.
CORE_KEYS = (
    "exact_match",
    "ast_score",
    "ast_score_lenient",
    "routing_accuracy",
    "execution_match_exact",
    "execution_match_subset",
    "execution_precision",
    "execution_recall",
    "execution_f1",
)


def tokens_per_case(records: list[EvalRecord]) -> dict[str, float | None]:
    """Mean prompt, new (not reused) prompt and completion tokens per question: on a CPU, its cost."""
    reported = [r for r in records if r.cached_prompt_tokens is not None]
    return {
        "prompt": _mean(r.prompt_tokens for r in records),
        "new_prompt": _mean(r.prompt_tokens - (r.cached_prompt_tokens or 0) for r in reported),
        "completion": _mean(r.completion_tokens for r in records),
    }


def _mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return round(sum(values) / len(values), 6) if values else None


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    return round(statistics.quantiles(ordered, n=100, method="inclusive")[int(q) - 1], 4)


def executed(records: list[EvalRecord]) -> list[EvalRecord]:
    """Cases whose execution match was scored: ground truth ran and is not vacuous."""
    return [r for r in records if r.scores.first.execution_exact is not None and r.scores.ground_truth_vacuous is None]


def core(records: list[EvalRecord], protocol: Protocol | str) -> dict[str, Any]:
    """The headline numbers of one protocol for any set of records."""
    name = Protocol(protocol).value
    scores = [r.scores.of(name) for r in records]
    scored = [r.scores.of(name) for r in executed(records)]
    return {
        "exact_match": _mean(float(s.exact_match) for s in scores),
        "ast_score": _mean(s.ast_score for s in scores),
        "ast_score_lenient": _mean(s.ast_score_lenient for s in scores),
        "routing_accuracy": _mean(float(s.routing) for s in scores),
        "execution_match_exact": _mean(float(bool(s.execution_exact)) for s in scored),
        "execution_match_subset": _mean(float(bool(s.execution_subset)) for s in scored),
        "execution_precision": _mean(s.precision or 0.0 for s in scored),
        "execution_recall": _mean(s.recall or 0.0 for s in scored),
        "execution_f1": _mean(s.f1 or 0.0 for s in scored),
    }


def by_protocol(records: list[EvalRecord], executed_scoring: bool = True) -> dict[str, dict[str, Any]]:
    blocks = {p.value: core(records, p) for p in PROTOCOLS}
    if not executed_scoring:
        for block in blocks.values():
            for key in [k for k in block if k.startswith("execution_")]:
                block.pop(key)
    return blocks


#: Outcomes caused by the infrastructure rather than the model: `--resume` runs these again.
RETRIED_ON_RESUME = {Outcome.MODEL_ERROR, Outcome.TIMEOUT}
INFRASTRUCTURE_ERROR_CODES = codes_blaming(Blame.INFRASTRUCTURE)


def infrastructure_failed(record: EvalRecord) -> bool:
    """The case says nothing about the model: the model server, Weaviate or scoring failed under it."""
    if record.outcome in RETRIED_ON_RESUME or record.ground_truth_error or record.scores.scoring_error:
        return True
    codes = {c.error_code for c in record.predicted_calls if c.error_code}
    return record.outcome is Outcome.EXECUTION_ERROR and bool(codes & INFRASTRUCTURE_ERROR_CODES)


def summarize(records: list[EvalRecord], executed_scoring: bool = True) -> dict[str, Any]:
    """Scores over the answerable questions; cost and outcomes over all; abstention on its own.

    A run in which every case failed on the infrastructure says so (`infrastructure_failure`):
    its zeros measure a dead server, not a model, and the report shows them as such."""
    answerable = [r for r in records if r.expected == "call"]
    latencies = [r.latency_s for r in records]
    failed = sum(infrastructure_failed(r) for r in records)
    return {
        "cases": len(records),
        "infrastructure_failures": failed,
        "infrastructure_failure": bool(records) and failed == len(records),
        "answerable_cases": len(answerable),
        **_answerable(answerable, executed_scoring),
        "outcomes": dict(Counter(r.outcome.value for r in records)),
        "prompt_tokens": sum(r.prompt_tokens for r in records),
        "completion_tokens": sum(r.completion_tokens for r in records),
        "tokens_per_case": tokens_per_case(records),
        "latency_p50_s": percentile(latencies, 50),
        "latency_p95_s": percentile(latencies, 95),
        "models": sorted({r.model for r in records}),
        "tool_designs": sorted({r.tool_design for r in records}),
        "abstention": abstention_summary(records),
        "trajectories": trajectory_summary(records),
        "citations": citation_summary(records),
        "contract": contract_summary(records),
    }


def contract_summary(records: list[EvalRecord]) -> dict[str, Any]:
    """The structured final answer (`agent.answer`): how often the model committed one, the pass rate
    with the contract (the committed part graded where there is one) and without it (the prose graded
    alone), and what the commit turn cost."""
    commits = [r.commit for r in records if r.commit is not None]
    graded = [r for r in records if r.scores.answer is not None or r.expected == "abstain"]

    def right(record: EvalRecord, contract: bool) -> bool:
        s = record.scores
        if record.expected == "abstain":
            return bool(s.abstained if contract else s.abstained_text)
        return bool(s.answer if contract else s.answer_text)

    new_tokens = [c.usage.new_prompt_tokens for c in commits if c.usage.new_prompt_tokens is not None]
    return {
        "commit_turns": len(commits),
        "committed": sum(c.answer is not None for c in commits),
        "commit_rate": _mean(float(r.committed_answer is not None) for r in records),
        "commit_errors": dict(Counter(_problem(c.error) for c in commits if c.error)),
        "graded_cases": len(graded),
        "answer_right_with_contract": _mean(float(right(r, True)) for r in graded),
        "answer_right_without_contract": _mean(float(right(r, False)) for r in graded),
        "commit_prompt_tokens": _mean(c.usage.prompt_tokens for c in commits),
        "commit_new_prompt_tokens": _mean(new_tokens),
        "commit_completion_tokens": _mean(c.usage.completion_tokens for c in commits),
        "commit_latency_s": _mean(c.latency_s for c in commits),
    }


def contract_note(summary: dict[str, Any]) -> str:
    """The contract in words, for the line that reports final answers ("" when no commit was asked)."""
    contract = summary.get("contract") or {}
    if not contract.get("commit_turns"):
        return ""

    def shown(key: str, form: str) -> str:
        return "n/a" if contract.get(key) is None else format(contract[key], form)

    return (
        f"\ncommitted answers: {contract['committed']} of {summary.get('cases', contract['commit_turns'])} "
        f"questions; right {shown('answer_right_with_contract', '.3f')} with the contract, "
        f"{shown('answer_right_without_contract', '.3f')} from the prose alone; the commit turn "
        f"{shown('commit_completion_tokens', '.0f')} completion tokens, {shown('commit_latency_s', '.1f')} s"
    )


def _problem(error: str) -> str:
    """An error's kind, its words before the details ("the commit reply is not JSON")."""
    return error.split(" (")[0].split(":")[0]


def citation_summary(records: list[EvalRecord]) -> dict[str, Any]:
    """How many answers cite objects, and how precisely: the mean per citing answer and over all ids."""
    citing = [r for r in records if r.scores.citation_precision is not None]
    cited = sum(r.scores.citations for r in citing)
    received = sum(r.scores.citations_received for r in citing)
    return {
        "answers_citing": len(citing),
        "precision": _mean(r.scores.citation_precision or 0.0 for r in citing),
        "ids_cited": cited,
        "ids_received": received,
        "micro_precision": round(received / cited, 6) if cited else None,
    }


def abstention_summary(records: list[EvalRecord]) -> dict[str, Any]:
    """How often the answer said "cannot" where that is right, and where it is not."""
    unanswerable = [r for r in records if r.expected == "abstain"]
    answered = [r for r in records if r.expected == "call" and r.scores.refused is not None]
    reasons: dict[str, list[EvalRecord]] = {}
    for record in unanswerable:
        reasons.setdefault((record.abstention_reason or "").split(":")[0], []).append(record)
    return {
        "cases": len(unanswerable),
        "accuracy": rate_with_interval([bool(r.scores.abstained) for r in unanswerable]),
        "by_reason": {k: _mean(float(bool(r.scores.abstained)) for r in v) for k, v in sorted(reasons.items())},
        "without_a_call": sum(1 for r in unanswerable if not r.predicted_calls),
        "answers_to_answerable": len(answered),
        "false_refusals": sum(1 for r in answered if r.scores.refused),
        "false_refusal_rate": _mean(float(bool(r.scores.refused)) for r in answered),
    }


def _answerable(records: list[EvalRecord], executed_scoring: bool) -> dict[str, Any]:
    """The scores of the answerable questions (`summarize` adds what applies to every question)."""
    summary: dict[str, Any] = {
        "protocols": by_protocol(records, executed_scoring),
        "no_tool_rate": _mean(float(r.outcome is Outcome.NO_TOOL_CALL) for r in records),
        "exact_match_as_written": _mean(float(r.scores.exact_match_as_written) for r in records),
        "search_similarity": _mean(
            r.scores.search_similarity for r in records if r.scores.search_similarity is not None
        ),
        "avg_calls_made": _mean(r.scores.calls_made for r in records),
        "avg_steps": _mean(r.steps for r in records),
        "avg_corrections": _mean(r.corrections for r in records),
        "recovered_text_call_rate": _mean(
            float(any(c.recovered_from_text for c in r.predicted_calls)) for r in records
        ),
        "answers": answer_summary(records),
        "by_use_case": _slices(records, lambda r: [r.use_case], executed_scoring),
        "by_complexity": _slices(records, lambda r: [r.complexity], executed_scoring),
        "by_component": {p.value: component_accuracy(records, p) for p in PROTOCOLS},
    }
    if executed_scoring:
        scored = executed(records)
        summary["execution_scored_cases"] = len(scored)
        summary["vacuous_ground_truths"] = dict(
            Counter(r.scores.ground_truth_vacuous for r in records if r.scores.ground_truth_vacuous)
        )
        summary["ground_truth_errors"] = sum(1 for r in records if r.ground_truth_error)
        summary["scoring_errors"] = sum(1 for r in records if r.scores.scoring_error)
        summary["diagnostics"] = {
            "any_call_execution_exact": _mean(float(bool(r.scores.any_call_execution_exact)) for r in scored),
            "avg_calls_made": summary["avg_calls_made"],
        }
        summary["disagreement"] = {p.value: disagreement(records, p) for p in PROTOCOLS}
    return summary


def answer_summary(records: list[EvalRecord]) -> dict[str, Any]:
    """Final-answer accuracy over the questions with a key, and how far runs got along the gold calls."""
    keyed = [r for r in records if r.scores.answer is not None]
    reached = [r.scores.gold_calls_reached for r in records if r.scores.gold_calls_reached is not None]
    return {
        "accuracy": _mean(float(bool(r.scores.answer)) for r in keyed),
        "keyed_cases": len(keyed),
        "unscored_cases": sum(1 for r in records if r.scores.answer is None),
        "gold_calls_reached": _mean(reached),
        "all_gold_calls_reached": _mean(float(value == 1.0) for value in reached),
    }


def _slices(
    records: list[EvalRecord], keys: Callable[[EvalRecord], list[str]], executed_scoring: bool
) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[EvalRecord]] = {}
    for record in records:
        for key in keys(record):
            groups.setdefault(key, []).append(record)
    return {
        key: {
            "cases": len(groups[key]),
            **by_protocol(groups[key], executed_scoring),
            "answer_accuracy": answer_summary(groups[key])["accuracy"],
        }
        for key in sorted(groups)
    }


def component_accuracy(records: list[EvalRecord], protocol: Protocol | str) -> dict[str, dict[str, Any]]:
    """Per component: how often it was right where the ground truth used it, and how often the
    prediction added it where the ground truth did not (the paper's per-component view)."""
    name = Protocol(protocol).value
    table = {}
    for component in COMPONENTS:
        needed = [r for r in records if component in r.components]
        added = [r for r in records if component not in r.components and component in _predicted(r, name)]
        table[component] = {
            "cases": len(needed),
            "accuracy": _mean(float(r.scores.of(name).components.get(component, False)) for r in needed),
            "spurious": len(added),
        }
    return table


def _predicted(record: EvalRecord, protocol: str) -> set[str]:
    """The components the protocol's calls used."""
    used: set[str] = set()
    for call in protocol_calls(record, Protocol(protocol)):
        arguments = call.arguments or {}
        used |= {label for field, label in COMPONENT_LABELS.items() if arguments.get(field) not in (None, "", {})}
    return used


def disagreement(records: list[EvalRecord], protocol: Protocol | str) -> dict[str, Any]:
    """Where argument match and execution match disagree, both ways, under one protocol."""
    name = Protocol(protocol).value
    scored = executed(records)
    args_only = [r for r in scored if r.scores.of(name).exact_match and not r.scores.of(name).execution_exact]
    exec_only = [r for r in scored if r.scores.of(name).execution_exact and not r.scores.of(name).exact_match]
    example = lambda r: {  # noqa: E731
        "id": r.id,
        "query": r.query,
        "ground_truth": r.ground_truth,
        "prediction": [c.arguments for c in protocol_calls(r, Protocol(name))],
    }
    return {
        "cases": len(scored),
        "argument_match_but_execution_differs": len(args_only),
        "execution_match_but_arguments_differ": len(exec_only),
        "rate": _mean(float(r in args_only or r in exec_only) for r in scored),
        "examples_argument_only": [example(r) for r in args_only[:DISAGREEMENT_EXAMPLES]],
        "examples_execution_only": [example(r) for r in exec_only[:DISAGREEMENT_EXAMPLES]],
    }
