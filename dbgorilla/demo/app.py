"""The demo page's server: FastAPI, one question at a time, each step streamed as a server-sent event.

The page (`static/`, shipped in the package, nothing fetched from elsewhere) posts a question with the
choices made on it; the answer streams back as `turn`, `call`, `answer` or `error` events while the
agent session runs in a worker thread. Only 127.0.0.1 serves it, and only requests naming a loopback
host are answered (a page elsewhere that rebinds its name to 127.0.0.1 is refused).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import uvicorn
from fastapi import FastAPI
from fastapi.responses import FileResponse, JSONResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field
from starlette.middleware.trustedhost import TrustedHostMiddleware

from agent.conversation import Turn
from agent.session import AgentSession
from agent.strategies import DEFAULT_STRATEGY
from agent.tooldef import DEFAULT_OPERATIONS
from dbgorilla.demo.events import Event, ObservedModel, answer_event, call_event, error_event, sse
from dbgorilla.errors import ConfigError
from dbgorilla.exit_codes import exit_code_of
from evaluation.records import ResultsFileError
from evaluation.report import ReportError
from evaluation.report.html import run_view
from evaluation.report.runs import load_run
from executors import ExecutorError
from llm import ModelError

HOST = "127.0.0.1"
DEFAULT_PORT = 8770
STATIC = Path(__file__).parent / "static"
log = logging.getLogger("dbgorilla.demo")


class Choice(BaseModel):
    """What the page asks with: the question and the choices made beside it."""

    question: str = ""
    use_case: str | None = None
    #: Collections of the connected Weaviate, comma-separated (instead of a use case).
    collections: str | None = None
    model: str | None = None
    base_url: str | None = None
    #: Every door's default (`agent.strategies.DEFAULT_STRATEGY`) when the page leaves it blank.
    strategy: str = DEFAULT_STRATEGY
    operations: str = DEFAULT_OPERATIONS.value
    #: The conversation so far on the page, oldest first: each question and the answer it got.
    history: list[dict[str, str]] = Field(default_factory=list)


class Backend(Protocol):
    """Where sessions come from (`dbgorilla.cli.demo` opens them as `ask` does)."""

    def options(self) -> dict[str, Any]: ...

    def session(self, choice: Choice) -> AgentSession: ...

    def forget_model(self, choice: Choice) -> None: ...

    def fetch_object(self, use_case: str | None, collection: str, uuid: str) -> dict[str, Any] | None: ...

    def turns(self, pairs: list[tuple[str, str]]) -> list[Turn]: ...

    def remember(self, turn: Turn) -> None: ...


def build_app(backend: Backend) -> FastAPI:
    """The page, its options, `POST /api/ask` (a stream of events), `GET /api/object` (a source's properties),
    and `/run`, the page of a finished eval run (`GET /api/run?path=RUN_DIR`)."""
    app = FastAPI(title="dbgorilla demo", docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=[HOST, "localhost"])
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    busy = threading.Lock()

    @app.get("/")
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    @app.get("/api/options")
    def options() -> dict[str, Any]:
        return backend.options()

    @app.get("/api/object")
    def fetch_object(collection: str, uuid: str, use_case: str | None = None) -> Response:
        try:
            found = backend.fetch_object(use_case or None, collection, uuid)
        except Exception as error:  # a bad name or id is the reader's message, not a server error
            return JSONResponse({"error": _described(error)[1]}, status_code=400)
        if found is None:
            return JSONResponse({"error": f"no object {uuid} in {collection}"}, status_code=404)
        return JSONResponse(found)

    @app.get("/run")
    def run_page() -> FileResponse:
        return FileResponse(STATIC / "run.html")

    @app.get("/api/run")
    def finished_run(path: str) -> JSONResponse:
        """An eval run directory read as the report reads it (`evaluation.report`), every question."""
        try:
            return JSONResponse(json.loads(json.dumps(run_view(load_run(Path(path).expanduser())), default=str)))
        except (ReportError, ResultsFileError) as error:
            return JSONResponse({"error": str(error)}, status_code=400)

    @app.post("/api/ask")
    async def ask(choice: Choice) -> Response:
        if not choice.question.strip():
            return JSONResponse({"error": "Type a question first."}, status_code=400)
        if not busy.acquire(blocking=False):
            message = "A question is already running: its answer comes first, then ask again."
            return JSONResponse({"error": message}, status_code=409)
        loop = asyncio.get_running_loop()
        events: asyncio.Queue[Event | None] = asyncio.Queue()

        def emit(event: Event | None) -> None:
            with contextlib.suppress(RuntimeError):  # the server is shutting down: nobody is listening
                loop.call_soon_threadsafe(events.put_nowait, event)

        threading.Thread(target=answer, args=(backend, choice, emit, busy.release), daemon=True).start()

        async def stream() -> Any:
            while (event := await events.get()) is not None:
                yield sse(event)

        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)

    return app


def answer(backend: Backend, choice: Choice, emit: Callable[[Event | None], None], done: Callable[[], None]) -> None:
    """Open the session, run the question, emit each turn and call as it finishes, then the answer.
    Any failure becomes one `error` event; the lock is released and the stream closed whatever happens."""
    try:
        session = backend.session(choice)
        observed = ObservedModel(session.model, emit)
        session = session.with_model(observed)
        emit(
            {
                "type": "started",
                "question": choice.question.strip(),
                "model": getattr(observed.inner, "name", "?"),
                "strategy": session.strategy,
                "tools": session.tools.design.label(),
                "collections": session.collection_names,
            }
        )
        earlier = backend.turns([(h.get("question", ""), h.get("answer", "")) for h in choice.history])
        run = session.run(
            choice.question.strip(), lambda step, call: emit(call_event(step, call, observed.last_turn)), earlier
        )
        backend.remember(session.turn_of(run, earlier))
        if run.outcome in ("model_error", "timeout"):
            backend.forget_model(choice)  # proved again before the next question
        emit(answer_event(run, session.collection_names))
    except Exception as error:
        kind, message = _described(error)
        if kind == "internal":
            log.exception("demo question failed")
        emit(error_event(kind, message))
    finally:
        done()
        emit(None)


def _described(error: Exception) -> tuple[str, str]:
    """A failure's kind and one line for the page."""
    if isinstance(error, ConfigError):
        return "configuration", str(error)
    if isinstance(error, ExecutorError):
        return error.code, str(error)
    if isinstance(error, ModelError):
        return "model", str(error)
    if exit_code_of(error) is not None:  # a typed error of ours: its message names the way out
        return type(error).__name__, str(error)
    return "internal", f"{type(error).__name__}: {error} (details in the server's log)"


def serve(app: FastAPI, port: int, on_ready: Callable[[str], None]) -> None:
    """Serve on 127.0.0.1 only, until interrupted."""
    config = uvicorn.Config(app, host=HOST, port=port, log_level="warning", timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)

    async def main() -> None:
        task = asyncio.create_task(server.serve())
        while not server.started and not task.done():
            await asyncio.sleep(0.05)
        if server.started:
            on_ready(f"http://{HOST}:{port}/")
        await task

    asyncio.run(main())
