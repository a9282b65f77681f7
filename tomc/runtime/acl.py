"""Private minds: one FalkorDB ACL user per agent of a memory, allowed `GRAPH.RO_QUERY`
(and PING) on that agent's mind graph and nothing else (docs/falkordb.md checks 5.1-5.12).

- The key pattern is the mind graph's exact name: `graph_key` turns the glob characters
  `*?[]\\` of agent and memory names into `%XX`, so a name can never widen it (check 5.8);
  `%R~` does not work for GRAPH.* commands (check 5.2), so the pattern is `~NAME`, and the
  command list (not the pattern) makes the user read-only.
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
  (`tomc serve` starts it with one).
"""

from __future__ import annotations

import hashlib
import hmac

import redis

from tomc.compiler.plan import GraphNames
from tomc.runtime.connection import Database
from tomc.runtime.errors import DatabaseUnavailable


def users_key(graphs: GraphNames) -> str:
    """The hash {agent: user name} of a memory's agent users (no password: `password`)."""
    return graphs.world + ":users"


def user_name(graphs: GraphNames, agent: str) -> str:
    """The ACL user of `agent` in the memory whose graphs are `graphs`."""
    digest = hashlib.sha256(f"{graphs.world}\0{agent}".encode("utf-8")).hexdigest()
    return "tomc_" + digest[:24]


def grant(db: Database, graphs: GraphNames, agent: str) -> tuple[str, str]:
    """Create (or refresh) `agent`'s user, read-only on its mind graph; returns (user,
    password). Raises DatabaseUnavailable when the server refuses ACL commands (a managed
    server whose tomc user may not administer users)."""
    user = user_name(graphs, agent)
    password = user_password(db, user)
    try:
        db.redis.hset(users_key(graphs), agent, user)  # replaces a password older tomc kept
        db.redis.execute_command(
            "ACL", "SETUSER", user, "reset", "on", ">" + password,
            "resetkeys", "~" + graphs.mind(agent), "resetchannels",
            "-@all", "+graph.ro_query", "+ping")
    except redis.RedisError as err:
        raise DatabaseUnavailable(f"cannot create the private user of {agent}: {err}") from None
    save(db)
    return user, password


def user_password(db: Database, user: str) -> str:
    """The password of the agent user `user`: HMAC-SHA256 keyed by the password this
    administrator connection logged in with (a server without one has no isolation to
    keep: any client is its default user). Never stored by tomc."""
    admin = db.redis.connection_pool.connection_kwargs.get("password") or ""
    return hmac.new(admin.encode("utf-8"), f"tomc agent user\0{user}".encode("utf-8"),
                    hashlib.sha256).hexdigest()


def revoke(db: Database, graphs: GraphNames, agents: list[str]) -> None:
    """Delete the users of `agents` (a memory being dropped)."""
    users = [user_name(graphs, a) for a in agents]
    if users:
        try:
            db.redis.execute_command("ACL", "DELUSER", *users)
        except redis.RedisError as err:
            raise DatabaseUnavailable(f"cannot delete agent users: {err}") from None
        save(db)


def save(db: Database) -> None:
    """ACL SAVE where the server has an ACL file; a server without one keeps users until it
    restarts (they are made again on the next attach)."""
    try:
        db.redis.execute_command("ACL", "SAVE")
    except redis.ResponseError:
        pass
