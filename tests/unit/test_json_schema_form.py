"""The model server's request translation (`dbgorilla.llm_server.forms`): OpenAI's `json_schema` form asked as
llama-cpp-python's `json_object` with the schema, through a real ASGI app and HTTP client."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from dbgorilla.llm_server.forms import COMPLETIONS_PATH, JsonSchemaForm, as_json_object

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def test_a_json_schema_request_is_asked_as_json_object_with_its_schema() -> None:
    body = {"messages": [], "response_format": {"type": "json_schema", "json_schema": {"name": "w", "schema": SCHEMA}}}
    asked = json.loads(as_json_object(json.dumps(body).encode()))
    assert asked == {"messages": [], "response_format": {"type": "json_object", "schema": SCHEMA}}


def test_other_bodies_are_left_as_sent() -> None:
    for body in (
        b"not json",
        b"[1, 2]",
        json.dumps({"messages": []}).encode(),
        json.dumps({"response_format": {"type": "json_object", "schema": SCHEMA}}).encode(),
        json.dumps({"response_format": {"type": "json_schema", "json_schema": {"name": "no schema"}}}).encode(),
    ):
        assert as_json_object(body) is body


def _echo_app() -> Starlette:
    async def echo(request: Request) -> JSONResponse:
        return JSONResponse({"path": request.url.path, "body": json.loads(await request.body())})

    routes = [Route(COMPLETIONS_PATH, echo, methods=["POST"]), Route("/v1/other", echo, methods=["POST"])]
    app = Starlette(routes=routes)
    app.add_middleware(JsonSchemaForm)
    return app


def _post(path: str, body: dict[str, Any]) -> dict[str, Any]:
    async def send() -> dict[str, Any]:
        transport = httpx.ASGITransport(app=_echo_app())
        async with httpx.AsyncClient(transport=transport, base_url="http://server") as client:
            response = await client.post(path, json=body)
            response.raise_for_status()
            return dict(response.json())

    return asyncio.run(send())


def test_the_server_reads_a_completion_request_in_the_form_it_takes() -> None:
    wanted = {"type": "json_schema", "json_schema": {"name": "w", "schema": SCHEMA}}
    seen = _post(COMPLETIONS_PATH, {"model": "m", "response_format": wanted})
    assert seen["body"] == {"model": "m", "response_format": {"type": "json_object", "schema": SCHEMA}}
    other = _post("/v1/other", {"response_format": wanted})  # only the completions route is translated
    assert other["body"] == {"response_format": wanted}
