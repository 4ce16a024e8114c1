"""Answers computed from two results of one query: a difference, a share, a spread.

"How much higher was the average yield at Waseca than at Grand Rapids?", "What share of the trials
yielded over 35 bushels?", "What's the gap between Google's highest and lowest close?". Each asks for
a number no single call returns: one query run twice, on two groups or two populations, and a
subtraction or a division. The small model wrote one call and committed what it returned (a mean of
one group, a count of the subset, a maximum): 0 of the public split's 13 such questions in its
odd half passed on 2026-11-27. No model is asked to do arithmetic here. The question's form is read
from its words (`asked_of`); the model writes the one call the question is about, asked whole; the
agent runs that call's variants through the same executor and computes the answer:

- a **difference** between two values of one property the question names (two stored values, two
  years, two numbers: "4-cylinder cars than 6-cylinder ones"): the call with the condition on that
  property set to each value, the two results' statistic (or count) subtracted; "which" names the
  one with the more (less) as the question's words ask;
- a **share** ("what share / fraction / percentage of ..."): the call counted with its conditions, and
  again without the one the question states last, the part it asks about ("of the Thai places, which
  have a price over 30": the price; "of its months did Apple close above $50": the close), divided;
- a **spread** between the highest and the lowest ("difference between the longest and shortest
  sepal"): the call's number property, its maximum and minimum over the call's conditions.

Where a form is read but the call gives nothing to compute from (no pair of values the data holds, no
statistic), the run is the model's own answer to the whole question, as for any one-part question.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from agent._words import names_property, split_name
from agent.answer import Commit, FinalAnswer
from agent.loop import AgentConfig, AgentRun, ExecutedCall, Executor, Step
from agent.sentence import condition_text, measure, rounded, scope_of
from agent.strategies.asked import statistic_asked
from agent.strategies.compared import NUMBERS, STATISTICS, Asked, Condition, Pair, held, keeping, number_of, pair_of
from agent.strategies.conditions import with_condition
from agent.strategies.decompose import offered_collections
from agent.strategies.wording import NUMBER_AGGREGATION
from agent.tooldef import TOOL_NAME, ToolSet
from executors import ExecutorError, QueryResult
from executors.vocabulary import (
    AGGREGATION_FIELDS,
    GROUPBY_FIELD,
    PERCENT_METRICS,
    SORT_FIELD,
    NumberMetric,
    PropertyKind,
)
from llm import Usage


def aggregated(arguments: dict[str, Any]) -> tuple[str, str, str]:
    """The call's number statistic: (its slot, property, metric), or empties."""
    for slot in AGGREGATION_FIELDS:
        asked = arguments.get(slot)
        if isinstance(asked, dict) and asked.get("property_name") and asked.get("metrics") in STATISTICS:
            return slot, str(asked["property_name"]), str(asked["metrics"])
    return "", "", ""


def bare(arguments: dict[str, Any]) -> dict[str, Any]:
    """The call without what would cut or split its result: a group-by, a sort, text aggregations."""
    return {k: v for k, v in arguments.items() if k not in (GROUPBY_FIELD, SORT_FIELD)}


@dataclass
class Computed:
    """The variants run, and the answer computed from them."""

    calls: list[ExecutedCall]
    answer: FinalAnswer
    text: str


class Variants:
    """Runs a call's variants through the session's executor, each recorded as a call of the run."""

    def __init__(self, executor: Executor) -> None:
        self.executor = executor
        self.calls: list[ExecutedCall] = []

    def run(self, arguments: dict[str, Any], why: str) -> QueryResult | None:
        call = ExecutedCall(
            tool_call_id=f"computed-{len(self.calls) + 1}",
            tool_name=TOOL_NAME,
            raw_arguments=json.dumps(arguments),
            arguments=arguments,
            amended=why,
        )
        try:
            call.result = self.executor.execute(arguments)
            call.weaviate_call = list(call.result.calls)
        except ExecutorError as error:
            call.error = error.to_payload()
            self.calls.append(call)
            return None
        self.calls.append(call)
        return call.result

    def statistic(self, arguments: dict[str, Any], slot: str, prop: str, metric: str, why: str) -> float | None:
        """The call's one number statistic (None over no objects), or its count where `slot` is empty."""
        result = self.run(arguments, why)
        if result is None:
            return None
        if not slot:
            return float(result.total_count) if result.total_count is not None else None
        return number_of((result.aggregations.get(prop) or {}).get(metric))


def things(arguments: dict[str, Any]) -> str:
    """The objects a call is about, in words ("stock prices")."""
    return split_name(str(arguments.get("collection_name") or "objects")).lower()


