"""The slot map of a Redis Cluster of FalkorDB nodes: which master (and which replicas)
serve a key's slot (docs/deployment.md).

tomc reads the map itself (`CLUSTER SLOTS` from any node that answers) rather than through
redis-py's RedisCluster, which follows MOVED and retries behind its caller's back and
needs one particular node to answer when it starts (the one a failed master may be).
tomc sends a memory's commands to the master of its hash tag's slot on a plain connection;
a MOVED or ASK reply makes it read the map again and send again only what did not run
(tomc/runtime/connection.py `Database.following`, `ShardClient`).
"""

from __future__ import annotations

from typing import Callable, Optional

import redis
from redis.crc import key_slot

Address = tuple[str, int]


class Topology:
    """`seeds`: the HOST:PORTs a URL names; `client(host, port)`: a plain client of one
    node. `ranges` is the map: (first slot, last slot, master, [replicas])."""

    def __init__(self, seeds: list[Address], client: Callable[[str, int], redis.Redis]):
        self.seeds = seeds
        self.client = client
        self.ranges: list[tuple[int, int, Address, list[Address]]] = []

    def refresh(self) -> None:
        """Read the map from the first node (known masters first, then the seeds) that
        answers; raises redis.ConnectionError (the last node's) when none does."""
        known = [m for _, _, m, _ in self.ranges]
        error: Optional[Exception] = None
        for host, port in dict.fromkeys(known + self.seeds):
            try:
                reply = self.client(host, port).execute_command("CLUSTER", "SLOTS")
            except (redis.ConnectionError, redis.TimeoutError) as err:
                error = err
                continue
            self.ranges = [(int(start), int(end), _address(master, host),
                            [_address(r, host) for r in replicas])
                           for start, end, master, *replicas in reply]
            if not self.ranges:
                raise redis.ResponseError("the cluster serves no slot yet (CLUSTER SLOTS "
                                          "is empty): create it first")
            return
        raise error or redis.ConnectionError("no node to ask")

    def masters(self) -> list[Address]:
        """Every master, in slot order."""
        return list(dict.fromkeys(m for _, _, m, _ in self.ranges))

    def serving(self, key: str) -> tuple[Address, list[Address]]:
        """(the master, its replicas) serving `key`'s slot."""
        slot = key_slot(key.encode("utf-8"))
        for start, end, master, replicas in self.ranges:
            if start <= slot <= end:
                return master, replicas
        raise redis.ResponseError(f"CLUSTERDOWN no node serves slot {slot} of {key}")


def _address(node: list, seed_host: str) -> Address:
    """A CLUSTER SLOTS node entry's (host, port); an empty host is the node asked."""
    host = node[0] if node[0] else seed_host
    return str(host), int(node[1])
