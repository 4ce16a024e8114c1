"""`dbgorilla eval`: the agent over the benchmark, N cases in flight, one writer, resumable.

Generation and scoring are separate steps (as in BFCL): each case's record carries the raw
predictions, and `evaluation.scorer` can recompute every score offline. A failing case becomes a
record with a typed outcome; nothing a case does can stop the run.
"""

from __future__ import annotations

import json
import os
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent import ORACLE, AgentConfig, AgentRun, OracleModel, ToolDesign, ToolSet, build_tools
from agent.conversation import Turn, keeps_from
from agent.session import AgentSession
from agent.strategies import DEFAULT_STRATEGY, ExampleRetriever
from agent.tokens import TokenCounter
from evaluation.execution_match import SCORING_OPTIONS
from evaluation.ground_truth import GroundTruthCache
from evaluation.records import EvalRecord, Outcome, outcome_of, predicted_calls, raw_output, read_jsonl
from evaluation.scorer import Scorer
from evaluation.summary import infrastructure_failed
from executors import DatabaseSchema, ExecutorError, WeaviateExecutor
from fixtures.datasets import AbstentionCase, Case
from llm import ChatRequest

RESULTS_FILE = "results.jsonl"
RUN_FILE = "run.json"
#: Cases in a row that failed on the infrastructure before a run stops instead of scoring zeros.
INFRASTRUCTURE_STREAK = 3


class RunError(RuntimeError):
    """The run cannot go on as asked (a use case not loaded, results in the way)."""


class InfrastructureStopped(RuntimeError):
    """The model server or Weaviate failed under every one of the last cases: the run stopped.

    Its cases are kept, marked, and run again by `--resume`; what was recorded is not a score."""


def build_record(case: Case | AbstentionCase, run: AgentRun, model: str, design: str) -> EvalRecord:
    calls = predicted_calls(run)
    return EvalRecord.for_case(
        case,
        model=model,
        tool_design=design,
        predicted_calls=calls,
        final_answer=run.final_answer,
        commit=run.commit,
        raw_output=raw_output(run),
        outcome=outcome_of(run),
        error=run.error,
        prompt_tokens=run.usage.prompt_tokens,
        cached_prompt_tokens=run.usage.cached_tokens,
        completion_tokens=run.usage.completion_tokens,
        latency_s=round(run.latency_s, 4),
        steps=len(run.steps),
        corrections=run.corrections,
        strategy=run.strategy,
        strategy_notes=run.strategy_notes,
    )


