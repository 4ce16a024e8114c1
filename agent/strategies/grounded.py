"""`grounded`: the model commits by pointing at values in the results; the agent writes them out.

A small model read "218 objects" and answered "5". Here the commit turn lists every value the
results hold, each under a short id (`c1.count = 218`, `c2.price.mean = 23.5`, `c1.subject.top1 =
Math`), and the schema the server enforces lets the model name only those ids: it picks numbers,
names and, for a per-group answer, which per-group value to map. The agent copies the values into
the `FinalAnswer`, so a number is never miscopied. One verify step checks the committed answer
against the results (it has a value or a reason, every id exists) and asks once more if not.

When the question was answered by one call whose result holds exactly one answer (a statistic, the
top values, one value per group), there is nothing to choose: the agent writes that answer itself
(`derived_answer`) and spends no commit turn. Where the `check` strategy read which statistic the
question asks for and the one result computes it (`answers_statistic`), the loop ends at that result
(`AgentConfig.answered_by`): no prose turn either; the text the user reads is written from the
committed answer, so the two cannot disagree. Where the question asks one thing
(`Reading.single`: `chain` found one part in it), any such result ends the loop: `check`
read the statistic as "none", or another one than the call computed, for 39 of the committed
sample's 60 single-step questions, whose prose turn then cost a few seconds each and changed nothing,
since the answer is derived from that one result all the same (2026-11-26). Names where the check read
a number do not end it: that is the pick of a question inside the question (`holds_the_answer`). The model chose the
call; the agent reads its result, as a query agent's answer step does. A wrong call still gives a wrong answer.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from agent.answer import Commit, FinalAnswer, commit_answer
from agent.conversation import form_question
from agent.loop import AgentConfig, AgentRun, ExecutedCall, Executor
from agent.models import ModelError
from agent.sentence import empty_result, plain, sentence
from agent.strategies.answer_form import shaped
from agent.strategies.facts import (
    GROUNDED_SCHEMA_NAME,
    Fact,
    PointingError,
    answer_from,
    facts_of,
    grounded_schema,
    number_of,
)
from agent.strategies.free_text import unheld_value
from agent.strategies.registry import StrategyInfo
from agent.tooldef import ToolSet
from executors import QueryResult
from executors.vocabulary import SCHEMA_METRICS, STATISTIC_METRICS
from llm import ChatRequest, ModelRequest, ModelResponse, ResponseFormat

#: Prose that says the database cannot answer (then a listing's count is not taken as the answer).
SAYS_IT_CANNOT = re.compile(
    r"\b(?:cannot|can't|can not|unable|(?:does not|doesn't|do not|don't) (?:store|have|hold|contain|record)"
    r"|no (?:property|field|column|data|information) (?:for|about|on|that))\b",
    re.IGNORECASE,
)
GROUNDED_PROMPT = (
    "Commit your answer by pointing at values in the results, never by retyping them. The values:\n"
    "{facts}\n\n"
    "Reply with JSON. numbers: the ids of each number the question asks for; names: the ids of each name it "
    "asks for; differences: for a difference it asks for (by how much), the two ids; groups: when it asks for "
    'a value per group, the id of that per-group value (e.g. "c1.per_group.count"), else ""; cannot_answer: '
    'why the database cannot answer it, else "". One id per thing asked.'
)


def derived_answer(result: QueryResult) -> FinalAnswer | None:
    """The one answer a result holds, or None when it holds objects (a listing) or a choice.

    Per group: the one metric asked for (top values as names), else the count; without groups: every statistic
    asked for (numbers) and the top values (names). A COUNT alone is the objects', as "how many" asks: a small model
    counts them with a property's COUNT, which leaves out the objects missing that property (2,892 of the
    2,904 airports outside Alaska and Texas have a state). A data type, a missing value, or several values per group
    leave the choice to the model."""
    if result.groups is not None:
        if result.truncated:
            return None
        per_group: dict[str, float] = {}
        named: dict[str, list[str]] = {}
        for key, group in result.groups.items():
            values = [v for metrics in group.aggregations.values() for v in metrics.values()]
            if len(values) > 1:
                return None
            if values and isinstance(values[0], list):  # the group's most common values: names, no number
                named[key] = [str(item.value) for item in values[0]]
                continue
            number = number_of(values[0]) if values else float(group.count)
            if number is None:
                return None
            per_group[key] = number
        if named:
            return None if per_group else FinalAnswer(group_names=named)
        return FinalAnswer(groups=per_group) if per_group else None
    metrics_asked = [metric for metrics in result.aggregations.values() for metric in metrics]
    if metrics_asked == ["COUNT"] and result.total_count is not None:  # how many objects, not how many values
        return FinalAnswer(numbers=[float(result.total_count)])
    numbers: list[float] = []
    names: list[str] = []
    for metrics in result.aggregations.values():
        for metric, value in metrics.items():
            if metric in SCHEMA_METRICS:
                return None
            if isinstance(value, list):
                names += [str(item.value) for item in value]
            elif (number := number_of(value)) is not None:
                numbers.append(number)
            else:
                return None
    return FinalAnswer(numbers=numbers, names=names) if numbers or names else None


def answers_statistic(result: QueryResult, statistic: str) -> bool:
    """The result holds one answer (`derived_answer`) and it is the statistic the question asks for.

    A multi-step question goes on past a first call that answers something else (a group-by that
    finds the group a second call is about): the loop ends early only where the two agree."""
    wanted = STATISTIC_METRICS.get(statistic)
    derived = derived_answer(result) if wanted is not None else None
    if derived is None or derived.group_names:  # names per group: no part picks one value from them
        return False
    groups = (result.groups or {}).values()
    metrics = {m for values in result.aggregations.values() for m in values}
    metrics |= {m for group in groups for values in group.aggregations.values() for m in values}
    if not metrics:  # a group-by alone: its per-group counts
        return statistic == "count"
    return metrics <= wanted


def holds_the_answer(statistic: str) -> Callable[[QueryResult], bool]:
    """For a question of one part: a result that holds one answer is it, whatever statistic the check
    read, except names where a number is asked. "What is the average price of the most common
    cuisine?" is one sentence with a question inside it: its first result, the cuisine, is a pick."""
    numeric = statistic in STATISTIC_METRICS and statistic != "most common"

    def answered(result: QueryResult) -> bool:
        derived = derived_answer(result)
        if derived is None:
            return False
        named = derived.names or derived.group_names
        return not (numeric and named and not derived.numbers and not derived.groups)

    return answered


