"""What keeps a FalkorDB cluster from being highly available as tomc uses it: what `tomc
serve --db URL` warns of when it starts and `tomc serve --db URL --check` refuses
(docs/deployment.md, "Replicas with automatic failover").

Each problem is one sentence naming the node:

- `cluster-require-full-coverage yes` on a master: while one master fails over (or a slot
  is unserved), every node refuses every command (CLUSTERDOWN), so memories on healthy
  shards fail too;
- a master without a replica: its failure stops its memories until it is back, and a
  commit waiting for a replica (`wait_replicas`) is never confirmed;
- a replica marked failed by the cluster, or one whose link to its master is not up
  (`master_link_status`): it never synced, e.g. a password on `default` without
  `masterauth` (the master answers its PSYNC with -NOAUTH while `cluster_state` is ok).
"""

from __future__ import annotations

import redis

from tomc.runtime.connection import Database


def problems(db: Database) -> list[str]:
    """The problems of the cluster `db` is on (none for one server), as sentences."""
    if db.cluster is None:
        return []
    found: list[str] = []
    for host, port in db.cluster.masters():
        node = db.node(host, port)
        where = f"master {host}:{port}"
        try:
            found += _coverage(node, where)
            lines = node.execute_command("CLUSTER", "REPLICAS",
                                         node.execute_command("CLUSTER", "MYID"))
        except redis.RedisError as err:
            found.append(f"{where} does not answer: {_line(err)}")
            continue
        if not lines:
            found.append(f"{where} has no replica: if it fails, its memories stop until it "
                         "is back, and no commit waiting for a replica is confirmed")
        for line in lines:
            fields = line.split()
            address = fields[1].split("@", 1)[0]
            replica_host, replica_port = address.rsplit(":", 1)
            replica_host = replica_host or host
            if "fail" in fields[2] or "disconnected" in fields[7:8]:
                found.append(f"replica {replica_host}:{replica_port} of {where} is down")
                continue
            found += _synced(db.node(replica_host, int(replica_port)),
                             f"replica {replica_host}:{replica_port} of {where}")
    return found


def _coverage(node: redis.Redis, where: str) -> list[str]:
    """Whether `node` keeps `cluster-require-full-coverage yes` (a user that may not read
    the configuration: nothing said)."""
    try:
        setting = node.config_get("cluster-require-full-coverage")
    except redis.ResponseError:
        return []
    if setting.get("cluster-require-full-coverage") == "yes":
        return [f"{where} has cluster-require-full-coverage yes: while any master fails "
                "over, every memory's commands fail (CLUSTERDOWN); set it to no"]
    return []


def _synced(replica: redis.Redis, where: str) -> list[str]:
    """Whether `replica`'s link to its master is up."""
    try:
        info = replica.info("replication")
    except redis.RedisError as err:
        return [f"{where} does not answer: {_line(err)}"]
    status = info.get("master_link_status")
    if status == "up":
        return []
    if str(info.get("master_sync_in_progress")) == "1":
        return [f"{where} has not synced with its master yet (a full sync is in progress)"]
    return [f"{where} has not synced with its master (master_link_status:{status}): a "
            "password on the master needs masterauth on its replicas"]


def _line(err: Exception) -> str:
    return (str(err).splitlines() or [type(err).__name__])[0]
