"""One JSONL line per evaluated case: the contract between `eval`, `score` and `report`.

A record holds everything needed to score it again offline: the question, the ground truth,
every predicted call, the raw model output, cost and latency, and a typed outcome.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from agent import AgentRun
from agent.answer import Commit, FinalAnswer
from evaluation.answers import AnswerKey
from evaluation.search_cut import SearchCut
from executors import Blame, codes_blaming
from fixtures.datasets import AbstentionCase, Case
from fixtures.datasets.chains import AnswerPart, ChainStep
from fixtures.input_files import (
    SHOWN_PROBLEMS,
    InputFileError,
    Problem,
    kind_of,
    not_text,
    not_what,
    os_problem,
    parse_json,
    shown,
    text_lines,
    validation_problems,
)


class Outcome(str, Enum):
    OK = "ok"
    NO_TOOL_CALL = "no_tool_call"
    DECODE_ERROR = "decode_error"
    INVALID_ARGUMENTS = "invalid_arguments"
    EXECUTION_ERROR = "execution_error"
    MODEL_ERROR = "model_error"
    TIMEOUT = "timeout"


#: Executor error codes that mean "the model's arguments were wrong" (vs. the database failing).
ARGUMENT_ERROR_CODES = codes_blaming(Blame.ARGUMENTS)


class PredictedCall(BaseModel):
    #: The model turn that made the call (parallel calls share a step).
    step: int = 0
    tool_name: str
    raw_arguments: str
    #: The parsed `query_database` arguments (collection filled in for per-collection tools).
    arguments: dict[str, Any] | None = None
    rationale: str | None = None
    recovered_from_text: bool = False
    #: What the agent changed in the model's arguments before running them (`arguments` is what ran).
    amended: str | None = None
    ok: bool = False
    error_code: str | None = None
    error_message: str | None = None
    weaviate_calls: list[str] = Field(default_factory=list)
    result: dict[str, Any] | None = None  # QueryResult.model_dump(mode="json")


class ProtocolScores(BaseModel):
    """The scores of the calls one protocol looks at; None where a metric does not apply."""

    calls: int = 0
    exact_match: bool = False
    ast_score: float = 0.0
    ast_score_lenient: float = 0.0
    routing: bool = False
    components: dict[str, bool] = Field(default_factory=dict)
    execution_exact: bool | None = None
    execution_subset: bool | None = None
    precision: float | None = None
    recall: float | None = None
    f1: float | None = None


#: The format of a record's scores (results.jsonl): each field is a named result of the evaluator of
#: its score (`evaluation.evaluators`; tests/unit/test_evaluators.py checks that every field has one).
class Scores(BaseModel):
    """Per-case scores, one `ProtocolScores` per protocol (`evaluation.protocols`), and diagnostics."""

    first: ProtocolScores = Field(default_factory=ProtocolScores)
    final: ProtocolScores = Field(default_factory=ProtocolScores)
    #: Why the ground truth does not fit the schema it is scored on ("code: message"): the record is left
    #: out of every argument metric, offline and executed alike. None: the label is valid.
    invalid_label: str | None = None
    #: The first call's raw JSON equal to the label, the definition before validation.
    exact_match_as_written: bool = False
    search_similarity: float | None = None
    #: Diagnostics, not scores: how many calls the model made, and whether any of them, from any
    #: step, executed to the ground truth's result.
    calls_made: int = 0
    any_call_execution_exact: bool | None = None
    ground_truth_vacuous: str | None = None  # "empty" | "all_objects" | None
    #: Executing a prediction failed for the infrastructure's sake: the case is scored again on resume.
    scoring_error: str | None = None
    #: The final answer against the answer key (None: the question has no key, see `answer_reason`).
    answer: bool | None = None
    answer_reason: str | None = None
    #: Of the gold calls (one, or a chain's), the share whose exact result some call of the run got.
    gold_calls_reached: float | None = None
    #: Which part of the answer `answer` (or `abstained`) graded: the committed value, or the text
    #: (the model committed none). None: nothing was graded.
    answer_graded: Literal["committed", "text"] | None = None
    #: The text grader's verdict on the prose answer, committed value or not: the score without the
    #: contract (`abstained_text` for a question the tool cannot answer).
    answer_text: bool | None = None
    abstained_text: bool | None = None
    #: An abstention question: the answer said the database cannot answer it (`evaluation.refusal`).
    abstained: bool | None = None
    #: An answerable question: the answer said the database cannot answer it (a false abstention).
    refused: bool | None = None
    #: Distinct object ids the final answer cites, and the share of them in a result the run received
    #: (`evaluation.citations`; None: it cites nothing).
    citations: int = 0
    citations_received: int = 0
    citation_precision: float | None = None

    def of(self, protocol: str) -> ProtocolScores:
        return self.first if protocol == "first" else self.final


class EvalRecord(BaseModel):
    id: str
    use_case: str
    query: str
    complexity: str
    components: list[str]
    ground_truth: dict[str, Any]
    #: "abstain": a question the tool cannot answer (no ground truth; saying so is right).
    expected: Literal["call", "abstain"] = "call"
    #: Why an abstention question cannot be answered: "<reason>: <explanation>".
    abstention_reason: str | None = None
    #: Other accepted ground truths (equivalent on the data, as the audit checks).
    alternatives: list[dict[str, Any]] = Field(default_factory=list)
    ground_truth_result: dict[str, Any] | None = None
    ground_truth_error: str | None = None
    #: The search cut the question ran and was scored at on this data (`evaluation.search_cut`; None:
    #: its label does not search). An unstable one: no execution score, named in the summary.
    search_cut: SearchCut | None = None
    #: A multi-step question's gold chain and answer parts (`fixtures.datasets.chains`).
    chain: list[ChainStep] = Field(default_factory=list)
    answer: list[AnswerPart] = Field(default_factory=list)
    #: The gold calls as resolved on the data (one for a one-call question) and the answer key.
    gold_calls: list[dict[str, Any]] = Field(default_factory=list)
    answer_key: AnswerKey | None = None
    model: str
    tool_design: str
    #: The agent strategy (`agent.strategies`): "react" (the loop as it was; files written before
    #: strategies existed read as that), "examples", "examples+grounded", …
    strategy: str = "react"
    #: What the strategy added (`AgentRun.strategy_notes`): the examples shown, the grounded attempts.
    strategy_notes: dict[str, Any] = Field(default_factory=dict)
    predicted_calls: list[PredictedCall] = Field(default_factory=list)
    final_answer: str | None = None
    #: The commit turn after the prose answer: the typed answer it committed, or why none (`agent.answer`).
    commit: Commit | None = None
    raw_output: list[dict[str, Any]] = Field(default_factory=list)
    outcome: Outcome
    error: str | None = None
    prompt_tokens: int = 0
    #: Of `prompt_tokens`, those the endpoint reused from its cache (None: it did not say).
    cached_prompt_tokens: int | None = None
    completion_tokens: int = 0
    latency_s: float = 0.0
    steps: int = 0
    corrections: int = 0
    scores: Scores = Field(default_factory=Scores)

    @classmethod
    def for_case(cls, case: Case | AbstentionCase, **fields: Any) -> EvalRecord:
        """A record of `case`: its question and ground truth as the results file carries them."""
        if isinstance(case, AbstentionCase):
            return cls(
                id=case.id,
                use_case=case.use_case,
                query=case.query,
                complexity="abstain",
                components=[],
                ground_truth={"collection_name": case.collection},
                expected="abstain",
                abstention_reason=f"{case.reason}: {case.explanation()}",
                **fields,
            )
        data = case.model_dump(mode="json", exclude={"version", "search_topic", "alternatives"})
        alternatives = [a.to_tool_arguments() for a in case.alternatives]
        return cls(**data, alternatives=alternatives, **fields)

    @property
    def collection(self) -> str:
        return str(self.ground_truth.get("collection_name", ""))

    @property
    def kind(self) -> str:
        """The report's slice: a question the tool cannot answer, one that needs a chain of calls, or one call."""
        if self.expected == "abstain":
            return "unanswerable"
        return "multi-step" if len(self.chain) > 1 else "single-step"

    @property
    def committed_answer(self) -> FinalAnswer | None:
        """The typed answer the model committed (None: it committed none that parses)."""
        return self.commit.answer if self.commit is not None else None

    @property
    def first_arguments(self) -> dict[str, Any] | None:
        """The first call's parsed arguments (None when it did not parse): what `first` scores."""
        return self.predicted_calls[0].arguments if self.predicted_calls else None


