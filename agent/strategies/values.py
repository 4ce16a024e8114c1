"""`values`: value linking. The stored text values the question's words name are shown after it.

A small model guesses a filter's value from the question's word: "sunny" where the data stores `sun`,
"Nature" for hikes where it stores `Hiking`; the filter then matches nothing and the answer is an empty mean
or a count of 0. CHESS and DIN-SQL link the question to the database's values before writing SQL; here,
before the loop, the text properties of the collection `check` read (every offered collection's without it)
are read once with TOP_OCCURRENCES, through the executor like any call, and every category value (of a
property whose values repeat, or one that occurs more than once: not a name or a description) whose words
all appear in the question, up to a suffix ("hikes" ~ "Hiking", "sunny" ~ "sun"), is offered after the
question as a candidate filter: `cuisine = "Thai"`. The model chooses; nothing is added to its call. Nothing
here knows a use case: the values are the database's own.

The same values keep a filter honest after the call is written. A small model puts the question's
word on a category property: `movement LIKE "*Paris*"` for "artists who lived in Paris", `category
LIKE "*guide*"` for "activities led by a guide"; the filter matches nothing, and the answer is an
empty count or "no objects". A text filter whose value no stored value of a category property can
match (none holds its letters) is moved, before the call runs, to the first of the collection's other
text properties (not categories) where it matches objects: `biography LIKE "*Paris*"`. The call is
recorded as it ran, with why (`ExecutedCall.amended`), and the model reads why above the result. With
no such property, the call runs as written. Turned back with the same fix spelt out as JSON instead,
the model resent it unchanged, or moved the filter and dropped the call's group-by or aggregation
(3 of 3 questions, 2026-11-26).
"""

from __future__ import annotations

from functools import partial
from typing import Any

from agent._words import content_stems, split_name
from agent.loop import AgentConfig, AgentRun, Executor
from agent.strategies.alternatives import alternatives, either, exclude, excluded, or_clause
from agent.strategies.asked import one_number_asked
from agent.strategies.codes import (
    Chooser,
    chosen_code,
    code_for,
    code_mentions,
    held_elsewhere,
    letters,
    off_code_names,
)
from agent.strategies.compared import held as held_conditions
from agent.strategies.conditions import filtered_properties, put_back, unasked, with_condition, with_text_condition
from agent.strategies.decompose import offered_collections
from agent.strategies.free_text import matches_like, named_in_text
from agent.strategies.naming import can_match, linked, mentions, named_values, nearest_value
from agent.strategies.registry import StrategyInfo
from agent.strategies.restating import restates, stated_values
from agent.tooldef import ToolSet
from executors.errors import ExecutorError
from executors.schema import CollectionSchema
from executors.vocabulary import (
    AGGREGATION_SLOT,
    CONDITIONS_FIELD,
    FILTER_SLOT,
    GROUPBY_FIELD,
    REFERENCE_FILTER_FIELD,
    RELATED_FIELDS,
    SEARCH_FIELD,
    PropertyKind,
    ToolOperations,
)

#: Distinct values read per text property (the tool's own TOP_OCCURRENCES bound).
VALUES_PER_PROPERTY = 100
#: Candidates shown at most: more would read as an instruction to filter on all of them.
MAX_CANDIDATES = 4
#: A stored value longer than this is prose, not a category.
MAX_VALUE_CHARS = 40
#: Values the reason for a moved filter lists at most.
VALUES_SHOWN = 12
TEXT_FILTER = FILTER_SLOT[PropertyKind.TEXT]
TEXT_AGGREGATION = AGGREGATION_SLOT[PropertyKind.TEXT]


def names_the_objects(collection: str, value: str) -> bool:
    """Whether a stored value is the collection's own noun ("Death", a `type` of `RiotDeaths`): in "How many
    riot deaths have race Black?" the word names the objects counted, not a condition on them (a `type =
    "Death"` put back kept 8 of 28)."""
    stems = content_stems(split_name(value))
    return bool(stems) and set(stems) <= set(content_stems(split_name(collection)))


def text_properties(collection: CollectionSchema) -> list[str]:
    return [p.name for p in collection.properties_of_kind(PropertyKind.TEXT)]


