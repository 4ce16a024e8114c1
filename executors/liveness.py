"""Is Weaviate answering? One quiet probe for every layer that must fail fast on a dead server.

Why not `client.is_live()`: on a refused connection it `print`s "Connection to Weaviate failed.
Details:" to stdout, which an eval repeated once per case. This asks the same HTTP endpoint
(unauthenticated, milliseconds, no retries) without printing.
"""

from __future__ import annotations

from typing import Any

import httpx

TIMEOUT_SECONDS = 2.0


def weaviate_is_live(client: Any) -> bool:
    """GET /v1/.well-known/live on the client's HTTP URL; False on any transport error."""
    url = getattr(getattr(client, "_connection", None), "url", None)
    if not isinstance(url, str):
        return bool(client.is_live())
    try:
        return httpx.get(f"{url.rstrip('/')}/v1/.well-known/live", timeout=TIMEOUT_SECONDS).status_code == 200
    except httpx.HTTPError:
        return False
