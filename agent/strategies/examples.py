"""`examples`: a query memory. The k solved examples (question -> call arguments) nearest to the
question are put before it in the user turn, DAIL-SQL's retrieved few-shot for text-to-SQL.

The system prompt and the tools are left as they are, so the server's cached prompt prefix still
applies; only the user turn changes. Where the examples come from is the retriever's business (a
Protocol): the Weaviate-backed memory lives above this layer (`fixtures.examples`), and evaluation
hands in one that never returns the question's own use case (`exclude_use_case`).
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from pydantic import BaseModel, Field

from agent.loop import AgentConfig, AgentRun, Executor
from agent.tooldef import ToolSet

DEFAULT_K = 4


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


def examples_preamble(examples: list[SolvedExample]) -> str:
    """The examples as the user turn shows them, before the question."""
    if not examples:
        return ""
    lines = ["Solved examples from other databases (question -> query_database arguments):"]
    for example in examples:
        lines.append(f"Q: {example.question}\nA: {json.dumps(example.arguments, separators=(', ', ': '))}")
    return "\n".join(lines) + "\n\nNow answer this question about this database.\nQuestion: "


class Examples:
    """Retrieve the k nearest solved examples and run the inner strategy with them before the question."""

    name = "examples"

    def __init__(self, inner: Any, retriever: ExampleRetriever, k: int = DEFAULT_K) -> None:
        self.inner = inner
        self.retriever = retriever
        self.k = k

    def run(
        self,
        model: Any,
        executor: Executor,
        tools: ToolSet,
        config: AgentConfig,
        question: str,
        on_call: Any = None,
    ) -> AgentRun:
        found = [  # any retriever whose examples have these fields (fixtures.examples.ExampleMemory does)
            e if isinstance(e, SolvedExample) else SolvedExample.model_validate(e, from_attributes=True)
            for e in (self.retriever.nearest(question, self.k) if self.k > 0 else [])
        ]
        preamble = examples_preamble(found)
        config = config.model_copy(update={"question_preamble": preamble + config.question_preamble})
        run: AgentRun = self.inner.run(model, executor, tools, config, question, on_call)
        run.strategy_notes["examples"] = [e.model_dump(exclude_none=True) for e in found]
        return run
