"""The benchmark as inspect_ai tasks, so any model inspect supports runs it where such runs happen.

Each split's questions are the task's dataset (sample ids are case ids). The solver is a thin
wrapper around the agent session every door runs (`agent.session.AgentSession`: the question's
use-case tool, the strategy, `DEFAULT_STRATEGY` unless told, and the commit turn), its model inspect's
own through the provider adapter (`llm.providers.inspect_model`), so inspect measures the agent
`dbgorilla eval` and `dbgorilla ask` serve. The scorers are ours: `execution_match` (the `final`
protocol's execution exact match) and `answer_grader` (`evaluation.statistics.passed`), both from
one `evaluation.scorer.Scorer` pass over the record `dbgorilla eval` would write for the run.

    task = benchmark_task("natural", client, use_cases=["restaurants"], epochs=3)   # pass_k_3 too
    inspect_ai.eval(task, model="openai/gpt-4o-mini")

The `@task` entry points that open the Weaviate connection live in `dbgorilla.inspect_tasks` (the
connection is the top layer's). `oracle_outputs` answers inspect's `mockllm` with our oracle.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from inspect_ai import Epochs, Task
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, get_model
from inspect_ai.scorer import CORRECT, INCORRECT, NOANSWER, Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import store

from agent import AgentConfig, AgentRun, OracleModel, ToolDesign, ToolSet
from agent.session import AgentSession
from agent.strategies import DEFAULT_STRATEGY, ExampleRetriever
from evaluation import runner
from evaluation.records import EvalRecord
from evaluation.selection import select_abstentions, select_cases
from evaluation.statistics import passed, unstable
from evaluation.strategies import prepare_strategy
from executors import WeaviateExecutor
from fixtures.datasets import AbstentionCase, Case, read_dataset
from fixtures.loader import ensure_loaded, names_of
from llm.providers.inspect_model import InspectChatModel, OutputFunction, inspect_messages, scripted_outputs

#: The splits with a task each (`dbgorilla.inspect_tasks`); any split file works with `benchmark_task`.
SPLITS = ("natural", "explicit", "multistep", "abstention")
#: Per-sample store keys: the case, the agent's run (its whole trace), and the scored record both scorers read.
CASE = "dbgorilla:case"
RUN = "dbgorilla:run"
RECORD = "dbgorilla:record"

Case_ = Case | AbstentionCase


@dataclass
class Benchmark:
    """What a task's tool, scorers and oracle share: the questions, the live executor and scorer."""

    split: str
    source: str
    cases: dict[str, Case_]
    executor: WeaviateExecutor
    scorer: Any  # evaluation.scorer.Scorer: executes ground truths once each, scores like `eval`
    tools: dict[str, ToolSet]
    design: ToolDesign = field(default_factory=ToolDesign)
    #: The agent strategy, and for `examples` the query memory of a use case (never its own examples).
    strategy: str = DEFAULT_STRATEGY
    retriever_for: Callable[[str], ExampleRetriever] | None = None

    def session(self, case_id: str, model: Any, config: AgentConfig) -> AgentSession:
        """The agent session of a question: the one `dbgorilla eval` runs for it (its use case's tool,
        its executor at the question's search cut)."""
        case = self.cases[case_id]
        tools = self.tools.get(case.use_case)
        if tools is None:
            raise RuntimeError(f"the collections of use case {case.use_case!r} are not loaded")
        retriever = self.retriever_for(case.use_case) if self.retriever_for is not None else None
        executor = runner.agent_executor(case, self.executor, self.scorer.truths)
        return AgentSession(executor, tools, model, self.strategy, config, retriever)


