"""Named memories (tomc/memory/catalog.py, docs/storage.md): they outlive the process that
wrote them, take many writers with one history, survive kill -9 of a writer and of the
server, and keep each agent's mind private. Every test runs on a real FalkorDB; writers
are separate processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from contextlib import ExitStack, contextmanager
from datetime import datetime, timezone

import pytest
import redis

from conftest import REPO
from tomc.api import Session, TomError
from tomc.dsl.checker import check_text
from tomc.memory import catalog
from tomc.memory.applier import serve_appliers
from tomc.runtime.keys import appliers_key, memory_key
from tomc.reference.interpreter import run_reference
from tomc.reference.view import ReferenceView
from tomc.runtime.connection import connect, from_url
from tomc.runtime.errors import AccessDenied, DatabaseUnavailable, StaleWrite
from tomc.runtime.transactions import TURN_MS, Writer

STORY = ["agents Maya, Billing, Finance", "rooms chat, ops", "Maya, Billing enter chat",
         "Billing says refund.status = approved", "Finance enters ops",
         "Finance sets refund.status = rejected"]


def python(code: str, url: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run `code` in a new Python process on the server at `url`."""
    env = {**os.environ, "FALKORDB_URL": url, "PYTHONPATH": str(REPO / "tests")}
    result = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True,
                            text=True, timeout=600)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def tomc(*args: str, url: str) -> subprocess.CompletedProcess:
    return python("from tomc.cli.main import main; main()", url, *args, check=False)


def versions(view, chains) -> set:
    """Every version the chains held: (chain, key, value, since, until)."""
    return {(h.chain, h.key, h.value, h.since, h.until)
            for h in [*view.held(chains), *view.superseded(chains)]}


def reference_versions(scenario) -> set:
    interpreter = run_reference(scenario)
    return {(chain, b.key, b.value, b.since, b.until)
            for chain, beliefs in interpreter.beliefs.items() for b in beliefs
            if b.since != b.until}


def without_lines(answer):
    """An answer's JSON without .tom line numbers (a memory numbers its events by their
    place in its log, an exported file by their line)."""
    if isinstance(answer, dict):
        return {k: without_lines(v) for k, v in answer.items() if k != "line"}
    if isinstance(answer, list):
        return [without_lines(v) for v in answer]
    return answer


# ---------------------------------------------------------------- persistence


def test_a_second_process_finds_every_belief_and_past_step(db, fresh):
    name = fresh("support")
    written = tomc("memory", "apply", name, *STORY, "--policy", "default", url=db.url)
    assert written.returncode == 0, written.stderr
    assert "memory support at step 4" in written.stdout
    with Session.attach(name, db=db) as later:  # this process never wrote it
        assert later.step == 4 and later.scenario.agents == ["Maya", "Billing", "Finance"]
        assert later.scenario.policy.name == "default"
        assert later.believes("Maya", "refund.status").values == ["approved"]
        assert later.believes(["Maya", "Billing"], "refund.status").values == ["approved"]
        assert later.truth("refund.status").values == ["rejected"]
        assert later.believes("Maya", "refund.status", at_step=1).values == []
        assert later.believes("Maya", "refund.status", at_step=2).values == ["approved"]
        assert later.truth("refund.status", at_step=3).values == []
        (event,) = later.apply("Finance tells Maya refund.status = rejected")
        assert event.step == 5  # continues at the next step
    with Session.attach(name, db=db) as third:
        assert third.believes("Maya", "refund.status").values == ["rejected"]
        assert [e.step for e in third.history()] == [1, 2, 3, 4, 5]


def test_a_memory_stored_before_version_ids_is_upgraded_when_attached(db, fresh):
    """Versions written by an older tomc have no `vid` (the id resolution closes them by:
    tomc/compiler/resolve.py) nor provenance of their own: attaching gives them both, so
    a new event supersedes them and old answers keep their event."""
    name = fresh("before_vids")
    with Session.attach(name, db=db) as first:
        first.apply("\n".join(STORY))
        before = first.believes("Maya", "refund.status", at_step=2).to_json()
        graphs = catalog.memory_graphs(name, first.scenario.agents)
    for graph in (graphs.world, *graphs.minds.values()):
        db.graph(graph).query("MATCH (b:V) REMOVE b.vid, b.text, b.line, b.witnesses")
    with Session.attach(name, db=db) as later:
        later.apply("Finance tells Maya refund.status = rejected")
        assert later.believes("Maya", "refund.status").values == ["rejected"]
        assert later.believes("Maya", "refund.status", at_step=2).to_json() == before


