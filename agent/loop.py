"""The function-calling loop: question → model → tool calls → executor → tool results → … → answer.

Every step is traced (raw response, parsed arguments, the Weaviate call that ran, its result or
typed error, latency, tokens). A typed executor error goes back to the model as the tool result so
it can correct itself; corrections are counted and bounded. Calls written as JSON text are
recovered and flagged. Once the model has answered in prose, one more turn has it commit the
answer as a typed value (`agent.answer`, `AgentConfig.commit_answer`): `AgentRun.commit`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from agent._recover import recover_tool_calls
from agent.answer import Commit, FinalAnswer, commit_answer
from agent.follows import Follows
from agent.models import RESULT_OF, TOOL_TURN_SCHEMA_NAME, ModelError, ModelReply, RawToolCall, Usage
from agent.reading import Reading
from agent.tooldef import TOOL_NAME, ToolSet, ToolVariant
from executors import ErrorPayload, ExecutorError, InvalidArgumentsError, QueryResult, UnknownToolError
from llm import (
    ChatModel,
    ChatRequest,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    NamedTool,
    ResponseFormat,
    ToolChoice,
    ToolDefinition,
    ToolReturnPart,
)

SYSTEM_PROMPT = (
    "You answer questions about a Weaviate database. Use the query_database tool to query it; "
    "choose the collection, and add a search query, filters, aggregations or a group-by only when the "
    "question asks for them. After you get results, answer briefly from them, or query again if needed."
)
RESULT_MAX_CHARS = 2000
#: Why the loop stopped (the evaluation maps it to a record `Outcome`).
StopReason = Literal["answered", "no_tool_call", "max_steps", "correction_limit", "model_error", "timeout"]


class Executor(Protocol):
    def execute(self, arguments: Any) -> QueryResult: ...


class ExecutedCall(BaseModel):
    tool_call_id: str
    tool_name: str
    raw_arguments: str
    arguments: dict[str, Any] | None = None
    rationale: str | None = None
    recovered_from_text: bool = False
    weaviate_call: list[str] = Field(default_factory=list)
    result: QueryResult | None = None
    error: ErrorPayload | None = None
    latency_s: float = 0.0
    #: The earlier step that made this exact call (same arguments): the model is told so, not shown
    #: the result again.
    repeat_of: int | None = None
    #: What the agent changed in the model's arguments before running them, and why (None: ran as
    #: written). `raw_arguments` keeps what the model wrote; `arguments` is what ran.
    amended: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class Step(BaseModel):
    index: int
    tool_choice: ToolChoice | None
    content: str | None
    raw_response: dict[str, Any]
    calls: list[ExecutedCall] = Field(default_factory=list)
    model_latency_s: float
    usage: Usage


class AgentRun(BaseModel):
    question: str
    model: str
    tool_design: str
    outcome: StopReason
    final_answer: str | None = None
    steps: list[Step] = Field(default_factory=list)
    #: The conversation, provider-neutral (`llm.messages`).
    messages: list[ModelMessage] = Field(default_factory=list)
    corrections: int = 0
    recovered_text_calls: int = 0
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    error: str | None = None
    #: The commit turn after the prose answer (None: not asked, or the loop ended without an answer).
    #: Its tokens are counted in `usage` too.
    commit: Commit | None = None
    #: The agent strategy that ran (`agent.strategies`, e.g. "react", "examples+grounded").
    strategy: str = "react"
    #: What the strategy adds to the trace (the examples it showed, the values it grounded, its verify step).
    strategy_notes: dict[str, Any] = Field(default_factory=dict)

    def calls(self) -> list[ExecutedCall]:
        return [call for step in self.steps for call in step.calls]

    @property
    def answer(self) -> FinalAnswer | None:
        """The committed answer, if the model committed one that parses."""
        return self.commit.answer if self.commit is not None else None


class AgentConfig(BaseModel):
    max_steps: int = 4
    max_corrections: int = 2
    #: "auto", "required", "none" or "function" (name the tool; only for the unified tool).
    first_tool_choice: str | None = None
    later_tool_choice: str = "auto"
    system_prompt: str = SYSTEM_PROMPT
    result_max_chars: int = RESULT_MAX_CHARS
    #: After a prose answer, ask the model to commit it as a `FinalAnswer` (one more turn).
    commit_answer: bool = True
    #: Text put before the question in the user turn (after the stable system prompt and tools, so the
    #: server's prompt cache still reuses them): a strategy's solved examples, for instance.
    question_preamble: str = ""
    #: Text put after the question in the same turn: what a strategy found in the database for it (the
    #: stored values its words name, for instance).
    question_context: str = ""
    #: For a follow-up, the turn it follows (`agent.conversation.context_of`), shown to the model after the
    #: question; the strategies read the user's own words, without it.
    follows: Follows | None = None
    #: A strategy's test of a result that answers the question by itself (grounded's `derived_answer`):
    #: when the run's one successful call passes it, the loop ends there, with no prose turn; the
    #: strategy writes the answer from the result.
    answered_by: Callable[[QueryResult], bool] | None = Field(default=None, exclude=True)
    #: What the strategies before the loop read from the question, for those after it (`Reading`).
    reading: Reading = Field(default_factory=Reading)
    #: A strategy's amendment of a call before it runs (`values` moves a filter no stored value can
    #: match to the property that holds it): the arguments to run, and why ("" when unchanged).
    amend: Callable[[dict[str, Any]], tuple[dict[str, Any], str]] | None = Field(default=None, exclude=True)
    #: A follow-up's amendment (`agent.conversation.carry`), after every strategy's: an earlier condition on
    #: a property they left unfiltered (a filter no word names, which `values` drops) is kept, not lost.
    carry: Callable[[dict[str, Any]], tuple[dict[str, Any], str]] | None = Field(default=None, exclude=True)

    def read(self, **found: Any) -> AgentConfig:
        """This config with what a strategy read from the question added to its `reading`."""
        return self.model_copy(update={"reading": self.reading.model_copy(update=found)})

    def amended_by(self, own: Callable[[dict[str, Any]], tuple[dict[str, Any], str]]) -> AgentConfig:
        """This config with `own` amending each call after any amendment it already had (reasons joined)."""
        earlier = self.amend

        def amend(arguments: dict[str, Any]) -> tuple[dict[str, Any], str]:
            why = ""
            if earlier is not None:
                arguments, why = earlier(arguments)
            arguments, mine = own(arguments)
            return arguments, " ".join(w for w in (why, mine) if w)

        return self.model_copy(update={"amend": amend})

    def amended(self, arguments: dict[str, Any]) -> tuple[dict[str, Any], str]:
        """A call as it runs: each strategy's amendment, then the conversation's; the reasons ("" none)."""
        amend = self.amended_by(self.carry).amend if self.carry is not None else self.amend
        return amend(arguments) if amend is not None else (arguments, "")

    def user_turn(self, question: str, brief: bool = False) -> str:
        """The question as the user turn shows it: the preamble, the question, then the context (of a
        follow-up, `brief`ly: only which collection it follows; else what `Follows.told` says)."""
        said = self.follows
        follows = (said.brief() if brief else said.told(self.reading.collection)) if said else ""
        context = "".join(f"\n{text}" for text in (follows, self.question_context) if text)
        return f"{self.question_preamble}{question}{context}"


class Agent:
    def __init__(self, model: ChatModel, executor: Executor, tools: ToolSet, config: AgentConfig | None = None) -> None:
        self.model = model
        self.executor = executor
        self.tools = tools
        self.config = config or AgentConfig()

    def _tool_choice(self, step: int, correcting: bool = False) -> ToolChoice:
        """The first turn's choice, and a correction's: a model that prefers a named choice is held to
        a call (it otherwise wrote its corrected call as prose around a JSON block, 200 tokens where the
        call takes 60); later turns are `later_tool_choice`."""
        choice = self.config.later_tool_choice if step and not correcting else self.config.first_tool_choice
        if choice is None:
            choice = "function" if getattr(self.model, "prefers_named_tool_choice", False) else "auto"
        if choice == "function":
            if self.tools.design.variant is ToolVariant.UNIFIED:
                return NamedTool(name=TOOL_NAME)
            return "required"
        return choice  # type: ignore[return-value]

    def _offered(self) -> list[ToolDefinition]:
        return [] if self.tools.design.structured_output else self.tools.definitions()

    def _request(
        self, messages: list[ModelMessage], choice: ToolChoice | None, offered: list[ToolDefinition]
    ) -> ChatRequest:
        return ChatRequest(
            messages=messages,
            tools=offered,
            tool_choice=choice,
            response_format=_response_format() if self.tools.design.structured_output else None,
            parallel_tool_calls=self.tools.design.parallel_calls,
        )

    def _first_turn(self, question: str) -> list[ModelMessage]:
        system = self.config.system_prompt
        if self.tools.design.structured_output:
            system += "\n\n" + _structured_instructions(self.tools)
        return [ModelRequest.prompt(system, self.config.user_turn(question))]

    def opening(self, question: str = "") -> ChatRequest:
        """The first request `run(question)` sends: its system turn (the prompt and the tools) is what a
        warm server keeps (`agent.session.AgentSession.openings`)."""
        choice = None if self.tools.design.structured_output else self._tool_choice(0)
        return self._request(self._first_turn(question), choice, self._offered())

    def run(self, question: str, on_call: Callable[[int, ExecutedCall], None] | None = None) -> AgentRun:
        """Answer `question`; `on_call(step, call)` hears each executed call as it finishes (streaming)."""
        started = time.perf_counter()
        structured = self.tools.design.structured_output
        messages = self._first_turn(question)
        offered = self._offered()
        run = AgentRun(
            question=question, model=self.model.name, tool_design=self.tools.design.label(), outcome="max_steps"
        )
        failed_last_step = False
        made: dict[str, int] = {}  # each successful call's arguments -> the step that made it first
        for index in range(self.config.max_steps):
            choice = None if structured else self._tool_choice(index, correcting=failed_last_step)
            try:
                reply = self.model.complete(self._request(messages, choice, offered))
            except ModelError as error:
                run.outcome, run.error = error.outcome, str(error)  # type: ignore[assignment]
                break
            run.usage = run.usage + reply.usage
            step = Step(
                index=index,
                tool_choice=choice,
                content=reply.content,
                raw_response=reply.raw,
                model_latency_s=reply.latency_s,
                usage=reply.usage,
            )
            run.steps.append(step)
            calls, recovered, answer = self._calls_of(reply, structured)
            if not calls:
                messages.append(ModelResponse.of(answer or ""))
                run.final_answer = answer
                run.outcome = "answered" if run.calls() else "no_tool_call"
                break
            if failed_last_step:
                run.corrections += 1
                if run.corrections > self.config.max_corrections:
                    run.outcome = "correction_limit"
                    break
            for call in calls:
                step.calls.append(self._execute(call, recovered))
                if step.calls[-1].ok:
                    first = made.setdefault(json.dumps(step.calls[-1].arguments, sort_keys=True), index)
                    step.calls[-1].repeat_of = first if first < index else None
                if on_call is not None:
                    on_call(index, step.calls[-1])
            run.recovered_text_calls += len(calls) if recovered else 0
            messages += self._feedback(reply, calls, step.calls, structured)
            failed_last_step = any(not call.ok for call in step.calls)
            if self._answered(run):
                run.outcome = "answered"
                break
        if self.config.commit_answer and run.outcome in ("answered", "no_tool_call"):
            run.commit = commit_answer(self.model, messages, offered or None)
            run.usage = run.usage + run.commit.usage
        run.messages = messages
        run.latency_s = time.perf_counter() - started
        return run

    def _answered(self, run: AgentRun) -> bool:
        """The run's one successful call answers the question by the strategy's test."""
        test = self.config.answered_by
        done = [call for call in run.calls() if call.ok and call.repeat_of is None]
        return test is not None and len(done) == 1 and done[0].result is not None and test(done[0].result)

    def _calls_of(self, reply: ModelReply, structured: bool) -> tuple[list[RawToolCall], bool, str | None]:
        if structured:
            return _structured_calls(reply.content)
        if reply.tool_calls:
            return reply.tool_calls, False, reply.content
        recovered = recover_tool_calls(reply.content, self.tools.tool_names())
        return recovered, bool(recovered), reply.content

    def _execute(self, call: RawToolCall, recovered: bool) -> ExecutedCall:
        executed = ExecutedCall(
            tool_call_id=call.id, tool_name=call.name, raw_arguments=call.arguments, recovered_from_text=recovered
        )
        started = time.perf_counter()
        try:
            if call.name not in self.tools.tool_names():
                raise UnknownToolError(
                    f"There is no tool named {call.name!r}. Available: {', '.join(self.tools.tool_names())}."
                )
            try:
                raw = json.loads(call.arguments) if call.arguments.strip() else {}
            except json.JSONDecodeError as error:
                raise InvalidArgumentsError(
                    f"The arguments are not valid JSON ({error.msg} at {error.pos}). Send a JSON object."
                ) from error
            except RecursionError:  # JSON nested thousands deep: the model's fault, not a crash of the run
                raise InvalidArgumentsError("The arguments are nested too deeply. Send a flat JSON object.") from None
            if not isinstance(raw, dict):
                raise InvalidArgumentsError("The arguments must be a JSON object.")
            arguments, executed.rationale = self.tools.to_call_arguments(call.name, raw)
            arguments, why = self.config.amended(arguments)
            executed.amended = why or None
            executed.arguments = arguments
            result = self.executor.execute(arguments)
            executed.result = result
            executed.weaviate_call = list(result.calls)
        except ExecutorError as error:
            executed.error = error.to_payload()
        executed.latency_s = time.perf_counter() - started
        return executed

    def _feedback(
        self, reply: ModelReply, calls: list[RawToolCall], executed: list[ExecutedCall], structured: bool
    ) -> list[ModelMessage]:
        texts = [self._result_text(call) for call in executed]
        if structured:
            joined = "\n\n".join(f"{RESULT_OF}{i + 1}:\n{text}" for i, text in enumerate(texts))
            return [ModelResponse.of(reply.content or ""), ModelRequest.user(joined)]
        returns = [
            ToolReturnPart(tool_call_id=call.id, tool_name=call.name, content=text)
            for call, text in zip(calls, texts, strict=True)
        ]
        return [ModelResponse.of(reply.content or "", calls), ModelRequest(parts=returns)]

    def _result_text(self, call: ExecutedCall) -> str:
        if call.error is not None:
            return f"Error ({call.error.code}): {call.error.message}"
        if call.repeat_of is not None:
            return (
                f"This is the same call as in step {call.repeat_of + 1}; its result, above, is unchanged. "
                "Answer from it, or make a different call."
            )
        assert call.result is not None
        text = call.result.to_llm_text(max_chars=self.config.result_max_chars)
        return f"The agent ran the call amended: {call.amended}\n{text}" if call.amended else text


class ToolCallModel(BaseModel):
    function_name: str
    arguments: dict[str, Any]


class ResponseOrToolCall(BaseModel):
    """The paper's structured-generation alternative to native tool calls (Appendix A)."""

    tool_rationale: str | None = Field(default=None, description="A rationale regarding whether tool calls are needed.")
    use_tools: bool
    response: str | None = None
    tool_calls: list[ToolCallModel] | None = None


def _response_format() -> ResponseFormat:
    return ResponseFormat(name=TOOL_TURN_SCHEMA_NAME, json_schema=ResponseOrToolCall.model_json_schema())


def _structured_instructions(tools: ToolSet) -> str:
    listing = "\n\n".join(
        f"Function {t.name}: {t.description}\nArguments JSON schema: " + json.dumps(t.parameters)
        for t in tools.definitions()
    )
    return (
        "Reply only with a JSON object of the ResponseOrToolCall schema: set use_tools to true and list "
        "tool_calls (function_name, arguments) to query, or set use_tools to false and put the answer in "
        f"response.\n\n{listing}"
    )


def _structured_calls(content: str | None) -> tuple[list[RawToolCall], bool, str | None]:
    try:
        parsed = ResponseOrToolCall.model_validate_json(content or "")
    except ValueError:
        return [], False, content
    if not parsed.use_tools or not parsed.tool_calls:
        return [], False, parsed.response
    calls = [
        RawToolCall(id=f"structured-{i + 1}", name=call.function_name, arguments=json.dumps(call.arguments))
        for i, call in enumerate(parsed.tool_calls)
    ]
    return calls, False, parsed.response
