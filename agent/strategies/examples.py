"""`examples`: a query memory. The k solved examples (question -> call arguments) nearest to the
question are put before it in the user turn, DAIL-SQL's retrieved few-shot for text-to-SQL.

The system prompt and the tools are left as they are, so the server's cached prompt prefix still
applies; only the user turn changes. Each example's call is shown with its fields in the order of the
tool's own schema (`in_schema_order`): llama.cpp holds a forced call to that order, and an example
stored with its keys sorted (`groupby_property` before the filters) led the model to write the
group-by first, after which the grammar let it add no filter or aggregation. Measured on the 30
questions of `../shared/probes/examples_probe.py`: first-call exact match 5/30 with sorted keys,
as with no examples at all (docs/strategies.md). Where the examples come from is the retriever's business (a
Protocol): the Weaviate-backed memory lives above this layer (`fixtures.examples`), and evaluation
hands in one that never returns the question's own use case (`exclude_use_case`).
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from pydantic import BaseModel, Field

from agent.loop import AgentConfig, AgentRun, Executor
from agent.strategies.openings import offered_tools, openings_of
from agent.strategies.registry import StrategyInfo, UnknownStrategy
from agent.tooldef import ToolSet, arguments_without_collection
from llm import ChatRequest

#: Two, not four: the two nearer examples carry the question's shape; the two farther ones cost ~130 new prompt
#: tokens a tool turn and changed no pass rate measured (2026-11-30: the public split 157/181 both, the main
#: job 11/15 both, the committed sample 64 against 66 of 90, 3 gained and 5 lost, p = 0.73; docs/results). A
#: follow-up shows as many: with one, the conversation split's follow-ups lost five (50 -> 45 of 55).
DEFAULT_K = 2
EXAMPLES_HEADER = "Solved examples from other databases (question -> query_database arguments):"
#: How every user turn with examples starts, whichever they are: a warming starts with it too, so a
#: server that keeps warmed prefixes loads it with the tools (~20 tokens a tool turn evaluates no more).
EXAMPLES_START = EXAMPLES_HEADER + "\nQ: "


class SolvedExample(BaseModel):
    """One solved example: a question and the query_database arguments that answer it."""

    question: str
    arguments: dict[str, Any]
    use_case: str = ""
    #: Where it came from: "natural/courses-501", "run/<dir>/<id>", "user".
    source: str = ""
    distance: float | None = Field(default=None, description="near_text distance to the question asked")


class ExampleRetriever(Protocol):
    def nearest(self, question: str, k: int) -> list[SolvedExample]: ...


def in_schema_order(value: Any, schema: dict[str, Any] | None) -> Any:
    """`value` with each object's keys in the order llama.cpp's grammar for its JSON schema writes them:
    the required ones, then the optional ones, each in the schema's order (unknown keys last)."""
    if isinstance(value, list):
        items = (schema or {}).get("items")
        return [in_schema_order(v, items if isinstance(items, dict) else None) for v in value]
    if not isinstance(value, dict):
        return value
    properties = (schema or {}).get("properties") or {}
    required = set((schema or {}).get("required") or [])
    ranked = [name for name in properties if name in required] + [name for name in properties if name not in required]
    order = {name: i for i, name in enumerate(ranked)}
    keys = sorted(value, key=lambda k: (order.get(k, len(order)), k))
    return {k: in_schema_order(value[k], _object_schema(properties.get(k))) for k in keys}


def _object_schema(schema: Any) -> dict[str, Any] | None:
    """The object schema a property holds (the first object of an anyOf, as pydantic writes Optional)."""
    if not isinstance(schema, dict):
        return None
    if "properties" in schema or "items" in schema:
        return schema
    for option in schema.get("anyOf") or []:
        if isinstance(option, dict) and ("properties" in option or "items" in option):
            return option
    return None