def benchmark(
    split: str,
    client: Any,
    use_cases: list[str] | None = None,
    ids: list[str] | None = None,
    limit: int | None = None,
    echo: Callable[[str], None] = lambda line: print(line, file=sys.stderr),
    namespace: str | None = None,
    strategy: str = DEFAULT_STRATEGY,
) -> Benchmark:
    """One split's questions (a name such as "multistep", or a file) over the live Weaviate, the use
    cases they need loaded on first use. `limit` keeps the first N (default all; inspect's own
    `--limit` works too, but only after the use cases the whole split needs are loaded)."""
    source = read_dataset(split)
    cases: list[Case_] = [
        *select_cases(source.cases, use_cases, limit or 0, ids),
        *select_abstentions(source.abstentions, use_cases, limit, ids),
    ]
    if not cases:
        raise ValueError(f"no questions of {split!r} match use_cases={use_cases} ids={ids}")
    needed = [u for u in source.use_cases if u.name in {c.use_case for c in cases}]
    ensure_loaded(client, needed, echo=echo, namespace=namespace)
    # The agent's tool at every door (the compound one: it holds every split's gold calls).
    design = ToolDesign()
    executor = WeaviateExecutor(client, names=names_of(needed, namespace), operations=design.operations)
    collections = {u.name: [c.name for c in u.collections] for u in needed}
    name, retriever_for, _ = prepare_strategy(client, strategy, namespace, echo)  # cross-domain, as in eval
    return Benchmark(
        split=split,
        source=source.source,
        cases={c.id: c for c in cases},
        executor=executor,
        scorer=runner.live_scorer(client, runner.scoring_executor(client, executor)),
        tools=runner.tools_by_use_case(executor.schema, collections, design),
        design=design,
        strategy=name,
        retriever_for=retriever_for,
    )


def task_for(bench: Benchmark, max_steps: int | None = None, epochs: int = 1, force_first_call: bool = False) -> Task:
    """The inspect Task. `epochs` > 1 reduces every score by `mean` and by `pass_k_<epochs>` (right in
    every epoch: pass^k). `force_first_call` names the tool as the first step's tool_choice, as small
    local models need (`prefers_named_tool_choice`)."""
    cases = list(bench.cases.values())
    longest = max(len(c.chain) if isinstance(c, Case) else 0 for c in cases)
    steps = max_steps or max(AgentConfig().max_steps, 1 + longest)  # the other doors' default, or the chain's
    answerable = any(isinstance(c, Case) for c in cases)
    return Task(
        dataset=[_sample(c) for c in cases],
        solver=query_agent(bench, steps, force_first_call),
        scorer=[execution_match(bench), answer_grader(bench)] if answerable else [answer_grader(bench)],
        epochs=Epochs(epochs, ["mean", f"pass_k_{epochs}"]) if epochs > 1 else None,
        name=f"dbgorilla_{bench.split}" if bench.split in SPLITS else "dbgorilla",
        metadata={
            "split": bench.split,
            "dataset": bench.source,
            "max_steps": steps,
            "tool_design": bench.design.label(),
            "strategy": bench.strategy,
        },
    )


def benchmark_task(
    split: str,
    client: Any,
    use_cases: list[str] | None = None,
    ids: list[str] | None = None,
    limit: int | None = None,
    max_steps: int | None = None,
    epochs: int = 1,
    force_first_call: bool = False,
    strategy: str = DEFAULT_STRATEGY,
) -> Task:
    """`benchmark` and `task_for` in one call."""
    bench = benchmark(split, client, use_cases, ids, limit, strategy=strategy)
    return task_for(bench, max_steps, epochs, force_first_call)


def _sample(case: Case_) -> Sample:
    if isinstance(case, AbstentionCase):
        target = f"The database cannot answer this: {case.explanation()}."
    else:
        target = json.dumps(case.ground_truth.to_tool_arguments(), sort_keys=True)
    metadata = {"use_case": case.use_case, "kind": "unanswerable" if isinstance(case, AbstentionCase) else "call"}
    return Sample(id=case.id, input=case.query, target=target, metadata=metadata)


@solver
def query_agent(bench: Benchmark, max_steps: int, force_first_call: bool = False) -> Solver:
    """The agent session, answered by inspect's model: at most `max_steps` model turns, then the
    commit turn; the run is kept for the scorers, its conversation shown as the sample's messages."""
    config = AgentConfig(max_steps=max_steps, first_tool_choice="function" if force_first_call else None)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.store.set(CASE, str(state.sample_id))
        session = bench.session(str(state.sample_id), InspectChatModel(get_model()), config)
        run: AgentRun = await anyio.to_thread.run_sync(session.run, state.input_text)
        state.store.set(RUN, run.model_dump(mode="json"))
        state.messages = inspect_messages(run.messages)
        state.output = ModelOutput.from_content(session.model.name, run.final_answer or "")
        return state

    return solve


