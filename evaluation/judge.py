"""LLM-as-judge preference ranking of several runs' predictions (the DBGorilla paper, section 4.3).

Exact match and execution match need a label; a judge does not, and weighs what a label cannot
(a near miss against a wild one). Per question every run's prediction (its calls, in order, with
how each ended, and its final answer) is shown under an anonymous label, in an order shuffled per
question (a judge's position bias then falls on no run in particular); identical predictions are
shown once and share their rank. The judge replies with JSON, `{"explanation", "ranking"}`; each
run earns the paper's points for its rank, summed over the questions (`POINTS`).

    judgement = judge_runs(load_runs([Path("runs/a"), Path("runs/b")]), ChatJudge(model), model.name)
    write_judgement(judgement, Path("judgements/x"))

A reply that does not parse or validate, or a request that fails, is recorded with the question
(prompt, raw reply, error) and the run goes on: nothing is lost, and nothing is guessed.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from agent import DEFAULT_TOKEN_BUDGET
from agent.tokens import estimate_counter
from agent.tooldef import DESCRIPTION_HEAD, collections_description
from evaluation.judge_reply import Judge, ReplyError, parse_reply, reply_schema
from evaluation.records import EvalRecord
from evaluation.report.errors import ReportError
from evaluation.report.runs import Run
from fixtures.datasets import read_dataset
from fixtures.use_cases import UseCase, collection_schema_of, get_use_case

#: The paper's weighted rank score: points for ranks 1 to 9; 10th and beyond earn nothing.
POINTS = (100, 70, 50, 35, 25, 20, 15, 10, 5)
#: Changes whenever the prompt or the reply format does: scores of two versions do not compare.
PROMPT_VERSION = "judge-v2"
LINES_FILE = "judge.jsonl"
SUMMARY_FILE = "judge.json"
#: Long answers and error messages are cut: the judge ranks queries, and a 2-core CPU pays per token.
MAX_ANSWER_CHARS = 600
MAX_ERROR_CHARS = 200

SYSTEM_PROMPT = (
    "You judge database queries. A user asked a question of a database that is queried through a "
    "`query_database` tool (a search, filters, an aggregation and a group-by, on one collection per call). "
    "Several anonymous assistants answered it; each prediction lists the tool calls it made, in order, "
    "whether each ran or failed, the final answer it gave and, where it committed one, the typed answer it "
    "committed to.\n\n"
    "Rank the predictions from best (rank 1) to worst: prefer calls that retrieve exactly what the question "
    "asks for (the right collection, search, filters, aggregation and grouping, and nothing it did not ask "
    "for) and an answer that answers the question from their results. Predictions of equal quality share a "
    "rank. Where the database cannot answer the question, the best prediction says so. The order and the "
    "labels of the predictions say nothing about their quality.\n\n"
    'Reply with one JSON object only: {"explanation": "<one or two sentences>", "ranking": '
    '[{"label": "A", "rank": 1}, ...]}, ranking every label exactly once.'
)


def points(rank: int) -> int:
    """The paper's points for a rank (1-based)."""
    return POINTS[rank - 1] if 1 <= rank <= len(POINTS) else 0


def label_of(index: int) -> str:
    """A, B, ..., Z, AA, AB, ...: labels for any number of predictions."""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("A") + rest) + letters
    return letters


class ShownCall(BaseModel):
    """One call as the judge sees it: the arguments as parsed (as written when they did not parse)."""

    arguments: dict[str, Any] | str
    ok: bool
    error: str | None = None


class Prediction(BaseModel):
    """What one run did for a question; two runs with equal predictions are shown once."""

    calls: list[ShownCall] = Field(default_factory=list)
    answer: str | None = None
    #: The typed answer the run committed (`agent.answer.FinalAnswer.text`), what its answer was graded on.
    committed: str | None = None

    @classmethod
    def of(cls, record: EvalRecord) -> Prediction:
        calls = [
            ShownCall(
                arguments=call.arguments if call.arguments is not None else call.raw_arguments,
                ok=call.ok,
                error=None if call.ok else _cut(f"{call.error_code}: {call.error_message}", MAX_ERROR_CHARS),
            )
            for call in record.predicted_calls
        ]
        answer = (record.final_answer or "").strip()
        committed = record.committed_answer
        return cls(
            calls=calls,
            answer=_cut(answer, MAX_ANSWER_CHARS) if answer else None,
            committed=_cut(committed.text(), MAX_ANSWER_CHARS) if committed is not None else None,
        )

    def key(self) -> str:
        return self.model_dump_json()

    def render(self, label: str) -> str:
        lines = [f"Prediction {label}"]
        for number, call in enumerate(self.calls, 1):
            arguments = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
            status = "ran" if call.ok else f"failed ({call.error})"
            lines.append(f"- call {number}, {status}: {arguments}")
        if not self.calls:
            lines.append("- no tool call")
        lines.append(f"- final answer: {self.answer}" if self.answer else "- no final answer")
        if self.committed:
            lines.append(f"- committed answer: {self.committed}")
        return "\n".join(lines)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class JudgeLine(BaseModel):
    """One question judged: who stood behind each label, what was sent and received, and the ranks."""

    id: str
    use_case: str
    query: str
    #: label -> the runs that made that prediction, labels in the order they were shown.
    labels: dict[str, list[str]]
    messages: list[dict[str, str]]
    reply: str | None = None
    #: label -> rank as the judge gave it, and run -> rank derived from it (None: not judged).
    ranking: dict[str, int] | None = None
    ranks: dict[str, int] | None = None
    explanation: str | None = None
    error: str | None = None
    error_kind: Literal["parse", "endpoint"] | None = None
    latency_s: float = 0.0