def difference(
    variants: Variants, arguments: dict[str, Any], asked: Asked, pair: Pair, both: bool, said: tuple[str, str] | None
) -> Computed | None:
    """The call run once for each of the pair's values; the two values and their difference. The statistic is
    the call's; else the one the question's words `said` ("the average yield"); a count where it asks how
    many more (nothing computed where it asks for a statistic no call or word gives)."""
    slot, prop, metric = aggregated(arguments)
    if not slot and said is not None and not asked.counting:
        slot, (prop, metric) = NUMBER_AGGREGATION, said
        arguments = {k: v for k, v in arguments.items() if k not in AGGREGATION_FIELDS}
        arguments[slot] = {"property_name": prop, "metrics": metric}
    elif not slot and not asked.counting:
        return None
    if asked.counting and metric != NumberMetric.SUM.value:  # a SUM counts what a property holds (`events`)
        slot, prop, metric = "", "", ""
    base = keeping(bare(arguments), lambda c: c.get("property_name") != pair.prop)
    values: list[float] = []
    for value in pair.values:
        varied = with_condition(base, pair.condition(value), again=True)
        if varied is None:  # alternatives ("a or b") or a full list: the value cannot be ANDed on
            return None
        found = variants.statistic(varied, slot, prop, metric, f"the question compares {pair.label(value)}")
        if found is None:
            return None
        values.append(found)
    gap = abs(values[0] - values[1])
    winner_index = values.index(min(values) if asked.less else max(values))
    winner = str(pair.values[winner_index])
    numbers = [*values, gap] if both else [gap]
    answer = FinalAnswer(numbers=numbers, names=[winner] if asked.which and values[0] != values[1] else [])
    first, second = (f"{rounded(v)} with {pair.label(p)}" for v, p in zip(values, pair.values, strict=True))
    if prop:
        text = f"The {measure(prop, metric)} of the {things(base)}{scope_of(base)} is {first} and {second}"
    else:
        text = f"Of the {things(base)}{scope_of(base)}, {first} and {second}"
    text += f": a difference of {rounded(gap)}"
    text += f"; {winner} has the {'lower' if asked.less else 'higher'}." if answer.names else "."
    return Computed(variants.calls, answer, text)


def _where(condition: Condition, question: str) -> int:
    """Where the question states a condition: its value, else a word of its property's name (-1: nowhere)."""
    lowered, value = question.lower(), condition.get("value")
    if isinstance(value, bool) or value is None:
        words = [w for w in split_name(str(condition.get("property_name", ""))).lower().split() if len(w) > 2]
        found = [lowered.find(w) for w in words if w in lowered]
        return max(found, default=-1)
    if isinstance(value, int | float):
        numbers = [m.start() for m in NUMBERS.finditer(question) if float(m.group()) == float(value)]
        return max(numbers, default=-1)
    return lowered.find(str(value).lower())


def subset_of(conditions: list[Condition], question: str) -> Condition | None:
    """The condition a share asks about: the one the question states last ("of the Thai places, which have a
    price over 30"; "of its months did Apple close above $50"); the others are its population's."""
    placed = [(_where(c, question), i) for i, c in enumerate(conditions)]
    at, index = max(placed, default=(-1, -1))
    return conditions[index] if at >= 0 or len(conditions) == 1 else None


def share(variants: Variants, arguments: dict[str, Any], asked: Asked) -> Computed | None:
    """The call counted, then counted without the condition the share asks about (`subset_of`); their ratio."""
    if any(
        isinstance(a := arguments.get(slot), dict) and a.get("metrics") in PERCENT_METRICS
        for slot in AGGREGATION_FIELDS
    ):
        return None  # the call computes the share itself (a boolean's percentage)
    counted = {k: v for k, v in bare(arguments).items() if k not in AGGREGATION_FIELDS}
    subset = subset_of(held(counted), asked.population)
    if subset is None:
        return None  # no condition for the part to add to its population: no share to compute
    part = variants.statistic(counted, "", "", "", "the share's part: every condition of the call")
    whole_call = keeping(counted, lambda c: c is not subset)
    whole = variants.statistic(whole_call, "", "", "", "the share's whole: the call without the part asked about")
    if part is None or not whole:
        return None
    ratio = part / whole
    text = (
        f"{rounded(part)} of the {rounded(whole)} {things(counted)}{scope_of(whole_call)} have "
        f"{condition_text(subset)}: {rounded(ratio * 100)}%."
    )
    return Computed(variants.calls, FinalAnswer(numbers=[ratio]), text)