def test_a_memory_stored_before_its_indexes_gets_them_and_its_hearings(db, fresh):
    """A world graph written before the index of hearings (told.cypher) and those of events
    and declarations: attaching makes the indexes and one `Heard` node per first hearing,
    so a value told again is not taken for a first hearing (explain follows one path)."""
    name = fresh("before_heard")
    told = "Finance tells Maya refund.status = approved"
    with Session.attach(name, db=db) as first:
        first.apply("agents Maya, Finance, Billing")
        first.apply(told)
        world = db.graph(catalog.memory_graphs(name).world)
    world.query("MATCH (h:Heard) DELETE h")
    for label, properties in (("Heard", ("agent", "key", "value")),
                              ("Event", ("step", "rev")), ("Declaration", ("rev",))):
        for name_ in properties:  # FalkorDB drops an index one property at a time
            world.query(f"DROP INDEX FOR (h:{label}) ON (h.{name_})")
    assert world.query("CALL db.indexes() YIELD label RETURN count(label)").result_set == [[0]]
    with Session.attach(name, db=db) as later:
        later.apply("Billing tells Maya refund.status = approved")
        path = later.explain("Maya", "refund.status").to_json()
    labels = {row[0] for row in world.query("CALL db.indexes() YIELD label RETURN label")
              .result_set}
    assert labels == {"Heard", "Event", "Declaration"}
    firsts = world.query("MATCH (s:Agent)-[t:TOLD]->(:Agent {name: 'Maya'}) "
                         "RETURN s.name, t.first ORDER BY t.step").result_set
    assert firsts == [["Finance", True], ["Billing", False]]
    assert path == later_path(name, db)


def later_path(name: str, db) -> dict:
    """explain of Maya's refund.status on a memory written whole by this tomc."""
    other = name + "_now"
    catalog.drop(db, other)
    try:
        with Session.attach(other, db=db) as now:
            now.apply("agents Maya, Finance, Billing")
            now.apply("Finance tells Maya refund.status = approved")
            now.apply("Billing tells Maya refund.status = approved")
            return now.explain("Maya", "refund.status").to_json()
    finally:
        catalog.drop(db, other)


def test_a_writer_that_attaches_keeps_the_disputes_it_reads(db, fresh, tmp_path):
    """The engine resolves from the versions it reads on attaching (read_open.cypher), with
    their claims and rivals, superseded ones too: a dated supersede after attaching keeps
    the dispute and takes the rivals of its value, even one superseded on arrival, into
    its support (docs/semantics.md section 4, "Dominance"), as a writer that never left,
    and the reference, do."""
    policy = tmp_path / "dated.tom"
    policy.write_text("policy dated {\n  trust authority\n  source note authority 1\n"
                      "  source chat authority 1\n  source bulletin authority 2\n}\n")
    first = ["agents Ana", "claim freeze.date = d17 from note at 2026-10-13 to Ana",
             "claim freeze.date = d20 from chat at 2026-10-12 to Ana"]
    # Older than the note's 17, of more authority: it supersedes, and the 17 stays contested.
    then = "claim freeze.date = d20 from bulletin at 2026-10-11 to Ana"
    name = fresh("disputes_read")
    with Session.attach(name, db=db, policy=str(policy)) as writer:
        writer.apply("\n".join(first))
        # The chat's 20, older and of no more authority, is superseded on arrival.
        assert writer.believes("Ana", "freeze.date").contested == []
    with Session.attach(name, db=db) as later:
        later.apply(then)
        answer = later.believes("Ana", "freeze.date")
        assert (answer.values, answer.contested, answer.support) == (
            ["d20"], ["d17"], ["bulletin", "chat"])
        text = later.export()
    (scenario,) = check_text(text, "exported.tom").scenarios
    reference = ReferenceView(run_reference(scenario), len(scenario.events))
    (held,) = reference.held([("Ana",)])
    assert (held.value, [r.value for r in held.rivals], sorted(held.support)) == (
        "d20", ["d17"], ["bulletin", "chat"])


def test_attaching_runs_no_event_again(db, fresh):
    name = fresh("no_rerun")
    with Session.attach(name, db=db) as first:
        first.apply("\n".join(STORY))
    nodes = db.graph(catalog.memory_graphs(name).world).query(
        "MATCH (n) RETURN count(n)").result_set
    with Session.attach(name, db=db) as again:
        assert again.step == 4
    assert db.graph(catalog.memory_graphs(name).world).query(
        "MATCH (n) RETURN count(n)").result_set == nodes


def test_open_keeps_its_replace_and_run_meaning(db, fresh):
    name = fresh("replaced")
    with Session.attach(name, db=db) as kept:
        kept.apply("\n".join(STORY))
    with Session.open(db=db, name=name) as scratch:  # tom:<name>:..., not the memory
        assert scratch.step == 0
    with Session.attach(name, db=db) as kept:
        assert kept.step == 4


def test_export_replays_to_the_same_answers(db, fresh, tmp_path):
    name = fresh("exported")
    with Session.attach(name, db=db, policy="default") as live:
        live.apply("\n".join(STORY) + "\nclaim refund.status = pending from Billing")
        asked = [without_lines(live.ask(q).to_json()) for q in
                 ("Maya believes refund.status", "false_beliefs", "who_knows refund.status")]
        text = live.export()
    path = tmp_path / "exported.tom"
    path.write_text(text)
    (scenario,) = check_text(text, str(path)).scenarios
    assert len(scenario.events) == 5
    with Session.open(path, db=db) as replay:
        assert [without_lines(replay.ask(q).to_json()) for q in
                ("Maya believes refund.status", "false_beliefs",
                 "who_knows refund.status")] == asked


def test_a_policy_other_than_the_memorys_is_refused(db, fresh):
    name = fresh("policy_kept")
    with Session.attach(name, db=db, policy="default"):
        pass
    with pytest.raises(TomError) as caught:
        Session.attach(name, db=db, policy="authority")
    assert caught.value.diagnostics[0].code == "E144"


