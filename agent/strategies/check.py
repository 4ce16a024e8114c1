"""`check`: before any query, two short enforced decisions: can this database answer the question?

A small model never says "the database cannot answer": asked for a salary no collection has, it
averages another number. Here, before the loop, the model sees the offered collections with their
properties and what each holds, and the question. First it names the collection the question is
about (even where the question's words name only one: not asked, the model wrote shorter words for what
is asked, and 3 of the committed sample's 20 unanswerable questions went unrefused, 2026-12-02,
docs/results) and what it asks for in a few words. The statistic (what the tool computes, and common ones
it cannot: a standard deviation, a variance...) is read from the question's words (`statistic_written`): the
reply is stopped before the model writes it. Then, in a prompt of its own, shown only that collection's
properties, it gives a verdict from two choices: they hold what the question needs, or it needs one that is not
listed. A "not listed" verdict, or a statistic the tool cannot compute (chosen, or named in its
words), is answered "cannot answer" with the reason, and no query runs; any other question goes to
the inner strategy unchanged. Where every word of what it asks for is a word of the collection's
property names ("ticket price"), the verdict is not asked: it is "listed" (`properties_name`), and
the question saves the verdict's ~100 new prompt tokens, about 2 s.
The two turns' prompts, schemas and reply readers, and the oracle's replies to them, are
`agent.strategies.check_turns`; the decisions made from the words are here.

Why this shape, measured on the offline default (2026-11-25, the abstention split's 20 and the main
job's 15 answerable questions): inside the loop's long prompt, an enum of properties with a "not in
the database" choice was never chosen; a true/false "is it stored?" was false for every question; a
verdict over every collection of the use case refused 2 of 20; over the one collection the question
is about, 8 of 20, and no answerable question.
"""

from __future__ import annotations

import json
import time
from functools import partial
from typing import Any

from agent._words import names_property
from agent.answer import Commit, FinalAnswer
from agent.follows import Follows
from agent.loop import AgentConfig, AgentRun, Executor
from agent.models import ModelError
from agent.strategies.answer_kind import unheld_kind
from agent.strategies.asked_for import (
    COUNTS,
    UNSUPPORTED,
    UNSUPPORTED_WRITTEN,
    all_named,
    asked_words,
    asking_alone,
    beyond_names,
    counts_named_values,
    invented_property,
    linked_collection,
    named_by_properties,
    named_in,
    opposite_held,
    properties_name,
    said_nothing,
    spelled_by_properties,
    statistic_written,
    written_in,
)
from agent.strategies.check_turns import (
    LISTED,
    NOT_LISTED,
    VERDICT_SCHEMA,
    VERDICT_SCHEMA_NAME,
    about_decided,
    about_request,
    ask_verdict,
    turn_request,
    verdict_prompt,
)
from agent.strategies.decompose import offered_collections
from agent.strategies.events import summed_property
from agent.strategies.free_text import matches_like, unheld_names
from agent.strategies.meaning import meant_property
from agent.strategies.naming import mentions
from agent.strategies.openings import openings_of
from agent.strategies.registry import StrategyInfo
from agent.strategies.values import StoredCategories
from agent.tooldef import ToolSet
from executors.schema import CollectionSchema
from llm import ChatRequest, Usage


def refusal(decision: dict[str, Any], question: str = "") -> str:
    """Why the database cannot answer, by the decision ("" when it can). A statistic the tool cannot
    compute counts when chosen, or named in the model's words or the question's own: asked for "the
    standard deviation of the nightly prices", the model chose "none" and wrote "nightly prices"."""
    if decision.get("opposite"):
        word, other = decision["opposite"]
        return f"it holds {other} figures, not {word} ones"
    if decision.get("invented_property"):
        return "no property of the database holds the " + " ".join(decision["invented_property"]).lower()
    if decision.get("unheld_kind"):
        return f"no property of the database holds {decision['unheld_kind']}"
    if decision.get("unheld_names"):
        return "nothing in the database is named " + " or ".join(f'"{n}"' for n in decision["unheld_names"])
    words = f"{decision.get('asks_for', '')} {question}".lower()
    named = [s for s in UNSUPPORTED if s == decision.get("statistic") or UNSUPPORTED_WRITTEN[s].search(words)]
    if named:
        return f"the query tool cannot compute a {named[0]}"
    if decision.get("verdict") == NOT_LISTED:
        asks_for = str(decision.get("asks_for", ""))
        # the model's own mapping onto a property ("yield_bushels" for rain) would name what the data holds
        copied = not asks_for or said_nothing(asks_for)
        said = f" ({asks_for})" if not copied and (not question or written_in(asks_for, question)) else ""
        return f"no property of the database holds what the question asks for{said}"
    return ""


