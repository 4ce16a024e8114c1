"""The agent and its tool over the Model Context Protocol: `ask`, `search` and `query_database`.

People who build agents plug tools in through MCP; this serves ours, on the official SDK's
low-level server so the tools' schemas are exactly ours (the `query_database` schema is the one a
model gets through function calling, with the live collections as its enum) and every failure is
typed. Thin over the lower layers:

- `query_database`: the tool itself, executed (`executors`); a rejected call comes back as an MCP
  tool error (`is_error`) whose structured content is the executor's `{code, message, field}`.
- `search`: retrieval only, no model: each offered collection's search hits, closest first.
- `ask`: our agent, the session every door runs (`agent.session.AgentSession`: the strategy,
  `agent.strategies.DEFAULT_STRATEGY` unless `--strategy` says otherwise, and the commit turn),
  answered as `agent.query_agent.response_of` reads the trace.

Read-only (the executor holds Weaviate only through `ReadOnlyWeaviate`), and a `--scope` is applied
by the executor below any arguments, so neither a caller nor the model can step outside it. The
collections offered (a use case's or `--collections`) bound `query_database` too, not just its enum.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, get_args

import anyio
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent import StopReason
from agent.conversation import Turn
from agent.query_agent import QueryAgentResponse, response_of
from agent.session import AgentSession, Offered
from executors import (
    DatabaseSchema,
    ErrorPayload,
    ExecutorError,
    ExecutorOptions,
    InvalidArgumentsError,
    QueryResult,
    WeaviateExecutor,
    parse_arguments,
)

if TYPE_CHECKING:
    import mcp_types as types
    from mcp.server import Server

SERVER_NAME = "dbgorilla"
#: Streamable HTTP listens on loopback only: the server reads the user's data and has no auth.
HOST = "127.0.0.1"
DEFAULT_PORT = 8765
HTTP_PATH = "/mcp"
#: Hits `search` returns at most (its `limit` argument is capped here).
MAX_SEARCH_HITS = 50
#: Conversations an MCP server keeps (a client that never continues one leaves it behind).
MAX_CONVERSATIONS = 256
CONVERSATION_HELP = "An earlier ask's conversation_id: a follow-up keeps what the earlier answer found."
DEFAULT_SEARCH_HITS = 10
#: Outcomes of the loop in which the agent got no answer from the model at all: a tool error, not an answer.
MODEL_FAILURES = ("model_error", "timeout")

logger = logging.getLogger(__name__)


class ToolFailure(Exception):
    """A typed failure of a tool call, sent as an MCP tool error with its code and message."""

    def __init__(self, code: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.payload = ErrorPayload(code=code, message=message, field=field)

    @classmethod
    def of(cls, error: ExecutorError) -> ToolFailure:
        return cls(error.code, error.message, error.field)


class AskInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question: str = Field(min_length=1, max_length=2000, description="A question about the data, in plain words.")
    max_steps: int | None = Field(default=None, ge=1, le=10, description="Model turns before the agent gives up.")
    conversation_id: str | None = Field(default=None, max_length=64, description=CONVERSATION_HELP)


class SearchInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, max_length=2000, description="What to look for, in plain words.")
    collection: str | None = Field(default=None, description="Search only this collection (default: every one).")
    limit: int = Field(default=DEFAULT_SEARCH_HITS, ge=1, le=MAX_SEARCH_HITS, description="Hits returned at most.")


class SearchHit(BaseModel):
    collection: str
    uuid: str
    #: near_text cosine distance (lower is closer); None under a keyword search mode.
    distance: float | None = None
    properties: dict[str, Any] = Field(default_factory=dict)


class QueryDatabaseResult(QueryResult):
    """A `query_database` result with the query as code, so a person can run it in their own application."""

    code: str | None = Field(
        default=None, description="A weaviate-client v4 program that makes this result's calls (executors.snippet)."
    )


class SearchResult(BaseModel):
    """The closest hits over the collections searched, and how many each matched within the cut."""

    query: str
    hits: list[SearchHit] = Field(default_factory=list)
    matched: dict[str, int] = Field(default_factory=dict)
    #: Collections whose search failed (e.g. no vectorizer), with the executor's typed error.
    errors: dict[str, ErrorPayload] = Field(default_factory=dict)


@dataclass
class Served:
    """What the server answers over: the agent session of `ask` (the one every door runs, its
    executor scoped and read-only, the collections it offers), whose chat model is opened on the
    first question; `search` and `query_database` use its executor and collections."""

    session: AgentSession
    open_model: Callable[[], Any]
    _model: Any = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    #: Each conversation's turns by its id, the oldest conversation let go first past `MAX_CONVERSATIONS`.
    conversations: dict[str, list[Turn]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.executor: WeaviateExecutor = self.session.executor  # type: ignore[assignment]
        self.schema: DatabaseSchema = self.executor.schema.only(self.session.collection_names)
        self._searcher = self.executor.with_options(ExecutorOptions(search_limit=MAX_SEARCH_HITS))

    def model(self) -> Any:
        with self._lock:
            if self._model is None:
                self._model = self.open_model()
            return self._model

    def execute(self, arguments: Any, executor: WeaviateExecutor | None = None) -> QueryResult:
        """A `query_database` call on the offered collections only (the scope is the executor's)."""
        parsed = parse_arguments(arguments)
        return Offered(executor or self.executor, tuple(self.schema.names())).execute(parsed)


def _typed(model: type[BaseModel], arguments: dict[str, Any]) -> Any:
    try:
        return model.model_validate(arguments)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in error.errors(include_url=False)
        )
        raise ToolFailure(InvalidArgumentsError.code, f"invalid arguments ({problems})") from None


