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

Why this shape, measured on the offline default (2026-11-25, the abstention split's 20 and the main
job's 15 answerable questions): inside the loop's long prompt, an enum of properties with a "not in
the database" choice was never chosen; a true/false "is it stored?" was false for every question; a
verdict over every collection of the use case refused 2 of 20; over the one collection the question
is about, 8 of 20, and no answerable question.
"""

from __future__ import annotations

import json
import re
import time
from functools import partial
from typing import Any

from agent._words import names_property
from agent.answer import Commit, FinalAnswer
from agent.follows import Follows
from agent.loop import AgentConfig, AgentRun, Executor
from agent.models import ModelError, OracleModel, oracle_replies
from agent.strategies.answer_kind import unheld_kind
from agent.strategies.asked_for import (
    ASKS_FOR_HINT,
    COUNTS,
    STATISTICS,
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
from agent.strategies.decompose import offered_collections
from agent.strategies.free_text import matches_like, unheld_names
from agent.strategies.meaning import meant_property
from agent.strategies.naming import mentions
from agent.strategies.openings import openings_of
from agent.strategies.registry import StrategyInfo
from agent.strategies.values import StoredCategories
from agent.tooldef import ToolSet
from executors.schema import CollectionSchema
from llm import ChatRequest, ModelRequest, ResponseFormat, Usage

#: The first decision's schema name, and the verdict's.
CHECK_SCHEMA_NAME = "QuestionCheck"
VERDICT_SCHEMA_NAME = "CheckVerdict"
#: The verdict's two choices; the refusal is the first (a small model does not just take the first).
NOT_LISTED = "no: it needs a property that is not listed"
LISTED = "yes: the listed properties hold it"
VERDICTS = (NOT_LISTED, LISTED)
CHECK_SYSTEM = "You check whether a database can answer a question before it is queried."
#: The prompt and the schema still name the statistic, but the reply is stopped where it begins (`ABOUT_STOP`):
#: the model's words for what is asked come first and are as they were. Without the field in the schema, the
#: model could no longer end them with `",` (one token) and wrote on: "count" became "count of enrollments by
#: students older than 30", and 12 of the abstention sample's 20 decisions read other words (2026-12-02).
ABOUT_PROMPT = (
    "The database has these collections and properties:\n{listing}\n\nQuestion: {question}\n\n"
    f"collection: the one the question is about. asks_for: {ASKS_FOR_HINT}. statistic: the "
    'one it asks for, "none" if it asks to list or group objects.'
)
#: Where the first turn's reply is stopped: the statistic's key, after every field the check reads from the model.
ABOUT_STOP = '"stat'
#: A prompt of its own, the one collection's properties with what each holds. As a continuation of the
#: first turn (its prefix cached, ~1 s less a verdict), it refused fewer unanswerable questions: 15 of
#: 20 told the property names, 12 told nothing new, against 18 here (2026-11-26, docs/results).
VERDICT_PROMPT = (
    "Collection {listing}\n\nQuestion: {question}\n\nCan the question be answered from these properties alone?"
)
#: Completion tokens the verdict may take. Its first word ("no", "yes") decides it, about 7 tokens in
#: (`{"verdict": "yes`); the grammar then forces the rest of the chosen text, ~12 tokens that decide
#: nothing, at ~50 ms each on 2 cores. A reply cut before its first word is asked again, uncut. Cut at 7 (the
#: word's place as the tokenizer writes it alone), 5 of the main job's 8 verdicts were asked again (2026-12-02).
VERDICT_TOKENS = 10
VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"verdict": {"enum": list(VERDICTS)}},
    "required": ["verdict"],
    "additionalProperties": False,
}


def about_schema(collections: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "collection": {"enum": collections},
            "asks_for": {"type": "string", "maxLength": 80},
            "statistic": {"enum": list(STATISTICS)},
        },
        "required": ["collection", "asks_for", "statistic"],
        "additionalProperties": False,
    }


def listing(collections: list[CollectionSchema]) -> str:
    """Each collection with its properties and what each holds (its description, else its type)."""
    return "\n".join(
        f"{c.name}: " + "; ".join(f"{p.name} ({p.description or p.data_type})" for p in c.properties)
        for c in collections
    )


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


def _about(shown: list[CollectionSchema], asked: str) -> ChatRequest:
    """The first turn: its prompt and schema, the reply stopped where its statistic begins (`ABOUT_STOP`)."""
    prompt = ABOUT_PROMPT.format(listing=listing(shown), question=asked)
    about = _request(prompt, CHECK_SCHEMA_NAME, about_schema([c.name for c in shown]))
    return about.model_copy(update={"stop": [ABOUT_STOP]})


def _request(prompt: str, name: str, wanted: dict[str, Any]) -> ChatRequest:
    return ChatRequest(
        messages=[ModelRequest.prompt(CHECK_SYSTEM, prompt)],
        response_format=ResponseFormat(name=name, json_schema=wanted),
    )


def _about_decided(content: str) -> dict[str, Any]:
    """The first turn's fields, from its whole reply or one stopped after `asks_for` (`{"collection": "X",
    "asks_for": "...", `); ValueError where it was cut inside a field."""
    try:
        return _decided(content)
    except json.JSONDecodeError:
        return _decided(content.rstrip().rstrip(",") + "}")


def _decided(content: str) -> dict[str, Any]:
    """A check reply's JSON object (ValueError: not JSON, or not an object)."""
    decided = json.loads(content or "{}")
    if not isinstance(decided, dict):
        raise ValueError("the check reply is not a JSON object")
    return decided


def chosen(content: str, key: str, choices: tuple[str, ...]) -> str | None:
    """The value of `key` in a JSON reply, or, in one cut short, the one choice its first characters
    begin; None when the reply has not reached a choice."""
    try:
        return _decided(content).get(key)
    except json.JSONDecodeError:
        cut = re.search(rf'"{re.escape(key)}"\s*:\s*"([^"]+)', content)
        begun = [choice for choice in choices if cut and choice.startswith(cut.group(1))]
        return begun[0] if len(begun) == 1 else None


def _verdict_prompt(collection: CollectionSchema, asked: str) -> str:
    return VERDICT_PROMPT.format(listing=listing([collection]), question=asked)


def _verdict(model: Any, prompt: str) -> tuple[Any, Usage]:
    """The verdict, read from its first word (`VERDICT_TOKENS`)."""
    request = _request(prompt, VERDICT_SCHEMA_NAME, VERDICT_SCHEMA)
    reply = model.complete(request.model_copy(update={"max_tokens": VERDICT_TOKENS}))
    verdict, usage = chosen(reply.content or "", "verdict", VERDICTS), reply.usage
    if verdict is None:  # cut before its first word (whitespace, another model): asked again, uncut
        reply = model.complete(request)
        verdict, usage = chosen(reply.content or "", "verdict", VERDICTS), usage + reply.usage
    if verdict is None:
        raise ValueError(f"the verdict reply names no verdict: {(reply.content or '')[:80]!r}")
    return verdict, usage


@oracle_replies(CHECK_SCHEMA_NAME, VERDICT_SCHEMA_NAME)
def oracle_check(oracle: OracleModel, request: ChatRequest) -> dict[str, Any]:
    """The oracle's check: the gold collection, then answerable when there is a gold call (the verdict's
    second choice), else not (its first)."""
    fields = request.response_format.json_schema["properties"] if request.response_format else {}
    if "verdict" in fields:
        return {"verdict": fields["verdict"]["enum"][1 if oracle.ground_truth else 0]}
    offered = fields["collection"]["enum"]
    wanted = oracle.ground_truth.get("collection_name")
    return {"collection": wanted if wanted in offered else offered[0], "asks_for": "", "statistic": "none"}


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
        sent = [_about(shown, asked)]
        for collection in shown:
            sent.append(_request(_verdict_prompt(collection, asked), VERDICT_SCHEMA_NAME, VERDICT_SCHEMA))
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
            verdict, more = _verdict(model, _verdict_prompt(collection, asked))
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
            return _about_decided(reply.content or ""), reply.usage

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
                decision, usage = ask(_about(shown, asked))
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
            asked = config.read(statistic=str(decision.get("statistic") or ""), collection=target_name)
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