class JsonlWriter:
    """The single writer: every worker hands it finished records; it appends and fsyncs each line."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._queue: queue.Queue[EvalRecord | None] = queue.Queue()
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self.written = 0

    def __enter__(self) -> JsonlWriter:
        self._thread.start()
        return self

    def put(self, record: EvalRecord) -> None:
        self._queue.put(record)

    def _drain(self) -> None:
        with open(self.path, "a", encoding="utf-8") as handle:
            while (record := self._queue.get()) is not None:
                handle.write(record.model_dump_json() + "\n")
                handle.flush()
                os.fsync(handle.fileno())
                self.written += 1

    def __exit__(self, *exc: object) -> None:
        self._queue.put(None)
        self._thread.join()


def read_records(path: Path) -> list[EvalRecord]:
    """The readable records of a results file; a line cut off by a crash is dropped, so its case runs again."""
    return read_jsonl(path)[0]


def needs_rerun(record: EvalRecord) -> bool:
    return infrastructure_failed(record)


def prepare_run_dir(out: Path, resume: bool, overwrite: bool) -> set[str]:
    """Returns the ids already done. On resume, records to retry are dropped from the file."""
    out.mkdir(parents=True, exist_ok=True)
    results = out / RESULTS_FILE
    if overwrite:
        results.unlink(missing_ok=True)
        return set()
    existing = read_records(results)
    if existing and not resume:
        raise RunError(f"{results} already has {len(existing)} results: pass --resume or --overwrite")
    kept: dict[str, EvalRecord] = {}
    for record in existing:
        if not needs_rerun(record):
            kept[record.id] = record  # a later line for the same id wins
    temporary = results.with_suffix(".tmp")
    temporary.write_text("".join(r.model_dump_json() + "\n" for r in kept.values()), encoding="utf-8")
    temporary.replace(results)
    return set(kept)


@dataclass
class RunContext:
    client: Any
    executor: WeaviateExecutor
    #: Executes ground truths and predictions for scoring (`scoring_executor`).
    scoring: WeaviateExecutor
    #: The tool offered for each use case: its own collections, as the paper gave each record its schema.
    tools_for: dict[str, ToolSet]
    model_for: Callable[[Case | AbstentionCase], Any]
    model_name: str
    config: AgentConfig
    design: ToolDesign
    #: The agent strategy by name (`agent.strategies`; every door's one default), and, for `examples`, the
    #: query memory of a use case: it must never return that use case's own examples (cross-domain).
    #: `evaluation.strategies.use_strategy` sets both; without a memory the default's `examples` fails, typed.
    strategy: str = DEFAULT_STRATEGY
    retriever_for: Callable[[str], ExampleRetriever] | None = None
    #: What run.json records about the strategy (the memory, that it is cross-domain).
    strategy_setup: dict[str, Any] = field(default_factory=dict)
    #: Send each use case's openings for one token before the cases (`openings_of`): the local server then
    #: holds every system turn, and each question is timed warm. Not for an endpoint: its tokens cost.
    warm: bool = False
    scorer: Scorer = field(init=False)

    def __post_init__(self) -> None:
        self.scorer = live_scorer(self.client, self.scoring)


def run_case(case: Case | AbstentionCase, context: RunContext) -> EvalRecord:
    """One case, end to end; any unexpected failure still becomes a record."""
    started = time.perf_counter()
    try:
        tools = context.tools_for.get(case.use_case)
        if tools is None:
            raise RunError(f"the collections of use case {case.use_case!r} are not loaded")
        model = context.model_for(case)
        if isinstance(model, OracleModel) and isinstance(case, Case):
            model = informed_oracle(case, context.scorer.truths, model)
        retriever = context.retriever_for(case.use_case) if context.retriever_for is not None else None
        executor = agent_executor(case, context.executor, context.scorer.truths)
        session = AgentSession(executor, tools, model, context.strategy, context.config, retriever)
        run = session.run(case.query, earlier=earlier_turns(case, executor))
        return context.scorer.score(build_record(case, run, context.model_name, context.design.label()))
    except Exception as error:  # the run must go on: record the failure with its type
        return EvalRecord.for_case(
            case,
            model=context.model_name,
            tool_design=context.design.label(),
            strategy=context.strategy,
            outcome=Outcome.MODEL_ERROR,
            error=f"{type(error).__name__}: {error}",
            latency_s=time.perf_counter() - started,
        )


def openings_of(cases: list[Case | AbstentionCase], context: RunContext) -> list[tuple[Any, ChatRequest]]:
    """The first request of each prompt prefix the cases open, with the model it goes to: each use case's
    once, in the order its first case comes (`AgentSession.openings`; a use case not loaded has none)."""
    found: list[tuple[Any, ChatRequest]] = []
    seen: set[str] = set()
    for case in cases:
        tools = context.tools_for.get(case.use_case)
        if tools is None or case.use_case in seen:
            continue
        seen.add(case.use_case)
        model = context.model_for(case)
        retriever = context.retriever_for(case.use_case) if context.retriever_for is not None else None
        session = AgentSession(context.executor, tools, model, context.strategy, context.config, retriever)
        found += [(model, opening) for opening in session.openings()]
    return found


def earlier_turns(case: Case | AbstentionCase, executor: WeaviateExecutor) -> list[Turn]:
    """A follow-up's conversation as a correct agent left it: each earlier turn's gold call, and the group
    its answer named, kept as the agent keeps its own (`agent.conversation.keeps_from`)."""
    return [
        Turn(question=turn.query, answer="", keeps=keeps_from(executor.validate(turn.call), turn.names))
        for turn in getattr(case, "earlier", [])
    ]


def agent_executor(
    case: Case | AbstentionCase, executor: WeaviateExecutor, truths: GroundTruthCache | None
) -> WeaviateExecutor:
    """The agent's executor for a case: at the search cut its calls are scored at (`evaluation.search_cut`),
    so the hits it reads are the hits it is judged by."""
    if truths is None or isinstance(case, AbstentionCase):
        return executor
    return truths.executor_for(case, executor)


def oracle_for(case: Case | AbstentionCase) -> OracleModel:
    """The oracle of a case: the label replayed, or, for a question the tool cannot answer, saying so."""
    if isinstance(case, AbstentionCase):
        return OracleModel.abstaining(f"The database cannot answer this: {case.explanation()}.")
    return OracleModel.for_case(case)


def informed_oracle(
    case: Case | AbstentionCase, truths: GroundTruthCache | None, oracle: OracleModel | None = None
) -> OracleModel:
    """The oracle of a case told the resolved gold chain and the answer key (and the value to commit),
    from the cache that scores it: what `eval --model oracle` and inspect's oracle run."""
    oracle = oracle or oracle_for(case)
    if truths is None or isinstance(case, AbstentionCase):
        return oracle
    gold = truths.gold(EvalRecord.for_case(case, model=ORACLE, tool_design="", outcome=Outcome.OK))
    if isinstance(gold, ExecutorError):
        return oracle
    if not gold.key.scored:
        return oracle.knowing(gold.calls, None)
    return oracle.knowing(gold.calls, gold.key.text(), gold.key.committed().model_dump())


