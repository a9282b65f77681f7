"""`tomc token issue|list|revoke`: the access tokens of tomc's HTTP surfaces
(tomc/runtime/tokens.py; docs/security.md); `tomc token credential`: an agent's own
FalkorDB credential (tomc/memory/acl.py).

Exit codes as elsewhere: 0 ok, 2 bad input (no such memory or agent, an unknown token id),
3 FalkorDB unavailable.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from tomc.cli.common import (
    DATA_OPTION,
    DB_OPTION,
    EXIT_BAD_INPUT,
    JSON_OPTION,
    database,
    emit_json,
    fail,
)
from tomc.memory import catalog as memories
from tomc.runtime import tokens

app = typer.Typer(help="Access tokens for `tomc mcp --http`, `tomc http` and `tomc console`: "
                       "one per agent or supervisor of a memory, stored hashed, revocable.",
                  no_args_is_help=True)


@app.command("issue")
def issue(name: str = typer.Argument(..., help="The memory the token is for."),
          agent: Optional[str] = typer.Option(
              None, "--agent", help="The agent the token acts as (only its own mind, speech "
                                    "as itself). Leave out for a supervisor token."),
          db: Optional[str] = DB_OPTION, data: Optional[Path] = DATA_OPTION,
          json_output: bool = JSON_OPTION) -> None:
    """Issue a token for memory NAME and print it, once: it is stored only as a hash. Give
    it to the client as `Authorization: Bearer <token>`."""
    with database(db, data, json_output, interactive=True) as conn:
        if memories.read(conn, name) is None:
            fail(f"no memory called {name!r} (`tomc memory list` lists them)", EXIT_BAD_INPUT,
                 json_output)
        if agent is not None and agent not in memories.agents(conn, name):
            fail(f"memory {name!r} has no agent {agent!r}", EXIT_BAD_INPUT, json_output)
        secret = tokens.issue(conn, name, agent)
    token_id = secret.split("_")[1]
    if json_output:
        emit_json({"token": secret, "token_id": token_id, "memory": name, "agent": agent})
    else:
        typer.echo(secret)
        typer.echo(f"tomc: token {token_id} for {'agent ' + agent if agent else 'the supervisor'}"
                   f" of memory {name}: shown this once, keep it secret", err=True)


@app.command("list")
def list_(name: Optional[str] = typer.Argument(None, help="Only this memory's tokens."),
          db: Optional[str] = DB_OPTION, data: Optional[Path] = DATA_OPTION,
          json_output: bool = JSON_OPTION) -> None:
    """List tokens (never their secrets): id, memory, agent (or supervisor), issue time."""
    with database(db, data, json_output, interactive=True) as conn:
        rows = tokens.list_tokens(conn, name)
    if json_output:
        emit_json({"tokens": rows})
        return
    if not rows:
        typer.echo("no tokens")
    for row in rows:
        typer.echo(f"{row['token_id']}  {row['memory']}  "
                   f"{row['agent'] or '(supervisor)'}  issued {row['issued']}")


@app.command("revoke")
def revoke(token_id: str = typer.Argument(..., help="The token's id (`tomc token list`)."),
           db: Optional[str] = DB_OPTION, data: Optional[Path] = DATA_OPTION,
           json_output: bool = JSON_OPTION) -> None:
    """Revoke a token: every request carrying it is refused from now on (401)."""
    with database(db, data, json_output, interactive=True) as conn:
        try:
            tokens.revoke(conn, token_id)
        except tokens.TokenRefused as err:
            fail(f"bad input:\n{err}", EXIT_BAD_INPUT, json_output)
    if json_output:
        emit_json({"revoked": token_id})
    else:
        typer.echo(f"revoked token {token_id}")


@app.command("credential")
def credential(name: str = typer.Argument(..., help="The memory of the agent."),
               agent: str = typer.Option(..., "--agent", help="The agent it is for."),
               db: Optional[str] = DB_OPTION, data: Optional[Path] = DATA_OPTION,
               json_output: bool = JSON_OPTION) -> None:
    """Print the agent's own FalkorDB credential, as a URL (`--db` of the agent's process):
    its private user (tomc/memory/acl.py), which reads only the agent's mind and may only
    submit the agent's own speech to the memory's applier (`tomc serve`). The process that
    holds it needs no admin secret. Keep it as a secret (a file of mode 600)."""
    from tomc.memory import acl
    from tomc.memory.environment import Environment  # the compiler: only this verb needs it
    with database(db, data, json_output, interactive=True) as conn:
        if memories.read(conn, name) is None:
            fail(f"no memory called {name!r} (`tomc memory list` lists them)", EXIT_BAD_INPUT,
                 json_output)
        if agent not in memories.agents(conn, name):
            fail(f"memory {name!r} has no agent {agent!r}", EXIT_BAD_INPUT, json_output)
        graphs = memories.memory_graphs(name, [agent])
        user, password = acl.grant(conn, graphs, agent)
        Environment(conn).fill_view(name)  # what the credential reads of the world (agent_view.py)
        url = _url(conn, user, password)
    if json_output:
        emit_json({"url": url, "user": user, "memory": name, "agent": agent})
    else:
        typer.echo(url)
        typer.echo(f"tomc: the credential of agent {agent} of memory {name}: keep it secret",
                   err=True)


def _url(conn, user: str, password: str) -> str:
    """The URL of `conn`'s server (of a cluster: naming every master and replica, any of
    which finds the others), logged in as `user`."""
    if conn.cluster is not None:
        nodes = ",".join(f"{n.connection_pool.connection_kwargs['host']}:"
                         f"{n.connection_pool.connection_kwargs['port']}"
                         for n in conn.nodes(replicas=True))
        return f"redis+cluster://{user}:{password}@{nodes}"
    where = conn.redis.connection_pool.connection_kwargs
    if where.get("path"):
        return f"unix://{user}:{password}@{where['path']}"
    return f"redis://{user}:{password}@{where.get('host', '127.0.0.1')}:{where.get('port', 6379)}"