def examples_preamble(examples: list[SolvedExample], parameters: dict[str, Any] | None = None) -> str:
    """The examples as the user turn shows them, before the question; each call's fields in the order
    of `parameters` (the tool's JSON schema), the order the model must write them in."""
    if not examples:
        return ""
    lines = [EXAMPLES_HEADER]
    # compact, as the local server has a call written (`dbgorilla.llm_server.grammar`): what the model copies is
    # the form it writes, and each example is ~10 prompt tokens shorter (2026-12-01, docs/results)
    for example in examples:
        shown = in_schema_order(example.arguments, parameters)
        lines.append(f"Q: {example.question}\nA: {json.dumps(shown, separators=(',', ':'))}")
    return "\n".join(lines) + "\n\nNow answer this question about this database.\nQuestion: "


class Examples:
    """Retrieve the k nearest solved examples and run the inner strategy with them before the question."""

    name = "examples"

    def __init__(self, inner: Any, retriever: ExampleRetriever, k: int | None = None) -> None:
        self.inner = inner
        self.retriever = retriever
        self.k = DEFAULT_K if k is None else k

    def openings(self, model: Any, executor: Executor, tools: ToolSet, config: AgentConfig) -> list[ChatRequest]:
        """The inner strategy's, each user turn starting as a question's does (`EXAMPLES_START`)."""
        if self.k > 0:
            config = config.model_copy(update={"question_preamble": EXAMPLES_START + config.question_preamble})
        return openings_of(self.inner, model, executor, tools, config)

    def run(
        self,
        model: Any,
        executor: Executor,
        tools: ToolSet,
        config: AgentConfig,
        question: str,
        on_call: Any = None,
    ) -> AgentRun:
        offered = offered_tools(self.inner, executor, tools, config)
        parameters = offered.definitions()[0].parameters if offered.tools else None
        found = fitting(self.retriever.nearest(question, self.k) if self.k > 0 else [], parameters)
        preamble = examples_preamble(found, parameters)
        config = config.model_copy(update={"question_preamble": preamble + config.question_preamble})
        run: AgentRun = self.inner.run(model, executor, tools, config, question, on_call)
        run.strategy_notes["examples"] = [e.model_dump(exclude_none=True) for e in found]
        return run


def fitting(examples: list[Any], parameters: dict[str, Any] | None) -> list[SolvedExample]:
    """The examples whose calls use only the offered tool's arguments, nearest first: the memory holds calls
    of the largest tool (`conditions`, `sort`), which a run offered the paper's tool must not be shown. A tool
    that answers for one collection has no collection slot (`agent.tooldef.typed_tools`), and its examples are
    shown without one: the model copies what it is shown, and could not write it."""
    offered = set((parameters or {}).get("properties") or {})
    found = [  # any retriever whose examples have these fields (fixtures.examples.ExampleMemory does)
        e if isinstance(e, SolvedExample) else SolvedExample.model_validate(e, from_attributes=True) for e in examples
    ]
    if offered and "collection_name" not in offered:
        found = [e.model_copy(update={"arguments": arguments_without_collection(e.arguments)}) for e in found]
    return [e for e in found if not offered or set(e.arguments) <= offered]


def _examples(inner: Any, options: dict[str, Any]) -> Any:
    """`examples` around `inner`, with the retriever (and `k`) the options carry; none is a typed error."""
    retriever = options.get("retriever")
    if retriever is None:
        raise UnknownStrategy(
            "the examples strategy needs a query memory (a retriever of solved examples): pass "
            "retriever=ExampleMemory(client) (fixtures.examples; `memory.ensure_seeded()` seeds it from the natural "
            "split), or choose a strategy without examples, e.g. chain+check+values+typed+grounded"
        )
    k = options.get("k")
    return Examples(inner, retriever, k=None if k is None else int(k))


STRATEGY = StrategyInfo(
    "examples",
    "the k nearest solved examples (question -> call) before the question",
    _examples,
    rank=40,
)
