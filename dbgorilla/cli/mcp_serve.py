"""`dbgorilla mcp`: serve `ask`, `search` and `query_database` over MCP (stdio, or streamable HTTP
on 127.0.0.1), over a use case or named collections of your own Weaviate, read-only, scoped as asked."""

from __future__ import annotations

from typing import Annotated

import typer

from agent import ORACLE, build_tools
from agent.tooldef import DEFAULT_TOKEN_BUDGET
from dbgorilla import mcp_server
from dbgorilla._process import port_is_free
from dbgorilla.chat import resolve_model, token_counter
from dbgorilla.cli.ask import schema_for
from dbgorilla.cli.console import NamespaceOption, connected, design_from_flags, say
from dbgorilla.errors import ConfigError, PortInUse
from executors import WeaviateExecutor
from executors.scope import parse_scope
from fixtures.loader import check_ours
from fixtures.use_cases import get_use_case


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
    try:  # as `ask`: a use case's collections live under the namespace and must be ours
        chosen = get_use_case(use_case) if use_case else None
    except KeyError as error:
        raise ConfigError(str(error.args[0])) from None
    with connected() as client:
        if chosen is not None:
            check_ours(client, [chosen], namespace)
        names = chosen.names(namespace) if chosen is not None else None
        executor = WeaviateExecutor(client, scope=parse_scope(scope or []), names=names)
        named = [name.strip() for name in collections.split(",") if name.strip()] if collections else None
        schema = schema_for(executor.schema, use_case, named)
        served = mcp_server.Served(
            executor=executor,
            schema=schema,
            tools=build_tools(schema, design, token_counter()),
            open_model=lambda: resolve_model(model, base_url, echo=say),  # stdout is the protocol's
            max_steps=max_steps,
        )
        server = mcp_server.build_server(served)
        offered = ", ".join(schema.names())
        if transport == "stdio":
            say(f"dbgorilla MCP server on stdio over {offered}")
            mcp_server.serve_stdio(server)
        else:
            ready = lambda url: say(f"dbgorilla MCP server at {url} over {offered}")  # noqa: E731
            mcp_server.serve_http(server, port, on_ready=ready)
