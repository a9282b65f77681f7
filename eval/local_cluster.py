"""A real FalkorDB cluster on loopback for tests/test_cluster.py and eval/cluster.py: 3
masters (+ one replica each when asked), each a `redis-server --cluster-enabled yes
--loadmodule falkordb.so` from the embedded package's binaries (tomc/runtime/server.py
`find_binaries`); or, for comparison, one server with the same settings and no cluster.

The cluster is formed the way `redis-cli --cluster create ... --cluster-replicas 1` does it
(the packages ship no redis-cli): every node MEETs the first, each master takes a third of
the 16384 slots, each replica REPLICATEs its master; ready when every node says
`cluster_state:ok`.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Optional

import redis

from tomc.runtime.server import MODULE_ARGS, find_binaries

SLOTS = 16384
READY_TIMEOUT_S = 60.0


def free_ports(count: int) -> list[int]:
    """`count` loopback ports free now, each with its cluster bus port (+10000) free too."""
    ports: list[int] = []
    while len(ports) < count:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        if port + 10000 < 65536 and port not in ports:
            try:
                with socket.socket() as bus:
                    bus.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
            ports.append(port)
    return ports


class LocalCluster:
    """`masters` masters and `replicas` replicas per master, data under `root`.

    `ports[i]` is node i's port: masters first, then replicas (replica j follows master
    j % masters). `url` is the `redis+cluster://` URL tomc takes."""

    def __init__(self, root: Path, masters: int = 3, replicas: int = 0,
                 node_timeout_ms: int = 2000, cluster: bool = True,
                 password: Optional[str] = None):
        self.root = root
        self.password = password  # the `default` user's, on nodes started elsewhere
        self.cluster = cluster  # False: one plain server (masters=1), the same settings
        self.masters = masters
        self.ports = free_ports(masters * (1 + replicas))
        self.node_timeout_ms = node_timeout_ms
        self.processes: dict[int, subprocess.Popen] = {}

    @property
    def url(self) -> str:
        if not self.cluster:
            return f"redis://127.0.0.1:{self.ports[0]}"
        return "redis+cluster://" + ",".join(f"127.0.0.1:{p}" for p in self.ports[:self.masters])

    def client(self, port: int) -> redis.Redis:
        return redis.Redis(port=port, decode_responses=True, socket_timeout=10,
                           password=self.password)

    def start_node(self, port: int) -> None:
        server, module, _ = find_binaries()
        folder = self.root / str(port)
        folder.mkdir(parents=True, exist_ok=True)
        self.processes[port] = subprocess.Popen(
            [str(server), "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder),
             *(["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                "--cluster-node-timeout", str(self.node_timeout_ms),
                "--cluster-require-full-coverage", "no"] if self.cluster else []),
             "--appendonly", "yes", "--appendfsync", "everysec", "--save", "",
             "--logfile", "redis.log", "--loadmodule", str(module), *MODULE_ARGS],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                if self.client(port).ping():
                    return
            except (redis.ConnectionError, redis.BusyLoadingError):
                time.sleep(0.02)
        raise RuntimeError(f"node {port} did not start")

    def start(self) -> "LocalCluster":
        for port in self.ports:
            self.start_node(port)
        if not self.cluster:
            return self
        return self.join()

    def join(self) -> "LocalCluster":
        """Form the cluster of the running nodes `ports` (as `redis-cli --cluster create
        --cluster-replicas N` does); ready when every node says cluster_state:ok."""
        first = self.client(self.ports[0])
        for port in self.ports[1:]:
            first.execute_command("CLUSTER", "MEET", "127.0.0.1", port)
        share = SLOTS // self.masters
        for i, port in enumerate(self.ports[:self.masters]):
            last = SLOTS - 1 if i == self.masters - 1 else (i + 1) * share - 1
            self.client(port).execute_command("CLUSTER", "ADDSLOTSRANGE", i * share, last)
        self._wait(lambda: all(len(self.client(p).execute_command("CLUSTER", "NODES")
                                   .splitlines()) == len(self.ports) for p in self.ports))
        for j, port in enumerate(self.ports[self.masters:]):
            master = self.client(self.ports[j % self.masters]).execute_command("CLUSTER", "MYID")
            self._wait(lambda: self._try(port, "CLUSTER", "REPLICATE", master))
        self._wait(lambda: all(self.client(p).cluster("info")["cluster_state"] == "ok"
                               for p in self.ports))
        return self

    def _try(self, port: int, *command) -> bool:
        try:
            self.client(port).execute_command(*command)
            return True
        except redis.ResponseError:  # the replica does not know its master yet
            return False

    def _wait(self, ready, timeout: float = READY_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if ready():
                    return
            except redis.RedisError:
                pass
            time.sleep(0.05)
        raise RuntimeError("the cluster did not form in time")

    def master_of(self, key: str) -> int:
        """The port of the master serving `key`."""
        slot = self.client(self.ports[0]).cluster("keyslot", key)
        for start, end, master, *_ in self.client(self.ports[0]).execute_command(
                "CLUSTER", "SLOTS"):
            if start <= slot <= end:
                return int(master[1])
        raise LookupError(key)

    def move_slot(self, slot: int, target: int, batch: int = 10,
                  pause_s: float = 0.0) -> int:
        """Move `slot` to the master at port `target` as an operator reshards: SETSLOT
        IMPORTING on the target, MIGRATING on the source, MIGRATE its keys `batch` at a
        time (`pause_s` between batches, so that writers meet the half-moved slot), then
        SETSLOT NODE on every master. Returns the source's port (`target` when the slot
        is already there)."""
        asked = self.client(target)
        source = next(int(m[1]) for s, e, m, *_ in asked.execute_command("CLUSTER", "SLOTS")
                      if s <= slot <= e)
        if source == target:
            return target
        ids = {p: self.client(p).execute_command("CLUSTER", "MYID") for p in (source, target)}
        old = self.client(source)
        asked.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", ids[source])
        old.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", ids[target])
        while keys := old.execute_command("CLUSTER", "GETKEYSINSLOT", slot, batch):
            old.execute_command("MIGRATE", "127.0.0.1", target, "", 0, 10000, "KEYS", *keys)
            time.sleep(pause_s)
        masters = {int(m[1]) for _, _, m, *_ in asked.execute_command("CLUSTER", "SLOTS")}
        for port in dict.fromkeys((target, source, *masters)):
            self.client(port).execute_command("CLUSTER", "SETSLOT", slot, "NODE", ids[target])
        return source

    def kill(self, port: int) -> None:
        """kill -9 of a node."""
        process = self.processes.pop(port)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()

    def wait_promoted(self, dead: int, timeout: float = READY_TIMEOUT_S) -> Optional[int]:
        """Wait until a replica took over the slots of the dead master `dead`; its port."""
        alive = next(p for p in self.ports if p in self.processes)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                info = self.client(alive).cluster("info")
                masters = [int(m[1]) for *_, m in
                           ((s, e, m) for s, e, m, *_ in
                            self.client(alive).execute_command("CLUSTER", "SLOTS"))]
                if info["cluster_state"] == "ok" and dead not in masters:
                    return next(p for p in masters if p in self.processes)
            except redis.RedisError:
                pass
            time.sleep(0.05)
        return None

    def stop(self) -> None:
        for port, process in list(self.processes.items()):
            try:
                os.kill(process.pid, signal.SIGKILL)
                process.wait()
            except ProcessLookupError:
                pass
        self.processes.clear()
