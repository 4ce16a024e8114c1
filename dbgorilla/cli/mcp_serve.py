"""`dbgorilla mcp`: serve `ask`, `search` and `query_database` over MCP (stdio, or streamable HTTP
on 127.0.0.1), over a use case or named collections of your own Weaviate, read-only, scoped as asked.
`ask` is the agent session `dbgorilla ask` opens (`dbgorilla.cli.doors`): the same strategy, the same answer."""

from __future__ import annotations

from typing import Annotated

import typer

from agent import ORACLE, AgentConfig
from agent.tooldef import DEFAULT_TOKEN_BUDGET
from dbgorilla._process import port_is_free
from dbgorilla.chat import resolve_model
from dbgorilla.cli.console import NamespaceOption, connected, design_from_flags, say
from dbgorilla.cli.doors import chosen_use_case, door_session
from dbgorilla.cli.strategy_options import DEFAULT_STRATEGY, StrategyOption, check_strategy
from dbgorilla.doors import mcp_server
from dbgorilla.errors import ConfigError, PortInUse


def register(app: typer.Typer) -> None:
    app.command("mcp")(serve)


def serve(
    use_case: Annotated[str | None, typer.Option(help="Offer only this use case's collections.")] = None,
    collections: Annotated[
        str | None, typer.Option(help="Offer only these collections of your Weaviate, comma-separated: A,B.")
    ] = None,
    transport: Annotated[str, typer.Option(help="stdio | http (streamable HTTP on 127.0.0.1).")] = "stdio",
    port: Annotated[int | None, typer.Option(min=1, max=65535, help="HTTP transport's port (default 8765).")] = None,
    model: Annotated[str | None, typer.Option(help="Model of `ask`; a local one unless --base-url is given.")] = None,
    base_url: Annotated[str | None, typer.Option(help="Any OpenAI-compatible endpoint (key: OPENAI_API_KEY).")] = None,
    max_steps: Annotated[int, typer.Option(min=1, help="Model turns of `ask` before giving up.")] = 4,
    token_budget: Annotated[int, typer.Option(help="Tool description budget in tokens.")] = DEFAULT_TOKEN_BUDGET,
    scope: Annotated[
        list[str] | None,
        typer.Option(
            help="Collection.property<op>value ANDed into every query (repeatable); collections not named are "
            "hidden. E.g. Restaurants.city=Lisbon"
        ),
    ] = None,
    namespace: NamespaceOption = "",
    strategy: StrategyOption = DEFAULT_STRATEGY,
) -> None:
    """Serve the agent (`ask`), retrieval (`search`) and the tool (`query_database`) over MCP, read-only."""
    port = port or mcp_server.DEFAULT_PORT
    if model == ORACLE:
        raise ConfigError("the oracle replays ground truth: use it with `dbgorilla eval --model oracle`")
    if transport not in ("stdio", "http"):
        raise ConfigError(f"unknown --transport {transport!r}; choose stdio or http")
    if transport == "http" and not port_is_free(mcp_server.HOST, port):
        raise PortInUse(f"port {port} on {mcp_server.HOST} is taken; pass --port")
    design = design_from_flags("unified", False, None, False, token_budget)
    check_strategy(strategy)
    chosen = chosen_use_case(use_case)  # as `ask`: a use case's collections live under the namespace, ours
    with connected() as client:
        config = AgentConfig(max_steps=max_steps)
        session = door_session(client, chosen, collections, scope, namespace, design, strategy, config)
        # the model of `ask` opens on the first question; stdout is the protocol's
        served = mcp_server.Served(session, open_model=lambda: resolve_model(model, base_url, echo=say))
        server = mcp_server.build_server(served)
        offered = ", ".join(session.collection_names)
        if transport == "stdio":
            say(f"dbgorilla MCP server on stdio over {offered}")
            mcp_server.serve_stdio(server)
        else:
            ready = lambda url: say(f"dbgorilla MCP server at {url} over {offered}")  # noqa: E731
            mcp_server.serve_http(server, port, on_ready=ready)
