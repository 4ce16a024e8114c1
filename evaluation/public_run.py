"""`dbgorilla eval` over a question file of a user's own collections (`fixtures.datasets.public`).

Each question is asked through the one agent session every door runs, offered only its own
collections (or those `--collections` names), and graded on the answer a user reads: the committed
answer against the gold key computed from the raw data, else the text; a question the data cannot
answer is right only when refused. A hand-written question has no gold call to replay, so execution
and argument scores do not apply to it; the record keeps every call, so a reader sees what ran.

A composed file's questions (`compose-split --collections`) carry their gold calls: their last call is
scored against the last gold call too, by arguments and by execution (`evaluation.public_calls`).

The summary is by kind (single, multi, unanswerable) with Wilson intervals, the share of answerable
questions refused, and by dataset, shape, form and need.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from agent import AgentConfig, ToolDesign
from agent.answer import FinalAnswer
from agent.session import AgentSession
from agent.strategies import ExampleRetriever
from agent.tokens import TokenCounter
from evaluation.answer_key import AnswerKey, Verdict
from evaluation.answers import grade_answer
from evaluation.public_calls import CallScores, call_rates, score_calls
from evaluation.refusal import grade_abstention, grade_committed_abstention, refuses
from evaluation.statistics import mcnemar_exact, rate_with_interval
from executors import WeaviateExecutor
from fixtures.datasets.public import PublicQuestion

RESULTS_FILE = "results.jsonl"


class PublicRecord(BaseModel):
    """One question's run and verdict."""

    id: str
    dataset: str
    kind: str
    shape: str = ""
    forms: list[str] = Field(default_factory=list)
    needs: list[str] = Field(default_factory=list)
    query: str
    collections: list[str]
    model: str
    strategy: str
    final_answer: str | None = None
    committed: dict[str, Any] | None = None
    calls: list[dict[str, Any]] = Field(default_factory=list)
    #: How each call was amended before it ran, and the parts a question of several was asked as.
    amended: list[str] = Field(default_factory=list)
    parts: list[str] = Field(default_factory=list)
    correct: bool = False
    refused: bool = False
    reason: str = ""
    error: str | None = None
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    #: The last call against the last gold call, for a composed question (None: it has no gold call).
    call_scores: CallScores | None = None


def answer_key(question: PublicQuestion) -> AnswerKey:
    """The gold answer as the benchmark's answer key."""
    return AnswerKey.model_validate(question.answer or {})


def grade(question: PublicQuestion, text: str | None, committed: FinalAnswer | None) -> Verdict:
    """Right answer to an answerable question; a refusal (committed, else written) to one that is not."""
    if question.kind == "unanswerable":
        if committed is not None:
            return grade_committed_abstention(committed)
        return grade_abstention(text, question.query)
    return grade_answer(text, committed, answer_key(question), question.query)


def was_refused(text: str | None, committed: FinalAnswer | None) -> bool:
    return committed.refuses if committed is not None else refuses(text)


def run_question(
    question: PublicQuestion,
    executor: WeaviateExecutor,
    model: Any,
    strategy: str,
    design: ToolDesign,
    config: AgentConfig,
    retriever: ExampleRetriever | None,
    collections: Sequence[str] | None = None,
    counter: TokenCounter | None = None,
    scoring: WeaviateExecutor | None = None,
) -> PublicRecord:
    """One question, end to end; a failure becomes a record with its error, never a stop. With `scoring`
    (an executor of the largest tool), a composed question's calls are scored against its gold calls."""
    offered = list(collections or question.collections)
    base = {
        "id": question.id,
        "dataset": question.dataset,
        "kind": question.kind,
        "shape": question.shape,
        "forms": question.forms,
        "needs": question.needs,
        "query": question.query,
        "collections": offered,
        "model": getattr(model, "name", str(model)),
        "strategy": strategy,
    }
    started = time.perf_counter()
    try:
        session = AgentSession.over(executor, offered, design, model, strategy, config, retriever, counter)
        run = session.run(question.query)
    except Exception as error:  # the run goes on: the failure is recorded with its type
        return PublicRecord(
            **base, error=f"{type(error).__name__}: {error}", latency_s=round(time.perf_counter() - started, 3)
        )
    committed = run.answer
    verdict = grade(question, run.final_answer, committed)
    usage = run.usage
    calls = [dict(c.arguments) for c in run.calls() if c.arguments is not None and c.ok]
    return PublicRecord(
        **base,
        final_answer=run.final_answer,
        committed=committed.model_dump() if committed is not None else None,
        calls=[dict(c.arguments) if c.arguments is not None else {"raw": c.raw_arguments} for c in run.calls()],
        amended=[c.amended for c in run.calls() if c.amended],
        parts=[str(p.get("question")) for p in run.strategy_notes.get("chain", {}).get("parts", [])],
        correct=bool(verdict.correct),
        refused=was_refused(run.final_answer, committed),
        reason=verdict.reason or "",
        error=run.error,
        prompt_tokens=usage.prompt_tokens,
        cached_tokens=usage.cached_tokens or 0,
        completion_tokens=usage.completion_tokens,
        latency_s=round(run.latency_s, 3),
        call_scores=score_calls(question, calls, scoring) if scoring is not None else None,
    )