async def scored_record(bench: Benchmark, state: TaskState) -> EvalRecord:
    """The sample's `EvalRecord`, as `dbgorilla eval` writes it for the run, scored once by our scorer
    (both inspect scorers read it). A failure of Weaviate is an error of the sample, for inspect to
    retry, never a score of 0."""
    cached = state.store.get(RECORD)
    if cached is not None:
        return EvalRecord.model_validate(cached)
    case = bench.cases[str(state.sample_id)]
    run = AgentRun.model_validate(state.store.get(RUN))
    record = runner.build_record(case, run, str(state.model), bench.design.label())
    scored: EvalRecord = await anyio.to_thread.run_sync(bench.scorer.score, record)
    if runner.needs_rerun(scored):
        reason = scored.ground_truth_error or scored.scores.scoring_error or "a call failed on the infrastructure"
        raise RuntimeError(f"{case.id}: Weaviate or the model failed, not the agent: {reason}")
    state.store.set(RECORD, scored.model_dump(mode="json"))
    return scored


@scorer(metrics=[mean(), stderr()])
def execution_match(bench: Benchmark) -> Scorer:
    """The call the answer rests on (`final` protocol) returned exactly the ground truth's result."""

    async def score(state: TaskState, target: Target) -> Score:
        record = await scored_record(bench, state)
        if record.expected == "abstain":
            return Score(value=NOANSWER, explanation="a question the tool cannot answer: no call to match")
        if record.search_cut is not None and record.search_cut.unstable:
            return Score(value=NOANSWER, explanation=f"not scored on this data: {record.search_cut.unstable}")
        first, final = record.scores.first, record.scores.final
        return Score(
            value=CORRECT if final.execution_exact else INCORRECT,
            answer=json.dumps(record.predicted_calls[-1].arguments) if record.predicted_calls else None,
            explanation=f"final: exact {final.execution_exact}, F1 {final.f1}; first: exact {first.execution_exact}; "
            f"argument exact match (first) {first.exact_match}; outcome {record.outcome.value}",
            metadata={"first": first.model_dump(mode="json"), "final": final.model_dump(mode="json")},
        )

    return score


@scorer(metrics=[mean(), stderr()])
def answer_grader(bench: Benchmark) -> Scorer:
    """The question passed as `dbgorilla eval` counts it: the final answer right against its key (or,
    for a listing without a key, the rows right), or, where the tool cannot answer, saying so."""

    async def score(state: TaskState, target: Target) -> Score:
        record = await scored_record(bench, state)
        scores = record.scores
        if record.search_cut is not None and unstable(record):  # its gold is arbitrary here: no verdict
            return Score(value=NOANSWER, explanation=f"not scored on this data: {record.search_cut.unstable}")
        return Score(
            value=CORRECT if passed(record) else INCORRECT,
            answer=record.final_answer,
            explanation=scores.answer_reason or ("no answer key: judged by the rows" if scores.answer is None else ""),
            metadata={"answer": scores.answer, "abstained": scores.abstained, "refused": scores.refused},
        )

    return score


def oracle_outputs(bench: Benchmark) -> OutputFunction:
    """For `get_model("mockllm/model", custom_outputs=...)`: our oracle (`agent.OracleModel`, told each
    question's resolved gold chain and answer key, as `dbgorilla eval --model oracle` tells it) answering
    inspect's requests: a run that proves the task scores 1 where it should."""
    oracles: dict[str, OracleModel] = {}

    def oracle() -> OracleModel:
        case = bench.cases[store().get(CASE)]
        if case.id not in oracles:
            oracles[case.id] = runner.informed_oracle(case, bench.scorer.truths)
        return oracles[case.id]

    return scripted_outputs(oracle)