@pytest.mark.parametrize("statement, hint", [
    ("C peeks", "another writer's event could come between"),
    ("clock 2026-10-14", "`at T` at the end of each event"),
])
def test_a_memory_refuses_what_another_writer_could_split(db, fresh, statement, hint):
    # A peek commits as its own step: another writer's event between it and the event it
    # modifies made valid writes fail (E175) and left an export `tomc run` rejects.
    name = fresh("no_peeks")
    with Session.attach(name, db=db) as session:
        session.apply("agents A, B, C\nrooms r\nA, B enter r")
        with pytest.raises(TomError) as caught:
            session.apply(f"{statement}\nA sets k.v = 1")
        assert caught.value.diagnostics[0].code == "E144"
        assert hint in caught.value.diagnostics[0].hint
        assert session.step == 1  # nothing of the call was written


def test_a_claim_takes_the_time_it_is_applied_at(db, fresh):
    """Regression: a claim applied to a memory took the time of the memory's previous
    timed event (its `at` is when its source published it), so "what did we know on D"
    counted it days early. The memory keeps the time as a `clock` line before it, so an
    attach replays it and the export carries it: the reference interpreter, replaying the
    export, gives the same answers as FalkorDB."""
    from tomc.runner import run_scenario
    name = fresh("claim_time")
    with Session.attach(name, db=db) as live:
        live.apply("agents Maya, Ops\nrooms chat\nMaya, Ops enter chat at 2026-03-01")
        started = datetime.now(timezone.utc).replace(tzinfo=None).isoformat(timespec="seconds")
        live.apply("claim office.closed = true from Ops at 2026-02-01")
        claim = live.scenario.events[-1]
        assert started <= claim.time <= datetime.now(timezone.utc).isoformat()
        assert live.ask("Maya believes office.closed at 2026-03-05").values == []
        assert live.ask("Maya believes office.closed").values == ["true"]
        # times the same call states come first: this claim takes 2030-01-02
        live.apply("Maya says office.note = x at 2030-01-02\nclaim office.open = yes from Ops")
        assert live.scenario.events[-1].time == "2030-01-02T00:00:00"
        live.apply("claim office.open = no from Ops")  # the clock is past now: it stays
        assert live.check("clock 2031-01-01")[0].code == "E144"  # only the memory sets it
        assert live.scenario.events[-1].time == "2030-01-02T00:00:00"
        exported = live.export()
    with Session.attach(name, db=db) as again:
        assert again.scenario.events[1].time == claim.time
    assert f"clock {claim.time}\n  claim office.closed = true from Ops at 2026-02-01" in exported
    asks = ["Maya believes office.closed at 2026-03-05", "Maya believes office.closed",
            f"Maya believes office.closed at {claim.time}", "Maya believes office.open"]
    text = exported[:exported.rindex("}")] + "".join(f"  ask {a}\n" for a in asks) + "}\n"
    (scenario,) = check_text(text, "export.tom").scenarios
    engines = [[a.values for a in run_scenario(scenario, engine, db, keep=False).answers]
               for engine in ("falkordb", "reference")]
    assert engines[0] == engines[1] == [[], ["true"], ["true"], ["no"]]


# ---------------------------------------------------------------- many writers

WRITER = """
import sys
from tomc.api import Session
name, me, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
agent, other = f"A{me}", f"A{(me + 1) % 8}"
inside = False
with Session.attach(name) as memory:
    for n in range(count):
        if n % 3 == 0:
            memory.apply(f"{agent} {'exits' if inside else 'enters'} r{me % 2}")
            inside = not inside
        elif n % 3 == 1:
            memory.apply(f"{agent} sets k{n % 2}.s = p{me}n{n}")
        else:
            memory.apply(f"{agent} tells {other} k0.s = p{me}n{n}")
"""


@pytest.mark.slow
@pytest.mark.parametrize("path", ["writers", "applier"])
def test_eight_writers_one_history_equal_to_the_reference(db, fresh, path):
    """8 processes x 1,000 events, committing themselves (taking turns) or submitting to
    the memory's applier (issue 27): one history, none lost or shared, equal to the
    reference's replay of the export."""
    name = fresh("crowd")
    per_writer = int(os.environ.get("TOMC_TEST_EVENTS_PER_WRITER", "1000"))
    with Session.attach(name, db=db) as setup:
        setup.apply("agents " + ", ".join(f"A{i}" for i in range(8)) + "\nrooms r0, r1")
    env = {**os.environ, "FALKORDB_URL": db.url}
    with ExitStack() as serving:
        if path == "applier":
            serving.enter_context(_applying(db))
            db.redis.config_resetstat()
        writers = [subprocess.Popen([sys.executable, "-c", WRITER, name, str(i),
                                     str(per_writer)], env=env, stderr=subprocess.PIPE,
                                    text=True)
                   for i in range(8)]
        for w in writers:
            assert w.wait(timeout=1500) == 0, w.stderr.read()
            w.stderr.close()
        if path == "applier":  # it served: it takes requests with LMOVE, writers never do
            assert db.redis.info("commandstats")["cmdstat_lmove"]["calls"] > 0
    with Session.attach(name, db=db) as reader:
        events = reader.history()
        assert [e.step for e in events] == list(range(1, 8 * per_writer + 1))  # none shared
        by_writer = Counter(e.text.split()[0] for e in events)
        assert by_writer == {f"A{i}": per_writer for i in range(8)}  # none lost
        view = reader.view()
        chains = [(), *reader.scenario.chains()]
        engine = versions(view, chains)
        current = Counter((h.chain, h.key) for h in view.held(chains))
        assert max(current.values()) == 1  # never two current values of a `one` key
        text = reader.export()
    (scenario,) = check_text(text, "crowd.tom").scenarios
    assert engine == reference_versions(scenario)