class StoredCategories:
    """The category values of each collection's text properties, read once (`categories`)."""

    def __init__(self) -> None:
        #: collection -> text property -> its repeated values.
        self.read: dict[str, dict[str, list[str]]] = {}
        #: collection -> its text properties whose every value was read (categories, not prose).
        self.complete: dict[str, set[str]] = {}

    def categories(self, executor: Executor, found: CollectionSchema) -> dict[str, list[str]]:
        """Each text property's category values, most frequent first: all of a property with at most half
        as many distinct values as objects, else those that occur more than once (not names or prose)."""
        collection = found.name
        if collection not in self.read:
            read: dict[str, list[str]] = {}
            for prop in text_properties(found):
                call = {
                    "collection_name": collection,
                    "text_property_aggregation": {
                        "property_name": prop,
                        "metrics": "TOP_OCCURRENCES",
                        "top_occurrences_limit": VALUES_PER_PROPERTY,
                    },
                }
                try:
                    result = executor.execute(call)
                except ExecutorError:  # a property the tool cannot aggregate: no values to offer from it
                    continue
                top = (result.aggregations.get(prop) or {}).get("TOP_OCCURRENCES") or []
                # every value of a property whose values repeat (a category); else only the repeated ones
                categorical = len(top) < VALUES_PER_PROPERTY and 2 * len(top) <= sum(t.count for t in top)
                kept = [t.value for t in top if (categorical or t.count > 1) and 0 < len(t.value) <= MAX_VALUE_CHARS]
                if kept:
                    read[prop] = kept
                if categorical and len(kept) == len(top):
                    self.complete.setdefault(collection, set()).add(prop)
            self.read[collection] = read
        return self.read[collection]

    def complete_categories(self, executor: Executor, found: CollectionSchema) -> dict[str, list[str]]:
        """The text properties whose every value was read and repeats (categories, not prose), with their values."""
        values = self.categories(executor, found)
        return {p: v for p, v in values.items() if p in self.complete.get(found.name, ())}


