"""An agent's own credential (docs/security.md, "An agent can hold only its own
credential"): `tomc token credential` prints a URL logged in as the agent's private user;
a process holding only that URL (no admin secret in its environment, the data folder's
admin secret unreadable meanwhile) speaks as the agent through the memory's applier, and
nothing else: another speaker, a declaration, a request signed as the administrator with
the agent's password, and reading the queue are refused. A real FalkorDB of its own with
appliers running, the agent's writes from a separate process through the CLI."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
import redis

from conftest import REPO
from tomc.api import AccessDenied, Session
from tomc.memory import catalog
from tomc.memory.applier import serve_appliers
from tomc.runtime.keys import appliers_key, memory_key
from tomc.memory import submit
from tomc.runtime import tokens
from tomc.runtime.connection import connect, from_url

NAME = "cred"
STORY = "agents Maya, Billing\nrooms chat\nMaya, Billing enter chat"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A FalkorDB of this module's own in a data folder, its appliers running, and the
    memory of the story."""
    folder = tmp_path_factory.mktemp("cred") / "data"
    with connect(None, folder) as db:
        stop = threading.Event()
        thread = threading.Thread(target=serve_appliers, args=(db, stop, 2))
        thread.start()
        while not db.redis.exists(appliers_key()):
            time.sleep(0.05)
        with Session.attach(NAME, db=db) as s:
            s.apply(STORY)
        yield db, folder
        stop.set()
        thread.join()


def tomc(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tomc", *args], capture_output=True,
                          text=True, env=env, cwd=str(REPO), timeout=120)


def bare_env(home: Path) -> dict:
    """An environment with no FalkorDB URL, no admin secret, nothing of the test's."""
    return {"PATH": os.environ["PATH"], "PYTHONPATH": str(REPO), "HOME": str(home)}


def test_an_agent_process_with_only_its_credential_speaks_only_as_itself(served, tmp_path):
    db, folder = served
    issued = tomc("token", "credential", NAME, "--agent", "Maya", "--db", db.url,
                  env=bare_env(tmp_path))  # the operator: the folder's secret is readable
    assert issued.returncode == 0, issued.stderr
    url = issued.stdout.strip()
    secret = (folder / "admin.secret").read_text().strip()
    assert secret not in url and url.startswith("unix://tomc_")

    env = bare_env(tmp_path)
    assert secret not in json.dumps(env)
    (folder / "admin.secret").chmod(0)  # the agent's process could not read it if it tried
    try:
        said = tomc("memory", "apply", NAME, "Maya says refund.eta = friday", "--as", "Maya",
                    "--db", url, env=env)
        as_other = tomc("memory", "apply", NAME, "Billing says refund.eta = never", "--as",
                        "Maya", "--db", url, env=env)
        declared = tomc("memory", "apply", NAME, "agents Eve", "--as", "Maya", "--db", url,
                        env=env)
        told = tomc("memory", "apply", NAME, "Maya tells Billing refund.ok = yes", "--as",
                    "Maya", "--db", url, env=env)
    finally:
        (folder / "admin.secret").chmod(0o600)
    assert said.returncode == 0, said.stderr
    assert "step 2: Maya says refund.eta = friday" in said.stdout
    assert as_other.returncode == 4 and "only tell or say as Maya" in as_other.stderr
    assert declared.returncode == 4, declared.stderr
    assert told.returncode == 0, told.stderr
    with Session.attach(NAME, db=db) as s:
        assert [e.text for e in s.history()][-2:] == ["Maya says refund.eta = friday",
                                                      "Maya tells Billing refund.ok = yes"]
        assert s.believes("Billing", "refund.eta").values == ["friday"]


