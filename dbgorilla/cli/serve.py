"""`dbgorilla serve`: the Query Agent's API on 127.0.0.1, for `weaviate-agents`' own client.

    dbgorilla serve                      # http://127.0.0.1:8770, the configured Weaviate, the local model
    QueryAgent(client, collections=["Restaurants"], agents_host="http://127.0.0.1:8770").ask("...")

The sessions are the ones `ask`, `mcp` and `demo` open (`dbgorilla.cli.doors.door_session`), over the
collections each request names, with its additional filters as the scope; the routes and the wire
format are `dbgorilla.doors.agents_api` and `dbgorilla.doors.agents_wire`.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import threading
from typing import Annotated, Any

import typer

from agent import AgentConfig
from agent._words import split_name
from agent.conversation import Turn, TurnMemory
from agent.session import AgentSession
from agent.strategies.values import Values
from agent.tooldef import DEFAULT_OPERATIONS, DEFAULT_TOKEN_BUDGET
from dbgorilla._process import port_is_free
from dbgorilla.chat import resolve_model
from dbgorilla.cli.console import connected, design_from_flags, say
from dbgorilla.cli.demo import DoorSessions
from dbgorilla.cli.doors import chosen_use_case, door_session
from dbgorilla.cli.strategy_options import DEFAULT_STRATEGY, StrategyOption, check_strategy
from dbgorilla.config import Settings
from dbgorilla.connection import connect
from dbgorilla.demo import app as demo_app
from dbgorilla.demo.app import serve as serve_app
from dbgorilla.doors import agents_api
from dbgorilla.doors.agents_wire import WireError, arguments_of
from dbgorilla.errors import PortInUse
from executors.scope import Scope
from executors.vocabulary import PropertyKind, ToolOperations
from llm import ChatModel


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)


class ServeBackend:
    """Sessions by (caller's headers, collections, scope), opened once each; the turns answered; searches run."""

    def __init__(self, client: Any, weaviate_url: str, model: ChatModel, strategy: str, max_steps: int) -> None:
        self.weaviate_url, self.model, self.strategy, self.max_steps = weaviate_url, model, strategy, max_steps
        self._clients: dict[str, Any] = {"": client}
        self._sessions: dict[tuple[str, ...], AgentSession] = {}
        self._memory = TurnMemory()
        self._lock = threading.Lock()

    def _client(self, headers: dict[str, str]) -> tuple[str, Any]:
        """The connection for a caller's headers (a bearer token, a vectorizer's key): never logged, keyed by hash."""
        key = hashlib.sha256(repr(sorted(headers.items())).encode()).hexdigest() if headers else ""
        if key not in self._clients:
            self._clients[key] = connect(Settings(), headers=headers)
        return key, self._clients[key]

    def session(self, names: list[str], scope: Scope | None, headers: dict[str, str]) -> AgentSession:
        with self._lock:
            key, client = self._client(headers)
            entry = (key, ",".join(names), scope.model_dump_json() if scope else "")
            if entry not in self._sessions:
                operations = DEFAULT_OPERATIONS.value
                design = design_from_flags("unified", False, None, False, DEFAULT_TOKEN_BUDGET, operations)
                config = AgentConfig(max_steps=self.max_steps)
                opened = door_session(client, None, ",".join(names), scope, "", design, self.strategy, config)
                self._sessions[entry] = opened.with_model(self.model)
            return self._sessions[entry]

    def remembered(self, pairs: list[tuple[str, str]]) -> list[Turn]:
        return self._memory.turns(pairs)

    def remember(self, turn: Turn) -> None:
        self._memory.remember(turn)

    def run_searches(
        self, session: AgentSession, searches: list[dict[str, Any]], limit: int, offset: int
    ) -> list[dict[str, Any]]:
        """The objects the searches find, in order, without repeats, one page of them (`offset`, `limit`);
        through the session's executor, so the scope (the additional filters) holds on every page."""
        wanted = offset + limit
        executor = session.executor.with_operations(ToolOperations.COMPOUND)
        options = executor.options.model_copy(update={"fetch_limit": wanted, "search_limit": wanted})
        executor = executor.with_options(options)
        found: dict[str, dict[str, Any]] = {}
        for search in searches:
            if search.get("collection") not in session.collection_names:
                raise WireError(f"the search names {search.get('collection')!r}, not a collection of this request")
            result = executor.execute(arguments_of(search, wanted))
            for obj in result.objects:
                found.setdefault(obj.uuid, _object(obj, result.collection))
        return list(found.values())[offset:wanted]

    def suggestions(self, session: AgentSession, count: int) -> list[str]:
        """Questions each collection can answer, written from its schema and its categories' stored values
        (no model request): a count by category, a count of one category, the highest number, a flag."""
        kinds: list[list[str]] = [[], [], [], []]
        for name in session.collection_names:
            collection = session.executor.schema.get(name)
            if collection is None:
                continue
            noun = _words(name)
            for prop, values in Values(None).complete_categories(session.executor, collection).items():
                kinds[0].append(f"How many {noun} are there for each {_words(prop)}?")
                kinds[1].append(f"How many {noun} have {_words(prop)} {values[0]}?")
            for prop in collection.properties:
                words = _words(prop.name)
                if prop.kind is PropertyKind.NUMBER and prop.data_type != "date":
                    kinds[2].append(f"What is the highest {words} among the {noun}?")
                elif prop.kind is PropertyKind.BOOLEAN:
                    flag = words.removeprefix("is ") if words.startswith("is ") else words
                    kinds[3].append(f"How many {noun} are {flag}?")
        interleaved = [q for row in itertools.zip_longest(*kinds) for q in row if q]
        return interleaved[:count]


def _words(name: str) -> str:
    return split_name(name).lower()


def _object(obj: Any, collection: str) -> dict[str, Any]:
    """One object as weaviate-client's `Object` (what the client's `QueryReturn` validates)."""
    metadata = dict.fromkeys(
        ("creation_time", "last_update_time", "certainty", "explain_score", "is_consistent", "rerank_score")
    )
    return {
        "uuid": obj.uuid,
        "metadata": {**metadata, "distance": obj.distance, "score": obj.score},
        "properties": obj.properties,
        "references": None,
        "vector": {},
        "collection": collection,
    }


def weaviate_url(settings: Settings) -> str:
    """The Weaviate this server answers for: `WEAVIATE_URL`, or the local one `dbgorilla up` starts."""
    return os.environ.get("WEAVIATE_URL") or settings.weaviate_http_url


def serve(
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port on 127.0.0.1.")] = agents_api.DEFAULT_PORT,
    use_case: Annotated[str | None, typer.Option(help="The use case the demo page starts on.")] = "restaurants",
    model: Annotated[str | None, typer.Option(help="Model; a local one unless --base-url is given.")] = None,
    base_url: Annotated[str | None, typer.Option(help="Any OpenAI-compatible endpoint (key: OPENAI_API_KEY).")] = None,
    max_steps: Annotated[int, typer.Option(min=1, help="Model turns before giving up.")] = 4,
    strategy: StrategyOption = DEFAULT_STRATEGY,
) -> None:
    """Serve the Query Agent's API on 127.0.0.1 for weaviate-agents' QueryAgent (agents_host=the URL printed),
    and the demo page, with conversations, at the same address."""
    check_strategy(strategy)
    chosen_use_case(use_case)
    if not port_is_free(agents_api.HOST, port):
        raise PortInUse(f"port {port} on {agents_api.HOST} is taken; pass --port")
    settings = Settings()
    with connected(settings) as client:
        chat = resolve_model(model, base_url, echo=say)
        backend = ServeBackend(client, weaviate_url(settings), chat, strategy, max_steps)
        page = DoorSessions(client, "", model, base_url, use_case, max_steps)
        app = agents_api.add_routes(demo_app.build_app(page), backend)
        ready = f"for the Weaviate at {backend.weaviate_url}"
        serve_app(app, port, on_ready=lambda url: say(f"dbgorilla serve at {url} {ready}"))