@contextmanager
def _applying(db):
    """Appliers (tomc/memory/applier.py) serving `db`'s memories, in a thread, while the
    block runs: writers that attach meanwhile submit to them."""
    stop = threading.Event()
    thread = threading.Thread(target=serve_appliers, args=(db, stop, 2))
    thread.start()
    try:
        while not db.redis.exists(appliers_key()):
            time.sleep(0.05)
        yield
    finally:
        stop.set()
        thread.join()


def test_a_writer_that_took_the_turn_commits_before_the_others(db):
    """Fairness under contention (tomc/runtime/transactions.py): the turn fails commits
    already in flight, makes others wait in `begin`, and ends with the holder's commit."""
    key = "test-turn:rev"
    db.redis.delete(key, f"{key}:turn", f"{key}:late")
    late, starved = Writer(db, key), Writer(db, key)
    assert late.begin() == starved.begin() == 0
    starved.take_turn()
    assert late.commit([("SET", f"{key}:late", 1)]) is None  # in flight: fails, wrote nothing
    waited: list[int] = []
    waiting = threading.Thread(target=lambda: waited.append(late.begin()))
    waiting.start()
    time.sleep(0.2)
    assert waited == []  # waits while the turn is someone else's
    assert starved.begin() == 0 and starved.commit([]) == []
    waiting.join(timeout=10)
    assert waited == [1] and late.commit([]) == []  # after the holder's commit, in turn
    assert db.redis.get(f"{key}:turn") is None and db.redis.get(f"{key}:late") is None
    for writer in (late, starved):
        writer.close()
    db.redis.delete(key)


# A process that takes the turn and is then killed before it commits.
TURN_HOLDER = """
import sys, time
from tomc.runtime.connection import from_url
from tomc.runtime.transactions import Writer
writer = Writer(from_url(sys.argv[1]), sys.argv[2])
writer.begin()
writer.take_turn()
print("holding", flush=True)
time.sleep(600)
"""


def test_a_turn_holder_killed_before_its_commit_holds_the_others_up_until_the_turn_expires(db):
    """docs/storage.md: the turn is a key that expires (TURN_MS), so a writer killed while
    holding it (kill -9: no cleanup runs) blocks the others only until then."""
    key = "test-turn-killed:rev"
    db.redis.delete(key, f"{key}:turn")
    holder = subprocess.Popen([sys.executable, "-c", TURN_HOLDER, db.url, key], cwd=REPO,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        assert 0 < db.redis.pttl(f"{key}:turn") <= TURN_MS
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=30)
        writer = Writer(db, key)
        assert writer.begin() == 0  # waited for the orphaned turn to expire
        assert db.redis.get(f"{key}:turn") is None
        assert writer.commit([("SET", f"{key}:after", 1)]) is not None
        writer.close()
    finally:
        holder.kill()
        db.redis.delete(key, f"{key}:turn", f"{key}:after")