def test_the_agents_user_cannot_forge_a_request_nor_read_the_queue(served, tmp_path):
    db, _ = served
    issued = tomc("token", "credential", NAME, "--agent", "Maya", "--db", db.url, "--json",
                  env=bare_env(tmp_path))
    assert issued.returncode == 0, issued.stderr
    maya = from_url(json.loads(issued.stdout)["url"])
    step = catalog.read(db, NAME).step
    user = maya.redis.connection_pool.connection_kwargs["username"]
    password = maya.redis.connection_pool.connection_kwargs["password"]
    # As the administrator (no `as`), signed with the only password Maya has: refused.
    reply = memory_key(NAME, "reply", user, uuid.uuid4().hex)
    fields = {"id": "x", "key": "forged", "text": "Billing says refund.eta = never",
              "after_step": None, "create": None, "policy": None, "incarnation": None,
              "reply": reply, "as": None}
    body = json.dumps(fields)
    request = json.dumps({**fields, "mac": submit.signature(body, password)})
    maya.redis.rpush(submit.queue_of(NAME, user), request)  # her own queue
    maya.redis.rpush(memory_key(NAME, "bell"), "")
    submit.wake(maya.redis, NAME)
    answer = maya.redis.blpop([reply], 30)
    assert json.loads(answer[1])["error"] == "refused"
    assert catalog.read(db, NAME).step == step
    queue = memory_key(NAME, "queue")
    for command in (lambda: maya.redis.lrange(queue, 0, -1), lambda: maya.redis.lpop(queue),
                    lambda: maya.redis.blpop([queue], 0.1), lambda: maya.redis.rpush(queue, "x"),
                    lambda: maya.redis.lrem(queue, 0, "x"),
                    lambda: maya.redis.lrange(submit.queue_of(NAME, user), 0, -1),
                    lambda: maya.redis.rpush(submit.queue_of(NAME, "tomc_other"), "x"),
                    lambda: maya.redis.blpop([memory_key(NAME, "reply", "x")], 0.1),
                    lambda: maya.redis.rpush(memory_key(NAME, "keys"), "x"),
                    lambda: maya.redis.execute_command(
                        "GRAPH.RO_QUERY", memory_key(NAME, "world"), "MATCH (n) RETURN n")):
        with pytest.raises(redis.exceptions.NoPermissionError):
            command()
    maya.close()


def credential(db, tmp_path, agent="Maya") -> str:
    issued = tomc("token", "credential", NAME, "--agent", agent, "--db", db.url,
                  env=bare_env(tmp_path))
    assert issued.returncode == 0, issued.stderr
    return issued.stdout.strip()


def agent_server_calls(url: str, home: Path, calls: list[tuple[str, dict]]) -> list[dict]:
    """`tomc mcp --memory NAME --agent Maya --db URL` on stdio, in an environment holding
    nothing of the test's, driven by the official MCP SDK's client: each (tool, arguments)
    called in order, the results as JSON."""
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "tomc", "mcp", "--memory", NAME, "--agent", "Maya",
                                      "--db", url],
        env=bare_env(home), cwd=str(REPO))

    async def session():
        async with stdio_client(params) as (read, write), \
                ClientSession(read, write) as client:
            await client.initialize()
            return [(await client.call_tool(tool, arguments)).model_dump(by_alias=True,
                                                                           mode="json")
                    for tool, arguments in calls]

    return anyio.run(session)


def test_a_session_attached_with_only_the_credential_reads_as_an_admin_agent_session(
        served, tmp_path):
    db, _ = served
    with Session.attach(NAME, db=db) as s:
        s.apply("Billing says ticket.owner = maya\nBilling exits chat\n"
                "Billing sets vault.code = 42")
    url = credential(db, tmp_path)
    with Session.attach(NAME, db=db, as_agent="Maya") as admin, \
            Session.attach(NAME, db=url, as_agent="Maya") as own:
        assert own.step == admin.step
        assert [e.text for e in own.history()] == [e.text for e in admin.history()]
        assert "Billing sets vault.code = 42" not in [e.text for e in own.history()]
        for key in ("ticket.owner", "vault.code"):
            assert own.believes("Maya", key) == admin.believes("Maya", key)
        assert own.beliefs("Maya") == admin.beliefs("Maya")
        assert own.ask("Maya believes ticket.owner").values == ["maya"]
        assert own.context_for("Maya", "Billing").text == \
            admin.context_for("Maya", "Billing").text
        assert own.describe() == admin.describe()
        for refused in (lambda: own.believes("Billing", "ticket.owner"),
                        lambda: own.truth("vault.code"), lambda: own.view(),
                        lambda: own.export(), lambda: own.who_knows("vault.code")):
            with pytest.raises(AccessDenied):
                refused()
    maya = from_url(url)
    for command in (lambda: maya.redis.hgetall(memory_key(NAME, "seen", "Billing")),
                    lambda: maya.redis.hgetall(memory_key(NAME, "keys")),
                    lambda: maya.redis.get(memory_key(NAME, "incarnation"))):
        with pytest.raises(redis.exceptions.NoPermissionError):
            command()
    with pytest.raises(AccessDenied, match="another agent's credential"):  # not Billing's
        Session.attach(NAME, db=maya, as_agent="Billing")
    maya.close()


