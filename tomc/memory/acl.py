"""Private minds: one FalkorDB ACL user per agent of a memory, allowed PING and, through
selectors, each one command on named keys, to submit its own speech and its reads of its
own mind to the memory's applier (`submitting`; tomc/memory/served_reads.py) and to read its
view of the world and one token record by id (`reading`). It may run no GRAPH command: any
query it could send would hold its mind graph, and the commits into it, for as long as the
query runs (docs/security.md).

- Key patterns are exact names: `graph_key` turns the glob characters `*?[]\\` of agent
  and memory names into `%XX`, so a name can never widen one (docs/falkordb.md check 5.8).
- A user's name is `tomc_` and a hash of the memory's world graph and the agent: no user
  name or pattern holds raw user text.
- Its password is stored nowhere: it is derived (HMAC-SHA256) from the password of the
  administrator's connection and the user's name, so whoever can administer the server can
  make it again, and the memory (its AOF, an export, a backup) holds no agent's password.
  The server keeps only its SHA-256 (`ACL SAVE` writes `#<sha256>`). The hash
  `<world graph>:users` lists the memory's agents with a user (agent -> user name), for
  `drop`.
- Users are lost when a server restarts without an ACL file (check 5.10): `grant` runs on
  every attach as an agent, and `ACL SAVE` keeps them where the server has an ACL file
  (`tomc serve` starts it with one). ACL SAVE rewrites the whole file (0.24-1.17 s with
  100k users, stalling other clients: docs/deployment.md), so it runs only on a node whose
  users changed, never when the user is already as it should be.
- In a cluster a user must exist on every node that may serve the memory: its master, the
  replicas an agent may read from, and whichever node takes its slot after a failover or a
  move. `grant` reconciles the user on every master and replica (`Database.nodes`), and
  `tomc memory grant --sync` does it for every agent of every memory (after adding a node).
"""

from __future__ import annotations

import hashlib
import hmac

import redis

from tomc.compiler.plan import GraphNames
from tomc.memory import agent_view
from tomc.runtime.connection import Database
from tomc.runtime.errors import DatabaseUnavailable
from tomc.runtime.keys import appliers_key
from tomc.runtime.tokens import TOKENS_KEY


# The commands an agent's user may run on no key (as ACL GETUSER lists them).
PLAIN = ("+ping", "+readonly", "+cluster|slots", "+cluster|shards")


def users_key(graphs: GraphNames) -> str:
    """The hash {agent: user name} of a memory's agent users (no password: `password`)."""
    return graphs.world + ":users"


def user_name(graphs: GraphNames, agent: str) -> str:
    """The ACL user of `agent` in the memory whose graphs are `graphs`."""
    digest = hashlib.sha256(f"{graphs.world}\0{agent}".encode("utf-8")).hexdigest()
    return "tomc_" + digest[:24]


def submitting(graphs: GraphNames, user: str) -> list[tuple[str, list[str]]]:
    """(command, key patterns) an agent's user may run to submit its own speech and its
    reads to its memory's applier (tomc/memory/submit.py), each an ACL selector of its
    own, so no command reaches another's keys: RPUSH a request on its own queue
    (`queue:USER`, named after the user) and ring the memory's bell, ZADD its name to the
    wake set; BLPOP its replies (`reply:USER:*`); EXISTS the applier's lease and
    heartbeat; LREM a request of its own no applier took, LLEN its queue (full at
    `submit.AGENT_QUEUED`). It can neither read a queue nor pop it, nor reach another
    writer's: others' requests stay unseen and never wait behind its own. The applier
    takes a request as the agent's only if it is signed with the agent's password
    (tomc/memory/applier.py)."""
    base = graphs.world[:-len(":world")]  # tomem:{NAME}: the memory's keys (memory_key)
    return [("rpush", [f"{base}:queue:{user}", f"{base}:bell"]),
            ("zadd", [appliers_key("wake")]), ("blpop", [f"{base}:reply:{user}:*"]),
            ("exists", [f"{base}:applier", appliers_key()]),
            ("lrem", [f"{base}:queue:{user}"]), ("llen", [f"{base}:queue:{user}"])]


def reading(graphs: GraphNames, agent: str) -> list[tuple[str, list[str]]]:
    """(command, key patterns) an agent's user may run to read its view of the world
    (tomc/memory/agent_view.py) a page at a time: HSCAN and HMGET the memory's public hash
    and its own seen hash (never another agent's; no HGETALL, whose cost grows with the
    history), GET the revision; and HGET one token's record by its id
    (tomc/runtime/tokens.py), so that the agent's own `tomc mcp --http` checks the bearer
    tokens it is sent. A record holds a digest of its secret, never the secret, and the
    user can neither list the tokens nor read them whole (no HGETALL, HKEYS, HSCAN)."""
    view = [agent_view.public_key(graphs), agent_view.seen_key(graphs, agent)]
    return [("hscan", view), ("hmget", view), ("get", [graphs.revision_key]),
            ("hget", [TOKENS_KEY])]


def selectors(graphs: GraphNames, agent: str) -> list[tuple[str, list[str]]]:
    """Every (command, key patterns) selector of `agent`'s user: `submitting`, `reading`."""
    return [*submitting(graphs, user_name(graphs, agent)), *reading(graphs, agent)]


