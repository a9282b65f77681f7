"""A memory's keys (tomc/memory/catalog.py `memory_key`): one hash tag, so one slot and one
shard in a cluster; and the migration of memories kept under the names tomc used before
(`tomem:NAME:...`), by `tomc memory migrate` and on attach. On the single test server."""

from __future__ import annotations

import pytest
from redis.crc import key_slot

from tomc.api import Session
from tomc.compiler.plan import GraphNames
from tomc.memory import catalog
from tomc.runtime.keys import memory_key, memory_name
from tomc.memory import acl
from tomc.runtime import forks
from tomc.runtime.executor import HOST

from test_memory import STORY, tomc
from test_runtime import _dead_pid


@pytest.mark.parametrize("name", ["support", "a{b}c", "}{", "x:y~z", "glob*[?]", "é ü"])
def test_every_key_of_a_memory_shares_one_slot(name):
    graphs = catalog.memory_graphs(name, ["Maya", "}", "{x}"])
    keys = [graphs.world, *graphs.minds.values(), graphs.revision_key,
            acl.users_key(graphs), memory_key(name, "fork", "h-1-x", "world"),
            memory_key(name, "queue"), graphs.staged("~h-1-x").world]
    assert len({key_slot(k.encode()) for k in keys}) == 1
    assert all(k.startswith(memory_key(name) + ":") for k in keys)
    assert memory_name(graphs.world) == name
    assert memory_key("support", "mind", "Maya") == "tomem:{support}:mind:Maya"


def test_memories_spread_over_slots():
    slots = {key_slot(memory_key(f"m{i}", "world").encode()) * 3 // 16384
             for i in range(30)}
    assert slots == {0, 1, 2}  # thirds of the slot space: three masters' shares


def to_old_names(db, name: str) -> None:
    """Put memory `name` back under the names an older tomc gave it (`tomem:NAME:...`),
    its agents' users under the old user names too: what that tomc left on a server."""
    graphs = catalog.memory_graphs(name)
    agents = list(db.redis.hkeys(acl.users_key(graphs)))
    acl.revoke(db, graphs.with_agents(agents), agents)
    new = memory_key(name)
    for key in db.redis.scan_iter(match=new + ":*"):
        db.redis.rename(key, "tomem:" + name + key[len(new):])
    old = GraphNames(f"tomem:{name}:world", {})
    for agent in agents:
        acl.grant(db, old.with_agents([agent]), agent)


def test_a_memory_under_the_old_names_migrates_and_answers_the_same(db, fresh):
    names = [fresh("legacy_cli"), fresh("legacy_attach")]
    answers = {}
    for name in names:
        with Session.attach(name, db=db) as live:
            live.apply("\n".join(STORY))
            answers[name] = (live.believes("Maya", "refund.status").values,
                             live.truth("refund.status").values, live.step)
        with Session.attach(name, db=db, as_agent="Maya") as maya:
            maya.believes("Maya", "refund.status")
        to_old_names(db, name)
        assert catalog.read(db, name) is None and f"tomem:{name}:world" in db.graph_names()
    assert catalog.legacy_names(db) == sorted(names)

    migrated = tomc("memory", "migrate", names[0], url=db.url)
    assert migrated.returncode == 0 and migrated.stdout == f"migrated memory {names[0]}\n"
    for name in names:  # the second migrates on attach
        with Session.attach(name, db=db, create=False) as live:
            assert (live.believes("Maya", "refund.status").values,
                    live.truth("refund.status").values, live.step) == answers[name]
            live.apply("Maya exits chat")
        with Session.attach(name, db=db, as_agent="Maya") as maya:
            assert maya.believes("Maya", "refund.status").values == answers[name][0]
    assert [k for k in db.redis.scan_iter(match="tomem:legacy_*")] == []
    assert catalog.legacy_names(db) == []
    assert tomc("memory", "migrate", url=db.url).stdout == "nothing to migrate\n"


def test_grant_checks_and_syncs_agents_users(db, fresh):
    name = fresh("granted")
    with Session.attach(name, db=db) as live:
        live.apply("\n".join(STORY))
    with Session.attach(name, db=db, as_agent="Maya"):
        pass
    user = acl.user_name(catalog.memory_graphs(name), "Maya")
    assert tomc("memory", "grant", name, url=db.url).returncode == 0
    db.redis.execute_command("ACL", "DELUSER", user)  # a restart without an ACL file
    missing = tomc("memory", "grant", name, url=db.url)
    assert missing.returncode == 1 and f"{name}: 1 agent users missing or wrong" in missing.stdout
    synced = tomc("memory", "grant", name, "--sync", url=db.url)
    assert synced.returncode == 0, synced.stderr
    made = db.redis.acl_getuser(user)
    assert made["keys"] in ([], "") and sorted(made["commands"]) == sorted(acl.PLAIN)
    assert any(memory_key(name, "queue") in str(s) for s in made["selectors"])


def test_a_memorys_forks_left_by_a_dead_process_are_dropped(db):
    dead = _dead_pid()
    mine = memory_key("left", "fork", f"{HOST}-{dead}-0123456789ab", "world")
    theirs = memory_key("left", "fork", f"otherhost-{dead}-0123456789ab", "world")
    for name in (mine, theirs):
        db.graph(name).query("CREATE (:Left)")
    forks.drop_abandoned(db)
    names = set(db.graph_names())
    assert mine not in names and theirs in names
    db.redis.delete(theirs)