def _shown(executor: Executor, tools: ToolSet) -> list[CollectionSchema]:
    """The offered collections, as the live schema has them (none: nothing to check against)."""
    schema = getattr(executor, "schema", None)
    return [c for c in schema.collections if c.name in set(offered_collections(tools))] if schema else []


def referred(shown: list[CollectionSchema], question: str, follows: Follows | None) -> CollectionSchema | None:
    """The collection a follow-up's "those" are in: the one the earlier answer rested on, where the follow-up
    names no other offered collection ("And who painted those?" after artworks names Artists). Neither the
    model's choice nor a property word of another collection moves it ("the average sale price of those"
    after artworks is not the exhibitions' ticket price, 2026-11-30); else None."""
    held = next((c for c in shown if follows is not None and c.name == follows.collection), None)
    return None if held is None or any(c is not held and names_property(question, c.name) for c in shown) else held


class Check:
    """One enforced decision on what the question needs; a refusal when the database lacks it."""

    name = "check"

    def __init__(self, inner: Any, stored: StoredCategories | None = None) -> None:
        self.inner = inner
        self.stored = stored if stored is not None else StoredCategories()

    def openings(self, model: Any, executor: Executor, tools: ToolSet, config: AgentConfig) -> list[ChatRequest]:
        """The first turn's listing, then for each collection it may name the verdict's prompt (its
        properties, before the question: ~65 tokens a verdict need not evaluate) and what the inner
        strategy sends."""
        shown = _shown(executor, tools)
        if not shown:
            return openings_of(self.inner, model, executor, tools, config)
        asked = config.user_turn("")
        sent = [about_request(shown, asked)]
        for collection in shown:
            sent.append(turn_request(verdict_prompt(collection, asked), VERDICT_SCHEMA_NAME, VERDICT_SCHEMA))
            about = config.read(collection=collection.name)
            sent += openings_of(self.inner, model, executor, tools, about)
        return sent

    def _settle(
        self,
        model: Any,
        executor: Executor,
        question: str,
        asked: str,
        shown: list[Any],
        decision: dict[str, Any],
        typed: str,
    ) -> Usage:
        """The verdict on the decided collection, set in `decision`: from the words where they settle it
        (a property or a stored value named, objects alone), else from one more request; its usage. `typed`:
        the user's own words, a follow-up's with the question it follows."""
        chosen = next((c for c in shown if c.name == decision.get("collection")), shown[0])
        collection = chosen if "chose" in decision else linked_collection(question, shown, chosen)
        if collection is not chosen:
            decision["collection"], decision["linked_by_words"] = collection.name, chosen.name
        asks_for = str(decision.get("asks_for", ""))
        if opposite := opposite_held(question, collection):
            decision["verdict"], decision["opposite"] = NOT_LISTED, list(opposite)
            return Usage()
        if invented := invented_property(asks_for, collection):
            decision["verdict"], decision["invented_property"] = NOT_LISTED, invented
            return Usage()
        # the model said nothing of what is asked ("none"): the question's own words are what it asks for
        words = question if said_nothing(asks_for) else asks_for
        foregone = (
            properties_name(words, collection)
            or named_by_properties(words, question, collection)
            or named_by_properties(words, question, collection, self.stored.categories(executor, collection))
        )
        if foregone and written_in(words, typed):
            decision["verdict"], decision["named_by_properties"] = LISTED, True
        elif asking_alone(asks_for):
            decision["verdict"], decision["asks_for_objects"] = LISTED, True
        elif (
            decision.get("statistic") in COUNTS
            and asked_words(asks_for)
            and not beyond_names(asks_for, question, collection)
        ):
            # "How many airports does Texas have?": objects and a name, no property to hold
            decision["verdict"], decision["objects_and_names"] = LISTED, True
        elif decision.get("statistic") in COUNTS and counts_named_values(
            asks_for, question, collection, self.stored.categories(executor, collection)
        ):
            decision["verdict"], decision["objects_and_values"] = LISTED, True
        elif not spelled_by_properties(asks_for, question, collection) and (
            meant := meant_property(asks_for, question, collection)
        ):
            # "the worst gas mileage": miles_per_gallon by meaning, no word of it spelled (`meaning`)
            decision["verdict"], decision["named_by_meaning"] = LISTED, meant
        else:
            verdict, more = ask_verdict(model, verdict_prompt(collection, asked))
            decision["verdict"] = verdict
            return more
        return Usage()

    def _unheld(self, executor: Executor, shown: list[CollectionSchema], question: str) -> list[str]:
        """The names of the question no offered collection holds, where none can search (`unheld_names`):
        the question is about something the database does not have, and no request is needed to say so."""
        if any(c.searchable for c in shown):
            return []
        unheld: list[str] | None = None
        for collection in shown:
            categories = self.stored.categories(executor, collection)
            taken = [(s, e) for *_, s, e in mentions(question, categories)]
            matches = partial(matches_like, executor, collection.name)
            names = unheld_names(question, collection, categories, matches, taken)
            unheld = names if unheld is None else [n for n in unheld if n in names]
        return unheld or []

    def run(
        self,
        model: Any,
        executor: Executor,
        tools: ToolSet,
        config: AgentConfig,
        question: str,
        on_call: Any = None,
    ) -> AgentRun:
        shown = _shown(executor, tools)
        if not shown:  # nothing to check against: the inner strategy as is
            return self.inner.run(model, executor, tools, config, question, on_call)
        # a follow-up's earlier question is left out (a third of the tokens): which objects it is about is
        # what the collection and the verdict need, and the question that asks the earlier one again keeps it
        asked = config.user_turn(question, brief=not (config.follows and config.follows.again))
        # tried (2026-11-30, docs/results): a follow-up's check on its earlier collection alone checked nothing (its
        # asks_for "none" or the hint's words). An earlier question is the user's words, not the model's mapping
        typed = f"{question} {config.follows.question}" if config.follows else question

        def ask(request: ChatRequest) -> tuple[dict[str, Any], Usage]:
            reply = model.complete(request)
            return about_decided(reply.content or ""), reply.usage

        held = referred(shown, question, config.follows)
        started = time.perf_counter()
        try:  # what the question is about, then a verdict on that one collection's properties alone
            if unheld := self._unheld(executor, shown, question):
                decision, usage = {"unheld_names": unheld}, Usage()
            elif kind := unheld_kind(question, shown):  # "What color ...": nothing holds a color
                decision, usage = {"unheld_kind": kind}, Usage()
            elif held and all_named(question, held, self.stored.categories(executor, held)):
                # a follow-up whose words name only what its collection holds: the check's decision, no request
                decision, usage = {"collection": held.name, "verdict": LISTED, "earlier_holds": True}, Usage()
            else:
                decision, usage = ask(about_request(shown, asked))
                # the reply stopped before its statistic: the words give it. A reply written whole (a provider that
                # ignores `stop`, the oracle's) keeps its own
                decision.setdefault("statistic", statistic_written(question))
                if held:
                    decision["chose"], decision["collection"] = decision.get("collection"), held.name
            if not refusal(decision, question) and "earlier_holds" not in decision:
                said = str(decision.get("asks_for", ""))
                unnamed = not named_in(said, shown) and not any(meant_property(said, question, c) for c in shown)
                # the model's own words ("powerhorse") where the question spells a property ("horsepower")
                misread = not written_in(said, typed) and any(
                    spelled_by_properties(question, question, c) for c in shown
                )
                if unnamed and not misread:
                    decision["verdict"], decision["named_in_database"] = NOT_LISTED, False
                else:
                    usage = usage + self._settle(model, executor, question, asked, shown, decision, typed)
        except (ModelError, ValueError) as error:  # undecided: the inner strategy as is
            run = self.inner.run(model, executor, tools, config, question, on_call)
            run.strategy_notes["check"] = {"fell_back": f"{type(error).__name__}: {error}"}
            return run
        reason = refusal(decision, question)
        target_name = next((c.name for c in shown if c.name == decision.get("collection")), "")
        checked_s = time.perf_counter() - started
        if not reason:
            statistic = str(decision.get("statistic") or "")
            target = next((c for c in shown if c.name == target_name), None)
            if statistic == "count" and target is not None and summed_property(question, target):
                statistic = "sum"  # "how many soldiers died of disease": what a number property holds (`events`)
            asked = config.read(statistic=statistic, collection=target_name)
            run = self.inner.run(model, executor, tools, asked, question, on_call)
            run.usage = run.usage + usage
            run.latency_s += checked_s
            run.strategy_notes["check"] = {"decision": decision, "latency_s": round(checked_s, 3)}
            return run
        answer = FinalAnswer(cannot_answer=reason)
        return AgentRun(
            question=question,
            model=model.name,
            tool_design=tools.design.label(),
            outcome="answered",
            final_answer=f"I cannot answer that from this database: {reason}.",
            usage=usage,
            latency_s=checked_s,
            commit=Commit(answer=answer, content=json.dumps(decision), usage=usage),
            strategy_notes={"check": {"decision": decision, "latency_s": round(checked_s, 3)}},
        )


STRATEGY = StrategyInfo(
    "check",
    "first decide what the question needs (properties, statistic); refuse when the database lacks it",
    lambda inner, options: Check(inner, options["stored"]),
    rank=20,
)