def test_the_credentials_session_speaks_as_itself_through_the_applier(served, tmp_path):
    db, _ = served
    url = credential(db, tmp_path)
    with Session.attach(NAME, db=url, as_agent="Maya") as own:
        event = own.says("Maya", "lunch.place", "cafe")
        assert event.text == 'Maya says lunch.place = "cafe"'
        assert own.history()[-1].text == event.text
        with Session.attach(NAME, db=db, as_agent="Maya") as admin:
            assert own.beliefs("Maya") == admin.beliefs("Maya")
        with pytest.raises(AccessDenied):
            own.says("Billing", "lunch.place", "home")
        with pytest.raises(AccessDenied):
            own.apply("agents Eve")
    with Session.attach(NAME, db=db) as s:
        assert s.history()[-1].text == event.text


def test_an_agents_idempotency_keys_are_its_own(served, tmp_path):
    """Issue 35 item 4: Maya pre-claiming a key the supervisor uses later changes nothing
    for the supervisor's write: each writer's keys are its own."""
    db, _ = served
    key = f"nightly-sync-{uuid.uuid4().hex[:6]}"
    with Session.attach(NAME, db=credential(db, tmp_path), as_agent="Maya") as own:
        (claimed,) = own.apply('Maya says sync.state = "mine"', idempotency_key=key)
    with Session.attach(NAME, db=db) as s:
        (event,) = s.apply('Billing tells Maya sync.state = "done"', idempotency_key=key)
        assert event.step == claimed.step + 1 and event.text.startswith("Billing tells")
        assert s.believes("Maya", "sync.state").values == ["done"]


def test_a_memory_made_before_the_views_gets_them_from_the_credentials_issue(served, tmp_path):
    """A memory whose views are missing (made by an older tomc: its keys deleted here) is
    refused to the credential until `tomc token credential` fills them in."""
    db, _ = served
    url = credential(db, tmp_path)
    with Session.attach(NAME, db=url, as_agent="Maya") as before:
        history = [e.text for e in before.history()]
        beliefs = before.beliefs("Maya")
    views = [memory_key(NAME, "public"), memory_key(NAME, "seen", "Maya"),
             memory_key(NAME, "seen", "Billing")]
    db.redis.delete(*views)
    with pytest.raises(AccessDenied, match="no view"):
        Session.attach(NAME, db=url, as_agent="Maya")
    credential(db, tmp_path)  # the administrator issues it again: the views are filled in
    with Session.attach(NAME, db=url, as_agent="Maya") as after:
        assert [e.text for e in after.history()] == history
        assert after.beliefs("Maya") == beliefs


def test_an_mcp_agent_server_with_only_the_credential_answers_and_speaks(served, tmp_path):
    """`tomc mcp --agent Maya --db CREDENTIAL` (stdio), its environment holding no secret
    and the folder's admin secret unreadable: driven by the official MCP SDK's client."""
    db, folder = served
    url = credential(db, tmp_path)
    (folder / "admin.secret").chmod(0)
    try:
        said, mine, theirs = agent_server_calls(url, tmp_path, [
            ("say", {"key": "mcp.topic", "value": "refunds"}), ("my_beliefs", {}),
            ("what_do_i_think", {"key": "mcp.topic", "chain": ["Billing"]})])
    finally:
        (folder / "admin.secret").chmod(0o600)
    assert not said["isError"], said
    assert not mine["isError"] and mine["structuredContent"]["agent"] == "Maya", mine
    assert theirs["isError"]  # another mind
    with Session.attach(NAME, db=db) as s:
        assert s.history()[-1].text == 'Maya says mcp.topic = "refunds"'
        assert "Maya" in s.history()[-1].witnesses
    with Session.attach(NAME, db=db, as_agent="Maya") as admin:
        assert mine["structuredContent"]["step"] == admin.step
        assert len(mine["structuredContent"]["beliefs"]) == len(admin.beliefs("Maya"))


