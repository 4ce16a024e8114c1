"""`refine`: the agent turns back a call whose search query holds conditions, and asks for filters.

A small model writes conditions into the search text ("credits=3 AND isOnline=true", "occasion LIKE
'B%'"): the call runs, a search by meaning ignores them, and the answer is wrong with no error to
learn from. Here such a call fails before it runs, with an error that says where each condition goes;
the loop's correction turn lets the model send it again. A search text is turned back once: a model
that sends it again unchanged gets it run (measured: the small model repeats it rather than fix it,
and three refusals in a row cost the question its answer). No gold search query of any split has
these marks (a comparison sign, an upper-case AND/OR/NOT/LIKE/SELECT/WHERE, true/false, a
property's name), so a right call is never turned back.
"""

from __future__ import annotations

import re
from typing import Any

from agent.loop import AgentConfig, AgentRun, Executor
from agent.strategies.registry import StrategyInfo
from agent.tooldef import ToolSet
from executors import QueryResult
from executors.errors import InvalidArgumentsError
from executors.vocabulary import FILTER_SLOT, SEARCH_FIELD, PropertyKind

CONDITION = re.compile(r"[=<>]|\b(?:AND|OR|NOT|LIKE|SELECT|WHERE|TRUE|FALSE|true|false)\b")


def conditions_in(search: str, properties: set[str]) -> list[str]:
    """The marks of a condition in a search text: signs, query keywords, property names."""
    found = [m.group(0) for m in CONDITION.finditer(search)]
    found += [word for word in re.findall(r"[A-Za-z_]\w*", search) if word in properties and not word.islower()]
    return list(dict.fromkeys(found))


class _Refusing:
    """The executor, except that a search holding conditions fails before it runs."""

    def __init__(self, executor: Executor) -> None:
        self.executor = executor
        self.turned_back = 0
        self._seen: set[str] = set()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.executor, name)

    def execute(self, arguments: dict[str, Any]) -> QueryResult:
        search = arguments.get(SEARCH_FIELD)
        schema = getattr(self.executor, "schema", None)
        found = schema.get(str(arguments.get("collection_name"))) if schema is not None else None
        properties = {p.name for p in found.properties} if found is not None else set()
        marks = conditions_in(search, properties) if isinstance(search, str) else []
        if marks and search not in self._seen:  # once: a model that sends it again gets it run
            self._seen.add(search)
            self.turned_back += 1
            raise InvalidArgumentsError(
                f"search_query {search!r} holds conditions ({', '.join(marks)}), but a search matches by meaning "
                f"and applies none. Keep only the topic words in {SEARCH_FIELD} (or leave it out) and put each "
                f"condition in its filter: {FILTER_SLOT[PropertyKind.NUMBER]} for a number, "
                f"{FILTER_SLOT[PropertyKind.TEXT]} for text (= or LIKE with *), "
                f"{FILTER_SLOT[PropertyKind.BOOLEAN]} for true/false.",
                field=SEARCH_FIELD,
            )
        return self.executor.execute(arguments)


class Refine:
    """The inner strategy with calls whose search holds conditions turned back for a correction."""

    name = "refine"

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
        refusing = _Refusing(executor)
        run: AgentRun = self.inner.run(model, refusing, tools, config, question, on_call)
        run.strategy_notes["refine"] = {"turned_back": refusing.turned_back}
        return run


STRATEGY = StrategyInfo(
    "refine",
    "a call whose search query holds conditions (=, <, AND, LIKE) is turned back with where each goes",
    lambda inner, _: Refine(inner),
    rank=80,
)
