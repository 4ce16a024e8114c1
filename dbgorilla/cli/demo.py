"""`dbgorilla demo`: the agent on a local web page (127.0.0.1 only), each step streamed as it happens.

The page's sessions are the ones `ask` and `mcp` open (`dbgorilla.cli.doors.door_session`) with the
model `--model/--base-url` name (`dbgorilla.chat.resolve_model`), so a question gets the same answer
at every door; the page only chooses what the flags choose elsewhere.
"""

from __future__ import annotations

import json
import time
from typing import Annotated, Any

import typer

from agent import AgentConfig
from agent.conversation import Turn, TurnMemory
from agent.session import AgentSession
from agent.strategies import DEFAULT_STRATEGY, STRATEGIES
from agent.tooldef import DEFAULT_OPERATIONS, DEFAULT_TOKEN_BUDGET
from dbgorilla._process import port_is_free
from dbgorilla.chat import LOCAL, model_provider, resolve_model
from dbgorilla.cli.console import NamespaceOption, connected, design_from_flags, say
from dbgorilla.cli.doors import chosen_use_case, door_session, warm
from dbgorilla.demo import app as demo_app
from dbgorilla.errors import ConfigError, PortInUse
from executors.ownership import our_collections
from executors.vocabulary import ToolOperations
from fixtures.use_cases import get_use_cases
from llm import ChatModel


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)


class DoorSessions:
    """The page's backend: sessions as `ask` opens them, one per choice, and models proved once each."""

    def __init__(
        self, client: Any, namespace: str, model: str | None, base_url: str | None, use_case: str | None, max_steps: int
    ) -> None:
        self.client, self.namespace, self.max_steps = client, namespace, max_steps
        self.defaults = {"model": model or "", "base_url": base_url or "", "use_case": use_case or ""}
        self._sessions: dict[tuple[str, ...], AgentSession] = {}
        self._models: dict[tuple[str, str], ChatModel] = {}
        self._memory = TurnMemory()

    def turns(self, pairs: list[tuple[str, str]]) -> list[Turn]:
        """The page's conversation so far, as the turns this server answered (what each follow-up keeps)."""
        return self._memory.turns(pairs)

    def remember(self, turn: Turn) -> None:
        self._memory.remember(turn)

    def options(self) -> dict[str, Any]:
        """What the page offers: the use cases (loaded or not), every collection, strategies, tool designs."""
        ours = our_collections(self.client)
        cases = []
        for case in get_use_cases():
            names = case.names(self.namespace)
            loaded = all(names.physical(c.name) in ours for c in case.collections)
            cases.append({"name": case.name, "title": case.title, "loaded": loaded})
        configs = self.client.collections.list_all(simple=True)
        values = configs.values() if isinstance(configs, dict) else configs
        return {
            "use_cases": cases,
            "collections": sorted(c.name for c in values),
            "strategies": list(STRATEGIES),
            "strategy": DEFAULT_STRATEGY,
            "operations": list(dict.fromkeys([DEFAULT_OPERATIONS.value, *(o.value for o in ToolOperations)])),
            **self.defaults,
        }

    def session(self, choice: demo_app.Choice) -> AgentSession:
        """The session of these choices (opened once; the live schema is read then), with the chosen model."""
        collections = (choice.collections or "").strip() or None
        use_case = None if collections else (choice.use_case or None)
        key = (use_case or "", collections or "", choice.strategy, choice.operations)
        if key not in self._sessions:
            design = design_from_flags("unified", False, None, False, DEFAULT_TOKEN_BUDGET, choice.operations)
            config = AgentConfig(max_steps=self.max_steps)
            chosen = chosen_use_case(use_case)
            self._sessions[key] = door_session(
                self.client, chosen, collections, None, self.namespace, design, choice.strategy, config
            )
        return self._sessions[key].with_model(self._model(choice))

    def _model_key(self, choice: demo_app.Choice) -> tuple[str, str]:
        return (choice.model or "").strip(), (choice.base_url or "").strip()

    def _model(self, choice: demo_app.Choice) -> ChatModel:
        key = self._model_key(choice)
        if key not in self._models:  # proved with one token (the local server proves itself on start)
            self._models[key] = resolve_model(key[0] or None, key[1] or None, echo=say, max_retries=1)
        return self._models[key]

    def forget_model(self, choice: demo_app.Choice) -> None:
        self._models.pop(self._model_key(choice), None)

    def fetch_object(self, use_case: str | None, collection: str, uuid: str) -> dict[str, Any] | None:
        """One source object's properties, read from the collection the agent read (under its physical name)."""
        chosen = chosen_use_case(use_case)
        if chosen is not None and collection not in {c.name for c in chosen.collections}:
            raise ConfigError(f"{collection} is not a collection of the use case {chosen.name}")
        physical = chosen.names(self.namespace).physical(collection) if chosen is not None else collection
        if not self.client.collections.exists(physical):
            raise ConfigError(f"no collection named {collection} in this Weaviate")
        found = self.client.collections.get(physical).query.fetch_object_by_id(uuid)
        if found is None:
            return None
        shown = {"collection": collection, "uuid": str(found.uuid), "properties": found.properties}
        return json.loads(json.dumps(shown, default=str))


def demo(
    use_case: Annotated[str | None, typer.Option(help="The use case the page starts on.")] = "restaurants",
    model: Annotated[str | None, typer.Option(help="Model; a local one unless --base-url is given.")] = None,
    base_url: Annotated[str | None, typer.Option(help="Any OpenAI-compatible endpoint (key: OPENAI_API_KEY).")] = None,
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port on 127.0.0.1.")] = demo_app.DEFAULT_PORT,
    max_steps: Annotated[int, typer.Option(min=1, help="Model turns before giving up.")] = 4,
    namespace: NamespaceOption = "",
) -> None:
    """Serve the agent on a local web page (127.0.0.1 only): ask, and watch each step arrive."""
    chosen_use_case(use_case)  # a bad name is a usage error before anything starts
    if not port_is_free(demo_app.HOST, port):
        raise PortInUse(f"port {port} on {demo_app.HOST} is taken; pass --port")
    with connected() as client:
        sessions = DoorSessions(client, namespace, model, base_url, use_case, max_steps)
        if use_case and model_provider(model, base_url)[0] == LOCAL:  # an endpoint's tokens are not spent here
            _warm(sessions, demo_app.Choice(use_case=use_case, model=model, strategy=DEFAULT_STRATEGY))
        demo_app.serve(demo_app.build_app(sessions), port, on_ready=lambda url: say(f"dbgorilla demo at {url}"))


def _warm(sessions: DoorSessions, choice: demo_app.Choice) -> None:
    """The local model holds the starting use case's prompt prefixes before the page opens, so its first
    question is as fast as the later ones (`AgentSession.warm`)."""
    started = time.perf_counter()
    try:
        warmed = warm(sessions.session(choice))
    except ConfigError as error:  # not loaded: the page says so when asked
        say(f"demo: not warmed: {error}")
        return
    seconds = time.perf_counter() - started
    say(f"demo: the model holds the {len(warmed)} prompt prefixes of {choice.use_case} ({seconds:.0f} s)")
