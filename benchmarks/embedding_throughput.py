"""Vectorization throughput of the local text2vec-transformers service, in texts per second.

Measured side by side in one run: the encoder called in-process in batches (the ceiling), and
the HTTP service driven the way Weaviate drives it (one text per request, many in flight).
The ratio HTTP / in-process shows what the micro-batching recovers.

    .venv/bin/python benchmarks/embedding_throughput.py [--texts 2000] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

import httpx

from dbgorilla.config import Ports, Settings
from dbgorilla.services import EmbedderService
from llm.encoder import MiniLMEncoder

WORDS = [
    "spicy",
    "vegan",
    "ramen",
    "bistro",
    "cosy",
    "terrace",
    "seafood",
    "tasting",
    "menu",
    "wine",
    "pairing",
    "brunch",
    "espresso",
]


def corpus(count: int) -> list[str]:
    """Restaurant-like sentences of 12-40 words, all distinct."""
    return [" ".join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(12 + i % 29)) + f" #{i}" for i in range(count)]


def in_process(texts: list[str], batch: int) -> float:
    encoder = MiniLMEncoder()
    encoder.encode(texts[:batch])
    started = time.perf_counter()
    for start in range(0, len(texts), batch):
        encoder.encode(texts[start : start + batch])
    return len(texts) / (time.perf_counter() - started)


async def over_http(url: str, texts: list[str], concurrency: int) -> float:
    limits = httpx.Limits(max_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:
        gate = asyncio.Semaphore(concurrency)

        async def one(text: str) -> None:
            async with gate:
                reply = await client.post("/vectors", json={"text": text, "config": {"task_type": "passage"}})
                reply.raise_for_status()

        await asyncio.gather(*(one(t) for t in texts[:concurrency]))
        started = time.perf_counter()
        await asyncio.gather(*(one(t) for t in texts))
        return len(texts) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--texts", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--port", type=int, default=18786)
    args = parser.parse_args()
    texts = corpus(args.texts)
    direct = in_process(texts, args.batch)
    with tempfile.TemporaryDirectory() as state:
        service = EmbedderService(Settings(state_dir=Path(state), ports=Ports(embedder=args.port)))
        service.start(echo=lambda _: None)
        try:
            served = asyncio.run(over_http(service.url, texts, args.concurrency))
            meta = httpx.get(service.url + "/meta").json()
        finally:
            service.stop(echo=lambda _: None)
    print(f"cores: {os.cpu_count()}  texts: {args.texts}")
    print(f"in-process, batches of {args.batch}: {direct:8.1f} texts/s")
    print(f"HTTP /vectors, {args.concurrency} in flight: {served:8.1f} texts/s")
    print(f"ratio HTTP / in-process: {served / direct:.2f}")
    print(f"mean micro-batch size: {meta['texts_encoded'] / max(1, meta['batches_run']):.1f}")


if __name__ == "__main__":
    main()