def answer_text(answer: FinalAnswer, call: ExecutedCall | None = None, form: str = "") -> str:
    """The answer the user reads, written from the committed one (so the two never disagree): a sentence
    about the one call it came from, when it came from one (`agent.sentence`), in the form that shaped it."""
    if call is not None and call.result is not None and isinstance(call.arguments, dict):
        return sentence(answer, call.arguments, call.result, form)
    return plain(answer)


_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def _states(text: str, number: float) -> bool:
    """Whether `text` writes `number` (to the precision it writes: "23.56" states 23.5558; "1,200" 1200)."""
    for found in _NUMBER.findall(text):
        written = found.replace(",", "")
        decimals = len(written.split(".")[1]) if "." in written else 0
        if abs(float(written) - number) <= 0.5 * 10**-decimals + 1e-9:
            return True
    return False


def text_agrees(text: str, answer: FinalAnswer) -> bool:
    """Whether the prose states every value of the committed answer: each number (as rounded in the text),
    each name, and each group's name and value. A refusal agrees with any text (the commit's reason is kept)."""
    if answer.refuses or answer.empty:
        return True
    lowered = text.lower()
    return (
        all(_states(text, n) for n in answer.numbers)
        and all(name.lower() in lowered for name in answer.names)
        and all(group.lower() in lowered and _states(text, value) for group, value in answer.groups.items())
        and all(name.lower() in lowered for names in answer.group_names.values() for name in names)
    )


def verify(answer: FinalAnswer) -> str | None:
    """What is wrong with a committed answer, checked against the results (None: nothing)."""
    if answer.empty:
        return "You pointed at no value and gave no reason. Point at the values that answer the question."
    return None