class Values:
    """Offer the stored values the question names as candidate filters, then run the inner strategy."""

    name = "values"

    def __init__(self, inner: Any, stored: StoredCategories | None = None) -> None:
        self.inner = inner
        self.stored = stored if stored is not None else StoredCategories()
        self.categories = self.stored.categories
        self.complete_categories = self.stored.complete_categories

    def amend(
        self, executor: Executor, arguments: dict[str, Any], choose: Chooser | None = None
    ) -> tuple[dict[str, Any], str]:
        """The call with each text condition (its text filter, and each text condition of its `conditions`)
        no stored value of its category property can match mapped to the stored value it names, or moved to
        the first other text property where it matches objects, and why ("" and the call as it is otherwise).
        `choose` picks among several stored codes a name fits (none: no code is taken)."""
        schema = getattr(executor, "schema", None)
        found = schema.get(str(arguments.get("collection_name") or "")) if schema is not None else None
        if found is None:
            return arguments, ""
        why: list[str] = []
        where = arguments.get(TEXT_FILTER)
        if isinstance(where, dict) and (fixed := self._condition(executor, found, where, choose)) is not None:
            arguments = {**arguments, TEXT_FILTER: fixed[0]}
            why.append(fixed[1])
        listed = arguments.get(CONDITIONS_FIELD)
        if isinstance(listed, list):
            conditions = []
            for condition in listed:
                fixed = self._condition(executor, found, condition, choose) if isinstance(condition, dict) else None
                conditions.append(fixed[0] if fixed is not None else condition)
                why += [fixed[1]] if fixed is not None else []
            arguments = {**arguments, CONDITIONS_FIELD: conditions}
        return arguments, " ".join(why)

    def _condition(
        self, executor: Executor, found: CollectionSchema, where: dict[str, Any], choose: Chooser | None
    ) -> tuple[dict[str, Any], str] | None:
        """One text condition as it should run, and why; None where it runs as written."""
        prop, value = str(where.get("property_name")), where.get("value")
        stored = self.categories(executor, found).get(prop)
        complete = self.stored.complete.get(found.name, set())
        if not isinstance(value, str) or prop not in complete or not stored:
            return None
        exact = any(letters(v) == letters(value) for v in stored)
        meant = nearest_value(value, stored) if not exact else None
        if meant is None and not exact:  # a name the model wrote for a stored code: here only, never off a question
            codes = [v for v in stored if code_for(value, v)]  # ("Which" has the letters of `WI`)
            meant = codes[0] if len(codes) == 1 else choose(prop, value, codes) if codes and choose else None
        if meant is not None:  # a value the data does not hold, as written, is sent as the stored one it names
            shown = meant if where.get("operator") != "LIKE" else value.replace(value.strip("*?"), meant)
            why = f"{prop} holds no {value!r}; the filter ran with the stored value {shown!r}."
            return {**where, "value": shown}, why
        if can_match(value, stored):
            return None
        categories, same = self.categories(executor, found), letters(value)
        owner = [p for p in complete if p != prop and any(letters(v) == same for v in categories.get(p, []))]
        if len(owner) == 1 and where.get("operator") == "=":  # `variety = "Waseca"` where Waseca is a site
            held = next(v for v in categories[owner[0]] if letters(v) == same)
            moved = {**where, "property_name": owner[0], "value": held}
            return moved, f"{prop} holds no {value!r}; {owner[0]} does: the filter ran on {owner[0]}."
        pattern = value if "*" in value or "?" in value else f"*{value}*"
        texts = [p for p in text_properties(found) if p not in complete]
        holding = next((p for p in texts if matches_like(executor, found.name, p, pattern)), "")
        if not holding:
            return None
        shown = ", ".join(repr(v) for v in stored[:VALUES_SHOWN]) + (", ..." if len(stored) > VALUES_SHOWN else "")
        return {"property_name": holding, "operator": "LIKE", "value": pattern}, (
            f"{prop} {where.get('operator')} {value!r} matches no object ({prop} holds only {shown}); "
            f"the filter ran on {holding} LIKE {pattern!r}, which holds it."
        )

    def restore(
        self,
        executor: Executor,
        arguments: dict[str, Any],
        question: str,
        compound: bool = False,
        choose: Chooser | None = None,
    ) -> tuple[dict[str, Any], str]:
        """The call with the stored category values the question names put back, and why: the one value as
        its text filter when the call has none (nor a search, nor that property's groups or top values); with
        the `compound` tool, each property's one named value the call does not filter on, as a condition. A
        name that stands for a stored code ("Texas" for `TX`) is one (`codes.code_mentions`)."""
        collection = str(arguments.get("collection_name") or "")
        schema = getattr(executor, "schema", None)
        found = schema.get(collection) if schema is not None else None
        # a condition may be on the linked objects (the compound tool: only through a reference filter)
        busy = (SEARCH_FIELD, REFERENCE_FILTER_FIELD) if compound else (TEXT_FILTER, SEARCH_FIELD, *RELATED_FIELDS)
        if found is None:
            return arguments, ""
        why: list[str] = []
        search = arguments.get(SEARCH_FIELD)
        if (
            compound
            and isinstance(search, str)
            and restates(search, arguments, found, self.categories(executor, found))
        ):
            arguments = {k: v for k, v in arguments.items() if k != SEARCH_FIELD}
            # what it states the call may not hold ("temp_max between 12 and 18" beside no condition on it)
            numbers = [p.name for p in found.properties_of_kind(PropertyKind.NUMBER)]
            arguments, stated = put_back(search, arguments, numbers, [p.name for p in found.dates()])
            why.append(f"the search {search!r} only restated the question's conditions; they are filters.")
            why += [note.replace("the question's", "the search's") for note in stated]
            for condition in stated_values(search, arguments, self.categories(executor, found)):
                if (added := with_text_condition(arguments, condition)) is not None:
                    arguments = added
                    why.append(f'the search names {condition["property_name"]} = "{condition["value"]}": a filter.')
        if not found.searchable:  # a search there is left out (`typed`): it stands for no condition
            busy = tuple(slot for slot in busy if slot != SEARCH_FIELD)
        if any(arguments.get(slot) for slot in busy):  # read the stored values only where they are used
            return arguments, " ".join(why)
        values = self.categories(executor, found)
        complete = self.stored.complete.get(collection, set())
        categories = {p: values[p] for p in complete if p in values}
        named = [(p, v) for p, v in named_values(question, categories) if not names_the_objects(collection, v)]
        held = held_elsewhere(executor, found)
        coded_at = code_mentions(question, categories, choose, held)
        named += [n for n in dict.fromkeys((p, c) for p, c, *_ in coded_at) if n not in named]
        if compound:
            arguments, named, notes = self._compound(executor, found, arguments, question, categories, coded_at, named)
            why += notes
        top = arguments.get(TEXT_AGGREGATION)
        # a property's top values name it; a COUNT or TYPE of it only tallies: its value is still to put back
        named_top = isinstance(top, dict) and top.get("metrics") not in ("COUNT", "TYPE")
        # a group-by the question does not ask for ("the average yield of Waseca", grouped by site) is left
        # out by `typed`: the value it names is put back all the same
        grouping = None if one_number_asked(question) else arguments.get(GROUPBY_FIELD)
        summarized = {grouping, top.get("property_name") if named_top else None}
        by_property: dict[str, list[str]] = {}
        for prop, value in named:
            by_property.setdefault(prop, []).append(value)
        missing = [
            (prop, only)
            for prop, (only, *others) in by_property.items()
            if not others and prop not in summarized and prop not in filtered_properties(arguments)
        ]
        if not missing or (not compound and len(named) != 1):
            return arguments, " ".join(why)
        for prop, value in missing:
            condition = {"property_name": prop, "operator": "=", "value": value}
            if (added := with_text_condition(arguments, condition)) is None:
                continue
            arguments = added
            why.append(f'the question names {prop} = "{value}", which the call did not filter on: put back.')
        return arguments, " ".join(why)

    def _compound(
        self,
        executor: Executor,
        found: CollectionSchema,
        arguments: dict[str, Any],
        question: str,
        categories: dict[str, list[str]],
        coded_at: list[tuple[str, str, int, int]],
        named: list[tuple[str, str]],
    ) -> tuple[dict[str, Any], list[tuple[str, str]], list[str]]:
        """What the compound tool's conditions can say beyond one value per property: a filter on a code's name
        left out, the values the question excludes or joins by "or", a name inside a text property's values;
        the call, the named values still to put back, and why."""
        arguments, why = off_code_names(question, arguments, coded_at)
        # "other than X" and "X or Y" first: neither is a value to filter on as it is
        at = mentions(question, categories)
        at = sorted(
            [*at, *(c for c in coded_at if not any(c[2] < e and s < c[3] for *_, s, e in at))], key=lambda m: m[2]
        )
        out, alternative = excluded(question, at), alternatives(question, at)
        said = {(p, v) for p, v, *_ in out} | {(alternative[0], v) for v in (alternative or ("", []))[1]}
        named = [n for n in named if n not in said]
        arguments, notes = exclude(arguments, out, question)
        why += notes
        if alternative is not None:
            arguments, notes = either(arguments, *alternative)
        else:
            arguments, notes = or_clause(question, arguments, at)
        why += notes
        # "any Honda": a word of the cars' names, no category's value
        taken = [(s, e) for *_, s, e in at]
        complete = self.stored.complete.get(found.name, set())
        texts = [p for p in text_properties(found) if p not in complete]

        matches = partial(matches_like, executor, found.name)
        filtered, held = filtered_properties(arguments), held_conditions(arguments)
        for condition in named_in_text(question, found, categories, texts, filtered, matches, taken, held):
            if (added := with_condition(arguments, condition)) is not None:
                arguments = added
                prop, pattern = condition["property_name"], condition["value"]
                why.append(f"the question names {pattern.strip('*')!r}, a word of {prop}: {prop} LIKE {pattern}.")
        return arguments, named, why

    def run(
        self,
        model: Any,
        executor: Executor,
        tools: ToolSet,
        config: AgentConfig,
        question: str,
        on_call: Any = None,
    ) -> AgentRun:
        schema = getattr(executor, "schema", None)
        if schema is None:
            return self.inner.run(model, executor, tools, config, question, on_call)
        names = [config.reading.collection] if config.reading.collection else offered_collections(tools)
        candidates: list[str] = []
        for name in names:
            found = schema.get(name)
            if found is None:
                continue
            where = "" if len(names) == 1 else f" ({name})"
            candidates += [
                f'{prop} = "{value}"{where}'
                for prop, value in linked(question, self.categories(executor, found))
                if not names_the_objects(name, value)
            ]
        candidates = list(dict.fromkeys(candidates))[:MAX_CANDIDATES]
        if candidates:
            context = (
                "Stored values the question's words match (use one in a filter only if the question asks for it): "
            )
            config = config.model_copy(update={"question_context": context + "; ".join(candidates) + "."})
        moved: list[str] = []
        compound = tools.design.operations is ToolOperations.COMPOUND

        chosen: dict[tuple[str, str, tuple[str, ...]], str | None] = {}

        def choose(prop: str, value: str, codes: list[str]) -> str | None:  # asked once a run, whatever the call
            key = (prop, value, tuple(codes))
            if key not in chosen:
                chosen[key] = chosen_code(model, question, prop, value, codes)
            return chosen[key]

        calls: list[str] = []

        def amend(arguments: dict[str, Any]) -> tuple[dict[str, Any], str]:
            arguments, restored = self.restore(executor, arguments, question, compound, choose)
            arguments, why = self.amend(executor, arguments, choose)
            moved.extend([why] if why else [])
            dropped = ""
            if not calls:  # a later call may hold a value an earlier result gave (a chain's second step)
                found = schema.get(str(arguments.get("collection_name") or ""))
                complete = self.complete_categories(executor, found) if found is not None else {}
                # a follow-up's earlier turn names what it carries ("And how many of those are female?")
                said = f"{question} {config.follows.context() if config.follows else ''}"
                numbers = tuple(p.name for p in found.properties_of_kind(PropertyKind.NUMBER)) if found else ()
                arguments, dropped = unasked(said, arguments, complete, numbers)
            calls.append(str(arguments.get("collection_name") or ""))
            return arguments, " ".join(w for w in (restored, why, dropped) if w)

        run: AgentRun = self.inner.run(model, executor, tools, config.amended_by(amend), question, on_call)
        run.strategy_notes["values"] = {"candidates": candidates, "moved": len(moved)}
        return run


STRATEGY = StrategyInfo(
    "values",
    "the stored text values the question's words name, offered after it as candidate filters",
    lambda inner, options: Values(inner, options["stored"]),
    rank=30,
)
