"""No cost grows with a memory's history (issue 34 item 2): every statement a memory sends
while it is written, read, asked and reattached is planned by FalkorDB (GRAPH.EXPLAIN, on
the memory as it is) without a scan of every version, event, contested claim or hearing, and
without a walk of TOLD edges; the few that read history by design are named below, each with
why. Plans, not timings: the machine is shared and noisy.
"""

from __future__ import annotations

import re
from contextlib import contextmanager

import pytest
import redis
import redis.connection

from eval.workload import agent_names, mixed_events, setup_statements
from tomc.api import Session

# A scan of one of these labels, or a walk of TOLD edges, grows with the history.
GROWING = re.compile(r"(Label Scan|All Node Scan) \| \(\w*:?(V|Event|Contest|Heard|Declaration)?\)"
                     r"|TOLD")

# Statements that read history by design, by the first line of their template: each is what
# a question about the whole history asks, or a one-off upgrade, never a write's or a
# belief read's cost.
BY_DESIGN = {
    # explain: the path by which a value reached a holder walks who told whom
    "// Who told whom (explain)",
    # search: words of nodes stored before search existed, derived once per graph
    "// Versions and events written before search existed",
    "// Stores the search words of nodes written before search existed",
}
# Known to grow, not yet made proportional: a writer's first write after attaching reads
# every key a mind holds (read_mind_keys.cypher); recovery counts every event of a mind
# graph whose root does not know its latest steps (one written before roots kept them).
NOT_YET = {
    "// Every key a mind graph holds a version of",
    "// The two latest steps a mind graph has an Event for, from every Event",
}

QUESTIONS = ["agent0 > agent1 believes ticket0.status",
             "agent0 believes ticket0.status at step 5",
             "truth ticket1.status on 2026-01-03",
             "false_beliefs depth 2", "who_knows ticket0.status",
             "handoff agent0 -> agent1", "common_ground agent0, agent1",
             "explain agent1 ticket0.status", 'search "ticket"',
             "context_for agent0 talking_to agent1"]


@contextmanager
def recorded():
    """Every GRAPH.QUERY / GRAPH.RO_QUERY sent meanwhile, as (graph, command text), however
    it is sent (a client, a pipeline, a writer's packed transaction)."""
    sent: list[tuple[str, str]] = []
    originals = (redis.Redis.execute_command, redis.client.Pipeline.execute_command,
                 redis.connection.AbstractConnection.pack_commands)

    def note(args):
        if args and args[0] in ("GRAPH.QUERY", "GRAPH.RO_QUERY"):
            sent.append((args[1], args[2]))

    def client(self, *args, **kwargs):
        note(args)
        return originals[0](self, *args, **kwargs)

    def pipeline(self, *args, **kwargs):
        note(args)
        return originals[1](self, *args, **kwargs)

    def packed(self, commands):
        for command in commands:
            note(command)
        return originals[2](self, commands)

    redis.Redis.execute_command = client
    redis.client.Pipeline.execute_command = pipeline
    redis.connection.AbstractConnection.pack_commands = packed
    try:
        yield sent
    finally:
        (redis.Redis.execute_command, redis.client.Pipeline.execute_command,
         redis.connection.AbstractConnection.pack_commands) = originals


def _template(text: str) -> str:
    """The first comment line of a statement's template (its name, in effect)."""
    body = text.split("//", 1)
    return ("//" + body[1]).splitlines()[0][:90] if len(body) == 2 else text[:90]


def test_no_statement_of_a_memory_scans_its_history(db, fresh):
    name = fresh("plans")
    agents = agent_names(5)
    with recorded() as sent:
        with Session.attach(name, db=db) as live:
            for statement in setup_statements(agents):
                live.apply(statement)
            for text in mixed_events(agents, 240):
                live.apply(text)
            live.apply("claim ticket1.status = done from agent1 valid from 2026-01-02")
            live.apply("agent0 retracts ticket1.status")
            for question in QUESTIONS:
                live.ask(question)
            live.history()
        with Session.attach(name, db=db) as again:
            again.believes(["agent0", "agent1"], "ticket0.status")
            again.apply("agent2 tells agent3 ticket2.status = state1")
    distinct = {}
    for graph, text in sent:
        distinct.setdefault(text.split("CYPHER ", 1)[-1].split(" //", 1)[-1][:2000], (graph, text))
    assert len(distinct) > 25  # writes, reads, analyses and attach were all seen
    growing = {}
    for graph, text in distinct.values():
        plan = [line if isinstance(line, str) else line.decode()
                for line in db.redis.execute_command("GRAPH.EXPLAIN", graph, text)]
        found = [line.strip() for line in plan if GROWING.search(line)]
        template = _template(text)
        if found and not any(template.startswith(t) for t in BY_DESIGN | NOT_YET):
            growing[template] = found
    assert growing == {}, "\n".join(f"{t}: {f}" for t, f in growing.items())


@pytest.mark.parametrize("chain", [["agent0"], ["agent0", "agent1"]])
def test_a_belief_read_of_now_walks_only_the_owners_open_versions(db, fresh, chain):
    name = fresh("plans_read")
    agents = agent_names(3)
    with Session.attach(name, db=db) as live:
        for statement in setup_statements(agents):
            live.apply(statement)
        for text in mixed_events(agents, 60):
            live.apply(text)
        with recorded() as sent:
            live.believes(chain, "ticket0.status")
    (graph, text), = [(g, t) for g, t in sent if "belief(chain, key, step)" in t]
    plan = "\n".join(line if isinstance(line, str) else line.decode()
                     for line in db.redis.execute_command("GRAPH.EXPLAIN", graph, text))
    assert "Label Scan" not in plan
    assert "MATCH (owner)-[:HOLDS]->(b:V)" in text  # open versions only: HELD is not walked


def test_a_question_after_another_writer_reads_one_chain_not_every_mind(db, fresh):
    """A session behind another writer answers from the chain asked (its owner found inside
    the read), without loading every mind's perspectives and open versions; right also when
    the other writer's event moved the key to a deeper chain (copy-on-write)."""
    name = fresh("plans_behind")
    agents = agent_names(4)
    with Session.attach(name, db=db) as reader, Session.attach(name, db=db) as writer:
        for statement in setup_statements(agents):
            writer.apply(statement)
        writer.apply("agent1 announces ticket0.status = open")
        assert reader.believes(["agent0", "agent1"], "ticket0.status").values == ["open"]
        writer.apply("agent0 exits hall")
        writer.apply("agent1 announces ticket0.status = closed")  # agent0 > agent1 diverges
        writer.apply("agent2 tells agent0 ticket0.status = moved")
        with recorded() as sent:
            deeper = reader.believes(["agent0", "agent1"], "ticket0.status")
            root = reader.believes("agent0", "ticket0.status")
            truth = reader.truth("ticket0.status")
        assert deeper.to_json() == writer.believes(["agent0", "agent1"],
                                                   "ticket0.status").to_json()
        assert root.to_json() == writer.believes("agent0", "ticket0.status").to_json()
        assert truth.to_json() == writer.truth("ticket0.status").to_json()
    loads = [t for _, t in sent if "// The open versions of every perspective" in t
             or "// Every perspective of a mind graph" in t]
    assert loads == []
