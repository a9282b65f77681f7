"""Named memories: a scenario kept on FalkorDB under its name, that outlives the process
that wrote it and takes many writers (docs/storage.md).

A memory `NAME` is stored as the graphs `tomem:{NAME}:world` and `tomem:{NAME}:mind:AGENT`,
the plain key `tomem:{NAME}:world:rev` (its revision: every committed event or declaration
increments it; tomc/runtime/transactions.py) and, for its agents' private users, the hash
`tomem:{NAME}:world:users` (tomc/memory/acl.py); its simulations' forks are
`tomem:{NAME}:fork:...` (tomc/runtime/forks.py); what its agents may read of its world, the
hashes `tomem:{NAME}:public` and `tomem:{NAME}:seen:AGENT` (tomc/memory/agent_view.py),
written in every commit's own transaction. Every key is named by `memory_key`: the
braces are a Redis Cluster hash tag, so all keys of one memory hash to one slot and live on
one shard, and its MULTI/EXEC, WATCH and GRAPH.COPY stay single-slot (docs/deployment.md).
A memory made before the hash tag (`tomem:NAME:...`) is renamed by `migrate`. Its other keys (its
incarnation, idempotency records and its applier's queue) are listed in tomc/runtime/keys.py.

The world graph's `Memory` node holds what rebuilds the checker's state without running
anything again: the `header` (the policy as .tom text, and the scenario line), and every
applied event (`Event.text`) and declaration (`Declaration.text`) in canonical .tom form
with its revision. A process that attaches replays that text through the checker and
reads the compiler's state (which chain owns which key) from the mind graphs: no event is
executed again.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Optional
from urllib.parse import unquote

import redis

from tomc.compiler.lower import Compiler
from tomc.compiler.plan import WORLD, GraphNames, graph_key
from tomc.compiler.templates import render
from tomc.dsl import ast
from tomc.dsl.formatter import format_file
from tomc.dsl.parser import parse, parse_statements
from tomc.dsl.program import ScenarioModel
from tomc.memory import acl, agent_view
from tomc.memory.acl import users_key
from tomc.runtime import tokens
from tomc.runtime.connection import Database, query_command
from tomc.runtime.errors import DatabaseUnavailable
from tomc.runtime.keys import PREFIX, memory_key, memory_name, memory_tag  # noqa: F401


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
    """The graph names of memory `name` with mind graphs for `agents` (`memory_key`)."""
    return GraphNames(memory_key(name, "world"),
                      {a: memory_key(name, "mind", a) for a in agents})


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
    db = db.shard(graphs.world)
    compiler = Compiler(scenario)
    # the world graph and its indexes (no agents yet: no mind graph)
    world = [s for s in compiler.setup(rev=0, text=header) if s.graph == WORLD]
    world += compiler.indexes()
    try:
        with db.redis.pipeline(transaction=True) as pipe:
            pipe.watch(graphs.revision_key)
            if pipe.exists(graphs.revision_key) or pipe.exists(graphs.world):
                return False
            pipe.multi()
            for statement in world:
                pipe.execute_command(*query_command(graphs.world, statement.cypher,
                                                    statement.params))
            pipe.set(graphs.revision_key, 0)
            for command in agent_view.header(graphs, header):
                pipe.execute_command(*command)
            pipe.set(memory_key(scenario.name, "incarnation"), uuid.uuid4().hex)
            replies = pipe.execute(raise_on_error=False)
    except redis.WatchError:
        return False
    except redis.RedisError as err:
        raise DatabaseUnavailable(f"could not create memory {scenario.name}: {err}") from None
    if isinstance(replies[0], Exception):
        raise DatabaseUnavailable(f"could not create memory {scenario.name}: {replies[0]}")
    return True


def incarnation(db: Database, name: str) -> tuple[str, Optional[str]]:
    """(the incarnation key of memory `name`, its id now: None for a memory made before
    incarnations were kept)."""
    key = memory_key(name, "incarnation")
    return key, db.redis.get(key)


def read(db: Database, name: str) -> Optional[StoredMemory]:
    """The stored memory called `name`, or None if there is none."""
    graphs = memory_graphs(name)
    db = db.shard(graphs.world)
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
    world = memory_graphs(name).world
    rows = db.shard(world).read(world, render("read_agents.cypher"), {})
    return [r["name"] for r in rows]


def stored(db: Database) -> list[StoredMemory]:
    """Every memory on the server, or on every master of a cluster (one read of each world
    graph), sorted by name."""
    found = []
    for graph in db.graph_names():
        name = memory_name(graph)
        memory = None if name is None else read(db, name)
        if memory is not None:
            found.append(memory)
    return sorted(found, key=lambda m: m.name)


def drop(db: Database, name: str, tries: int = 1000) -> bool:
    """Delete every key of the memory (graphs, forks, revision, users' passwords, and any
    other key under its tag) in one transaction, then its agents' ACL users; False if there
    was no such memory. The revision is WATCHed while the keys are listed: a writer
    declaring an agent meanwhile (a new mind graph) makes the transaction fail, and the
    listing is taken again."""
    graphs = memory_graphs(name)
    shard = db.shard(graphs.world)
    pattern = memory_key(name) + ":*"  # memory_key escapes every glob character of a name
    for _ in range(tries):
        try:
            with shard.redis.pipeline(transaction=True) as pipe:
                pipe.watch(graphs.revision_key)
                if not pipe.exists(graphs.world):
                    return False
                doomed = sorted(set(pipe.scan_iter(match=pattern, count=1000)))
                users = pipe.hkeys(users_key(graphs))
                pipe.multi()
                pipe.delete(*doomed)
                pipe.execute()
        except redis.WatchError:
            continue
        except redis.RedisError as err:
            raise DatabaseUnavailable(f"could not drop memory {name}: {err}") from None
        acl.revoke(db, graphs, users)
        tokens.revoke_memory(db, name)
        return True
    raise DatabaseUnavailable(f"could not drop memory {name}: writers kept declaring agents")


def legacy_names(db: Database) -> list[str]:
    """The memories stored under the names tomc used before the hash tag (`tomem:NAME:world`
    rather than `tomem:{NAME}:world`), sorted."""
    found = []
    for graph in db.graph_names():
        parts = graph.split(":")
        if len(parts) == 3 and parts[0] == PREFIX and parts[2] == "world" \
                and not parts[1].startswith("{"):
            found.append(unquote(parts[1]))
    return sorted(found)


def migrate(db: Database, name: str, tries: int = 100) -> bool:
    """Rename every key of memory `name` from its old name (`tomem:NAME:...`, before the
    hash tag) to its new one (`tomem:{NAME}:...`, `memory_key`) in one transaction, and
    delete its agents' old ACL users (their names hash the old world graph's; the next
    attach as an agent makes them under the new names). False when there is nothing to
    migrate. The old revision is WATCHed while the keys are listed: a writer of an older
    tomc committing meanwhile makes the transaction run again. Runs on one server: in a
    cluster the old names of one memory hash to different shards (migrate before moving
    to a cluster; docs/deployment.md)."""
    if db.cluster is not None:
        raise DatabaseUnavailable(f"cannot migrate memory {name} on a cluster: its old keys "
                                  "hash to several shards; migrate on one server first")
    old = f"{PREFIX}:{graph_key(name)}"
    old_world, new_world = f"{old}:world", memory_key(name, "world")
    old_graphs = GraphNames(old_world, {})
    for _ in range(tries):
        try:
            with db.redis.pipeline(transaction=True) as pipe:
                pipe.watch(old_world + ":rev")
                if not pipe.exists(old_world):
                    return False
                if pipe.exists(new_world):
                    raise DatabaseUnavailable(
                        f"cannot migrate memory {name}: both {old_world} and {new_world} "
                        "exist (drop one of them first)")
                # graph_key escaped every glob character of the name: the pattern is literal
                keys = sorted(set(pipe.scan_iter(match=old + ":*", count=1000)))
                agents_ = pipe.hkeys(users_key(old_graphs))
                pipe.multi()
                for key in keys:
                    pipe.rename(key, memory_key(name) + key[len(old):])
                pipe.execute()
        except redis.WatchError:
            continue
        except redis.RedisError as err:
            raise DatabaseUnavailable(f"could not migrate memory {name}: {err}") from None
        acl.revoke(db, old_graphs, agents_)
        return True
    raise DatabaseUnavailable(f"could not migrate memory {name}: writers kept committing")


def export(stored: StoredMemory, changes: list[tuple[int, str]]) -> str:
    """The memory as one .tom file that `tomc run` replays to the same answers: its header
    with every applied statement (in revision order) inside the scenario block."""
    file = parse(stored.header, "<memory>")
    scenario = next(i for i in file.items if isinstance(i, ast.Scenario))
    statements = [s for _, text in sorted(changes) for s in parse_statements(text, "<memory>")]
    scenario = scenario.model_copy(update={"statements": statements})
    items = [scenario if isinstance(i, ast.Scenario) else i for i in file.items]
    return format_file(ast.File(items=items))
