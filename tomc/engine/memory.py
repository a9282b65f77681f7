"""Named memories: a scenario kept on FalkorDB under its name, that outlives the process
that wrote it and takes many writers (docs/storage.md).

A memory `NAME` is stored as the graphs `tomem:NAME:world` and `tomem:NAME:mind:AGENT`
(names through `graph_key`), the plain key `tomem:NAME:world:rev` (its revision: every
committed event or declaration increments it; tomc/runtime/transactions.py) and, for its
agents' private users, the hash `tomem:NAME:world:users` (tomc/runtime/acl.py).

The world graph's `Memory` node holds what rebuilds the checker's state without running
anything again: the `header` (the policy as .tom text, and the scenario line), and every
applied event (`Event.text`) and declaration (`Declaration.text`) in canonical .tom form
with its revision. A process that attaches replays that text through the checker and
reads the compiler's state (which chain owns which key) from the mind graphs: no event is
executed again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional
from urllib.parse import unquote

import redis

from tomc.compiler.lower import Compiler
from tomc.compiler.plan import GraphNames, graph_names
from tomc.compiler.templates import render
from tomc.dsl import ast
from tomc.dsl.formatter import format_file
from tomc.dsl.parser import parse, parse_statements
from tomc.dsl.program import ScenarioModel
from tomc.runtime import acl
from tomc.runtime.acl import users_key
from tomc.runtime.connection import Database, query_command
from tomc.runtime.errors import DatabaseUnavailable

PREFIX = "tomem"


@dataclass(frozen=True)
class StoredMemory:
    """What the world graph says about a memory: its `name`, `policy` name, `header` (.tom
    text declaring the policy and the empty scenario), the `step` reached and `revision`."""

    name: str
    policy: str
    header: str
    step: int
    revision: int


def memory_graphs(name: str, agents: list[str] = ()) -> GraphNames:
    """The graph names of memory `name` with mind graphs for `agents`."""
    return graph_names(name, list(agents), PREFIX)


def header_source(name: str, policy: ast.Policy, shipped: bool) -> str:
    """The .tom text a memory starts from: `use policy P` and an empty scenario; a policy
    that is not shipped is written out in full, so the memory does not depend on a file
    that may change or go."""
    items: list = [] if shipped else [policy.model_copy(update={"span": None})]
    items += [ast.UsePolicy(target=ast.Name(text=policy.name.text)),
              ast.Scenario(name=ast.Name(text=name))]
    return format_file(ast.File(items=items))


def create(db: Database, scenario: ScenarioModel, header: str) -> bool:
    """Create the memory's world graph and revision key, unless it exists; True when this
    call created it. Two processes creating one memory at once: the revision key is
    WATCHed, so exactly one creates it and the other finds it made."""
    graphs = memory_graphs(scenario.name)
    setup = Compiler(scenario).setup(rev=0, text=header)
    world = setup[0]
    try:
        with db.redis.pipeline(transaction=True) as pipe:
            pipe.watch(graphs.revision_key)
            if pipe.exists(graphs.revision_key) or pipe.exists(graphs.world):
                return False
            pipe.multi()
            pipe.execute_command(*query_command(graphs.world, world.cypher, world.params))
            pipe.set(graphs.revision_key, 0)
            replies = pipe.execute(raise_on_error=False)
    except redis.WatchError:
        return False
    except redis.RedisError as err:
        raise DatabaseUnavailable(f"could not create memory {scenario.name}: {err}") from None
    if isinstance(replies[0], Exception):
        raise DatabaseUnavailable(f"could not create memory {scenario.name}: {replies[0]}")
    return True


def read(db: Database, name: str) -> Optional[StoredMemory]:
    """The stored memory called `name`, or None if there is none."""
    graphs = memory_graphs(name)
    if not db.redis.exists(graphs.world):
        return None
    rows = db.read(graphs.world, render("read_memory.cypher"), {})
    if not rows:
        return None
    row = rows[0]
    revision = int(db.redis.get(graphs.revision_key) or 0)
    return StoredMemory(row["name"], row["policy"], row["header"], row["step"], revision)


def agents(db: Database, name: str) -> list[str]:
    """The agents memory `name` has declared, in order (each has a mind graph)."""
    rows = db.read(memory_graphs(name).world, render("read_agents.cypher"), {})
    return [r["name"] for r in rows]


def stored(db: Database) -> list[StoredMemory]:
    """Every memory on the server (one read of each world graph), sorted by name."""
    found = []
    for graph in db.graph_names():
        parts = graph.split(":")
        if len(parts) == 3 and parts[0] == PREFIX and parts[2] == "world":
            memory = read(db, unquote(parts[1]))
            if memory is not None:
                found.append(memory)
    return sorted(found, key=lambda m: m.name)


def drop(db: Database, name: str, tries: int = 1000) -> bool:
    """Delete the memory's graphs, revision and users' passwords in one transaction, then
    its agents' ACL users; False if there was no such memory. The revision is WATCHed
    while the graphs are listed: a writer declaring an agent meanwhile (a new mind graph)
    makes the transaction fail, and the listing is taken again."""
    graphs = memory_graphs(name)
    mind_prefix = graphs.world.removesuffix("world") + "mind:"
    for _ in range(tries):
        try:
            with db.redis.pipeline(transaction=True) as pipe:
                pipe.watch(graphs.revision_key)
                doomed = [g for g in pipe.execute_command("GRAPH.LIST")
                          if g.split("~", 1)[0] == graphs.world or g.startswith(mind_prefix)]
                if not doomed:
                    return False
                users = pipe.hkeys(users_key(graphs))
                pipe.multi()
                pipe.delete(*doomed, graphs.revision_key, users_key(graphs))
                pipe.execute()
        except redis.WatchError:
            continue
        except redis.RedisError as err:
            raise DatabaseUnavailable(f"could not drop memory {name}: {err}") from None
        acl.revoke(db, graphs, users)
        # Imported here: tokens.py raises the API's TomError, and the API imports this module.
        from tomc.runtime.tokens import revoke_memory
        revoke_memory(db, name)
        return True
    raise DatabaseUnavailable(f"could not drop memory {name}: writers kept declaring agents")


def export(stored: StoredMemory, changes: list[tuple[int, str]]) -> str:
    """The memory as one .tom file that `tomc run` replays to the same answers: its header
    with every applied statement (in revision order) inside the scenario block."""
    file = parse(stored.header, "<memory>")
    scenario = next(i for i in file.items if isinstance(i, ast.Scenario))
    statements = [s for _, text in sorted(changes) for s in parse_statements(text, "<memory>")]
    scenario = scenario.model_copy(update={"statements": statements})
    items = [scenario if isinstance(i, ast.Scenario) else i for i in file.items]
    return format_file(ast.File(items=items))
