"""The benchmark as inspect_ai tasks, so any model inspect supports runs it where such runs happen.

Each split's questions are the task's dataset (sample ids are case ids), our `query_database` tool
is its tool (the schema the model sees is the one `agent.build_tools` offers for the question's use
case, and every call runs on the live Weaviate through `executors.WeaviateExecutor`), and our scores
are its scorers: `execution_match` (the `final` protocol's execution exact match) and
`answer_grader` (`evaluation.statistics.passed`: the answer grader where the question has a key,
the abstention grader where the tool cannot answer). Both come from one `evaluation.scorer.Scorer`
pass over an `EvalRecord` rebuilt from inspect's transcript, so they equal `dbgorilla eval`'s.

    task = benchmark_task("natural", client, use_cases=["restaurants"], epochs=3)   # pass_k_3 too
    inspect_ai.eval(task, model="openai/gpt-4o-mini")

The `@task` entry points that open the Weaviate connection live in `dbgorilla.inspect_tasks` (the
connection is the top layer's). `oracle_outputs` replays the gold calls through inspect's `mockllm`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from inspect_ai import Epochs, Task
from inspect_ai.dataset import Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.scorer import CORRECT, INCORRECT, NOANSWER, Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool, ToolChoice, ToolDef, ToolError, ToolFunction, ToolInfo, ToolParams
from inspect_ai.util import store

from agent import ORACLE, TOOL_NAME, OracleModel, ToolDesign, ToolSet
from agent.loop import RESULT_MAX_CHARS, SYSTEM_PROMPT
from evaluation import runner
from evaluation.ground_truth import Gold
from evaluation.records import ARGUMENT_ERROR_CODES, EvalRecord, Outcome, PredictedCall
from evaluation.selection import select_abstentions, select_cases
from evaluation.statistics import passed
from executors import ExecutorError, WeaviateExecutor
from executors.vocabulary import ToolOperations
from fixtures.datasets import AbstentionCase, Case, read_dataset
from fixtures.datasets.cases import needs_related
from fixtures.loader import ensure_loaded, names_of
from llm import (
    ChatRequest,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    ToolDefinition,
    ToolReturnPart,
)

#: The splits with a task each (`dbgorilla.inspect_tasks`); any split file works with `benchmark_task`.
SPLITS = ("natural", "explicit", "multistep", "abstention")
#: Per-sample store keys: the tool's executions, and the scored record both scorers read.
CALLS = "dbgorilla:calls"
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


def benchmark(
    split: str,
    client: Any,
    use_cases: list[str] | None = None,
    ids: list[str] | None = None,
    limit: int | None = None,
    echo: Callable[[str], None] = lambda line: print(line, file=sys.stderr),
    namespace: str | None = None,
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
    # The paper's tool, or the related one for a split whose gold calls use its slots.
    design = ToolDesign(operations=ToolOperations.RELATED if needs_related(cases) else ToolOperations.PAPER)
    executor = WeaviateExecutor(client, names=names_of(needed, namespace), operations=design.operations)
    collections = {u.name: [c.name for c in u.collections] for u in needed}
    return Benchmark(
        split=split,
        source=source.source,
        cases={c.id: c for c in cases},
        executor=executor,
        scorer=runner.live_scorer(client, runner.scoring_executor(client, executor)),
        tools=runner.tools_by_use_case(executor.schema, collections, design),
        design=design,
    )


def task_for(bench: Benchmark, max_steps: int | None = None, epochs: int = 1, force_first_call: bool = False) -> Task:
    """The inspect Task. `epochs` > 1 reduces every score by `mean` and by `pass_k_<epochs>` (right in
    every epoch: pass^k). `force_first_call` names the tool as the first step's tool_choice, as small
    local models need (`prefers_named_tool_choice`)."""
    cases = list(bench.cases.values())
    steps = max_steps or max(3, 1 + max(len(c.chain) if isinstance(c, Case) else 0 for c in cases))
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
) -> Task:
    """`benchmark` and `task_for` in one call."""
    return task_for(benchmark(split, client, use_cases, ids, limit), max_steps, epochs, force_first_call)


def _sample(case: Case_) -> Sample:
    if isinstance(case, AbstentionCase):
        target = f"The database cannot answer this: {case.explanation()}."
    else:
        target = json.dumps(case.ground_truth.to_tool_arguments(), sort_keys=True)
    metadata = {"use_case": case.use_case, "kind": "unanswerable" if isinstance(case, AbstentionCase) else "call"}
    return Sample(id=case.id, input=case.query, target=target, metadata=metadata)


def query_database_tool(bench: Benchmark, tools: ToolSet) -> Tool:
    """Our tool as inspect's: its description and JSON schema as the model gets them from `build_tools`,
    executed on the live data; an executor error goes back to the model as a tool error, with its code."""

    async def query_database(**kwargs: Any) -> str:
        key = _key(kwargs)
        executions: dict[str, dict[str, Any]] = store().get(CALLS, {})
        try:
            result = await anyio.to_thread.run_sync(bench.executor.execute, dict(kwargs))
        except ExecutorError as error:
            executions[key] = {"ok": False, "error_code": error.code, "error_message": error.message}
            store().set(CALLS, executions)
            raise ToolError(error.to_llm_text()) from None
        executions[key] = {"ok": True, "weaviate_calls": result.calls, "result": result.model_dump(mode="json")}
        store().set(CALLS, executions)
        return result.to_llm_text(max_chars=RESULT_MAX_CHARS)

    function = tools.tools[0]["function"]
    parameters = ToolParams.model_validate(function["parameters"])
    return ToolDef(
        query_database, name=function["name"], description=function["description"], parameters=parameters
    ).as_tool()


def _key(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, sort_keys=True, default=str)


@solver
def query_agent(bench: Benchmark, max_steps: int, force_first_call: bool = False) -> Solver:
    """Our loop's shape in inspect: the agent's system prompt, the question's use-case tool, at most
    `max_steps` model turns; a turn without a call is the answer."""
    tools = {use_case: query_database_tool(bench, toolset) for use_case, toolset in bench.tools.items()}

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if state.metadata["use_case"] not in tools:
            raise RuntimeError(f"the collections of use case {state.metadata['use_case']!r} are not loaded")
        state.messages.insert(0, ChatMessageSystem(content=SYSTEM_PROMPT))
        state.tools = [tools[state.metadata["use_case"]]]
        for step in range(max_steps):
            first: ToolChoice = ToolFunction(TOOL_NAME) if force_first_call and step == 0 else "auto"
            state.tool_choice = first
            state = await generate(state, tool_calls="single")
            if not state.output.message.tool_calls or state.completed:
                break
        return state

    return solve


async def scored_record(bench: Benchmark, state: TaskState) -> EvalRecord:
    """The sample's `EvalRecord`, scored once by our scorer (both inspect scorers read it). A failure
    of Weaviate is an error of the sample, for inspect to retry, never a score of 0."""
    cached = state.store.get(RECORD)
    if cached is not None:
        return EvalRecord.model_validate(cached)
    case = bench.cases[str(state.sample_id)]
    record = record_of(case, state.messages, state.store.get(CALLS, {}), str(state.model), bench.design.label())
    scored: EvalRecord = await anyio.to_thread.run_sync(bench.scorer.score, record)
    if runner.needs_rerun(scored):
        reason = scored.ground_truth_error or scored.scores.scoring_error or "a call failed on the infrastructure"
        raise RuntimeError(f"{case.id}: Weaviate failed, not the model: {reason}")
    state.store.set(RECORD, scored.model_dump(mode="json"))
    return scored


def record_of(
    case: Case_, messages: list[ChatMessage], executions: dict[str, dict[str, Any]], model: str, design: str
) -> EvalRecord:
    """The record `dbgorilla eval` would write for this transcript: each assistant turn is a step,
    each of its tool calls a predicted call with what running it gave (a call inspect refused
    against the schema is an invalid one that never ran)."""
    replies = {m.tool_call_id: m for m in messages if isinstance(m, ChatMessageTool)}
    turns = [m for m in messages if isinstance(m, ChatMessageAssistant)]
    calls: list[PredictedCall] = []
    for step, turn in enumerate(turns):
        for tool_call in turn.tool_calls or []:
            ran = None if tool_call.parse_error else executions.get(_key(tool_call.arguments))
            reply = replies.get(tool_call.id)
            base = {
                "step": step,
                "tool_name": tool_call.function,
                "raw_arguments": json.dumps(tool_call.arguments),
                "arguments": None if tool_call.parse_error else dict(tool_call.arguments),
            }
            if ran is not None:
                calls.append(PredictedCall(**base, **ran))
                continue
            refused = (reply.error.message if reply is not None and reply.error else None) or tool_call.parse_error
            code = "unknown_tool" if tool_call.function != TOOL_NAME else "invalid_arguments"
            calls.append(PredictedCall(**base, ok=False, error_code=code, error_message=refused or "not run"))
    last = turns[-1] if turns else None
    answer = last.text if last is not None and not last.tool_calls else None
    outcome = _outcome(calls, [t for turn in turns for t in turn.tool_calls or []])
    return EvalRecord.for_case(
        case,
        model=model,
        tool_design=design,
        predicted_calls=calls,
        final_answer=answer,
        outcome=outcome,
        steps=len(turns),
    )


def _outcome(calls: list[PredictedCall], tool_calls: list[Any]) -> Outcome:
    if not calls:
        return Outcome.NO_TOOL_CALL
    if any(c.ok for c in calls):
        return Outcome.OK
    if tool_calls and tool_calls[-1].parse_error:
        return Outcome.DECODE_ERROR
    return Outcome.INVALID_ARGUMENTS if calls[-1].error_code in ARGUMENT_ERROR_CODES else Outcome.EXECUTION_ERROR


@scorer(metrics=[mean(), stderr()])
def execution_match(bench: Benchmark) -> Scorer:
    """The call the answer rests on (`final` protocol) returned exactly the ground truth's result."""

    async def score(state: TaskState, target: Target) -> Score:
        record = await scored_record(bench, state)
        if record.expected == "abstain":
            return Score(value=NOANSWER, explanation="a question the tool cannot answer: no call to match")
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
        return Score(
            value=CORRECT if passed(record) else INCORRECT,
            answer=record.final_answer,
            explanation=scores.answer_reason or ("no answer key: judged by the rows" if scores.answer is None else ""),
            metadata={"answer": scores.answer, "abstained": scores.abstained, "refused": scores.refused},
        )

    return score