def holds_public_records(results: Path) -> bool:
    """Whether a results file is of `eval` over a question file of named collections: its records name
    collections, not a case."""
    try:
        with results.open(encoding="utf-8") as handle:
            line = json.loads(handle.readline())
    except (OSError, ValueError):
        return False
    return isinstance(line, dict) and "collections" in line and "ground_truth" not in line


def read_records(path: Path) -> list[PublicRecord]:
    """The readable records of a results file (a line cut off by a crash is dropped: it runs again)."""
    if not path.is_file():
        return []
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            records.append(PublicRecord.model_validate_json(line))
        except ValueError:
            continue
    return records


def run_public(
    questions: Sequence[PublicQuestion],
    ask: Callable[[PublicQuestion], PublicRecord],
    out: Path,
    resume: bool,
    on_record: Callable[[PublicRecord], None] = lambda _: None,
) -> list[PublicRecord]:
    """Every question not already done in `out` (with --resume), each record appended as it ends."""
    out.mkdir(parents=True, exist_ok=True)
    results = out / RESULTS_FILE
    done = {r.id: r for r in read_records(results) if r.error is None} if resume else {}
    if not resume:
        results.unlink(missing_ok=True)
    else:
        results.write_text("".join(r.model_dump_json() + "\n" for r in done.values()), encoding="utf-8")
    with results.open("a", encoding="utf-8") as handle:
        for question in questions:
            if question.id in done:
                continue
            record = ask(question)
            handle.write(record.model_dump_json() + "\n")
            handle.flush()
            done[record.id] = record
            on_record(record)
    wanted = [q.id for q in questions]
    return [done[i] for i in wanted if i in done]


_LISTED = re.compile(r"commits \d+ names for 0")
_NAMES = re.compile(r"names \[\], not|names for [1-9]|commits names \[")


def failure_class(record: PublicRecord) -> str:
    """What kind of failure a record is, read off its kind, refusal and the grader's reason ("" if right)."""
    if record.correct:
        return ""
    if record.error is not None:
        return "error"
    if record.kind == "unanswerable":
        return "unanswerable answered"
    if record.refused:
        return "answerable refused"
    if "no answer" in record.reason:
        return "no answer"
    if _LISTED.search(record.reason):
        return "names listed for a number"
    if _NAMES.search(record.reason):
        return "wrong or missing name"
    return "wrong value"


def _rates(records: Sequence[PublicRecord]) -> dict[str, Any]:
    return rate_with_interval([r.correct for r in records])


def summarize_public(records: Sequence[PublicRecord]) -> dict[str, Any]:
    """Pass rate by kind with Wilson intervals, answerable questions refused, and by dataset, form, need."""
    answerable = [r for r in records if r.kind != "unanswerable"]
    by: dict[str, dict[str, list[PublicRecord]]] = {"kind": {}, "dataset": {}, "shape": {}, "form": {}, "need": {}}
    for record in records:
        by["kind"].setdefault(record.kind, []).append(record)
        if record.shape:
            by["shape"].setdefault(record.shape, []).append(record)
        by["dataset"].setdefault(record.dataset, []).append(record)
        for form in record.forms:
            by["form"].setdefault(form, []).append(record)
        for need in record.needs:
            by["need"].setdefault(need, []).append(record)
    latencies = sorted(r.latency_s for r in records)
    return {
        "questions": len(records),
        "pass": _rates(records),
        "errors": sum(r.error is not None for r in records),
        "answerable_refused": rate_with_interval([r.refused for r in answerable]),
        "calls": call_rates([r.call_scores for r in records if r.call_scores is not None]),
        "failures": dict(Counter(c for r in records if (c := failure_class(r))).most_common()),
        **{f"by_{name}": {key: _rates(group) for key, group in sorted(groups.items())} for name, groups in by.items()},
        "p50_latency_s": latencies[len(latencies) // 2] if latencies else None,
        "tokens_per_question": {
            "prompt": _mean([r.prompt_tokens for r in records]),
            "new_prompt": _mean([r.prompt_tokens - r.cached_tokens for r in records]),
            "completion": _mean([r.completion_tokens for r in records]),
        },
    }


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 1) if values else None


def paired(a: Sequence[PublicRecord], b: Sequence[PublicRecord]) -> dict[str, Any]:
    """Two runs on the same questions: those only one passed, and the exact McNemar p."""
    first = {r.id: r.correct for r in a}
    second = {r.id: r.correct for r in b}
    both = sorted(set(first) & set(second))
    only_a = [i for i in both if first[i] and not second[i]]
    only_b = [i for i in both if second[i] and not first[i]]
    return {
        "questions": len(both),
        "only_first": only_a,
        "only_second": only_b,
        "p": mcnemar_exact(len(only_a), len(only_b)),
    }


def write_summary(out: Path, summary: dict[str, Any], run: dict[str, Any]) -> None:
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    (out / "run.json").write_text(json.dumps(run, indent=2, default=str))