class Grounded:
    """The inner strategy without its commit turn, then a grounded commit with one verify-and-retry."""

    name = "grounded"

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def run(
        self,
        model: Any,
        executor: Executor,
        tools: ToolSet,
        config: AgentConfig,
        question: str,
        on_call: Any = None,
    ) -> AgentRun:
        statistic = config.reading.statistic
        answered = (lambda result: answers_statistic(result, statistic)) if statistic else None
        if config.reading.single:  # one thing asked: a result that holds one answer is it
            answered = holds_the_answer(statistic)
        inner = config.model_copy(update={"commit_answer": False, "answered_by": answered})
        run: AgentRun = self.inner.run(model, executor, tools, inner, question, on_call)
        successful = _successful(run.calls())
        # a loop that ran out of steps resending a call that worked still received its answer
        out_of_steps = run.outcome == "max_steps" and bool(successful)
        if not config.commit_answer or (run.outcome not in ("answered", "no_tool_call") and not out_of_steps):
            return run
        results = [call.result for call in successful]
        facts = facts_of(results)
        offered = None if tools.design.structured_output else tools.definitions()
        if not facts:  # nothing to point at (no call, or only errors): the ordinary commit turn
            run.commit = commit_answer(model, run.messages, offered)
            run.usage = run.usage + run.commit.usage
            return run
        only = successful[0] if len(successful) == 1 else None
        if only is not None:  # no objects: a mean of none, or a value the data holds nowhere, is no answer
            called = dict(only.arguments or {})
            empty = empty_result(called, results[0]) or unheld_value(executor, called, results[0])
        else:
            empty = None
        derived = derived_answer(results[0]) if len(results) == 1 else None
        rule = ""
        if only is not None:  # the form the question asks for: a count, a group's name, one group's value
            formed, rule = shaped(derived or FinalAnswer(), results[0], form_question(question, config.follows))
            if derived is None and SAYS_IT_CANNOT.search(run.final_answer or ""):
                rule = ""  # a listing after which the model said it cannot answer: its pointing decides
            derived = formed if rule else derived
        if empty is not None:  # a mean, a maximum or a top value of no objects is not 0: say none matched
            run.commit = Commit(answer=FinalAnswer(cannot_answer=empty))
            run.strategy_notes["grounded"] = {"facts": len(facts), "empty": empty}
            run.final_answer = f"No answer: {empty}."
            return run
        if derived is not None:  # one call, one answer in its result: nothing to point at
            run.commit = Commit(answer=derived)
            run.strategy_notes["grounded"] = {"facts": len(facts), "derived": True}
            if rule:
                run.strategy_notes["grounded"]["form"] = rule
        else:
            run.commit = self._commit(model, run, facts, offered)
            run.usage = run.usage + run.commit.usage
        committed = run.commit.answer
        if committed is None or run.commit.error is not None:
            return run
        written = answer_text(committed, only if derived is not None else None, rule)
        # no prose (the loop ended at the answer), prose stating another value than the one taken from the
        # results, or an answer taken from one call's result, which a sentence about that call states (the
        # model's prose around the same number told how it called the tool, or why it filtered as it did):
        # the user reads the committed answer
        about_the_call = derived is not None and written != plain(committed)
        if about_the_call or not text_agrees(run.final_answer or "", committed):
            if run.final_answer and run.final_answer != written:
                run.strategy_notes["grounded"]["text_replaced"] = run.final_answer
            run.final_answer = written
        return run

    def _commit(self, model: Any, run: AgentRun, facts: list[Fact], offered: Any) -> Commit:
        prompt = GROUNDED_PROMPT.format(facts="\n".join(f.line() for f in facts))
        asked = [*run.messages, ModelRequest.user(prompt)]
        schema = ResponseFormat(name=GROUNDED_SCHEMA_NAME, json_schema=grounded_schema(facts))
        notes: dict[str, Any] = {"facts": len(facts), "attempts": []}
        run.strategy_notes["grounded"] = notes
        total = Commit()
        started = time.perf_counter()
        for attempt in range(2):  # the answer, then at most one retry after the verify step
            try:
                request = ChatRequest(
                    messages=asked, tools=offered or [], tool_choice="none" if offered else None, response_format=schema
                )
                reply = model.complete(request)
            except ModelError as error:
                total.error = f"{type(error).__name__}: {error}"
                break
            total.usage = total.usage + reply.usage
            total.content = reply.content
            try:
                answer = answer_from(reply.content, facts)
                problem = verify(answer)
            except PointingError as error:
                answer, problem = None, str(error)
            notes["attempts"].append({"reply": reply.content, "problem": problem})
            if problem is None or attempt == 1:
                total.answer, total.error = (answer, None) if problem is None else (answer, problem)
                break
            asked += [ModelResponse.of(reply.content or ""), ModelRequest.user(problem)]
        total.latency_s = time.perf_counter() - started
        return total


def _successful(calls: list[ExecutedCall]) -> list[ExecutedCall]:
    return [call for call in calls if call.result is not None and call.repeat_of is None]


STRATEGY = StrategyInfo(
    "grounded",
    "commit by pointing at result values; the agent copies them; verify and retry once",
    lambda inner, _: Grounded(inner),
    rank=90,
)