def query_database(served: Served, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    try:
        result = served.execute(arguments)
    except ExecutorError as error:
        raise ToolFailure.of(error) from None
    code = result.program()
    text = result.to_llm_text() + (f"\n\nThe query as code (weaviate-client v4):\n```python\n{code}```" if code else "")
    return text, {**result.model_dump(mode="json"), "code": code}


def search(served: Served, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Each collection's hits within the search's distance cut, merged closest first; a collection
    whose search fails is named with its error (all failing, or the one named, is a tool error)."""
    asked = _typed(SearchInput, arguments)
    names = [asked.collection] if asked.collection else served.schema.names()
    found = SearchResult(query=asked.query)
    for name in names:
        try:
            result = served.execute({"collection_name": name, "search_query": asked.query}, served._searcher)
        except ExecutorError as error:
            if asked.collection or len(names) == 1:
                raise ToolFailure.of(error) from None
            found.errors[name] = error.to_payload()
            continue
        found.matched[name] = result.total_count if result.total_count is not None else len(result.objects)
        found.hits += [
            SearchHit(collection=name, uuid=hit.uuid, distance=hit.distance, properties=hit.properties)
            for hit in result.objects
        ]
    if found.errors and not found.matched:
        first = next(iter(found.errors.values()))
        raise ToolFailure(first.code, f"every search failed; {first.message}", first.field)
    found.hits = sorted(found.hits, key=lambda h: (h.distance is None, h.distance or 0.0))[: asked.limit]
    lines = [f"{len(found.hits)} hits for {asked.query!r} ({', '.join(f'{k}: {v}' for k, v in found.matched.items())})"]
    lines += [f"- {h.collection} {h.uuid} {h.properties}" for h in found.hits]
    return "\n".join(lines), found.model_dump(mode="json")


def ask(served: Served, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    asked = _typed(AskInput, arguments)
    try:
        model = served.model()
    except Exception as error:  # the model server could not be started or reached: typed, never a traceback
        raise ToolFailure("model_unavailable", f"no model to answer with: {error}") from None
    session = served.session.with_model(model)
    if asked.max_steps is not None:
        session = replace(session, config=session.config.model_copy(update={"max_steps": asked.max_steps}))
    conversation = asked.conversation_id or uuid.uuid4().hex[:12]
    if asked.conversation_id is not None and conversation not in served.conversations:
        raise ToolFailure("unknown_conversation", f"no conversation {conversation!r} here; ask without one to start")
    earlier = served.conversations.get(conversation, [])
    run = session.run(asked.question, earlier=earlier)
    if run.outcome in MODEL_FAILURES and not run.calls():
        raise ToolFailure(run.outcome, run.error or f"the model failed ({run.outcome})")
    served.conversations[conversation] = [*earlier, session.turn_of(run, earlier)]
    while len(served.conversations) > MAX_CONVERSATIONS:
        served.conversations.pop(next(iter(served.conversations)))
    response = response_of(run, served.schema.names())
    return _ask_text(response), {**ask_result(response), "conversation_id": conversation}


def ask_result(response: QueryAgentResponse) -> dict[str, Any]:
    """The MCP form of the agent's response, and the one place it is mapped: every field
    `agent.query_agent` returns (so a field added there, like a typed answer, is served as is), but
    the whole trace, which would flood a client's context; how the loop ended, and the strategy that
    answered (the one every door runs, `agent.session`), come instead."""
    data = response.model_dump(mode="json", exclude={"trace"})
    data["outcome"] = response.trace.outcome
    data["steps"] = len(response.trace.steps)
    data["strategy"] = response.trace.strategy
    return data


def ask_output_schema() -> dict[str, Any]:
    """The JSON Schema of `ask_result`: the response's own, without the trace."""
    schema = QueryAgentResponse.model_json_schema(mode="serialization")
    schema["properties"].pop("trace", None)
    schema["required"] = [name for name in schema.get("required", []) if name != "trace"]
    schema["properties"]["outcome"] = {"type": "string", "enum": list(get_args(StopReason))}
    schema["properties"]["steps"] = {"type": "integer", "minimum": 0}
    schema["properties"]["strategy"] = {"type": "string", "description": "The agent strategy that answered."}
    schema["properties"]["conversation_id"] = {"type": "string", "description": "Pass it to a follow-up's ask."}
    schema["required"] += ["outcome", "steps", "strategy", "conversation_id"]
    return _pruned(schema)


def _ask_text(response: QueryAgentResponse) -> str:
    lines = [response.final_answer or f"(no answer: {response.trace.outcome})"]
    if response.sources:
        lines.append("sources: " + ", ".join(f"{s.collection} {s.object_id}" for s in response.sources))
    if response.is_partial_answer:
        lines.append("partial answer: " + "; ".join(response.missing_information))
    return "\n".join(lines)


def _pruned(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` without the `$defs` nothing refers to any more."""
    definitions = schema.get("$defs", {})
    wanted: set[str] = set()
    pending: list[Any] = [{k: v for k, v in schema.items() if k != "$defs"}]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/") and ref[8:] not in wanted:
                wanted.add(ref[8:])
                pending.append(definitions.get(ref[8:]))
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    if definitions:
        schema["$defs"] = {name: definitions[name] for name in definitions if name in wanted}
        if not schema["$defs"]:
            del schema["$defs"]
    return schema


Handler = Callable[[Served, dict[str, Any]], tuple[str, dict[str, Any]]]
HANDLERS: dict[str, Handler] = {"ask": ask, "search": search, "query_database": query_database}


def tool_list(served: Served) -> list[types.Tool]:
    """The three tools with their input and output schemas (the query tool's is the model's own)."""
    import mcp_types as types  # the SDK (half a second) is imported here: every CLI command imports this module

    read_only = types.ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
    query_tool = served.session.tools.definitions()[0]
    search_input = SearchInput.model_json_schema()
    search_input["properties"]["collection"] = {
        "type": "string",
        "enum": served.schema.names(),
        "description": SearchInput.model_fields["collection"].description,
    }
    return [
        types.Tool(
            name="ask",
            description="Answer a question about the data with dbgorilla's agent: a model queries the database "
            "through query_database until it can answer. Returns the answer, its sources (objects the agent "
            "received) and what it rests on.",
            input_schema=AskInput.model_json_schema(),
            output_schema=ask_output_schema(),
            annotations=read_only,
        ),
        types.Tool(
            name="search",
            description="Retrieval only, no model: the objects closest in meaning to the query (cosine distance "
            "at most the executor's cut), closest first, from every collection offered or the one named.",
            input_schema=search_input,
            output_schema=SearchResult.model_json_schema(mode="serialization"),
            annotations=read_only,
        ),
        types.Tool(
            name="query_database",
            description=query_tool.description,
            input_schema=query_tool.parameters,
            output_schema=QueryDatabaseResult.model_json_schema(mode="serialization"),
            annotations=read_only,
        ),
    ]


def _error_result(payload: ErrorPayload) -> types.CallToolResult:
    import mcp_types as types

    return types.CallToolResult(
        content=[types.TextContent(text=f"Error ({payload.code}): {payload.message}")],
        structured_content={"error": payload.model_dump(mode="json")},
        is_error=True,
    )


def call(served: Served, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    """One tool call, synchronously: its result, or its typed failure as a tool error."""
    import mcp_types as types
    from mcp.shared.exceptions import MCPError

    handler = HANDLERS.get(name)
    if handler is None:  # the spec's case for a protocol error, not a tool error
        raise MCPError(code=types.INVALID_PARAMS, message=f"unknown tool {name!r}; tools: {', '.join(HANDLERS)}")
    try:
        text, structured = handler(served, arguments)
    except ToolFailure as failure:
        return _error_result(failure.payload)
    except Exception as error:  # a bug: logged with its traceback on stderr, typed for the client
        logger.exception("tool %s failed", name)
        return _error_result(ErrorPayload(code="internal_error", message=f"{type(error).__name__}: {error}"))
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=structured)


def build_server(served: Served) -> Server[Any]:
    import mcp_types as types
    from mcp.server import Server

    tools = tool_list(served)

    async def list_tools(_ctx: Any, _params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        # The agent and the executor block: a worker thread keeps the server answering meanwhile.
        return await anyio.to_thread.run_sync(call, served, params.name, dict(params.arguments or {}))

    return Server(
        SERVER_NAME,
        version="0.1.0",
        instructions="Read-only access to a Weaviate database: `ask` answers a question with dbgorilla's agent, "
        "`search` retrieves objects by meaning, `query_database` runs one query (search, filters, aggregations, "
        "group-by) and returns typed errors that say how to fix the call.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def serve_stdio(server: Server[Any]) -> None:
    from mcp.server.stdio import stdio_server

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)


def serve_http(server: Server[Any], port: int, on_ready: Callable[[str], None] = lambda _: None) -> None:
    """Streamable HTTP on 127.0.0.1 only (the SDK's DNS-rebinding protection on)."""
    import uvicorn

    app = server.streamable_http_app(streamable_http_path=HTTP_PATH, host=HOST)
    config = uvicorn.Config(app, host=HOST, port=port, log_level="warning")
    instance = uvicorn.Server(config)

    async def main() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(instance.serve)
            while not instance.started:
                await anyio.sleep(0.05)
            on_ready(f"http://{HOST}:{port}{HTTP_PATH}")

    anyio.run(main)