class RunScore(BaseModel):
    run: str
    path: str
    model: str
    weighted_score: int = 0
    #: Points per judged question (100 = ranked first every time).
    mean_score: float | None = None
    ranked_first: int = 0
    ranked_first_share: float | None = None
    judged: int = 0
    #: Questions of this run left unjudged (a reply that did not parse, or a failed request).
    errors: int = 0


class JudgeSummary(BaseModel):
    judge_model: str
    seed: int
    temperature: float | None = None
    prompt_version: str = PROMPT_VERSION
    #: How the reply's JSON was asked for in the end: json_schema, json_object (llama-cpp-python) or none.
    response_format: str | None = None
    questions: int = 0
    judged: int = 0
    parse_errors: int = 0
    endpoint_errors: int = 0
    #: Questions where every run made the same prediction (ranked 1st together, no request sent).
    all_identical: int = 0
    unique_predictions_mean: float | None = None
    #: Position bias: of the questions judged with two or more labels, how many ranked the first label
    #: shown (A) 1st, and how many a judge blind to position would (the sum of 1/labels; ties ignored).
    first_label_ranked_first: int = 0
    first_label_expected: float = 0.0
    wall_time_s: float = 0.0
    created: str = ""
    runs: list[RunScore] = Field(default_factory=list)


class Judgement(BaseModel):
    lines: list[JudgeLine]
    summary: JudgeSummary


class SchemaBook:
    """Each use case's collections as the tool describes them: the built-in use cases, those of the
    runs' datasets (a paper-format file), or at least the collection names the questions target."""

    def __init__(self, runs: Sequence[Run]) -> None:
        self.runs = runs
        self._texts: dict[str, str] = {}
        self._datasets: dict[str, UseCase] | None = None

    def describe(self, use_case: str) -> str:
        if use_case not in self._texts:
            self._texts[use_case] = self._describe(use_case)
        return self._texts[use_case]

    def _describe(self, name: str) -> str:
        found = self._find(name)
        if found is None:
            collections = sorted({r.collection for run in self.runs for r in run.records if r.use_case == name} - {""})
            return f"Collections (properties unknown): {', '.join(collections)}"
        schemas = [collection_schema_of(spec) for spec in found.collections]
        text, _, _ = collections_description(schemas, DEFAULT_TOKEN_BUDGET, estimate_counter())
        return text.removeprefix(DESCRIPTION_HEAD)

    def _find(self, name: str) -> UseCase | None:
        try:
            return get_use_case(name)
        except KeyError:
            pass
        if self._datasets is None:
            self._datasets = {}
            for source in {str(run.meta["dataset"]) for run in self.runs if run.meta.get("dataset")}:
                try:
                    self._datasets.update({u.name: u for u in read_dataset(source).use_cases})
                except (OSError, KeyError, ValueError):  # moved or unreadable: fall back to names
                    continue
        return self._datasets.get(name)


def common_questions(runs: Sequence[Run], limit: int | None = None, ids: Sequence[str] | None = None) -> list[str]:
    """The ids every run answered, sorted; only `ids` if given (an id some run lacks is an error)."""
    shared = set.intersection(*({r.id for r in run.records} for run in runs))
    if ids:
        missing = sorted(set(ids) - shared)
        if missing:
            raise ReportError(f"not answered by every run: {', '.join(missing)}")
        shared = set(ids)
    chosen = sorted(shared)
    if not chosen:
        raise ReportError("the runs share no question id: nothing to judge")
    return chosen[:limit] if limit else chosen


