"""`values`: value linking. The stored text values the question's words name are shown after it.

A small model guesses a filter's value from the question's word: "sunny" where the data stores `sun`,
"Nature" for hikes where it stores `Hiking`; the filter then matches nothing and the answer is an
empty mean or a count of 0. CHESS and DIN-SQL link the question to the database's values before
writing SQL; here, before the loop, the text properties of the collection `check` read (every offered
collection's without it) are read once with TOP_OCCURRENCES, through the executor like any call, and
every category value (of a property whose values repeat, or one that occurs more than once: not a
name or a description) whose words all
appear in the question, up to a suffix ("hikes" ~ "Hiking", "sunny" ~ "sun"), is offered after the
question as a candidate filter: `cuisine = "Thai"`. The model chooses; nothing is added to its call.
Nothing here knows a use case: the values are the database's own.
"""

from __future__ import annotations

from typing import Any

from agent._words import content_stems
from agent.loop import AgentConfig, AgentRun, Executor
from agent.strategies.decompose import offered_collections
from agent.tooldef import ToolSet
from executors.errors import ExecutorError
from executors.vocabulary import PropertyKind

#: Distinct values read per text property (the tool's own TOP_OCCURRENCES bound).
VALUES_PER_PROPERTY = 100
#: Candidates shown at most: more would read as an instruction to filter on all of them.
MAX_CANDIDATES = 4
#: A stored value longer than this is prose, not a category.
MAX_VALUE_CHARS = 40


def linked(question: str, values: dict[str, list[str]]) -> list[tuple[str, str]]:
    """(property, value) for each stored value whose every content word the question names, longest
    first; a property's values are tried in the order given (most frequent first)."""
    asked = set(content_stems(question))
    found: list[tuple[int, str, str]] = []
    for prop, stored in values.items():
        for value in stored:
            words = content_stems(value)
            if words and not any(w.isdigit() for w in words) and set(words) <= asked:
                found.append((len(words), prop, value))
    found.sort(key=lambda item: -item[0])  # stable: most frequent first among values of one length
    return [(prop, value) for _, prop, value in found]


class Values:
    """Offer the stored values the question names as candidate filters, then run the inner strategy."""

    name = "values"

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        #: collection -> text property -> its repeated values, read once per strategy instance.
        self._read: dict[str, dict[str, list[str]]] = {}

    def categories(self, executor: Executor, collection: str, text_properties: list[str]) -> dict[str, list[str]]:
        """Each text property's category values, most frequent first: all of a property with at most half
        as many distinct values as objects, else those that occur more than once (not names or prose)."""
        if collection not in self._read:
            read: dict[str, list[str]] = {}
            for prop in text_properties:
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
            self._read[collection] = read
        return self._read[collection]

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
        names = [config.checked_collection] if config.checked_collection else offered_collections(tools)
        candidates: list[str] = []
        for name in names:
            found = schema.get(name)
            if found is None:
                continue
            texts = [p.name for p in found.properties if p.kind is PropertyKind.TEXT]
            where = "" if len(names) == 1 else f" ({name})"
            candidates += [
                f'{prop} = "{value}"{where}' for prop, value in linked(question, self.categories(executor, name, texts))
            ]
        candidates = list(dict.fromkeys(candidates))[:MAX_CANDIDATES]
        if candidates:
            context = (
                "Stored values the question's words match (use one in a filter only if the question asks for it): "
            )
            config = config.model_copy(update={"question_context": context + "; ".join(candidates) + "."})
        run: AgentRun = self.inner.run(model, executor, tools, config, question, on_call)
        run.strategy_notes["values"] = {"candidates": candidates}
        return run
