"""The agent session `ask` and `mcp` open: the same set-up at both doors, so they serve the same agent.

Which collections (a use case's, ours under the namespace, or named ones of any Weaviate), the
scope, the tool design, the strategy and its query memory become one `agent.session.AgentSession`;
the door then adds only its input and output.
"""

from __future__ import annotations

from typing import Any

from agent import AgentConfig, ToolDesign
from agent.session import AgentSession, Warmed, narrowed
from agent.strategies import DEFAULT_STRATEGY, ExampleRetriever
from dbgorilla.chat import token_counter
from dbgorilla.cli.console import say
from dbgorilla.cli.strategy_options import check_strategy
from dbgorilla.errors import ConfigError
from dbgorilla.local_models import ModelServerFailed
from evaluation.strategies import prepare_strategy
from executors import DatabaseSchema, UnknownCollectionError, WeaviateExecutor
from executors.ownership import NotOurCollection
from executors.scope import Scope, parse_scope
from fixtures.loader import check_ours
from fixtures.use_cases import UseCase, get_use_case, get_use_cases
from llm import ChatModel, ModelError


def schema_for(schema: DatabaseSchema, use_case: str | None, collections: list[str] | None = None) -> DatabaseSchema:
    """The live schema, narrowed to named collections of any Weaviate, or to one use case's, when asked."""
    if collections:
        try:
            return narrowed(schema, collections)
        except UnknownCollectionError as error:
            raise ConfigError(error.message) from None
    if use_case is None:
        return schema
    wanted = [c.name for c in get_use_case(use_case).collections]
    found = schema.only(wanted)
    if not found.collections:
        raise ConfigError(f"none of {wanted} is loaded; run `dbgorilla load --use-case {use_case}`")
    return found


def retriever_of(client: Any, strategy: str, namespace: str) -> ExampleRetriever | None:
    """The query memory a door's `examples` strategy reads (every example may be shown: not an evaluation)."""
    _, retriever_for, _ = prepare_strategy(client, strategy, namespace, echo=say, cross_domain=False)
    return retriever_for("") if retriever_for is not None else None


def chosen_use_case(use_case: str | None) -> UseCase | None:
    """The use case named (None: none), or a configuration error, before any connection is made."""
    try:
        return get_use_case(use_case) if use_case else None
    except KeyError as error:
        raise ConfigError(str(error.args[0])) from None


def door_session(
    client: Any,
    chosen: UseCase | None,
    collections: str | None,
    scope: list[str] | Scope | None,
    namespace: str,
    design: ToolDesign,
    strategy: str,
    config: AgentConfig,
) -> AgentSession:
    """The session over a use case's collections (ours, under the namespace) or `A,B` of any Weaviate,
    scoped as asked; its model is set by the door (`with_model`) once the set-up is known to be good."""
    check_strategy(strategy)
    if chosen is not None:
        check_ours(client, [chosen], namespace)
    names = chosen.names(namespace) if chosen is not None else None
    scope = scope if isinstance(scope, Scope) else parse_scope(scope or [])
    executor = WeaviateExecutor(client, scope=scope, names=names, operations=design.operations)
    named = [name.strip() for name in collections.split(",") if name.strip()] if collections else None
    offered = schema_for(executor.schema, chosen.name if chosen else None, named).names()
    retriever = retriever_of(client, strategy, namespace)
    return AgentSession.over(executor, offered, design, None, strategy, config, retriever, token_counter())


def warm_use_cases(
    client: Any, model: ChatModel, namespace: str = "", strategy: str = DEFAULT_STRATEGY
) -> list[Warmed]:
    """Every loaded use case's openings (`AgentSession.warm`) sent to `model`, as `ask`, `demo` and `eval`
    will open them: the server then holds each one's system turns. A use case not loaded, or not ours,
    is skipped (nothing of it will be asked)."""
    warmed: list[Warmed] = []
    for use_case in get_use_cases():
        try:
            session = door_session(client, use_case, None, None, namespace, ToolDesign(), strategy, AgentConfig())
        except (ConfigError, NotOurCollection):
            continue
        warmed += warm(session.with_model(model))
    return warmed


def warm(session: AgentSession) -> list[Warmed]:
    """`session.warm()` on the local server; a model error there is the server failing (exit 11), named."""
    try:
        return session.warm()
    except ModelError as error:
        raise ModelServerFailed(f"the local model server failed while warming its prompt prefixes: {error}") from error
