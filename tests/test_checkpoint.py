"""Attaching from a checkpoint (issue 34 item 3; tomc/memory/checkpoint.py): a session
resumes from the checker's state kept beside the graphs and replays only what came after
it, reads past events only when asked, and answers exactly as a session that replays the
whole memory."""

from __future__ import annotations

import json

import pytest
import redis

from eval.workload import agent_names, mixed_events, setup_statements
from tomc.api import Session
from tomc.engine import recovery
from tomc.memory import catalog, checkpoint
from tomc.memory.journal import MemoryJournal
from tomc.runtime.keys import memory_key

EVENTS = checkpoint.EVERY * 2 + 40


def _fill(db, name: str) -> list[str]:
    agents = agent_names(4)
    with Session.attach(name, db=db) as live:
        for statement in setup_statements(agents):
            live.apply(statement)
        texts = list(mixed_events(agents, EVENTS, seed=7))
        for start in range(0, len(texts), 16):
            live.apply("\n".join(texts[start:start + 16]))
    return agents


def _answers(session: Session, agents: list[str]) -> dict:
    found = {"step": session.step, "history": [(e.step, e.text, e.line, e.witnesses)
                                               for e in session.history()]}
    for key in ("ticket0.status", "ticket3.status"):
        found[key] = [session.believes([a, b], key).to_json() for a in agents[:2]
                      for b in agents if b != a] + [session.truth(key).to_json()]
    found["false"] = session.false_beliefs(2).to_json()
    found["search"] = session.search("ticket0").to_json()
    timed = [e.time for e in session.history() if e.time]
    if timed:  # knowledge time by the clock (the checker finds the step by time)
        found["at"] = session.believes(agents[0], "ticket0.status",
                                       at=timed[len(timed) // 2]).to_json()
    return found


class Sent:
    """The commands sent while it is open (a client's, a pipeline's)."""

    def __init__(self):
        self.commands: list[tuple] = []

    def __enter__(self):
        self.originals = (redis.Redis.execute_command, redis.client.Pipeline.execute_command)
        sent = self.commands

        def client(this, *args, **kwargs):
            sent.append(args)
            return self.originals[0](this, *args, **kwargs)

        def pipeline(this, *args, **kwargs):
            sent.append(args)
            return self.originals[1](this, *args, **kwargs)

        redis.Redis.execute_command, redis.client.Pipeline.execute_command = client, pipeline
        return self

    def __exit__(self, *exc):
        redis.Redis.execute_command, redis.client.Pipeline.execute_command = self.originals


def test_a_session_resumes_from_the_checkpoint_and_answers_as_a_whole_replay(db, fresh):
    name = fresh("kept")
    agents = _fill(db, name)
    base = memory_key(name)
    kept = checkpoint.read(db, base)
    assert kept is not None and kept.revision >= checkpoint.EVERY * 2
    with Sent() as sent:
        with Session.attach(name, db=db) as resumed:
            resumed.believes([agents[0], agents[1]], "ticket0.status")
            applied = [c for c in sent.commands if c[:1] == ("GRAPH.RO_QUERY",)
                       and "The statements applied after revision" in c[2]]
            # only what came after the checkpoint is replayed; of the past events, at most
            # the latest chunk is read (the checker looks at the last event)
            assert applied and all(f"rev={kept.revision}" in c[2] for c in applied)
            read = [c for c in sent.commands if c[:1] == ("HMGET",)]
            assert len(read) <= 1 and all(len(c) - 2 <= 512 for c in read)
            from_checkpoint = _answers(resumed, agents)
    db.redis.delete(checkpoint.checkpoint_key(base))
    with Session.attach(name, db=db) as replayed:  # the whole memory replayed
        assert _answers(replayed, agents) == from_checkpoint
    assert checkpoint.read(db, base) is not None  # ... and a checkpoint kept again


def test_a_memory_without_checkpoint_or_event_hash_is_replayed_and_kept(db, fresh):
    """A memory stored before checkpoints: the first attach replays it whole and keeps
    every event and a checkpoint; the next resumes there, with the same answers."""
    name = fresh("kept_later")
    agents = _fill(db, name)
    base = memory_key(name)
    db.redis.delete(checkpoint.checkpoint_key(base), checkpoint.events_key(base))
    with Session.attach(name, db=db) as first:
        before = _answers(first, agents)
    assert db.redis.hlen(checkpoint.events_key(base)) == before["step"]
    stored = json.loads(db.redis.get(checkpoint.checkpoint_key(base)))
    assert stored["step"] == before["step"]
    with Session.attach(name, db=db) as later:
        assert _answers(later, agents) == before


def test_writes_after_a_checkpoint_and_an_undo_keep_answers_whole(db, fresh):
    """A session resumed from a checkpoint writes on; an undone event leaves no event in
    the hash and no checkpoint that holds it; the next attach answers as the writer."""
    name = fresh("kept_undo")
    agents = _fill(db, name)
    base = memory_key(name)
    with Session.attach(name, db=db) as resumed:
        resumed.apply(f"{agents[1]} tells {agents[2]} ticket1.status = late")
        step, revision = resumed.step, resumed._live.engine.revision
        graphs = catalog.memory_graphs(name, agents)
    kept = checkpoint.read(db, base)
    assert kept.step < step  # taken before the event undone: it stays
    assert recovery.undo_event(db, graphs, step, revision, MemoryJournal(memory_key(name)))
    assert checkpoint.read(db, base) == kept
    assert db.redis.hget(checkpoint.events_key(base), str(step)) is None
    with Session.attach(name, db=db) as after:
        assert after.step == step - 1
        assert after.believes(agents[2], "ticket1.status").values != ["late"]
        after.apply(f"{agents[1]} tells {agents[2]} ticket1.status = again")
        mine = _answers(after, agents)
    with Session.attach(name, db=db) as other:
        assert _answers(other, agents) == mine


@pytest.mark.parametrize("roots_know", [True, False])
def test_recovery_finds_a_half_applied_event_from_the_roots_or_by_counting(db, fresh,
                                                                          roots_know):
    """Recovery reads each mind's latest steps from its root (read_mind_steps.cypher); a
    graph whose root does not know them (written before roots kept them) is counted
    instead (read_mind_steps_scan.cypher): the half-applied event is found either way."""
    from tomc.compiler.templates import render

    name = fresh("half")
    agents = agent_names(3)
    with Session.attach(name, db=db) as live:
        for statement in setup_statements(agents):
            live.apply(statement)
        live.apply(f"{agents[0]} tells {agents[1]} ticket0.status = a")
        (event,) = live.apply(f"{agents[1]} announces ticket1.status = b")
        revision = live._live.engine.revision
    graphs = catalog.memory_graphs(name, agents)
    mind = db.graph(graphs.mind(agents[2]))
    mind.query(render("undo.cypher", world=False), {"step": event.step})  # this one lacks it
    if not roots_know:
        for agent in agents:
            db.graph(graphs.mind(agent)).query("MATCH (r:P) REMOVE r.recent")
    assert recovery.half_applied(db, graphs) == (event.step, revision)
    with Session.attach(name, db=db) as after:  # undone whole on attach
        assert after.step == event.step - 1
        assert after.truth("ticket1.status").values == []


def test_undoing_the_commit_that_wrote_the_checkpoint_drops_it(db, fresh):
    name = fresh("kept_undo_own")
    agents = agent_names(3)
    base = memory_key(name)
    with Session.attach(name, db=db) as live:
        for statement in setup_statements(agents):
            live.apply(statement)
        texts = mixed_events(agents, 10 * checkpoint.EVERY, seed=3)
        while checkpoint.read(db, base) is None:  # one event per commit, until one crosses
            (event,) = live.apply(next(texts))
        revision = live._live.engine.revision
    assert checkpoint.read(db, base).step == event.step
    assert recovery.undo_event(db, catalog.memory_graphs(name, agents), event.step, revision,
                               MemoryJournal(memory_key(name)))
    assert checkpoint.read(db, base) is None
    with Session.attach(name, db=db) as after:  # replayed whole, and kept again
        assert after.step == event.step - 1
    assert checkpoint.read(db, base).step == event.step - 1


def test_a_hash_missing_events_is_found_and_the_memory_replayed(db, fresh):
    """Events written by a tomc that kept no event hash, after a checkpoint: the hash is
    not whole, so the checkpoint is dropped and the memory replayed (and kept anew)."""
    name = fresh("kept_torn")
    agents = _fill(db, name)
    base = memory_key(name)
    with Session.attach(name, db=db) as live:
        answers = _answers(live, agents)
    db.redis.hdel(checkpoint.events_key(base), "3")
    with Session.attach(name, db=db) as again:
        assert _answers(again, agents) == answers
    assert db.redis.hget(checkpoint.events_key(base), "3") is not None


def test_a_session_that_could_not_keep_a_checkpoint_writes_none(db, fresh, monkeypatch):
    """A writer whose backfill lost a race (another writer committed) does not know the
    event hash is whole: it writes no checkpoint, however many revisions it crosses."""
    name = fresh("kept_lost")
    agents = _fill(db, name)
    base = memory_key(name)
    db.redis.delete(checkpoint.checkpoint_key(base))
    monkeypatch.setattr(checkpoint, "backfill", lambda *args: False)
    with Session.attach(name, db=db) as live:
        assert live._live.engine.journal.keep is None
        live.apply("\n".join(f"{agents[0]} tells {agents[1]} ticket{i % 3}.status = v{i}"
                              for i in range(checkpoint.EVERY + 10)))
    assert checkpoint.read(db, base) is None


def test_a_history_reads_past_events_by_chunk_and_equals_a_list(db, fresh):
    from tomc.engine.history import History, StoredEvents

    name = fresh("kept_history")
    _fill(db, name)
    base = memory_key(name)
    with Session.attach(name, db=db) as live:
        whole = list(live.history())
    stored = StoredEvents(db, checkpoint.events_key(base), len(whole) - 5)
    history = History(stored).extend(whole[-5:])
    assert history == whole and len(history) == len(whole)
    assert history[-1] == whole[-1] and history[0] == whole[0] and history[3:7] == whole[3:7]
    with pytest.raises(IndexError):
        history[len(whole)]
    builder = history.evolver()
    builder.append(whole[0])
    assert len(builder) == len(whole) + 1 and builder[-1] == whole[0]
    with pytest.raises(IndexError):
        builder[-len(whole) - 2]


def test_learned_trust_resumed_from_a_checkpoint_answers_as_a_replay(db, fresh, tmp_path):
    """`trust learned` standings come from every claim so far: a session resumed from a
    checkpoint reads the past claims when it needs them and learns as a replay does."""
    policy = tmp_path / "learned.tom"
    policy.write_text("policy learned {\n  depth 2\n  trust learned\n  source wiki authority 2\n"
                      "  source blog authority 2\n  source vendor authority 5\n}\n",
                      encoding="utf-8")
    name = fresh("kept_learned")
    sources = ("wiki", "blog", "vendor")
    with Session.attach(name, db=db, policy=str(policy)) as live:
        live.apply("agents Oncall, Lead")
        live.apply("\n".join(f"claim db.k{i % 7} = v{i % 3} from {sources[i % 3]} to all"
                             for i in range(checkpoint.EVERY + 40)))
    base = memory_key(name)
    assert checkpoint.read(db, base) is not None

    def read(session):
        return [session.believes("Oncall", f"db.k{i}").to_json() for i in range(7)] + [
            session.explain("Oncall", "db.k1").to_json()]

    with Session.attach(name, db=db) as resumed:  # learns from the stored claims
        resumed.apply("claim db.k1 = v9 from blog to all")
        after_write = read(resumed)
    db.redis.delete(checkpoint.checkpoint_key(base))
    with Session.attach(name, db=db) as replayed:
        assert read(replayed) == after_write
