"""`chain`: a question of several questions is answered one question at a time (least-to-most).

"What is the most common subject among courses? What is the average number of credits of the courses
of that subject that are taught online?" A small model asked both at once makes one call that answers
neither (a TOP_OCCURRENCES and a group-by in one call) and commits the whole listing: 0 of 30 on the
committed sample's multi-step questions under every strategy (2026-11-26). Each part alone is a
single-step question, where the inner strategy's first call is right most of the time. So the
question is cut into its parts (`parts.parts_of`: question marks, sentences, "and what ..."); the first
part is answered by the inner strategy; the agent
picks the one value it names (the first top value, or the group with the highest or lowest value as
the part's words ask); the model rewrites the next part to name that value instead of referring to it
(an enforced one-field schema), and so on. The committed answer is the picked values and the last
part's answer; a part the inner strategy refuses is the whole question's refusal. A question of one
part goes to the inner strategy unchanged, at no cost. A part before the last that asks which group
has the highest (lowest) statistic is asked as the per-group question whose result the pick reads
(`per_group_part`).

A comparison in one sentence ("Of the two most common subjects among courses, which has the higher
average number of credits, and by how much?") has no question mark to cut at, and its parts are not
a sequence: every part is one value per group. It is asked as the one per-group question that holds
them all ("What is the average number of credits of courses per subject?"); the agent ranks that
result's groups by their counts, takes the two (three) most or least common, and commits the one
with the higher (lower) value and the difference (`Comparison`). 0 of the 7 such questions in the
committed multi-step sample passed before (2026-11-26).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from agent.answer import Commit, FinalAnswer
from agent.loop import AgentConfig, AgentRun, Executor
from agent.sentence import singular
from agent.strategies import arithmetic
from agent.strategies.arithmetic import with_computed
from agent.strategies.asked import LEAST_WORDS
from agent.strategies.compared import asked_of
from agent.strategies.grounded import answer_text, derived_answer, text_agrees
from agent.strategies.holder import asked_of_holder, extreme_group, last_made
from agent.strategies.parts import REFERS, parts_of
from agent.strategies.registry import StrategyInfo
from agent.strategies.rewrite import rewrite
from agent.strategies.values import StoredCategories, Values
from agent.strategies.which_group import per_group_part, per_group_question
from agent.tooldef import ToolSet
from executors import QueryResult
from executors.vocabulary import GROUPBY_FIELD
from llm import Usage

_NUMBER = re.compile(r"-?[\d.,]+")
_COMPARISON = re.compile(
    r"^(?:of|among|between) the (?P<count>two|three|four|2|3|4) (?P<rank>most|least) common (?P<category>[\w -]+?)"
    r"(?: (?:among|of|in) (?:the )?(?P<population>[\w -]+?))?, which (?:one )?(?:has|have|had|gets|is) the "
    r"(?P<direction>higher|lower|greater|larger|bigger|smaller|more|fewer|less) (?P<measure>[\w ,-]+?),? "
    r"and by how much\?$",
    re.IGNORECASE,
)
_COUNTS = {"two": 2, "three": 3, "four": 4}
_DOWN = {"lower", "smaller", "fewer", "less"}


@dataclass(frozen=True)
class Comparison:
    """A one-sentence comparison: of the `count` most (least) common `category` among `population`,
    which has the higher (lower) `measure`, and by how much."""

    count: int
    most: bool
    category: str
    population: str
    higher: bool
    measure: str

    def per_group(self) -> str:
        """The one single-step question whose per-group result holds every part."""
        return per_group_question(self.measure, self.population, singular(self.category))

    def decide(self, groups: dict[str, tuple[int, float]]) -> tuple[str, float, list[str]] | None:
        """The winner among the compared groups, its difference to the runner-up, and the compared groups
        (None when the result has fewer groups than compared)."""
        if len(groups) < self.count:
            return None
        ranked = sorted(groups, key=lambda name: groups[name][0], reverse=self.most)[: self.count]
        ordered = sorted(ranked, key=lambda name: groups[name][1], reverse=self.higher)
        return ordered[0], abs(groups[ordered[0]][1] - groups[ordered[1]][1]), ranked


def _per_group(config: AgentConfig) -> AgentConfig:
    """The config of a question the chain asks per group: its call needs a group-by (`typed` makes it
    required). Asked "What is the average rating of restaurants per cuisine?", the model took the mean
    over all restaurants in 5 of the first 14 such questions of 2026-11-26."""
    return config.read(required_slots=(*config.reading.required_slots, GROUPBY_FIELD))


def comparison_of(question: str) -> Comparison | None:
    """The comparison a one-sentence question asks for, or None."""
    found = _COMPARISON.match(question.strip())
    if found is None:
        return None
    count = found["count"].lower()
    return Comparison(
        count=int(count) if count.isdigit() else _COUNTS[count],
        most=found["rank"].lower() == "most",
        category=found["category"],
        population=found["population"] or "",
        higher=found["direction"].lower() not in _DOWN,
        measure=found["measure"].strip(" ,"),
    )


def per_group_values(result: QueryResult) -> dict[str, tuple[int, float]]:
    """Each group's count and its one metric value (empty when the result holds no per-group metric)."""
    derived = derived_answer(result) if result.groups else None
    if derived is None or not any(g.aggregations for g in (result.groups or {}).values()):
        return {}
    return {name: ((result.groups or {})[name].count, value) for name, value in derived.groups.items()}


