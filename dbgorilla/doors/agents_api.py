"""`dbgorilla serve`: the hosted Query Agent's API, served locally, for its own Python client.

An app written for Weaviate's hosted Query Agent runs unchanged against a local Weaviate and a local
model: `QueryAgent(client, collections=[...], agents_host="http://127.0.0.1:8770")`. The client posts
to `/query/ask`, `/query/stream_ask`, `/query/search_only` and `/query/suggest_queries`, with the
Weaviate it is connected to in `X-Weaviate-Cluster-Url`; each request runs the agent session every
other door runs (`agent.session.AgentSession`), and the reply is what the client parses
(`dbgorilla.doors.agents_wire`). A conversation (the client's `ChatMessage` list) keeps what the earlier
answers found (`agent.conversation`), by the turns this server answered.

Only 127.0.0.1 serves it, only requests naming a loopback host are answered, and a request whose
cluster URL is not the Weaviate this server was started against is refused before anything runs:
the server never becomes a way to reach another host. What cannot be served (research mode, an
`output_format`, a `system_prompt`, tenants, named vectors, view properties) is refused on the
client's own error path with the reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Protocol
from urllib.parse import urlparse

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from agent.conversation import conversation_of
from agent.query_agent import response_of, summary_line
from agent.session import AgentSession
from dbgorilla.doors.agents_wire import WireError, aggregations_of, collections_of, search_of
from executors import ExecutorError
from executors.scope import Scope
from llm import ModelError

DEFAULT_PORT = 8770
HOST = "127.0.0.1"
LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}
#: How a run ends when the model, not the data, failed (with no call made, there is nothing to answer from).
MODEL_FAILURES = ("model_error", "timeout")
#: Words of the final answer per `streamed_tokens` event.
WORDS_PER_DELTA = 3
log = logging.getLogger("dbgorilla.serve")


class Backend(Protocol):
    """What the routes need: a session per set of collections, the turns answered, the search runner."""

    weaviate_url: str

    def session(self, names: list[str], scope: Scope | None, headers: dict[str, str]) -> AgentSession: ...

    def remembered(self, pairs: list[tuple[str, str]]) -> list[Any]: ...

    def remember(self, turn: Any) -> None: ...

    def run_searches(self, session: AgentSession, searches: list[dict[str, Any]], limit: int, offset: int) -> Any: ...

    def suggestions(self, session: AgentSession, count: int) -> list[str]: ...


class Refused(Exception):
    """A request this server answers with an error the client raises: (HTTP status, code, message)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def _endpoint(url: str) -> tuple[str, str, int]:
    parsed = urlparse(url if "://" in url else f"http://{url}")
    host = (parsed.hostname or "").lower()
    host = "loopback" if host in LOOPBACK else host
    return parsed.scheme or "http", host, parsed.port or (443 if parsed.scheme == "https" else 80)


def check_cluster(named: str | None, own: str) -> None:
    """Refuse a request for any Weaviate but this server's (loopback names are one host)."""
    if not named:
        raise Refused(400, "missing_cluster_url", "the request names no Weaviate (X-Weaviate-Cluster-Url)")
    if _endpoint(named) != _endpoint(own):
        raise Refused(
            403,
            "foreign_cluster",
            f"this local Query Agent serves only the Weaviate at {own}; the request named another. "
            "Connect your client to that Weaviate, or start `dbgorilla serve` against yours (WEAVIATE_URL).",
        )


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "code": code, "details": {}}}, status_code=status)


def _refused_of(error: Exception) -> Refused:
    if isinstance(error, Refused):
        return error
    if isinstance(error, WireError):
        return Refused(422 if error.code == "unsupported" else 400, error.code, error.message)
    if isinstance(error, ExecutorError):
        return Refused(400, error.code, str(error))
    if isinstance(error, ModelError):
        return Refused(502, "model_error", f"the model failed: {error}")
    if isinstance(error, ValueError):
        return Refused(400, "invalid_request", str(error))
    log.exception("a request failed")
    return Refused(500, "internal", f"{type(error).__name__}: {error} (details in the server's log)")


def _unserved(body: dict[str, Any]) -> None:
    """Features of the hosted agent the local one does not serve, refused by name."""
    if body.get("output_format") is not None:
        raise WireError("`output_format` is not served: the local model answers in its own committed form")
    if body.get("system_prompt"):
        raise WireError("`system_prompt` is not served: the local agent's prompts are its own (see docs/serving.md)")


