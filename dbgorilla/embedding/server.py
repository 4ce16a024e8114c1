"""The HTTP API of Weaviate's `text2vec-transformers` inference container, served locally.

Weaviate's module client (usecases/modulecomponents/clients/transformers) calls:
  GET  /.well-known/ready                       readiness, any 2xx
  GET  /meta                                    model metadata, a JSON object
  POST /vectors  {"text", "config": {...}}      -> {"text", "dims", "vector"}; errors as {"error"}
Weaviate sends one text per request, many requests at once, so requests are gathered into
micro-batches: one ONNX run serves every request that arrived within a couple of milliseconds.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from llm.encoder import DIMENSIONS, MAX_TOKENS, MODEL_ID, MiniLMEncoder

MAX_BATCH = 64
GATHER_SECONDS = 0.002


@dataclass
class _Pending:
    text: str
    future: asyncio.Future[list[float]]


@dataclass
class MicroBatcher:
    encoder: MiniLMEncoder
    queue: asyncio.Queue[_Pending] = field(default_factory=asyncio.Queue)
    texts_encoded: int = 0
    batches_run: int = 0

    async def embed(self, text: str) -> list[float]:
        future: asyncio.Future[list[float]] = asyncio.get_running_loop().create_future()
        await self.queue.put(_Pending(text, future))
        return await future

    async def run(self) -> None:
        while True:
            batch = [await self.queue.get()]
            deadline = time.monotonic() + GATHER_SECONDS
            while len(batch) < MAX_BATCH:
                remaining = deadline - time.monotonic()
                try:
                    batch.append(
                        self.queue.get_nowait()
                        if remaining <= 0
                        else await asyncio.wait_for(self.queue.get(), remaining)
                    )
                except (asyncio.TimeoutError, asyncio.QueueEmpty):
                    break
            try:
                vectors = await asyncio.to_thread(self.encoder.encode, [item.text for item in batch])
            except Exception as error:  # the encoder failed: every waiting request gets the error
                for item in batch:
                    if not item.future.done():
                        item.future.set_exception(error)
                continue
            self.texts_encoded += len(batch)
            self.batches_run += 1
            for item, vector in zip(batch, vectors, strict=True):
                if not item.future.done():
                    item.future.set_result(vector.tolist())


def create_app(encoder: MiniLMEncoder | None = None) -> FastAPI:
    state: dict[str, MicroBatcher] = {}

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        batcher = MicroBatcher(encoder or await asyncio.to_thread(MiniLMEncoder))
        state["batcher"] = batcher
        task = asyncio.create_task(batcher.run())
        yield
        task.cancel()

    app = FastAPI(title="dbgorilla text2vec-transformers inference", docs_url=None, redoc_url=None, lifespan=lifespan)

    @app.get("/.well-known/ready")
    @app.get("/.well-known/live")
    async def ready() -> Response:
        return Response(status_code=204 if "batcher" in state else 503)

    @app.get("/meta")
    async def meta() -> dict[str, object]:
        batcher = state.get("batcher")
        return {
            "model": {
                "_name_or_path": MODEL_ID,
                "hidden_size": DIMENSIONS,
                "max_position_embeddings": MAX_TOKENS,
                "runtime": "onnxruntime-int8",
            },
            "texts_encoded": batcher.texts_encoded if batcher else 0,
            "batches_run": batcher.batches_run if batcher else 0,
        }

    @app.post("/vectors")
    @app.post("/vectors/")
    async def vectors(request: Request) -> JSONResponse:
        try:
            body = await request.json()
        except ValueError:
            return JSONResponse({"error": "request body is not JSON"}, status_code=400)
        text = body.get("text") if isinstance(body, dict) else None
        if not isinstance(text, str):
            return JSONResponse({"error": "field 'text' must be a string"}, status_code=400)
        try:
            vector = await state["batcher"].embed(text)
        except Exception as error:
            return JSONResponse({"text": text, "error": f"vectorization failed: {error}"}, status_code=500)
        return JSONResponse({"text": text, "dims": DIMENSIONS, "dim": DIMENSIONS, "vector": vector})

    return app


def serve(host: str, port: int) -> None:
    import uvicorn

    uvicorn.run(create_app(), host=host, port=port, log_level="warning", access_log=False)