def judge_question(entries: Sequence[tuple[str, EvalRecord]], schema_text: str, judge: Judge, seed: int) -> JudgeLine:
    """One question: shuffle the runs (seeded by seed and id), label distinct predictions, ask, parse."""
    record = entries[0][1]
    order = list(entries)
    random.Random(f"{seed}:{record.id}").shuffle(order)
    shown: dict[str, tuple[str, Prediction]] = {}  # prediction key -> (label, prediction)
    labels: dict[str, list[str]] = {}
    for run, run_record in order:
        prediction = Prediction.of(run_record)
        label, _ = shown.setdefault(prediction.key(), (label_of(len(shown)), prediction))
        labels.setdefault(label, []).append(run)
    body = "\n\n".join(prediction.render(label) for label, prediction in shown.values())
    user = (
        f"Collections of the database:\n{schema_text}\n\nQuestion: {record.query}\n\n"
        f"Predictions ({', '.join(labels)}):\n\n{body}"
    )
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]
    line = JudgeLine(id=record.id, use_case=record.use_case, query=record.query, labels=labels, messages=messages)
    if len(labels) == 1:  # nothing to rank: every run shares first place, no request is sent
        return _ranked(line, {"A": 1}, "every run made the same prediction")
    started = time.perf_counter()
    try:
        line.reply = judge(messages, reply_schema(list(labels)))
    except Exception as error:  # the judging must go on: record the failure with its type
        line.error, line.error_kind = f"{type(error).__name__}: {error}", "endpoint"
        return line
    finally:
        line.latency_s = round(time.perf_counter() - started, 3)
    try:
        ranking, explanation = parse_reply(line.reply, list(labels))
    except ReplyError as error:
        line.error, line.error_kind = str(error), "parse"
        return line
    return _ranked(line, ranking, explanation)


def _ranked(line: JudgeLine, ranking: dict[str, int], explanation: str | None) -> JudgeLine:
    line.ranking, line.explanation = ranking, explanation
    line.ranks = {run: ranking[label] for label, runs in line.labels.items() for run in runs}
    return line


def score_runs(lines: Sequence[JudgeLine], runs: Sequence[Run]) -> list[RunScore]:
    """Per run: the paper's weighted rank score, its mean per judged question and the share ranked 1st;
    best first."""
    scores = []
    for run in runs:
        ranks = [line.ranks[run.name] for line in lines if line.ranks is not None]
        judged = len(ranks)
        total, first = sum(points(rank) for rank in ranks), sum(rank == 1 for rank in ranks)
        scores.append(
            RunScore(
                run=run.name,
                path=str(run.path),
                model=run.model,
                weighted_score=total,
                mean_score=round(total / judged, 2) if judged else None,
                ranked_first=first,
                ranked_first_share=round(first / judged, 4) if judged else None,
                judged=judged,
                errors=len(lines) - judged,
            )
        )
    return sorted(scores, key=lambda score: -score.weighted_score)


def judge_runs(
    runs: Sequence[Run],
    judge: Judge,
    judge_model: str,
    *,
    seed: int = 0,
    limit: int | None = None,
    ids: Sequence[str] | None = None,
    temperature: float | None = None,
    on_line: Callable[[JudgeLine], None] = lambda _: None,
) -> Judgement:
    """Judge every question the runs share (or `ids`, or the first `limit`) and score the runs."""
    if len(runs) < 2:
        raise ReportError("a ranking needs at least two runs")
    started = time.perf_counter()
    schemas = SchemaBook(runs)
    by_id = [{r.id: r for r in run.records} for run in runs]
    lines = []
    for question in common_questions(runs, limit, ids):
        entries = [(run.name, records[question]) for run, records in zip(runs, by_id, strict=True)]
        line = judge_question(entries, schemas.describe(entries[0][1].use_case), judge, seed)
        lines.append(line)
        on_line(line)
    contested = [line for line in lines if line.ranking is not None and len(line.labels) > 1]
    summary = JudgeSummary(
        judge_model=judge_model,
        seed=seed,
        temperature=temperature,
        questions=len(lines),
        judged=sum(line.ranks is not None for line in lines),
        parse_errors=sum(line.error_kind == "parse" for line in lines),
        endpoint_errors=sum(line.error_kind == "endpoint" for line in lines),
        all_identical=sum(len(line.labels) == 1 for line in lines),
        unique_predictions_mean=round(sum(len(line.labels) for line in lines) / len(lines), 2),
        first_label_ranked_first=sum(line.ranking["A"] == 1 for line in contested),
        first_label_expected=round(sum(1 / len(line.labels) for line in contested), 2),
        wall_time_s=round(time.perf_counter() - started, 2),
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        runs=score_runs(lines, runs),
    )
    return Judgement(lines=lines, summary=summary)


def write_judgement(judgement: Judgement, out_dir: Path) -> list[Path]:
    """judge.jsonl (a line per question) and judge.json (the summary) into `out_dir`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    lines, summary = out_dir / LINES_FILE, out_dir / SUMMARY_FILE
    lines.write_text("".join(line.model_dump_json() + "\n" for line in judgement.lines), encoding="utf-8")
    summary.write_text(judgement.summary.model_dump_json(indent=2), encoding="utf-8")
    return [lines, summary]