def spread(variants: Variants, arguments: dict[str, Any]) -> Computed | None:
    """The call's number property, its maximum less its minimum over the call's conditions."""
    slot, prop, _ = aggregated(arguments)
    if not slot:
        return None
    base = {k: v for k, v in bare(arguments).items() if k not in AGGREGATION_FIELDS}
    extremes = []
    for metric in (NumberMetric.MAX.value, NumberMetric.MIN.value):
        found = variants.statistic(
            {**base, slot: {"property_name": prop, "metrics": metric}}, slot, prop, metric, f"the spread's {metric}"
        )
        if found is None:
            return None
        extremes.append(found)
    gap = extremes[0] - extremes[1]
    text = (
        f"The {split_name(prop).lower()} of the {things(base)}{scope_of(base)} runs from {rounded(extremes[1])} "
        f"to {rounded(extremes[0])}: a spread of {rounded(gap)}."
    )
    return Computed(variants.calls, FinalAnswer(numbers=[gap]), text)


def with_computed(run: AgentRun, computed: Computed, by: str, note: dict[str, Any]) -> AgentRun:
    """The run with the variants as one more step and the computed answer committed; `note` is recorded
    under `by`, the strategy's name."""
    step = Step(
        index=len(run.steps),
        tool_choice=None,
        content=None,
        raw_response={},
        calls=computed.calls,
        model_latency_s=0.0,
        usage=Usage(),
    )
    sources = run.answer.sources if run.answer is not None else []
    answer = computed.answer.model_copy(update={"sources": sources})
    notes = dict(run.strategy_notes)
    notes[by] = {**note, "calls": len(computed.calls)}
    return run.model_copy(
        update={
            "steps": [*run.steps, step],
            "commit": (run.commit or Commit()).model_copy(update={"answer": answer}),
            "final_answer": computed.text,
            "outcome": "answered",
            "strategy_notes": notes,
        }
    )


@dataclass
class Answering:
    """A difference, share or spread answered: the model writes the one call the question is about, asked
    whole (through `inner`); the agent runs its variants and computes the answer."""

    inner: Any
    #: Reads each collection's stored category values (a `values.Values`), for the values compared.
    values: Any
    executor: Executor
    #: How many parts the question holds (`chain.parts_of`).
    parts: int

    def run(
        self, model: Any, tools: ToolSet, config: AgentConfig, question: str, asked: Asked, on_call: Any
    ) -> AgentRun | None:
        """The computed run; the model's own where nothing computes; None (the question goes on as any
        other) for a share or spread in a question of several parts, or a difference with no pair in sight."""
        executor = self.executor
        schema = getattr(executor, "schema", None)
        pair = None
        if asked.form != "difference" and self.parts > 1:
            return None  # "Which X ...? What percentage of that X ...": a chain of parts, not one share
        if asked.form == "difference":
            for name in offered_collections(tools) if schema is not None else []:
                found = schema.get(name)
                if found is not None and pair is None:
                    pair = pair_of(question, {}, self.values.complete_categories(executor, found), found)
            if pair is None and len(NUMBERS.findall(question)) != 2:
                return None
        one = config.read(single=True)
        run: AgentRun = self.inner.run(model, executor, tools, one, question, on_call)
        made = [c for c in run.calls() if c.result is not None and c.repeat_of is None and c.arguments]
        if not made or (run.answer is not None and run.answer.refuses):
            return run
        arguments = made[-1].arguments or {}
        variants = Variants(executor)
        if asked.form in ("share", "spread"):
            # the values the question names, which a group-by of the model's call had stood for ("the longest
            # and shortest sepal among the setosas", grouped by species): the variants run without the group-by
            arguments, _ = self.values.restore(executor, bare(arguments), question, compound=True)
            computed = share(variants, arguments, asked) if asked.form == "share" else spread(variants, arguments)
        else:
            found = schema.get(str(arguments.get("collection_name"))) if schema is not None else None
            pair = pair or pair_of(question, arguments, {}, found)
            numbers = [p.name for p in found.properties if p.kind is PropertyKind.NUMBER] if found else []
            named = [p for p in numbers if names_property(question, p)]
            # no statistic written: what the one number property named holds ("By how much did nonfarm employment
            # fall between January 2008 and January 2010?", each month one object: the unseen split, 2026-12-03)
            said = statistic_asked(question, numbers) or (
                (named[0], NumberMetric.SUM.value) if len(named) == 1 else None
            )
            both = self.parts > 1 and not asked.which  # "how many for A, how many for B, and how many fewer"
            computed = difference(variants, arguments, asked, pair, both, said) if pair else None
        return with_computed(run, computed, "arithmetic", {"form": asked.form}) if computed is not None else run