OutputFunction = Callable[[list[ChatMessage], list[ToolInfo], ToolChoice, GenerateConfig], Awaitable[ModelOutput]]


def oracle_outputs(bench: Benchmark) -> OutputFunction:
    """For `get_model("mockllm/model", custom_outputs=...)`: our oracle (`agent.OracleModel`) through
    inspect. It makes each question's gold calls, a chain's resolved on the data, then says the answer
    key (or, where the tool cannot answer, says so): a run that proves the task scores 1 where it should."""
    by_query = {case.query: case for case in bench.cases.values()}

    async def output(messages: list[ChatMessage], tools: list[ToolInfo], _choice: Any, _config: Any) -> ModelOutput:
        question = next(m.text for m in messages if m.role == "user")
        oracle = await anyio.to_thread.run_sync(_oracle, bench, by_query[question])
        reply = oracle.complete(ChatRequest(messages=_neutral(messages), tools=[_definition(t) for t in tools]))
        if reply.tool_calls:
            call = reply.tool_calls[0]
            return counted(ModelOutput.for_tool_call(ORACLE, call.name, json.loads(call.arguments)))
        return counted(ModelOutput.from_content(ORACLE, reply.content or ""))

    return output


def _neutral(messages: list[ChatMessage]) -> list[ModelMessage]:
    """inspect's messages as the seam's (the oracle reads the tool returns and the prompts)."""
    neutral: list[ModelMessage] = []
    for m in messages:
        if m.role == "assistant":
            neutral.append(ModelResponse.of(m.text))
        elif m.role == "tool":
            neutral.append(ModelRequest(parts=[ToolReturnPart(tool_call_id="", tool_name="", content=m.text)]))
        elif m.role == "system":
            neutral.append(ModelRequest(parts=[SystemPromptPart(content=m.text)]))
        else:
            neutral.append(ModelRequest.user(m.text))
    return neutral


def _definition(tool: ToolInfo) -> ToolDefinition:
    return ToolDefinition(name=tool.name, description=tool.description, parameters=tool.parameters.model_dump())


def counted(output: ModelOutput) -> ModelOutput:
    """A scripted output with its (zero) token usage set: mockllm otherwise counts tokens with
    tiktoken, which downloads its encoding on first use (no network here)."""
    output.usage = ModelUsage(input_tokens=0, output_tokens=0, total_tokens=0)
    return output


def _oracle(bench: Benchmark, case: Case_) -> OracleModel:
    oracle = runner.oracle_for(case)
    if isinstance(case, AbstentionCase):
        return oracle
    gold = bench.scorer.truths.gold(EvalRecord.for_case(case, model=ORACLE, tool_design="", outcome=Outcome.OK))
    if not isinstance(gold, Gold):
        return oracle
    return oracle.knowing(gold.calls, gold.key.text() if gold.key.scored else None)