def rules(graphs: GraphNames, agent: str, password: str) -> list[str]:
    """The ACL SETUSER rules of `agent`'s user: PING, READONLY (which lets a cluster
    replica answer its view's reads; it grants no command), CLUSTER SLOTS and SHARDS (the
    slot map: which node serves its memory, on a cluster), and the selectors of
    `submitting` and `reading`. No GRAPH command: its reads of its mind graph are run by
    the applier (tomc/memory/served_reads.py)."""
    selectors_ = [f"({' '.join('~' + k for k in keys)} +{command})"
                  for command, keys in selectors(graphs, agent)]
    return ["reset", "on", ">" + password, "resetkeys", "resetchannels", "-@all", *PLAIN,
            *selectors_]


def grant(db: Database, graphs: GraphNames, agent: str) -> tuple[str, str]:
    """Create (or repair) `agent`'s user, read-only on its mind graph, on every node (the
    server, or every master and replica of a cluster); returns (user, password). A node
    where the user is already right is left alone (no SETUSER, no ACL SAVE). Raises
    DatabaseUnavailable when a node refuses ACL commands (a managed server whose tomc user
    may not administer users)."""
    user = user_name(graphs, agent)
    secret = user_password(db, user)
    key = users_key(graphs)
    try:
        db.shard(key).redis.hset(key, agent, user)  # replaces a password older tomc kept
    except redis.RedisError as err:
        raise DatabaseUnavailable(f"cannot create the private user of {agent}: {err}") from None
    _reconcile(db.nodes(replicas=True), [(user, graphs, secret,
                                          rules(graphs, agent, secret))], fix=True)
    return user, secret


def reconcile(db: Database, graphs: GraphNames, fix: bool) -> int:
    """The users of every agent of a memory that has one (`graphs`' world names the
    memory; its minds are named from the users hash), checked on every node: how many
    (node, user) pairs are missing or wrong; with `fix`, made right (one ACL SAVE per node
    that changed). What `tomc memory grant [--sync]` runs after a node joins or a
    failover."""
    key = users_key(graphs)
    try:
        agents = list(db.shard(key).redis.hkeys(key))
    except redis.RedisError as err:
        raise DatabaseUnavailable(f"cannot read the agents' passwords: {err}") from None
    graphs = graphs.with_agents([a for a in agents if a not in graphs.minds])
    users = []
    for agent in agents:
        user = user_name(graphs, agent)
        secret = user_password(db, user)
        users.append((user, graphs, secret, rules(graphs, agent, secret)))
    return _reconcile(db.nodes(replicas=True), users, fix)


def _reconcile(nodes: list[redis.Redis], users: list[tuple[str, GraphNames, str, list[str]]],
               fix: bool) -> int:
    """(user, graphs, password, rules) made right on every node where they are not (with
    `fix`); the count of (node, user) pairs that were not. A node is saved once, and only
    when a user of it changed."""
    wrong = 0
    for node in nodes:
        changed = False
        try:
            for user, graphs, secret, wanted in users:
                if _matches(node.acl_getuser(user), graphs, user, secret):
                    continue
                wrong += 1
                if fix:
                    node.execute_command("ACL", "SETUSER", user, *wanted)
                    changed = True
        except redis.RedisError as err:
            where = node.connection_pool.connection_kwargs
            raise DatabaseUnavailable(
                f"cannot set agents' users on {where.get('host') or where.get('path')}"
                f"{':' + str(where['port']) if where.get('port') else ''}: {err}") from None
        if changed:
            save(node)
    return wrong


def _matches(found, graphs: GraphNames, user: str, secret: str) -> bool:
    """Whether ACL GETUSER's reply `found` is the user `grant` makes for `user`, the agent
    whose mind `graphs` names (selectors included: a user of an older tomc has none)."""
    if not found:
        return False
    agent = next((a for a in graphs.minds if user_name(graphs, a) == user), None)
    if agent is None:
        return False
    commands = found.get("commands", [])
    commands = sorted(commands.split() if isinstance(commands, str) else commands)
    found_selectors = [(str(dict(zip(s[::2], s[1::2])).get("commands", "")).split()[-1:],
                  str(dict(zip(s[::2], s[1::2])).get("keys", "")).split())
                 for s in found.get("selectors", [])]
    wanted = [([f"+{command}"], [f"~{k}" for k in keys])
              for command, keys in selectors(graphs, agent)]
    return ("on" in found.get("flags", []) and found.get("keys") in ("", [])
            and hashlib.sha256(secret.encode()).hexdigest() in found.get("passwords", [])
            and commands == sorted(PLAIN)
            and found_selectors == wanted)


def user_password(db: Database, user: str) -> str:
    """The password of the agent user `user`: HMAC-SHA256 keyed by the password this
    administrator connection logged in with (a server without one has no isolation to
    keep: any client is its default user). Never stored by tomc."""
    admin = db.redis.connection_pool.connection_kwargs.get("password") or ""
    return hmac.new(admin.encode("utf-8"), f"tomc agent user\0{user}".encode("utf-8"),
                    hashlib.sha256).hexdigest()


def revoke(db: Database, graphs: GraphNames, agents: list[str]) -> None:
    """Delete the users of `agents` (a memory being dropped) on every node."""
    users = [user_name(graphs, a) for a in agents]
    if users:
        for node in db.nodes(replicas=True):
            try:
                if node.execute_command("ACL", "DELUSER", *users):
                    save(node)
            except redis.RedisError as err:
                raise DatabaseUnavailable(f"cannot delete agent users: {err}") from None


def save(node: redis.Redis) -> None:
    """ACL SAVE where the node has an ACL file; a server without one keeps users until it
    restarts (they are made again on the next attach)."""
    try:
        node.execute_command("ACL", "SAVE")
    except redis.ResponseError:
        pass