def _question(query: Any) -> tuple[str, list[tuple[str, str]]]:
    if isinstance(query, str):
        if not query.strip():
            raise WireError("the query is empty", "invalid_request")
        return query.strip(), []
    if isinstance(query, dict) and isinstance(query.get("messages"), list):
        return conversation_of(query["messages"])
    raise WireError("the query is a string or {'messages': [...]}", "invalid_request")


class Asked:
    """One ask request, parsed and checked: the session, the question, and the conversation before it."""

    def __init__(self, backend: Backend, body: dict[str, Any], headers: dict[str, str]) -> None:
        _unserved(body)
        names, scope = collections_of(body.get("collections") or [])
        self.question, pairs = _question(body.get("query", body.get("original_query")))
        self.session = backend.session(names, scope, headers)
        self.earlier = backend.remembered(pairs)
        self.backend = backend

    def run(self, on_call: Any = None) -> dict[str, Any]:
        """The question answered, remembered as a turn, as the client's `AskModeResponse`."""
        run = self.session.run(self.question, on_call, self.earlier)
        if run.outcome in MODEL_FAILURES and not run.calls():  # no answer at all: the client's error path
            raise Refused(502, run.outcome, f"the model failed: {run.error or run.outcome}")
        self.backend.remember(self.session.turn_of(run, self.earlier))
        ran = self.session.ran(run)
        response = response_of(run, self.session.collection_names)
        searches = [search_of(spec) for call, spec in ran if not _aggregated(call)]
        aggregations = [a for call, spec in ran if _aggregated(call) for a in aggregations_of(spec)]
        return {
            "output_type": "final_state",
            "searches": searches,
            "aggregations": aggregations,
            "usage": usage_of(len(run.steps) + (run.commit is not None)),
            "total_time": response.total_time,
            "is_partial_answer": response.is_partial_answer,
            "missing_information": response.missing_information,
            "final_answer": response.final_answer,
            "sources": [s.model_dump() for s in response.sources],
        }


def _aggregated(call: Any) -> bool:
    return bool(call.result is not None and (call.result.aggregations or call.result.groups is not None))


def _plain_search(question: str, collection: str) -> dict[str, Any]:
    return {"query": question, "filters": None, "collection": collection, "sort_property": None, "uuid_value": None}


def usage_of(requests: int) -> dict[str, Any]:
    """The client's `ModelUnitUsage`: the agent's model turns (its steps and its commit turn); a local
    server has no plan (-1: no limit)."""
    return {"model_units": requests, "usage_in_plan": False, "remaining_plan_requests": -1}


def progress_of(step: int, call: Any) -> dict[str, Any]:
    """One finished call as the client's `ProgressMessage`."""
    arguments = call.arguments or {}
    query = {"query": str(arguments.get("search_query") or ""), "collection": str(arguments.get("collection_name"))}
    if call.error is not None:
        message = f"error ({call.error.code}): {call.error.message}"
    else:
        message = summary_line(call) if call.result is not None else ""
    return {
        "output_type": "progress_message",
        "stage": f"step {step + 1}",
        "message": message,
        "details": {"queries": [query]},
    }


def sse(event: str, data: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json.dumps(data, default=str)}\n\n"


def deltas(text: str) -> Iterator[str]:
    """The final answer in pieces of a few words (it is streamed once committed and checked)."""
    words = text.split(" ")
    for start in range(0, len(words), WORDS_PER_DELTA):
        yield " ".join(words[start : start + WORDS_PER_DELTA]) + (" " if start + WORDS_PER_DELTA < len(words) else "")