def run_cases(
    cases: list[Case | AbstentionCase],
    context: RunContext,
    out: Path,
    concurrency: int,
    on_record: Callable[[EvalRecord], None] = lambda _: None,
) -> int:
    """Run the cases, each record written as it ends; stops with `InfrastructureStopped` once the last
    `INFRASTRUCTURE_STREAK` cases all failed on the infrastructure (cases not started stay to run)."""
    streak: list[EvalRecord] = []
    with JsonlWriter(out / RESULTS_FILE) as writer, ThreadPoolExecutor(max(1, concurrency)) as pool:
        futures = [pool.submit(run_case, case, context) for case in cases]
        for future in as_completed(futures):
            record = future.result()
            writer.put(record)
            on_record(record)
            streak = [*streak, record] if infrastructure_failed(record) else []
            if len(streak) >= INFRASTRUCTURE_STREAK:
                for pending in futures:
                    pending.cancel()
                raise InfrastructureStopped(_streak_message(streak, out, writer.written, len(cases)))
    return writer.written


def _streak_message(streak: list[EvalRecord], out: Path, written: int, total: int) -> str:
    errors = sorted({(r.error or r.outcome.value).splitlines()[0][:300] for r in streak})
    return (
        f"stopped after {written} of {total} cases: the last {len(streak)} failed on the infrastructure, "
        f"not on the model ({'; '.join(errors)}). Nothing was scored for them. Check the model server "
        f"(`dbgorilla model status`) and Weaviate (`dbgorilla status`), then run again with "
        f"`--out {out} --resume`."
    )


def write_run_file(out: Path, payload: dict[str, Any]) -> None:
    (out / RUN_FILE).write_text(json.dumps(payload, indent=2, default=str))


def tools_by_use_case(
    schema: DatabaseSchema, collections: dict[str, list[str]], design: ToolDesign, counter: TokenCounter | None = None
) -> dict[str, ToolSet]:
    """The tool offered for each use case: its own collections, as the paper gave each record its schema."""
    tools = {}
    for use_case, names in collections.items():
        found = schema.only(names)
        if found.collections:
            tools[use_case] = build_tools(found, design, counter)
    return tools


def live_scorer(client: Any, scoring: WeaviateExecutor) -> Scorer:
    """Scores against the live schema and data, each ground truth executed once."""
    return Scorer(lambda _record: scoring.schema, scoring, GroundTruthCache(scoring, client))


def scoring_executor(client: Any, executor: WeaviateExecutor | None = None) -> WeaviateExecutor:
    """Executes ground truths and predictions for scoring; shares `executor`'s breaker if given."""
    return executor.with_options(SCORING_OPTIONS) if executor is not None else WeaviateExecutor(client, SCORING_OPTIONS)