def test_an_mcp_http_agent_server_with_only_the_credential_checks_bearer_tokens(served,
                                                                                tmp_path):
    """`tomc mcp --agent Maya --db CREDENTIAL --http PORT`, no secret in its environment:
    Maya's token is served, none is 401, Billing's 403 (its user looks a token up by its
    id, never lists them: tomc/memory/acl.py)."""
    from test_mcp import free_port, http_tools, raw_post

    db, folder = served
    url = credential(db, tmp_path)
    maya, billing = tokens.issue(db, NAME, "Maya"), tokens.issue(db, NAME, "Billing")
    port = free_port()
    (folder / "admin.secret").chmod(0)
    server = subprocess.Popen([sys.executable, "-m", "tomc", "mcp", "--memory", NAME, "--agent",
                               "Maya", "--db", url, "--http", str(port)],
                              env=bare_env(tmp_path), cwd=str(REPO), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(300):
            assert server.poll() is None, server.stderr.read()
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                time.sleep(0.1)
        endpoint = f"http://127.0.0.1:{port}/mcp"
        _, mine = http_tools(endpoint, maya, "my_beliefs")
        assert mine["agent"] == "Maya"
        assert raw_post(endpoint, None)[0] == 401
        assert raw_post(endpoint, billing)[0] == 403
    finally:
        server.terminate()
        server.wait(timeout=30)
        server.stderr.close()
        (folder / "admin.secret").chmod(0o600)
    maya_user = from_url(url)
    try:
        with pytest.raises(redis.exceptions.NoPermissionError):
            maya_user.redis.hgetall(tokens.TOKENS_KEY)  # one record by its id, never all
        with pytest.raises(redis.exceptions.NoPermissionError):
            maya_user.redis.hkeys(tokens.TOKENS_KEY)
    finally:
        maya_user.close()


def test_perspectives_read_after_the_view_moved_answer_as_of_the_view(served, tmp_path,
                                                                       monkeypatch):
    """A credential session reads its view and its mind's perspectives one after the other
    (its user may not run MULTI). Here the race is made: the perspectives are read after an
    event moved a key to a deeper perspective (Maya > Billing starts to own it), the view
    not. The answer is still the view's step's: copy-on-write keeps the history it copies
    (copy.cypher), so the new owner read as of that step holds what the chain held."""
    from tomc.memory.agent_live import ViewedMemory
    db, _ = served
    with Session.attach(NAME, db=db) as s:
        s.apply("Billing enters chat\nMaya sets race.j = 1\nBilling exits chat")
    url = credential(db, tmp_path)
    with Session.attach(NAME, db=url, as_agent="Maya") as own:
        nested, mine = own.believes(["Maya", "Billing"], "race.j"), own.believes("Maya",
                                                                                "race.j")
        assert nested.values == mine.values == ["1"]
        with Session.attach(NAME, db=db) as s:
            s.apply("Maya sets race.j = 2")  # Billing is out: Maya > Billing keeps 1
            graphs = s._live.engine.graphs
            owners = db.read(graphs.mind("Maya"), "MATCH (p:P) RETURN p.agents AS a, "
                             "p.owns AS o", {})
            assert any(r["a"] == ["Maya", "Billing"] and "race.j" in r["o"] for r in owners)
        monkeypatch.setattr(ViewedMemory, "catch_up", lambda self: None)
        own._live.engine.moved()  # the perspectives are read again, the view is not
        assert own.believes(["Maya", "Billing"], "race.j") == nested
        assert own.believes("Maya", "race.j") == mine
        monkeypatch.undo()
        assert own.believes("Maya", "race.j").values == ["2"]
        assert own.believes(["Maya", "Billing"], "race.j").values == ["1"]



def test_an_agent_perceives_no_unseen_peeker_and_not_the_event_it_missed():
    """docs/semantics.md section 3, "Peeking and distraction", on the events a scenario's
    checker makes (a memory refuses peeks and distractions today, E144; its views and its
    agents' histories go through `perceived` all the same): a peeker is unseen, and a
    distracted listener missed the event. Maya's copy of the peeked event has no peeker
    and she has none of the one she missed; the peeker's copy names only itself; nobody's
    says who was distracted."""
    from tomc.dsl.checker import check_text
    from tomc.memory.agent_view import perceived
    result = check_text("scenario s {\n agents Maya, Billing, Eve, Kim\n rooms chat, hall\n"
                        " Maya, Billing enter chat\n Eve, Kim enter hall\n Eve peeks\n"
                        " Kim peeks\n Billing says peek.k = 1\n Maya is distracted\n"
                        " Billing says missed.k = 2\n}\n", "s.tom")
    assert result.ok, result.diagnostics
    events = {e.text.split(" = ")[0]: e for e in result.scenarios[0].events}
    peeked, missed = events["Billing says peek.k"], events["Billing says missed.k"]
    assert set(peeked.peekers) == {"Eve", "Kim"} and missed.distracted == ("Maya",)
    assert set(perceived(peeked, "Maya").witnesses) == {"Billing", "Maya"}
    assert perceived(peeked, "Maya").peekers == ()
    assert set(perceived(peeked, "Eve").witnesses) == {"Billing", "Maya", "Eve"}
    assert perceived(peeked, "Eve").peekers == ("Eve",)
    assert perceived(missed, "Maya") is None and perceived(peeked, "Nobody") is None
    assert perceived(missed, "Billing").distracted == ()
    assert "Maya" in perceived(missed, "Billing").witnesses
    entered = next(e for e in result.scenarios[0].events if "Maya" in e.witnesses)
    assert perceived(entered, "Maya") is entered  # no peeker, nobody distracted: as it is


def test_an_administrator_logged_in_by_name_serves_an_agent_as_the_administrator(served,
                                                                                tmp_path):
    """An administrator may log in as a named user (`redis://ops:PASSWORD@host`): an agent
    server on that login is the administrator's (a supervisor session speaks for the agent),
    not taken for the agent's own credential by its user name; `memory apply --as` with it
    answers as the administrator's agent session does (which may not write, exit 4)."""
    db, folder = served
    secret = (folder / "admin.secret").read_text().strip()
    db.redis.execute_command("ACL", "SETUSER", "ops", "reset", "on", ">" + secret, "~*", "&*",
                             "+@all")
    url = f"unix://ops:{secret}@{db.redis.connection_pool.connection_kwargs['path']}"
    try:
        (said,) = agent_server_calls(url, tmp_path,
                                     [("say", {"key": "ops.topic", "value": "audits"})])
        applied = tomc("memory", "apply", NAME, "Maya says ops.other = 1", "--as", "Maya",
                       "--db", url, env=bare_env(tmp_path))
    finally:
        db.redis.execute_command("ACL", "DELUSER", "ops")
    assert not said["isError"], said
    assert applied.returncode == 4 and "cannot write" in applied.stderr, applied.stderr
    with Session.attach(NAME, db=db) as s:
        assert s.history()[-1].text == 'Maya says ops.topic = "audits"'


def test_a_credential_write_no_applier_takes_is_refused_never_tried_here(served, tmp_path,
                                                                          monkeypatch):
    """A request no applier took is withdrawn; an administrator's session then writes it
    itself, an agent's own credential cannot: AccessDenied, nothing written (not the
    NoPermissionError of reading the idempotency records it may not read)."""
    db, _ = served
    url = credential(db, tmp_path)
    with Session.attach(NAME, db=url, as_agent="Maya") as own:
        step = own.step

        def no_applier(*args, **kwargs):
            raise submit.NoApplier()

        monkeypatch.setattr(submit, "submit", no_applier)
        with pytest.raises(AccessDenied, match="none took the write"):
            own.apply("Maya says lost.k = 1", idempotency_key="lost-1")
        monkeypatch.undo()
    with Session.attach(NAME, db=db) as s:
        assert s.step == step


def signed_read(maya, cypher: str, params, as_agent: str = "Maya", password=None) -> dict:
    """A read request pushed by Maya's user as tomc/memory/served_reads.py shapes one
    (signed with `password`, by default hers), and the applier's reply."""
    login = maya.redis.connection_pool.connection_kwargs
    reply = memory_key(NAME, "reply", login["username"], uuid.uuid4().hex)
    fields = {"id": "r", "read": cypher, "params": params, "reply": reply, "as": as_agent}
    mac = submit.signature(json.dumps(fields), password or login["password"])
    maya.redis.rpush(submit.queue_of(NAME, login["username"]), json.dumps({**fields,
                                                                          "mac": mac}))
    maya.redis.rpush(memory_key(NAME, "bell"), "")
    submit.wake(maya.redis, NAME)
    answer = maya.redis.blpop([reply], 30)
    assert answer is not None
    return json.loads(answer[1])


def test_the_agents_user_runs_no_query_and_the_applier_runs_only_tomcs_reads_of_its_mind(
        served, tmp_path):
    """docs/security.md, "An agent cannot hold anyone else": no GRAPH command for Maya's
    user, even on her own mind graph; the applier runs for her only tomc's read templates,
    on her own mind, and goes on after whatever she sends."""
    from tomc.compiler.templates import render
    from tomc.memory import served_reads
    from tomc.memory.catalog import memory_graphs

    db, _ = served
    maya = from_url(credential(db, tmp_path))
    mind = memory_graphs(NAME, ["Maya"]).mind("Maya")
    for command in ("GRAPH.RO_QUERY", "GRAPH.QUERY", "GRAPH.EXPLAIN", "GRAPH.PROFILE"):
        with pytest.raises(redis.exceptions.NoPermissionError):
            maya.redis.execute_command(command, mind, "UNWIND range(1, 300000000) AS x "
                                                      "RETURN count(x)")
    perspectives = render("read_perspectives.cypher")
    assert ["Maya"] in [r["agents"] for r in signed_read(maya, perspectives, {})["rows"]]
    runaway = signed_read(maya, "UNWIND range(1, 300000000) AS x RETURN count(x)", {})
    assert runaway["error"] == "refused" and "read templates" in runaway["message"]
    # Billing's mind, asked as Billing with Maya's password: not signed by its sender.
    assert signed_read(maya, perspectives, {}, as_agent="Billing")["error"] == "refused"
    too_big = signed_read(maya, perspectives, {"pad": "x" * served_reads.MAX_BYTES})
    assert too_big["error"] == "refused"
    nested: list = []
    for _ in range(500):
        nested = [nested]
    for params in ({"chains": nested, "step": 1}, {"chains": "Maya", "step": {"a": [None]}}, {}):
        assert "error" in signed_read(maya, render("read_held.cypher"), params)
    assert signed_read(maya, perspectives, {})["rows"]  # the applier lives on
    # A parameter's name goes unquoted into the CYPHER header: Cypher of hers, refused.
    injected = "a=1 WITH 1 AS b UNWIND range(1, 300000000) AS x WITH count(x) AS c //"
    for params in ({injected: 1}, {"step": {"k` RETURN 1 //": 1}}):
        refused = signed_read(maya, perspectives, params)
        assert refused["error"] == "refused" and "plain names" in refused["message"]
    reads = served_reads.ServedReads(maya, NAME, "Maya")
    with pytest.raises(AccessDenied):
        reads.read(memory_key(NAME, "world"), perspectives, {})
    with pytest.raises(AccessDenied):
        reads.read(mind, "MATCH (n) RETURN n", {})
    maya.close()


def test_a_credentials_session_catches_up_with_what_its_view_gained_only(served, tmp_path,
                                                                         monkeypatch):
    """Catching up reads the fields after the view it holds (HMGET), never the whole view
    again: its cost follows what happened since, not the memory's history."""
    from tomc.memory import agent_view

    db, _ = served
    url = credential(db, tmp_path)
    whole = []
    read = agent_view.read
    monkeypatch.setattr(agent_view, "read", lambda *a, **k: whole.append(1) or read(*a, **k))
    with Session.attach(NAME, db=url, as_agent="Maya") as own, \
            Session.attach(NAME, db=db) as admin:
        assert whole == [1]
        for n in range(3):
            admin.apply(f"agents Zed{n}\nMaya sets catch.n{n} = {n}")
            assert own.believes("Maya", f"catch.n{n}").values == [str(n)]
            assert own.step == admin.step
        with Session.attach(NAME, db=db, as_agent="Maya") as reference:
            assert [e.text for e in own.history()] == [e.text for e in reference.history()]
        assert "Zed2" in own.scenario.agents
    assert whole == [1]
    maya = from_url(url)
    with pytest.raises(redis.exceptions.NoPermissionError):  # paged reads only
        maya.redis.hgetall(memory_key(NAME, "seen", "Maya"))
    maya.close()