#: A part that asks which thing: "Which country ...", "In which year ...".
_WHICH = re.compile(r"^\W*(?:\w+\s+)?which\b", re.I)
#: A part that asks for a count: its number is part of the answer, whatever the next part does with it.
_COUNT_ASKED = re.compile(r"\W*how many\b", re.I)


def pick(answer: FinalAnswer, part: str) -> str | None:
    """The one value a part's answer names for the next part: its first top value, else the group with
    the highest value (the lowest where the part asks for the lowest, least, fewest...), else its number."""
    low = bool(LEAST_WORDS.search(part))
    if answer.names:
        return answer.names[-1 if low else 0]  # top values come most common first
    if answer.groups:
        chosen = min if low else max
        return chosen(answer.groups, key=lambda name: answer.groups[name])
    if answer.numbers:
        return FinalAnswer(numbers=answer.numbers[:1]).text()
    return None


def pick_from_results(run: AgentRun, part: str) -> str | None:
    """The group a part's last per-group result picks, when its committed answer is a bare number: asked
    "which cuisine has the highest average rating", the model pointed at the highest mean (5), not at
    the cuisine that has it (7 of the committed sample's chains, 2026-11-26)."""
    for call in reversed(run.calls()):
        if call.result is not None and call.result.groups:
            derived = derived_answer(call.result)
            if derived is not None and derived.groups:
                return pick(derived, part)
    return None