def test_threads_sharing_one_session_keep_one_history(db, fresh):
    name = fresh("threads")
    with Session.attach(name, db=db) as shared:
        shared.apply("agents " + ", ".join(f"A{i}" for i in range(8)) + "\nrooms r0, r1")

        def write(me: int) -> None:
            for n in range(40):
                shared.apply(f"A{me} sets k{n % 2}.s = p{me}n{n}")
                shared.believes(f"A{me}", f"k{n % 2}.s")

        threads = [threading.Thread(target=write, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        events = shared.history()
        assert [e.step for e in events] == list(range(1, 321))
        view = shared.view()
        chains = [(), *shared.scenario.chains()]
        engine = versions(view, chains)
        assert all(h.since < (h.until or 10**9) for h in view.superseded(chains))
        text = shared.export()
    (scenario,) = check_text(text, "threads.tom").scenarios
    assert engine == reference_versions(scenario)


def test_a_stale_after_step_is_refused_and_writes_nothing(db, fresh):
    name = fresh("stale")
    with Session.attach(name, db=db) as first, Session.attach(name, db=db) as second:
        first.apply("\n".join(STORY))
        second.refresh()
        first.apply("Maya exits chat")
        with pytest.raises(StaleWrite) as caught:
            second.apply("Billing exits chat", after_step=4)
        assert (caught.value.expected, caught.value.actual) == (4, 5)
        assert [e.text for e in second.history()][-1] == "Maya exits chat"
        (event,) = second.apply("Billing exits chat", after_step=5)
        assert event.step == 6
    stale = tomc("memory", "apply", name, "Billing enters chat", "--after-step", "2",
                 url=db.url)
    assert stale.returncode == 6 and "stale write" in stale.stderr


def test_two_sessions_of_one_process_take_turns(db, fresh):
    name = fresh("turns")
    with Session.attach(name, db=db) as a, Session.attach(name, db=db) as b:
        a.apply("agents P, Q")
        b.apply("P sets k.s = 1")  # b catches up on the declaration first
        a.apply("Q sets k.s = 2")
        assert [e.step for e in b.history()] == [1, 2]
        assert b.believes("Q", "k.s").values == ["2"]


def test_a_catch_up_that_fails_midway_leaves_the_session_where_it_was(db, fresh, monkeypatch):
    """A change that fails to check while catching up (here the second of three, made to
    fail) leaves the checker and the engine at the revision they had: the next catch-up
    replays all three once, not the first twice."""
    from tomc.dsl.checker import LiveChecker
    name = fresh("catch_up_whole")
    with Session.attach(name, db=db) as a, Session.attach(name, db=db) as b:
        a.apply("agents P, Q")
        b.history()  # b is at the declaration
        a.apply("P sets k.s = 1")
        a.apply("Q sets k.s = 2")
        a.apply("P sets k.s = 3")
        add_text, calls = LiveChecker.add_text, []

        def second_fails(self, text, *args, **kwargs):
            calls.append(text)
            if len(calls) == 2:
                raise DatabaseUnavailable("made to fail")
            return add_text(self, text, *args, **kwargs)

        monkeypatch.setattr(LiveChecker, "add_text", second_fails)
        with pytest.raises(DatabaseUnavailable, match="made to fail"):
            b.history()
        monkeypatch.undo()
        assert [e.step for e in b.history()] == [1, 2, 3]
        assert b.believes("P", "k.s").values == ["3"]
        assert b.apply("Q sets k.s = 4")[0].step == 4


# ---------------------------------------------------------------- faults

KILLED = """
import os, signal, sys
from tomc.api import Session
from tomc.runtime import transactions

send = transactions.Writer._send

def die_mid_event(self, commands, **options):
    if commands and commands[0] == ("MULTI",):  # queue half the event, then die
        send(self, commands[:1 + (len(commands) - 6) // 2], **options)
        os.kill(os.getpid(), signal.SIGKILL)
    return send(self, commands, **options)

with Session.attach(sys.argv[1]) as memory:
    transactions.Writer._send = die_mid_event
    memory.apply("Finance tells Maya refund.status = rejected")
"""


def test_a_writer_killed_mid_event_leaves_nothing_and_the_memory_goes_on(db, fresh):
    name = fresh("killed")
    with Session.attach(name, db=db) as live:
        live.apply("\n".join(STORY))
    result = python(KILLED, db.url, name, check=False)
    assert result.returncode == -signal.SIGKILL
    with Session.attach(name, db=db) as after:
        assert after.step == 4
        assert after.believes("Maya", "refund.status").values == ["approved"]
        (event,) = after.apply("Finance tells Maya refund.status = rejected")
        assert event.step == 5
        assert after.believes("Maya", "refund.status").values == ["rejected"]


def _fail_each_events_last_statement(monkeypatch) -> None:
    """Until `monkeypatch.undo()`, each compiled event's last statement (a mind graph's, run
    after the world's) fails at run time in FalkorDB: a half-applied event to undo."""
    from tomc.compiler.lower import Compiler
    compile_event = Compiler.event

    def broken(self, event, *args, **kwargs):
        plan = compile_event(self, event, *args, **kwargs)
        last = plan.statements[-1]
        plan.statements[-1] = type(last)(last.graph, last.template,
                                         "RETURN 1 / 0 AS x, nothing(1)", {}, last.origin)
        return plan

    monkeypatch.setattr(Compiler, "event", broken)


def test_a_statement_failing_inside_an_event_is_undone(db, fresh, monkeypatch):
    name = fresh("failing")
    with Session.attach(name, db=db) as live:
        live.apply("\n".join(STORY))
        _fail_each_events_last_statement(monkeypatch)  # it fails after the others applied
        with pytest.raises(DatabaseUnavailable, match="undone"):
            live.apply("Finance tells Maya refund.status = rejected")
        monkeypatch.undo()
        graphs = live._live.engine.graphs
        from tomc.engine import recovery
        assert recovery.half_applied(db, graphs) is None
        # nor in the agents' views (tomc/memory/agent_view.py): undone in the same MULTI
        from tomc.runtime.keys import memory_key
        assert db.redis.hkeys(memory_key(name, "seen", "Maya")) == ["1", "2", "3", "4"] or \
            "5" not in db.redis.hkeys(memory_key(name, "seen", "Maya"))
        assert db.redis.hget(memory_key(name, "public"), "step") == "4"
    with Session.attach(name, db=db) as after:
        assert after.step == 4  # the failed event is not in the history
        assert after.believes("Maya", "refund.status").values == ["approved"]
        (event,) = after.apply("Finance tells Maya refund.status = rejected")
        assert event.step == 5


def test_an_entering_undone_reopens_the_stay_it_closed(db, fresh, monkeypatch):
    """An agent's open stay is its one IN edge and closed stays are WAS_IN (presence.cypher):
    undoing an entering deletes the stay it opened and reopens the one it closed."""
    name = fresh("undo_stay")
    with Session.attach(name, db=db) as live:
        live.apply("\n".join(STORY))
        world = db.graph(live._live.engine.graphs.world)

        def stays():
            return world.query("MATCH (:Agent {name: 'Maya'})-[s]->(r:Room) RETURN type(s), "
                               "r.name, s.since, s.until ORDER BY s.since").result_set
        before = stays()
        _fail_each_events_last_statement(monkeypatch)
        with pytest.raises(DatabaseUnavailable, match="undone"):
            live.apply("Maya enters ops")
        monkeypatch.undo()
        assert stays() == before
        live.apply("Maya enters ops")
        assert [s[0] for s in stays()] == ["WAS_IN", "IN"]


def test_undoing_a_corroboration_gives_the_version_its_publication_time_back(
        db, fresh, monkeypatch, tmp_path):
    """A claim that outranks the version it corroborates gives it its publication time
    (docs/semantics.md section 4, "Arrival order"); undo.cypher takes it back with the
    support, so a writer that attaches afterwards ranks the version as before, and a read
    as of an earlier step sees the publication time held then."""
    policy = tmp_path / "dated.tom"
    policy.write_text("policy dated {\n  trust authority\n  source note authority 1\n"
                      "  source chat authority 1\n  source bulletin authority 2\n}\n")
    name = fresh("undone_date")
    with Session.attach(name, db=db, policy=str(policy)) as live:
        live.apply("agents Ana\nclaim freeze.date = d17 from note at 2026-10-13 to Ana")
        # Undone twice: the version's first publication time taken back (no list left),
        # then its second (the first kept).
        for outranking in ("", "claim freeze.date = d17 from chat at 2026-10-14 to Ana"):
            if outranking:
                live.apply(outranking)
            _fail_each_events_last_statement(monkeypatch)  # after the others applied
            with pytest.raises(DatabaseUnavailable, match="undone"):
                live.apply("claim freeze.date = d17 from bulletin at 2026-10-16 to Ana")
            monkeypatch.undo()
    with Session.attach(name, db=db) as after:
        def published(step: int) -> list:
            return [h.published for h in after.view(step).held([("Ana",)])]
        assert published(1) == ["2026-10-13T00:00:00"]
        assert published(2) == ["2026-10-14T00:00:00"]
        # Newer than the chat's 10-14, older than the undone 10-16: it supersedes.
        after.apply("claim freeze.date = d20 from note at 2026-10-15 to Ana")
        assert after.truth("freeze.date").values == ["d20"]
        assert after.believes("Ana", "freeze.date").values == ["d20"]
        assert published(2) == ["2026-10-14T00:00:00"]


def test_the_server_killed_and_restarted_keeps_every_acknowledged_event(tmp_path):
    data = tmp_path / "served"
    command = [sys.executable, "-c", "from tomc.cli.main import main; main()", "serve",
               "--data", str(data), "--fsync", "always"]
    env = {k: v for k, v in os.environ.items() if k != "FALKORDB_URL"}

    def start() -> tuple[subprocess.Popen, dict]:
        serve = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
        for _ in range(600):
            info = data / "serving.json"  # a killed server's is left: wait for ours
            if info.exists() and json.loads(info.read_text())["owner"] == serve.pid:
                return serve, json.loads(info.read_text())
            assert serve.poll() is None, serve.stderr.read()
            time.sleep(0.05)
        raise AssertionError("tomc serve did not start")

    serve, info = start()
    url = f"unix://{info['socket']}"
    with Session.attach("durable", db=url) as live:
        for line in STORY:
            live.apply(line)
        for n in range(30):
            live.apply(f"Finance sets order{n}.status = shipped")
    with Session.attach("durable", db=url, as_agent="Maya"):
        pass  # Maya's user is made, and saved in DATA/users.acl
    os.kill(info["pid"], signal.SIGKILL)  # the server, then its owner, with no warning
    serve.kill()
    serve.wait()
    serve.stderr.close()
    serve, info = start()
    try:
        with Session.attach("durable", db=f"unix://{info['socket']}") as after:
            assert after.step == 34
            assert after.truth("order29.status").values == ["shipped"]
            assert after.believes("Maya", "refund.status").values == ["approved"]
        with Session.attach("durable", db=f"unix://{info['socket']}", as_agent="Maya") as maya:
            assert maya.believes("Maya", "refund.status").values == ["approved"]
    finally:
        serve.send_signal(signal.SIGTERM)
        assert serve.wait(timeout=30) == 0
        serve.stderr.close()
    assert not (data / "serving.json").exists()


def test_a_data_folder_being_served_is_shared_not_locked(tmp_path):
    data = tmp_path / "shared"
    env = {k: v for k, v in os.environ.items() if k != "FALKORDB_URL"}
    serve = subprocess.Popen([sys.executable, "-c", "from tomc.cli.main import main; main()",
                              "serve", "--data", str(data)], env=env, stderr=subprocess.PIPE,
                             text=True)
    try:
        for _ in range(600):
            if (data / "serving.json").exists():
                break
            time.sleep(0.05)
        with connect(data_dir=data) as one, connect(data_dir=data) as two:
            with Session.attach("both", db=one) as a, Session.attach("both", db=two) as b:
                a.apply("agents P")
                b.apply("P sets k.s = 1")
                assert a.believes("P", "k.s").values == ["1"]
    finally:
        serve.send_signal(signal.SIGINT)
        assert serve.wait(timeout=30) == 0
        serve.stderr.close()


# ---------------------------------------------------------------- private minds


def test_an_agent_reads_only_its_own_mind_refused_by_tomc_and_by_falkordb(db, fresh):
    name = fresh("private")
    with Session.attach(name, db=db) as live:
        live.apply("\n".join(STORY))
    with Session.attach(name, db=db, as_agent="Maya") as maya:
        assert maya.believes("Maya", "refund.status").values == ["approved"]
        assert maya.believes(["Maya", "Billing"], "refund.status").values == ["approved"]
        for refused in (lambda: maya.believes("Finance", "refund.status"),
                        lambda: maya.truth("refund.status"),
                        lambda: maya.false_beliefs(),
                        lambda: maya.apply("Maya exits chat")):
            with pytest.raises(AccessDenied):
                refused()
        assert all("Maya" in e.witnesses for e in maya.history())
        assert [e.step for e in maya.scenario.events] == [e.step for e in maya.history()]
    issued = tomc("token", "credential", name, "--agent", "Maya", url=db.url)
    assert issued.returncode == 0, issued.stderr
    own = from_url(issued.stdout.strip())  # her own user: no query at all, underneath
    try:
        with pytest.raises(redis.AuthenticationError):  # the admin user has a password
            own.redis.execute_command("AUTH", "default", "anything")
        graphs = catalog.memory_graphs(name, ["Maya", "Finance"])
        for graph in (graphs.mind("Finance"), graphs.world, graphs.mind("Maya")):
            for command in ("GRAPH.RO_QUERY", "GRAPH.QUERY"):
                with pytest.raises(redis.exceptions.NoPermissionError):
                    own.redis.execute_command(command, graph, "MATCH (n) RETURN count(n)")
    finally:
        own.close()
    denied = tomc("memory", "ask", name, "--as", "Maya", "Finance believes refund.status",
                  url=db.url)
    assert denied.returncode == 4 and "access denied" in denied.stderr


def test_names_cannot_widen_an_agents_key_pattern(db, fresh):
    name = fresh("glob*")
    with Session.attach(name, db=db) as live:
        live.apply('agents "M*", Mallory\nMallory sets k.s = secret')
    issued = tomc("token", "credential", name, "--agent", "M*", url=db.url)
    assert issued.returncode == 0, issued.stderr
    star = from_url(issued.stdout.strip())
    try:
        graphs = catalog.memory_graphs(name, ["M*", "Mallory"])
        with pytest.raises(redis.exceptions.NoPermissionError):
            star.redis.execute_command("GRAPH.RO_QUERY", graphs.mind("Mallory"),
                                       "MATCH (n) RETURN count(n) AS c")
        # nor its view's: its own seen hash, never Mallory's (tomc/memory/agent_view.py)
        assert star.redis.hmget(memory_key(name, "seen", "M*"), ["1"]) == [None]
        with pytest.raises(redis.exceptions.NoPermissionError):
            star.redis.hmget(memory_key(name, "seen", "Mallory"), ["1"])
    finally:
        star.close()


# ---------------------------------------------------------------- the CLI


def test_memory_cli_lists_asks_exports_and_drops(db, fresh, tmp_path):
    name = fresh("cli_memory")
    assert tomc("memory", "apply", name, *STORY, url=db.url).returncode == 0
    listed = tomc("memory", "list", "--json", url=db.url)
    found = {m["name"]: m for m in json.loads(listed.stdout)["memories"]}
    assert found[name]["step"] == 4 and found[name]["agents"] == ["Maya", "Billing", "Finance"]
    asked = tomc("memory", "ask", name, "Maya believes refund.status",
                 "expect truth refund.status = rejected", "--json", url=db.url)
    assert asked.returncode == 0
    assert json.loads(asked.stdout)["answers"][0]["value"] == "approved"
    failing = tomc("memory", "ask", name, "expect Maya believes refund.status = rejected",
                   url=db.url)
    assert failing.returncode == 1 and "FAIL" in failing.stdout
    bad = tomc("memory", "apply", name, "Mayaa exits chat", url=db.url)
    assert bad.returncode == 2 and "error[E101]" in bad.stderr and "Traceback" not in bad.stderr
    exported = tomc("memory", "export", name, "-o", str(tmp_path / "m.tom"), url=db.url)
    assert exported.returncode == 0
    replay = tomc("run", str(tmp_path / "m.tom"), url=db.url)
    assert replay.returncode == 0
    assert tomc("memory", "drop", name, url=db.url).returncode == 0
    missing = tomc("memory", "ask", name, "Maya believes refund.status", url=db.url)
    assert missing.returncode == 2 and "no memory called" in missing.stderr


def test_a_rejected_first_apply_creates_no_memory(db, fresh):
    """Regression: `tomc memory apply NEW 'not tom'` exited 2 but left an empty memory."""
    name = fresh("never_made")
    for statements in (["not tom"], ["agents A", "B enters room"], ["ask false_beliefs"]):
        bad = tomc("memory", "apply", name, *statements, url=db.url)
        assert bad.returncode == 2 and "error[E" in bad.stderr, bad.stderr
        assert catalog.read(db, name) is None
    assert tomc("memory", "apply", name, "agents A", url=db.url).returncode == 0
    assert catalog.read(db, name).step == 0


def test_an_export_loads_back_into_a_new_memory(db, fresh, tmp_path):
    """`tomc memory import NAME FILE` (Session.load): an exported memory, or any scenario
    file, becomes a memory with the same events and times; the file is checked whole
    before anything is written; an existing name is refused unless --replace."""
    name, copy = fresh("to_export"), fresh("imported")
    with Session.attach(name, db=db) as live:
        live.apply("\n".join(STORY) + "\nMaya says refund.note = late at 2026-03-01")
        live.apply("claim refund.status = held from Finance")
        events = [(e.text, e.time) for e in live.scenario.events]
    exported = tmp_path / "support.tom"
    assert tomc("memory", "export", name, "-o", str(exported), url=db.url).returncode == 0
    loaded = tomc("memory", "import", copy, str(exported), "--json", url=db.url)
    assert loaded.returncode == 0, loaded.stderr
    assert json.loads(loaded.stdout)["step"] == len(events)
    with Session.attach(copy, db=db) as again:
        assert [(e.text, e.time) for e in again.scenario.events] == events
        assert again.believes("Maya", "refund.status").values == ["held"]
    assert tomc("memory", "export", copy, url=db.url).stdout == exported.read_text().replace(
        f"scenario {name} {{", f"scenario {copy} {{")

    again = tomc("memory", "import", copy, str(exported), url=db.url)
    assert again.returncode == 2 and "exists" in again.stderr
    bad = tmp_path / "bad.tom"
    bad.write_text(exported.read_text().replace("Maya says", "Mayaa says"))
    refused = tomc("memory", "import", fresh("never"), str(bad), url=db.url)
    assert refused.returncode == 2 and "error[E101]" in refused.stderr
    assert catalog.read(db, "never") is None
    replaced = tomc("memory", "import", copy, str(REPO / "scenarios" / "sally_anne.tom"),
                    "--replace", url=db.url)
    assert replaced.returncode == 0, replaced.stderr
    assert replaced.stdout.startswith(f"memory {copy} at step 5 (agents: Sally, Anne)")
    with Session.attach(copy, db=db) as sally:
        assert sally.believes(["Anne", "Sally"], "marble").values == ["basket"]
    peeks = tmp_path / "peeks.tom"
    peeks.write_text("scenario p {\n  agents A, B\n  rooms r\n  A enters r\n  B peeks\n"
                     "  A sets k.v = 1\n}\n")
    with pytest.raises(TomError) as caught:
        Session.load(fresh("peeking"), peeks, db=db)
    assert caught.value.diagnostics[0].code == "E144"
    assert caught.value.diagnostics[0].span.line == 5
    assert catalog.read(db, "peeking") is None


# ---------------------------------------------------------------- bad input through the API


def test_bad_api_input_is_a_diagnostic_and_writes_nothing(db, fresh):
    name = fresh("bad_api")
    with Session.attach(name, db=db) as live:
        live.apply("\n".join(STORY))
        for call in (lambda: live.apply(42), lambda: live.who_knows(""),
                     lambda: live.apply("Maya exits chat\n}\nMaya enters chat"),
                     lambda: live.says("", "refund.status", "x"),
                     lambda: live.apply("Maya exits chat", after_step=-1),
                     lambda: live.apply("ask false_beliefs")):
            with pytest.raises(TomError):
                call()
        assert live.step == 4
    with Session.attach(name, db=db) as again:
        assert again.step == 4


def test_a_declaration_that_failed_to_commit_can_be_retried(db, fresh, monkeypatch):
    from tomc.runtime import transactions
    name = fresh("declare_retry")
    with Session.attach(name, db=db) as live:
        live.apply("agents A, B\nA sets k.s = v1")
        commit = transactions.Writer.commit
        failures = []

        def fails_once(self, commands, *rest):
            if not failures:
                failures.append(1)
                raise DatabaseUnavailable("lost the FalkorDB connection (test)")
            return commit(self, commands, *rest)

        monkeypatch.setattr(transactions.Writer, "commit", fails_once)
        with pytest.raises(DatabaseUnavailable):
            live.apply("agents C")
        live.apply("agents C")  # the retry plans C's mind graph again
        assert live.believes(["A", "C"], "k.s").values == []
    with Session.attach(name, db=db) as again:
        assert again.scenario.agents == ["A", "B", "C"]
        assert again.believes(["A", "C"], "k.s").values == []
        assert again.believes("A", "k.s").values == ["v1"]


def test_a_session_whose_memory_was_dropped_says_so(db, fresh):
    name = fresh("dropped_under")
    with Session.attach(name, db=db) as live:
        live.apply("agents A\nA sets k.s = 1")
        catalog.drop(db, name)
        with Session.attach(name, db=db) as new:
            new.apply("agents B")
        with pytest.raises(TomError, match="E145") as replaced:  # its incarnation changed
            live.apply("A sets k.s = 2")
        assert "dropped or created again" in str(replaced.value)


def test_a_view_held_across_an_undo_is_read_whole_again(db, fresh):
    """tomc/memory/agent_view.py: an undo counts itself (`undone`), so a reader holding the
    undone event reads its view whole again, even once a new event took the same step."""
    from tomc.memory import agent_view

    name = fresh("undone_view")
    with Session.attach(name, db=db) as live:
        live.apply("agents Maya\nMaya sets a.b = 1")
    graphs = catalog.memory_graphs(name, ["Maya"])
    held = agent_view.read(db, graphs, "Maya")
    step = held.step
    again = agent_view.forget(graphs, [step])
    retaken = held.events[-1]
    again += agent_view.record(graphs, [retaken], held.revision)
    pipe = db.redis.pipeline(transaction=True)
    for command in again:
        pipe.execute_command(*command)
    pipe.set(graphs.revision_key, held.revision + 1)
    pipe.execute()
    assert agent_view.read(db, graphs, "Maya").step == step  # the same step, taken again
    with pytest.raises(agent_view.Reread):
        agent_view.since(db, graphs, "Maya", held)