def add_routes(app: FastAPI, backend: Backend) -> FastAPI:
    """The Query Agent's routes on `app` (the demo page's server: one port serves both; it already
    answers only requests naming a loopback host)."""

    def checked(request: Request) -> dict[str, str]:
        check_cluster(request.headers.get("x-weaviate-cluster-url"), backend.weaviate_url)
        token = request.headers.get("authorization", "").strip()
        return {"Authorization": token} if token else {}

    def answered(request: Request, body: dict[str, Any], work: Callable[[dict[str, str]], Any]) -> Response:
        try:
            return JSONResponse(work(checked(request) | _passed(body)))
        except Exception as error:
            refused = _refused_of(error)
            return _error(refused.status, refused.code, refused.message)

    @app.post("/query/ask")
    def ask(request: Request, body: dict[str, Any]) -> Response:
        return answered(request, body, lambda headers: Asked(backend, body, headers).run())

    @app.post("/query/stream_ask")
    async def stream_ask(request: Request, body: dict[str, Any]) -> Response:
        try:
            asked = Asked(backend, body, checked(request) | _passed(body))
        except Exception as error:
            refused = _refused_of(error)
            return _error(refused.status, refused.code, refused.message)
        return _streamed(asked)

    @app.post("/query/search_only")
    def search_only(request: Request, body: dict[str, Any]) -> Response:
        return answered(request, body, lambda headers: _searched(backend, body, headers))

    @app.post("/query/suggest_queries")
    def suggest_queries(request: Request, body: dict[str, Any]) -> Response:
        return answered(request, body, lambda headers: _suggested(backend, body, headers))

    @app.post("/query/stream_research")
    @app.post("/agent/query")
    @app.post("/agent/stream_query")
    def unserved(request: Request) -> Response:
        what = "research mode" if request.url.path.endswith("research") else "the deprecated `run`/`stream`"
        return _error(501, "not_served", f"{what} is not served by the local Query Agent; use ask or ask_stream")

    return app


def _streamed(asked: Asked) -> StreamingResponse:
    """The ask as server-sent events: the agent runs in a thread (it blocks), each finished call, the
    answer's pieces and the final state are queued to the event loop as they come. Called on the loop."""
    loop = asyncio.get_running_loop()
    events: asyncio.Queue[str | None] = asyncio.Queue()

    def emit(item: str | None) -> None:
        with contextlib.suppress(RuntimeError):  # the server is shutting down: nobody is listening
            loop.call_soon_threadsafe(events.put_nowait, item)

    def work() -> None:
        try:
            final = asked.run(lambda step, call: emit(sse("progress_message", progress_of(step, call))))
            for delta in deltas(final["final_answer"]):
                emit(sse("streamed_tokens", {"output_type": "streamed_tokens", "delta": delta}))
            emit(sse("final_state", final))
        except Exception as error:
            refused = _refused_of(error)
            emit(sse("error", {"error": {"message": refused.message, "code": refused.code}}))
        finally:
            emit(None)

    threading.Thread(target=work, daemon=True).start()

    async def stream() -> Any:
        while (item := await events.get()) is not None:
            yield item

    return StreamingResponse(stream(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})


def _searched(backend: Backend, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    """A search_only page: the agent writes the searches for the first page, a later page sends them back."""
    started = time.perf_counter()
    limit, offset = int(body.get("limit", 20)), int(body.get("offset", 0))
    if limit < 1 or offset < 0:
        raise WireError("limit is at least 1 and offset at least 0", "invalid_request")
    searches, requests = body.get("searches"), 0
    if searches is None:  # the first page: the agent writes the searches
        asked = Asked(backend, body, headers)
        run = asked.session.run(asked.question, None, asked.earlier)
        ran = asked.session.ran(run)
        searches = [search_of(spec) for _, spec in ran]
        requests, session = len(run.steps), asked.session
        if not searches:  # the agent wrote none (it refused, say): the question is the search
            searches = [_plain_search(asked.question, name) for name in session.collection_names]
    else:
        _unserved(body)
        names, scope = collections_of(body.get("collections") or [])
        session = backend.session(names, scope, headers)
    objects = backend.run_searches(session, searches, limit, offset)
    return {
        "searches": searches,
        "usage": usage_of(requests),
        "total_time": round(time.perf_counter() - started, 3),
        "search_results": {"objects": objects},
    }


def _suggested(backend: Backend, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    """The client's `suggest_queries` reply: questions the session's collections could answer."""
    started = time.perf_counter()
    names, scope = collections_of(body.get("collections") or [])
    session = backend.session(names, scope, headers)
    queries = backend.suggestions(session, max(1, int(body.get("num_queries", 3))))
    return {
        "queries": [{"query": q} for q in queries],
        "collection_count": len(names),
        "usage": usage_of(0),
        "total_time": round(time.perf_counter() - started, 3),
    }


def _passed(body: dict[str, Any]) -> dict[str, str]:
    """The client's connection headers (a vectorizer's key, say), passed to Weaviate as they came."""
    headers = body.get("headers") or {}
    if not isinstance(headers, dict):
        raise WireError("headers is an object", "invalid_request")
    return {str(k): str(v) for k, v in headers.items()}