class Chain:
    """Each part of a question of several, in turn, through the inner strategy; one committed answer."""

    name = "chain"

    def __init__(self, inner: Any, stored: StoredCategories | None = None) -> None:
        self.inner = inner
        #: Reads each collection's stored category values once, for the values a question compares (the
        #: reader the session's other strategies share, `build_strategy`).
        self._values = Values(None, stored)

    def run(
        self,
        model: Any,
        executor: Executor,
        tools: ToolSet,
        config: AgentConfig,
        question: str,
        on_call: Any = None,
    ) -> AgentRun:
        comparison = comparison_of(question)
        if comparison is not None:
            return self._compare(model, executor, tools, config, question, comparison, on_call)
        parts = parts_of(question)
        form = asked_of(question)
        if form is not None:
            answering = arithmetic.Answering(self.inner, self._values, executor, len(parts))
            computed = answering.run(model, tools, config, question, form, on_call)
            if computed is not None:
                return computed
        if len(parts) == 1 and (grouped := per_group_part(question)) is not None:
            return self._which_group(model, executor, tools, config, question, grouped, on_call)
        if len(parts) == 1:  # one thing asked: the loop may end at the first result that holds it
            one = config.read(single=True)
            return self._extreme(executor, self.inner.run(model, executor, tools, one, question, on_call), question)
        started = time.perf_counter()
        runs: list[AgentRun] = []
        asked: list[dict[str, Any]] = []
        picked: list[str] = []
        kept: list[float] = []
        usage = Usage()
        current = parts[0]
        whole = False  # the parts answered before the last was asked (`holder`)
        for index, part in enumerate(parts):
            offset = sum(len(r.steps) for r in runs)

            def shifted(step: int, call: Any, offset: int = offset) -> None:
                if on_call is not None:
                    on_call(offset + step, call)

            grouped = per_group_part(current) if index < len(parts) - 1 else None
            run = self.inner.run(
                model, executor, tools, _per_group(config) if grouped else config, grouped or current, shifted
            )
            runs.append(run)
            asked.append({"question": grouped or current, "answer": run.answer.text() if run.answer else None})
            answer = run.answer
            if answer is None or answer.refuses or index == len(parts) - 1:
                break
            last = index + 1 == len(parts) - 1  # the holder answers the question's last part, none before it
            if last and answer.numbers and not (answer.names or answer.groups) and REFERS.search(parts[index + 1]):
                held = self._held(executor, run, parts[index + 1])
                if held is not None:  # "... the highest wind? What weather did that day have?": read, not asked
                    runs[-1], whole = held, True
                    asked[-1].update(next="answered from the objects that hold it")
                    break
            if answer.numbers and not (answer.names or answer.groups) and not REFERS.search(parts[index + 1]):
                # "How many airports does Texas have, and how many does California have?": parts side by side,
                # each answer kept, the next asked as written
                kept.extend(answer.numbers)
                current = parts[index + 1]
                asked[-1].update(next="side by side")
                continue
            if (extreme := self._extreme(executor, run, part)) is not run:
                runs[-1] = run = extreme
                answer = run.answer or answer
            value = pick(answer, part) if answer.names or answer.groups else None
            value = value or pick_from_results(run, part) or pick(answer, part)
            if value is None:
                break
            # a name goes into the committed answer (a year named as "which year" too); a number only leads on,
            # but for a count asked ("How many drizzle days were there, and what was their average ...?")
            if value in answer.names or not _NUMBER.fullmatch(value):
                picked.append(value)
            elif _COUNT_ASKED.match(part) and answer.numbers:
                kept.append(answer.numbers[0])
            current, spent, how = rewrite(model, part, value, parts[index + 1])
            usage = usage + spent
            asked[-1].update(picked=value, next=how)
        partial = len(runs) < len(parts) and not whole
        return self._joined(question, runs, picked, asked, usage, time.perf_counter() - started, partial, kept)

    @staticmethod
    def _extreme(executor: Executor, run: AgentRun, part: str) -> AgentRun:
        """A part asking which group holds the highest (lowest) value, answered from the objects sorted by it
        where its per-group result was cut (`holder.extreme_group`); else `run` as it is."""
        computed = extreme_group(executor, run) if _WHICH.match(part) else None
        return with_computed(run, computed, "extreme_group", {"asked": part}) if computed is not None else run

    def _held(self, executor: Executor, run: AgentRun, next_part: str) -> AgentRun | None:
        """`run` with the next part answered from the objects that hold its extreme (`holder`), or None."""
        made, schema = last_made(run), getattr(executor, "schema", None)
        named = made.arguments.get("collection_name") if made is not None and made.arguments else None
        found = schema.get(str(named)) if named and schema is not None else None
        if found is None:
            return None
        computed = asked_of_holder(executor, run, next_part, self._values.categories(executor, found), found)
        return with_computed(run, computed, "holder", {"asked": next_part}) if computed is not None else None

    def _which_group(
        self,
        model: Any,
        executor: Executor,
        tools: ToolSet,
        config: AgentConfig,
        question: str,
        grouped: str,
        on_call: Any,
    ) -> AgentRun:
        """ "Which variety had the highest average yield?" asked as the per-group question ("What is the
        average yield per variety?"), and the group its result ranks first committed by name: asked as it
        was, the model listed the varieties, or took the top values of the category (2026-11-28)."""
        run = self.inner.run(model, executor, tools, _per_group(config), grouped, on_call)
        answer = run.answer
        value = pick(answer, question) if answer is not None and answer.groups else None
        if answer is None or answer.refuses or value is None:
            return run.model_copy(update={"question": question})
        named = answer.model_copy(update={"names": [value], "numbers": [], "groups": {}})  # the name asked, alone
        notes = {**run.strategy_notes, "chain": {"parts": [{"question": grouped, "picked": value}]}}
        commit = (run.commit or Commit()).model_copy(update={"answer": named})
        ranked = "lowest" if LEAST_WORDS.search(question) else "highest"  # as `pick` ranks it
        said = f"{value}, the {ranked}. {run.final_answer}" if run.final_answer else answer_text(named)
        update = {"question": question, "commit": commit, "final_answer": said, "strategy_notes": notes}
        return run.model_copy(update=update)

    def _compare(
        self,
        model: Any,
        executor: Executor,
        tools: ToolSet,
        config: AgentConfig,
        question: str,
        comparison: Comparison,
        on_call: Any,
    ) -> AgentRun:
        """The comparison asked as one per-group question; the agent compares that result's groups. A run
        without such a result keeps the inner strategy's answer to the per-group question."""
        asked = comparison.per_group()
        run = self.inner.run(model, executor, tools, _per_group(config), asked, on_call)
        notes = dict(run.strategy_notes)
        notes["chain"] = {"compared": {"asked": asked}}
        update: dict[str, Any] = {"question": question, "strategy_notes": notes}
        results = [c.result for c in run.calls() if c.result is not None and c.repeat_of is None]
        groups = next((found for r in reversed(results) if (found := per_group_values(r))), {})
        decided = comparison.decide(groups)
        if run.answer is not None and not run.answer.refuses and decided is not None:
            winner, difference, among = decided
            answer = FinalAnswer(names=[winner], numbers=[difference], sources=run.answer.sources)
            notes["chain"]["compared"].update(among=among, winner=winner, difference=difference)
            update.update(
                commit=(run.commit or Commit()).model_copy(update={"answer": answer}), final_answer=answer_text(answer)
            )
        return run.model_copy(update=update)

    @staticmethod
    def _joined(
        question: str,
        runs: list[AgentRun],
        picked: list[str],
        asked: list[dict[str, Any]],
        usage: Usage,
        took: float,
        partial: bool,
        kept: list[float] | None = None,
    ) -> AgentRun:
        """One run of the parts' runs: their steps in order, the picked names and the last part's answer
        (partial when a part before the last gave nothing to go on)."""
        last = runs[-1]
        steps = []
        for run in runs:
            for step in run.steps:
                steps.append(step.model_copy(update={"index": len(steps)}))
        answer = last.answer
        if answer is not None and not answer.refuses:
            sources = [s for run in runs if run.answer for s in run.answer.sources]
            answer = answer.model_copy(
                update={
                    "names": list(dict.fromkeys([*picked, *answer.names])),
                    "numbers": [*(kept or []), *answer.numbers],
                    "sources": list(dict.fromkeys(sources)),
                    "is_partial_answer": answer.is_partial_answer or partial,
                }
            )
        commit = (last.commit or Commit()).model_copy(update={"answer": answer}) if answer is not None else last.commit
        for run in runs:
            usage = usage + run.usage
        notes = dict(last.strategy_notes)
        notes["chain"] = {"parts": asked, "earlier_notes": [run.strategy_notes for run in runs[:-1]]}
        final = last.final_answer
        if answer is not None and (picked or partial or kept):
            # each part's sentence, in order, when together they state the joined answer; else its values
            joined = " ".join(run.final_answer.strip() for run in runs if run.final_answer)
            final = joined if joined and text_agrees(joined, answer) else answer_text(answer)
        return last.model_copy(
            update={
                "question": question,
                "steps": steps,
                "messages": [m for run in runs for m in run.messages],
                "corrections": sum(r.corrections for r in runs),
                "recovered_text_calls": sum(r.recovered_text_calls for r in runs),
                "usage": usage,
                "latency_s": took,
                "error": next((r.error for r in runs if r.error), None),
                "commit": commit,
                "final_answer": final,
                "strategy_notes": notes,
            }
        )


STRATEGY = StrategyInfo(
    "chain",
    "a question of several is answered part by part; each next part rewritten to name the value picked",
    lambda inner, options: Chain(inner, options["stored"]),
    rank=10,
)