def outcome_of(run: AgentRun) -> Outcome:
    if run.outcome in ("model_error", "timeout"):
        return Outcome(run.outcome)
    calls = run.calls()
    if not calls:
        return Outcome.NO_TOOL_CALL
    if any(call.ok for call in calls):
        return Outcome.OK
    last = calls[-1].error
    assert last is not None
    if last.code == "invalid_arguments" and "JSON" in last.message:
        return Outcome.DECODE_ERROR
    if last.code in ARGUMENT_ERROR_CODES:
        return Outcome.INVALID_ARGUMENTS
    return Outcome.EXECUTION_ERROR


def predicted_calls(run: AgentRun) -> list[PredictedCall]:
    return [
        PredictedCall(
            step=step.index,
            tool_name=call.tool_name,
            raw_arguments=call.raw_arguments,
            arguments=call.arguments,
            rationale=call.rationale,
            recovered_from_text=call.recovered_from_text,
            amended=call.amended,
            ok=call.ok,
            error_code=call.error.code if call.error else None,
            error_message=call.error.message if call.error else None,
            weaviate_calls=call.weaviate_call,
            result=call.result.model_dump(mode="json") if call.result else None,
        )
        for step in run.steps
        for call in step.calls
    ]


def raw_output(run: AgentRun) -> list[dict[str, Any]]:
    """What the model said each step: its text and its native tool calls, as received."""
    outputs = []
    for step in run.steps:
        message = (step.raw_response.get("choices") or [{}])[0].get("message", {}) if step.raw_response else {}
        outputs.append({"step": step.index, "content": step.content, "tool_calls": message.get("tool_calls")})
    return outputs


