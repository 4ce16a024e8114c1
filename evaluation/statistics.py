"""How sure a score is: Wilson intervals, repeated runs (pass@1, pass^k, flaky questions) and a
paired test between two runs on the questions they share.

A question *passes* when its final answer is right; a question without an answer key (a listing)
passes when the call its answer rests on returned the ground truth's rows (`final` execution
exact), or, where the ground truth is vacuous (empty, or every object) and rows prove nothing, when
that call is the label (`final` exact match). A question the tool cannot answer passes when the
answer says so. One definition serves repeats, intervals and comparisons.

A question *unstable* on the run's data (`unstable`: its label has no stable result at this size,
`evaluation.search_cut`) is neither passed nor failed: `pass_rate` leaves it out of the denominator
and counts it beside the rate, and repeats and paired comparisons leave it out too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from evaluation.records import EvalRecord

#: z for a two-sided 95% interval.
Z95 = 1.959963984540054
#: Below this p-value two runs differ by more than their noise.
ALPHA = 0.05


def unstable(record: EvalRecord) -> bool:
    """The question's gold is arbitrary on this data (`evaluation.search_cut`): it gets no verdict."""
    return record.search_cut is not None and record.search_cut.unstable is not None


def pass_rate(records: Sequence[EvalRecord]) -> dict[str, Any]:
    """The pass rate with its interval over the questions with a verdict, and how many were unstable:
    the one place a pass rate is computed, so an unstable question never counts as failed."""
    counted = [r for r in records if not unstable(r)]
    return {**rate_with_interval([passed(r) for r in counted]), "unstable": len(records) - len(counted)}


def passed(record: EvalRecord) -> bool:
    if record.expected == "abstain":
        return bool(record.scores.abstained)
    if record.scores.answer is not None:
        return record.scores.answer
    if record.scores.ground_truth_vacuous:
        return record.scores.final.exact_match
    return bool(record.scores.final.execution_exact)


def wilson(successes: int, trials: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of a rate (None without trials): honest at 0%, 100% and small n."""
    if trials <= 0:
        return None
    rate = successes / trials
    denominator = 1 + z * z / trials
    centre = (rate + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(rate * (1 - rate) / trials + z * z / (4 * trials * trials)) / denominator
    return round(max(0.0, centre - half), 6), round(min(1.0, centre + half), 6)


def rate_with_interval(flags: Sequence[bool]) -> dict[str, Any]:
    successes = sum(flags)
    interval = wilson(successes, len(flags))
    return {
        "rate": round(successes / len(flags), 6) if flags else None,
        "n": len(flags),
        "interval": list(interval) if interval else None,
        "width": round(interval[1] - interval[0], 6) if interval else None,
    }


def repeat_summary(runs: Sequence[Sequence[EvalRecord]]) -> dict[str, Any]:
    """pass@1 (the mean pass rate of one run), pass^k (passed in every one of k runs), each with
    a Wilson interval, per run, per use case, and the questions whose verdict flips."""
    verdicts = [{r.id: passed(r) for r in run if not unstable(r)} for run in runs]
    shared = sorted(set.intersection(*(set(v) for v in verdicts))) if verdicts else []
    use_case = {r.id: r.use_case for run in runs for r in run}
    every = {q: all(v[q] for v in verdicts) for q in shared}
    flaky = [q for q in shared if len({v[q] for v in verdicts}) > 1]
    per_use_case = {}
    for name in sorted({use_case[q] for q in shared}):
        ids = [q for q in shared if use_case[q] == name]
        per_use_case[name] = {
            "questions": len(ids),
            "pass@1": _mean([v[q] for v in verdicts for q in ids]),
            "pass^k": _mean([every[q] for q in ids]),
        }
    return {
        "repeats": len(runs),
        "questions": len(shared),
        "runs": [rate_with_interval([v[q] for q in shared]) for v in verdicts],
        "pass@1": _mean([v[q] for v in verdicts for q in shared]),
        "pass^k": rate_with_interval([every[q] for q in shared]),
        "flaky": flaky,
        "by_use_case": per_use_case,
    }


def _mean(flags: Sequence[bool]) -> float | None:
    return round(sum(flags) / len(flags), 6) if flags else None


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pairs (a binomial test at one half)."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(only_a, only_b) + 1)) / 2**n
    return min(1.0, 2 * tail)


def paired_comparison(a: Sequence[EvalRecord], b: Sequence[EvalRecord]) -> dict[str, Any]:
    """Run `b` against run `a` on the questions both answered: rates, discordant pairs, McNemar."""
    verdict_a = {r.id: passed(r) for r in a if not unstable(r)}
    verdict_b = {r.id: passed(r) for r in b if not unstable(r)}
    shared = sorted(set(verdict_a) & set(verdict_b))
    only_a = sum(verdict_a[q] and not verdict_b[q] for q in shared)
    only_b = sum(verdict_b[q] and not verdict_a[q] for q in shared)
    p_value = mcnemar_exact(only_a, only_b)
    return {
        "shared": len(shared),
        "a": rate_with_interval([verdict_a[q] for q in shared]),
        "b": rate_with_interval([verdict_b[q] for q in shared]),
        "only_a_passed": only_a,
        "only_b_passed": only_b,
        "p_value": round(p_value, 6),
        "outside_noise": p_value < ALPHA,
    }
