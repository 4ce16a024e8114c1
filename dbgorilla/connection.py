"""One way to open a weaviate-client v4 connection, whatever the backend.

`WEAVIATE_URL` (with `WEAVIATE_API_KEY`, optionally `WEAVIATE_GRPC_URL`) points everything at a
cluster or Weaviate Cloud; otherwise the local server of `dbgorilla up` is used. Every client it
returns has passed `executors.endpoints.check_same_database`: its REST and gRPC endpoints reach
one Weaviate, so ownership checks (REST) and writes (gRPC) never land in two databases.
"""

from __future__ import annotations

import os
from urllib.parse import urlparse

import weaviate
from weaviate.classes.init import AdditionalConfig, Auth, Timeout

from dbgorilla.config import Settings
from dbgorilla.errors import ConfigError
from executors.endpoints import EndpointMismatch, check_same_database

CLOUD_SUFFIXES = (".weaviate.cloud", ".weaviate.network", ".wcs.api.weaviate.io")


class EndpointsDiffer(ConfigError):
    """The configured REST and gRPC addresses reach two different Weaviates (exit 9, nothing written)."""


def connect(
    settings: Settings | None = None, timeout_seconds: float = 60.0, headers: dict[str, str] | None = None
) -> weaviate.WeaviateClient:
    """A client for the configured Weaviate whose REST and gRPC endpoints are proven to be one server;
    `headers` go with every request (a caller's bearer token, a vectorizer's key)."""
    client = _open(settings or Settings(), timeout_seconds, headers or None)
    try:
        check_same_database(client)
    except EndpointMismatch as error:
        client.close()
        raise EndpointsDiffer(str(error)) from None
    except BaseException:
        client.close()
        raise
    return client


def _open(settings: Settings, timeout_seconds: float, headers: dict[str, str] | None) -> weaviate.WeaviateClient:
    config = AdditionalConfig(timeout=Timeout(init=10, query=timeout_seconds, insert=max(120.0, timeout_seconds)))
    url = os.environ.get("WEAVIATE_URL")
    key = os.environ.get("WEAVIATE_API_KEY")
    auth = Auth.api_key(key) if key else None
    if not url:
        return weaviate.connect_to_local(
            host=settings.host,
            port=settings.ports.weaviate_http,
            grpc_port=settings.ports.weaviate_grpc,
            headers=headers,
            additional_config=config,
        )
    parsed = urlparse(url if "://" in url else f"https://{url}")
    host = parsed.hostname or ""
    if host.endswith(CLOUD_SUFFIXES):
        return weaviate.connect_to_weaviate_cloud(
            cluster_url=url, auth_credentials=auth, headers=headers, additional_config=config
        )
    secure = parsed.scheme == "https"
    grpc = urlparse(os.environ.get("WEAVIATE_GRPC_URL", ""))
    return weaviate.connect_to_custom(
        http_host=host,
        http_port=parsed.port or (443 if secure else 80),
        http_secure=secure,
        grpc_host=grpc.hostname or host,
        grpc_port=grpc.port or int(os.environ.get("WEAVIATE_GRPC_PORT", "50051")),
        grpc_secure=(grpc.scheme == "https") if grpc.scheme else secure,
        auth_credentials=auth,
        headers=headers,
        additional_config=config,
    )
