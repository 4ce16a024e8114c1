"""`dbgorilla up --backend cluster`: three Weaviate nodes on loopback that form one cluster.

Each node is the pinned weaviate-server with its own state folder and its own ports, offset from
the configured ones: HTTP and gRPC by the node's index, gossip and Raft by twice the index (each
uses the next port too: data = gossip + 1, raft-rpc = raft + 1). Nodes 2 and 3 join node 1's
gossip port; all three name each other in RAFT_JOIN and wait for three voters. This is how
Weaviate's own development script runs a cluster on one machine; on real hosts the same settings
take one node per host with the default ports (see docs/operations.md, "cluster").
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import httpx

from dbgorilla._process import wait_until
from dbgorilla.config import Settings
from dbgorilla.services import Echo, ServiceStatus, WeaviateService

CLUSTER_SIZE = 3


def node_name(index: int) -> str:
    return f"dbgorilla-node{index + 1}"


def node_settings(settings: Settings, index: int) -> Settings:
    """Node `index`'s own state folder and ports; node 0 keeps the configured HTTP and gRPC ports."""
    p = settings.ports
    ports = replace(
        p,
        weaviate_http=p.weaviate_http + index,
        weaviate_grpc=p.weaviate_grpc + index,
        gossip=p.gossip + 2 * index,
        raft=p.raft + 2 * index,
        profiling=p.profiling + index,
    )
    return replace(settings, state_dir=settings.state_dir / "cluster" / node_name(index), ports=ports)


class ClusterNode(WeaviateService):
    """One voter of the cluster. Its embedder is the stack's, at the configured embedder port."""

    def __init__(self, settings: Settings, index: int, size: int = CLUSTER_SIZE) -> None:
        super().__init__(node_settings(settings, index))
        self.index = index
        self.size = size
        self.base = settings
        self.node_name = node_name(index)
        self.name = f"weaviate-{self.node_name}"

    def cluster_environment(self) -> dict[str, str]:
        first = node_settings(self.base, 0).ports
        peers = [f"{node_name(i)}:{node_settings(self.base, i).ports.raft}" for i in range(self.size)]
        env = {"RAFT_BOOTSTRAP_EXPECT": str(self.size), "RAFT_JOIN": ",".join(peers)}
        if self.index > 0:
            env["CLUSTER_JOIN"] = f"{self.base.host}:{first.gossip}"
        return env


def nodes(settings: Settings, size: int = CLUSTER_SIZE) -> list[ClusterNode]:
    return [ClusterNode(settings, index, size) for index in range(size)]


def cluster_members(url: str) -> dict[str, str]:
    """Node name -> status, as the node at `url` sees the cluster (an empty map when it does not answer)."""
    try:
        body = httpx.get(f"{url}/v1/nodes", timeout=5).json()
    except (httpx.HTTPError, ValueError):
        return {}
    return {node["name"]: node.get("status", "?") for node in body.get("nodes", [])}


def start(settings: Settings, echo: Echo = print, size: int = CLUSTER_SIZE) -> list[ServiceStatus]:
    """Start every node at once (none is ready before the others join), then wait for all to be members."""
    members = nodes(settings, size)
    with ThreadPoolExecutor(len(members)) as pool:
        statuses = [status for status, _ in pool.map(lambda node: node.start(echo), members)]
    first = members[0].url

    def formed() -> bool:
        seen = cluster_members(first)
        return len(seen) == size and all(state == "HEALTHY" for state in seen.values())

    wait_until(formed, 120, f"a {size}-node cluster at {first}")
    echo(f"cluster: {size} nodes healthy ({', '.join(node.url for node in members)})")
    return statuses


def stop(settings: Settings, echo: Echo = print, size: int = CLUSTER_SIZE) -> None:
    for node in nodes(settings, size):
        node.stop(echo)


def status(settings: Settings, size: int = CLUSTER_SIZE) -> list[ServiceStatus]:
    return [node.status() for node in nodes(settings, size)]
