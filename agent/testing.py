"""Test doubles for models, in the spirit of pydantic-ai's `TestModel`/`FunctionModel`.

`MockOpenAIServer` is a real HTTP server speaking the chat-completions protocol, scripted per
test, so the real `openai` client (retries, timeouts, parsing) is exercised end to end.
`FunctionModel` is the in-process variant for loop logic that needs no HTTP: it reads the
provider-neutral messages (`llm.messages`) directly.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from llm import ChatRequest, ModelMessage, ModelReply, RawToolCall, ToolDefinition
from llm.providers.openai_compatible import is_probe


@dataclass
class Reply:
    """One scripted answer: a message, an HTTP error, or a hang."""

    content: str | None = None
    tool_calls: list[tuple[str, str | dict[str, Any]]] = field(default_factory=list)
    status: int = 200
    error_message: str = "scripted error"
    hang_seconds: float = 0.0
    #: Reported as `usage.prompt_tokens_details.cached_tokens` when set (as OpenAI and llm_server do).
    cached_tokens: int | None = None

    def body(self, model: str, index: int) -> dict[str, Any]:
        calls = [
            {
                "id": f"call_{index}_{n}",
                "type": "function",
                "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
            }
            for n, (name, args) in enumerate(self.tool_calls)
        ]
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if calls:
            message["tool_calls"] = calls
        usage: dict[str, Any] = {"prompt_tokens": 100 + index, "completion_tokens": 10, "total_tokens": 110 + index}
        if self.cached_tokens is not None:
            usage["prompt_tokens_details"] = {"cached_tokens": self.cached_tokens}
        return {
            "id": f"chatcmpl-{index}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": usage,
        }


def call(name: str, arguments: str | dict[str, Any]) -> Reply:
    return Reply(tool_calls=[(name, arguments)])


def text(content: str) -> Reply:
    return Reply(content=content)


Script = list[Reply] | Callable[[dict[str, Any], int], Reply]


class MockOpenAIServer:
    """`POST /v1/chat/completions` answered from a script; every request body is recorded."""

    def __init__(self, script: Script, model: str = "mock-model") -> None:
        self.script = script
        self.model = model
        self.requests: list[dict[str, Any]] = []
        #: Proving requests answered (`openai_compatible.is_probe`), kept out of `requests` and the script.
        self.probes = 0
        self.authorizations: list[str | None] = []
        self.port = _free_port()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _next(self, body: dict[str, Any]) -> Reply:
        if is_probe(body):  # the check before the first question: answered like any endpoint, not scripted
            self.probes += 1
            return Reply(content="OK")
        index = len(self.requests)
        self.requests.append(body)
        if callable(self.script):
            return self.script(body, index)
        if index >= len(self.script):
            return Reply(status=500, error_message=f"script exhausted after {len(self.script)} replies")
        return self.script[index]

    def _app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/v1/chat/completions")
        async def completions(request: Request) -> JSONResponse:
            body = await request.json()
            self.authorizations.append(request.headers.get("authorization"))
            reply = self._next(body)
            if reply.hang_seconds:
                await asyncio.sleep(reply.hang_seconds)
            if reply.status != 200:
                error = {"error": {"message": reply.error_message, "type": "scripted", "code": reply.status}}
                return JSONResponse(error, status_code=reply.status)
            return JSONResponse(reply.body(self.model, len(self.requests)))

        return app

    def __enter__(self) -> MockOpenAIServer:
        config = uvicorn.Config(
            self._app(), host="127.0.0.1", port=self.port, log_level="error", timeout_graceful_shutdown=1
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("mock OpenAI server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        self._server.should_exit = True
        self._thread.join(timeout=10)


class FunctionModel:
    """A chat model whose replies come from a Python function of the conversation and the tools offered
    (None when none are)."""

    prefers_named_tool_choice = False

    def __init__(self, function: Callable[[list[ModelMessage], list[ToolDefinition] | None], ModelReply]) -> None:
        self.name = "function-model"
        self.function = function
        #: Each request's messages, tool choice and response format, in order.
        self.calls: list[dict[str, Any]] = []

    def complete(self, request: ChatRequest) -> ModelReply:
        asked = {"messages": list(request.messages), "tool_choice": request.tool_choice}
        self.calls.append({**asked, "response_format": request.response_format})
        return self.function(list(request.messages), request.tools or None)


def tool_reply(name: str, arguments: dict[str, Any]) -> ModelReply:
    return ModelReply(tool_calls=[RawToolCall(id="fn-1", name=name, arguments=json.dumps(arguments))])


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