#: What a line of a results file holds, as an error says it.
RESULT_LINE = (
    "one `dbgorilla eval` result per line (a JSON object with id, use_case, query, ground_truth, model, outcome, ...)"
)


class ResultsFileError(InputFileError):
    """A run's results.jsonl that is not one: no line of it is a record (and it is not a single line a
    crash cut off), or it cannot be read at all."""


@dataclass
class ResultLines:
    """The records of a results file in order, and the lines that are not records (with why)."""

    records: list[EvalRecord] = field(default_factory=list)
    unreadable: list[Problem] = field(default_factory=list)
    lines: int = 0
    #: The last line has no newline: where a crash cuts a write off.
    ends_cut_off: bool = False

    @property
    def unreadable_lines(self) -> list[int]:
        return sorted({p.item for p in self.unreadable if p.item is not None})

    def first_problems(self) -> list[Problem]:
        """The problems of the first few unreadable lines, for a message."""
        shown_lines = set(self.unreadable_lines[:SHOWN_PROBLEMS])
        return [p for p in self.unreadable if p.item in shown_lines]


def parse_results(data: bytes) -> ResultLines:
    """Each non-blank line as an `EvalRecord`, or the problems of the line that is not one."""
    read = ResultLines(ends_cut_off=bool(data.strip()) and not data.endswith(b"\n"))
    for number, text in text_lines(data):
        read.lines += 1
        if text is None:
            read.unreadable.append(not_text(number))
            continue
        where = f"line {number}"
        value, problem = parse_json(text, where, "a JSON object", number)
        if problem is not None:
            read.unreadable.append(problem)
        elif not isinstance(value, dict):
            read.unreadable.append(Problem(where, f"{kind_of(value)} {shown(value)}", "a JSON object", number))
        else:
            try:
                read.records.append(EvalRecord.model_validate_json(text))
            except ValidationError as error:
                read.unreadable += validation_problems(error, where, number)
    return read


def read_results(path: Path) -> ResultLines:
    """A run's results file: every readable record in order and the lines that are not records. A line
    cut off by a crash is one of those (the runner runs its case again, the report counts it); a file
    of which no line is a record is not a results file (`ResultsFileError`), unless it is one line
    without its newline: a crash during the first write. A missing file holds nothing."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return ResultLines()
    except OSError as error:
        raise ResultsFileError(path, os_problem(error)) from None
    read = parse_results(data)
    if read.unreadable and not read.records and not (read.lines == 1 and read.ends_cut_off):
        bad = len(read.unreadable_lines)
        raise ResultsFileError(
            path,
            f"{not_what(bad, read.lines, 'a result', 'results')}: this is not a results file of `dbgorilla eval`, "
            f"which holds {RESULT_LINE}:",
            read.first_problems(),
            bad,
        )
    return read


def read_jsonl(path: Path) -> tuple[list[EvalRecord], int]:
    """Every readable record of a results file in order, and how many lines were unreadable (a line
    cut off by a crash, say): the runner runs those cases again, the report counts them."""
    read = read_results(path)
    return read.records, len(read.unreadable_lines)
