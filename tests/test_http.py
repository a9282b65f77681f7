"""The HTTP API (tomc/web/; docs/http.md) on a real FalkorDB: every route answers what the
Session (and so `tomc memory ask --json` and the MCP tools) answers, tokens decide who may
read and write, and errors are 4xx with the diagnostics. The committed OpenAPI schema is the
app's."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import threading
import urllib.request
from contextlib import contextmanager

import pytest

from conftest import REPO, SCENARIOS
from tomc.api import Session
from tomc.memory import catalog
from tomc.runtime import tokens
from tomc.wire import event_json, held_json

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from eval.serving import served  # noqa: E402
from tomc.web.app import create_app  # noqa: E402

STORY = ("agents Maya, Billing, Finance\nrooms chat, ops\nMaya, Billing enter chat\n"
         "Billing says refund.status = approved\nFinance enters ops\n"
         "Finance sets refund.status = rejected")
MEMORY = "http_refund"


@pytest.fixture(scope="module")
def memory(db):
    """The refund story in memory `http_refund`, its supervisor and Maya's tokens."""
    with Session.attach(MEMORY, db=db) as session:
        if session.step == 0:
            session.apply(STORY)
    yield {"supervisor": tokens.issue(db, MEMORY, None), "maya": tokens.issue(db, MEMORY, "Maya")}


@pytest.fixture(scope="module")
def client(db, memory):
    with TestClient(create_app(db)) as c:
        yield c


def auth(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def get(client, token, path, **params):
    return client.get(f"/memories/{MEMORY}{path}", headers=auth(token), params=params)


def test_every_question_answers_what_the_session_answers(db, client, memory):
    sup = memory["supervisor"]
    with Session.attach(MEMORY, db=db, create=False) as s:
        expected = {
            ("/believes", (("chain", ("Maya", "Billing")), ("key", "refund.status"))):
                s.believes(["Maya", "Billing"], "refund.status").to_json(),
            ("/believes", (("chain", "Maya"), ("key", "refund.status"), ("at_step", 2))):
                s.believes("Maya", "refund.status", at_step=2).to_json(),
            ("/truth", (("key", "refund.status"),)): s.truth("refund.status").to_json(),
            ("/false_beliefs", (("depth", 2),)): s.false_beliefs(2).to_json(),
            ("/who_knows", (("key", "refund.status"),)): s.who_knows("refund.status").to_json(),
            ("/handoff", (("sender", "Finance"), ("receiver", "Maya"))):
                s.handoff("Finance", "Maya").to_json(),
            ("/common_ground", (("first", "Maya"), ("second", "Billing"))):
                s.common_ground("Maya", "Billing").to_json(),
            ("/explain", (("chain", "Maya"), ("key", "refund.status"))):
                s.explain("Maya", "refund.status").to_json(),
            ("/context_for", (("agent", "Finance"), ("other", "Maya"))):
                s.context_for("Finance", "Maya").to_json(),
            ("/plan_announcements", (("key", "refund.status"), ("speaker", "Finance"))):
                s.plan_announcements("refund.status", "Finance").to_json(),
            ("/search", (("text", "refund"),)): s.search("refund").to_json(),
            ("/describe", ()): s.describe().to_json(),
            ("/who_knows_best", (("topic", "refund"),)): s.who_knows_best("refund").to_json(),
            ("/open_tasks", ()): s.open_tasks().to_json(),
            ("/about", (("subject", "refund"), ("within", 1))):
                s.about("refund", within=1).to_json(),
            ("/follow", (("key", "refund.status"), ("chain", "Maya"), ("hops", 1))):
                s.follow("refund.status", for_="Maya", hops=1).to_json(),
            ("/beliefs", (("chain", "Maya"),)): {
                "chain": ["Maya"], "step": s.step,
                "beliefs": [held_json(h) for h in s.beliefs("Maya")]},
        }
        history = {"memory": MEMORY, "step": s.step,
                   "events": [event_json(e) for e in s.history()], "next_after_step": None}
    for (path, params), want in expected.items():
        answer = get(client, sup, path, **{k: list(v) if isinstance(v, tuple) else v
                                           for k, v in params})
        assert answer.status_code == 200, (path, answer.text)
        assert answer.json() == want, path
    for path in ("/events", "/history"):
        assert get(client, sup, path).json() == history
    # long histories come a page at a time, as MCP `history` gives them
    first = get(client, sup, "/history", limit=1).json()
    assert first["events"] == history["events"][:1] and first["next_after_step"] == 1
    rest = get(client, sup, "/history", after_step=1, limit=500).json()
    assert rest["events"] == history["events"][1:] and rest["next_after_step"] is None
    info = get(client, sup, "").json()
    assert info["agents"] == ["Maya", "Billing", "Finance"] and info["agent"] is None
    asked = client.post(f"/memories/{MEMORY}/ask", headers=auth(sup),
                        json={"question": "expect Maya believes refund.status = approved"})
    assert asked.status_code == 200 and asked.json()["passed"] is True
    checked = client.post(f"/memories/{MEMORY}/check", headers=auth(sup),
                          json={"statements": "Mayaa enters chat"}).json()
    assert checked["ok"] is False and checked["diagnostics"][0]["code"] == "E101"


def test_the_answer_is_the_one_the_cli_gives(db, client, memory):
    cli = subprocess.run([sys.executable, "-m", "tomc", "memory", "ask", MEMORY,
                          "Maya > Billing believes refund.status", "--json", "--db", db.url],
                         capture_output=True, text=True, timeout=300)
    assert cli.returncode == 0, cli.stderr
    by_cli = json.loads(cli.stdout)["answers"][0]
    asked = client.post(f"/memories/{MEMORY}/ask", headers=auth(memory["supervisor"]),
                        json={"question": "Maya > Billing believes refund.status"}).json()
    assert asked == by_cli
    typed = get(client, memory["supervisor"], "/believes", chain=["Maya", "Billing"],
                key="refund.status").json()
    assert typed["value"] == by_cli["value"] and typed["provenance"] == by_cli["provenance"]


def test_an_agent_token_reads_its_own_mind_only(client, memory):
    maya = memory["maya"]
    own = get(client, maya, "/believes", chain="Maya", key="refund.status")
    assert own.status_code == 200 and own.json()["value"] == "approved"
    assert get(client, maya, "/beliefs", chain=["Maya", "Billing"]).status_code == 200
    for path, params in (("/believes", {"chain": "Billing", "key": "refund.status"}),
                         ("/beliefs", {"chain": "Finance"}),
                         ("/truth", {"key": "refund.status"}),
                         ("/false_beliefs", {}), ("/who_knows", {"key": "refund.status"}),
                         ("/handoff", {"sender": "Finance", "receiver": "Maya"})):
        refused = get(client, maya, path, **params)
        assert refused.status_code == 403, (path, refused.text)
        assert refused.json()["error"] == "access_denied"
        assert refused.json()["exit_code"] == 4
    events = get(client, maya, "/events").json()["events"]
    assert events and all("Maya" in e["witnesses"] for e in events)  # only what she saw
    found = get(client, maya, "/search", text="refund")  # her own mind only
    assert found.status_code == 200
    assert {c["chain"][0] for h in found.json()["hits"] for c in h["chains"]} <= {"Maya"}, \
        found.json()
    write = client.post(f"/memories/{MEMORY}/events", headers=auth(maya),
                        json={"statements": "Maya enters ops"})
    assert write.status_code == 403 and "read" in write.json()["message"]
    sent = client.post(f"/memories/{MEMORY}/handoff", headers=auth(maya),
                       json={"sender": "Maya", "receiver": "Billing"})
    assert sent.status_code == 403


def test_tokens_are_checked(db, client, memory):
    assert client.get(f"/memories/{MEMORY}/events").status_code == 401
    bad = client.get(f"/memories/{MEMORY}/events", headers=auth("tomc_0123456789ab_" + "x" * 43))
    assert bad.status_code == 401 and bad.json()["diagnostics"][0]["code"] == "E210"
    assert bad.headers["www-authenticate"] == "Bearer"
    with Session.attach("http_other", db=db) as other:
        other.apply("agents Ann")
    elsewhere = tokens.issue(db, "http_other", None)
    wrong = client.get(f"/memories/{MEMORY}/events", headers=auth(elsewhere))
    assert wrong.status_code == 403 and "http_other" in wrong.json()["message"]
    with TestClient(create_app(db, ["http_other"])) as only_other:
        missing = only_other.get(f"/memories/{MEMORY}/events", headers=auth(memory["supervisor"]))
        assert missing.status_code == 404 and missing.json()["error"] == "not_found"


def test_writes_text_and_typed_events_and_a_stale_write_is_a_409(db, memory):
    with Session.attach("http_writes", db=db) as s:
        s.apply("agents Ann, Bo\nrooms desk\nAnn, Bo enter desk")
    sup = auth(tokens.issue(db, "http_writes", None))
    with TestClient(create_app(db)) as client:
        url = "/memories/http_writes/events"
        text = client.post(url, headers=sup, json={"statements": "Ann says door = open",
                                                   "after_step": 1})
        assert text.status_code == 200, text.text
        assert [e["step"] for e in text.json()["events"]] == [2]
        typed = client.post(url, headers=sup, json={"events": [
            {"kind": "tell", "speaker": "Bo", "listener": "Ann", "key": "door", "value": "shut"},
            {"kind": "exit", "agents": "Bo", "room": "desk"}], "after_step": 2})
        assert typed.status_code == 200, typed.text
        assert [e["kind"] for e in typed.json()["events"]] == ["tell", "exit"]
        stale = client.post(url, headers=sup, json={"statements": "Ann exits desk",
                                                    "after_step": 2})
        assert stale.status_code == 409
        assert stale.json()["error"] == "stale_write" and stale.json()["exit_code"] == 6
        bad = client.post(url, headers=sup, json={"statements": "Ann says door = open\nAnnn exits desk"})
        assert bad.status_code == 400
        found = bad.json()["diagnostics"][0]
        assert (found["code"], found["line"]) == ("E101", 2) and "Ann" in found["hint"]
        assert "2 | Annn exits desk" in bad.json()["rendered"]
        unknown = client.post(url, headers=sup, json={"events": [
            {"kind": "tell", "speaker": "Zed", "listener": "Ann", "key": "door", "value": 1}]})
        assert unknown.status_code == 400 and unknown.json()["diagnostics"]
        for body in ({}, {"statements": "Ann exits desk", "events": []},
                     {"statements": "Ann exits desk", "after_step": "soon"},
                     {"events": [{"kind": "fly", "agent": "Ann"}]}):
            refused = client.post(url, headers=sup, json=body)
            assert refused.status_code == 400, (body, refused.text)
            assert refused.json()["error"] == "bad_input"
        assert client.get("/memories/http_writes/events", headers=sup).json()["step"] == 4
        sent = client.post("/memories/http_writes/handoff", headers=sup,
                           json={"sender": "Bo", "receiver": "Ann"})
        assert sent.status_code == 200 and "written_at_step" in sent.json()
        asked = client.get("/memories/http_writes/believes", headers=sup,
                           params={"chain": "Ann", "key": "door", "at_step": 99})
        assert asked.status_code == 400 and asked.json()["diagnostics"]


def test_ready_answers_the_verdict_of_a_procedure(db):
    Session.load("http_release", SCENARIOS / "release_freeze.tom", db=db, replace=True).close()
    sup = auth(tokens.issue(db, "http_release", None))
    with TestClient(create_app(db, ["http_release"])) as client, \
            Session.attach("http_release", db=db, create=False) as s:
        for chain in (None, "Planner"):
            params = {"procedure": "deploy", **({"chain": chain} if chain else {})}
            answer = client.get("/memories/http_release/ready", headers=sup, params=params)
            assert answer.status_code == 200, answer.text
            assert answer.json() == s.ready("deploy", for_=chain).to_json()
        unknown = client.get("/memories/http_release/ready", headers=sup,
                             params={"procedure": "launch"})
        assert unknown.status_code == 400 and unknown.json()["diagnostics"]
        # The console's panel: readiness per perspective, the handoff's receipt (what
        # `handoff Scout -> Planner` answered just before step 9), a past step on request.
        panel = client.get("/memories/http_release/console/panel", headers=sup).text
        assert '<tr class="blocked"><td>deploy</td><td>Planner</td>' in panel
        assert "sent: freeze.date = 2026-10-18 (bulletin_r4, chat)" in panel
        # No caveat: the note is superseded (the bulletin dominates it) and the chat took
        # its rumour back for Scout (docs/semantics.md section 4, "Dominance").
        assert "caveats:" not in panel
        past = client.get("/memories/http_release/console/panel", headers=sup,
                          params={"at_step": 1}).text
        assert "replay: step 1 of 12" in past and "Handoff receipts" not in past
        beyond = client.get("/memories/http_release/console/panel", headers=sup,
                            params={"at_step": 13})
        assert beyond.status_code == 400 and "from 0 to 12" in beyond.json()["message"]


def test_the_stream_sends_a_step_when_another_process_writes(db, memory):
    with served(db, [MEMORY]) as base:
        url = f"{base}/memories/{MEMORY}/stream?access_token={memory['supervisor']}"
        with _streamed(url, lambda lines: len(_data(lines)) == 2) as (lines, reader):
            env = {**os.environ, "PYTHONPATH": str(REPO)}
            wrote = subprocess.run([sys.executable, "-m", "tomc", "memory", "apply", MEMORY,
                                    "Maya exits chat", "--db", db.url], capture_output=True,
                                   text=True, timeout=300, env=env)
            assert wrote.returncode == 0, wrote.stderr
            reader.join(60)
        seen = _data(lines)
        assert len(seen) == 2 and seen[1] == seen[0] + 1


@contextmanager
def _streamed(url: str, enough=lambda lines: False):
    """(the lines an event stream sent so far, the thread reading them until the stream
    ends or `enough(lines)`), while the block runs."""
    lines: list[bytes] = []
    with urllib.request.urlopen(url, timeout=60) as stream:
        def read() -> None:
            for line in stream:
                lines.append(line)
                if enough(lines):
                    return
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        yield lines, reader


def _data(lines: list[bytes]) -> list[int]:
    return [int(line[6:]) for line in lines if line.startswith(b"data: ")]


def test_the_committed_openapi_schema_is_the_apps(db):
    committed = json.loads((REPO / "docs" / "openapi.json").read_text(encoding="utf-8"))
    assert create_app(db).openapi() == committed, (
        "docs/openapi.json is out of date: python -m tomc.web.schema > docs/openapi.json")


def test_tomc_http_refuses_bad_input(db):
    def http(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "tomc", "http", *args, "--db", db.url],
                              capture_output=True, text=True, timeout=300,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    neither = http()
    assert neither.returncode == 2 and "--memory NAME" in neither.stderr
    missing = http("--memory", "no_such_memory", "--port", "1")
    assert missing.returncode == 2 and "no memory called 'no_such_memory'" in missing.stderr
    assert "Traceback" not in neither.stderr + missing.stderr


def tomc(*args: str, before: str = "") -> subprocess.CompletedProcess:
    """`tomc ARGS`, in a process of its own that first runs `before` (Python); FALKORDB_URL
    left out (ARGS say where: --db or --data)."""
    env = {k: v for k, v in os.environ.items() if k != "FALKORDB_URL"}
    return subprocess.run([sys.executable, "-c", f"{before}\nimport sys\n"
                           "from tomc.cli.main import main\nsys.argv[0] = 'tomc'\nmain()",
                           *args], capture_output=True, text=True, timeout=300,
                          env={**env, "PYTHONPATH": str(REPO)})


def test_http_and_console_refuse_a_memory_that_does_not_exist_unless_created(db, fresh,
                                                                              tmp_path):
    """Issue 40: as `tomc mcp`, a typo (or a server started without the --data meant) is
    refused, exit 2, naming where it looked; `--create` makes the memory."""
    folder = tmp_path / "elsewhere"
    for verb in ("http", "console"):
        refused = tomc(verb, "--memory", "http_typo", "--data", str(folder), "--port", "1")
        assert refused.returncode == 2, refused.stderr
        assert "no memory called 'http_typo'" in refused.stderr
        assert str(folder) in refused.stderr and "--create" in refused.stderr
        assert "Traceback" not in refused.stderr
    name = fresh("http_created")
    with socket.create_server(("127.0.0.1", 0)) as taken:  # so the server stops at once
        port = str(taken.getsockname()[1])
        made = tomc("http", "--memory", name, "--create", "--db", db.url, "--port", port)
        assert made.returncode == 2 and "cannot listen" in made.stderr, made.stderr
        assert f"created memory '{name}'" in made.stderr
        assert catalog.read(db, name) is not None
        again = tomc("console", "--memory", name, "--db", db.url, "--port", port)
        assert again.returncode == 2 and "cannot listen" in again.stderr  # it exists now
    both = tomc("http", "--all", "--create", "--db", db.url)
    assert both.returncode == 2 and "--create makes the memories named" in both.stderr


def test_a_missing_web_extra_is_named_for_the_verb_that_needs_it():
    """Issue 40: without uvicorn (its import refused here, nothing uninstalled), `tomc
    console` and `tomc http` name themselves and the extra that installs it, exit 2."""
    for verb in ("console", "http"):
        result = tomc(verb, "--memory", "anything",
                      before="import sys\nsys.modules['uvicorn'] = None")
        assert result.returncode == 2, result.stderr
        assert result.stderr.strip() == (f"tomc: 'tomc {verb}' needs the web extra: pip "
                                         "install 'tomc[web]' (uvicorn is not installed)")


def test_the_answers_are_the_ones_the_mcp_tools_give(db, client, memory):
    """The official MCP SDK's client on `tomc mcp --memory` (stdio): each tool's structured
    result is the JSON the route answers."""
    anyio = pytest.importorskip("anyio")
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    asked = {"false_beliefs": ({"depth": 1}, "/false_beliefs", {"depth": 1}),
             "who_knows": ({"key": "refund.status"}, "/who_knows", {"key": "refund.status"}),
             "believes": ({"chain": ["Maya", "Billing"], "key": "refund.status"}, "/believes",
                          {"chain": ["Maya", "Billing"], "key": "refund.status"}),
             "handoff": ({"sender": "Finance", "receiver": "Maya"}, "/handoff",
                         {"sender": "Finance", "receiver": "Maya"}),
             "history": ({}, "/history", {})}
    by_mcp: dict[str, dict] = {}

    async def scenario() -> None:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "tomc", "mcp", "--memory", MEMORY,
                                          "--db", db.url],
            env={"PYTHONPATH": str(REPO)}, cwd=str(REPO))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as mcp:
            await mcp.initialize()
            for tool, (arguments, _, _) in asked.items():
                result = await mcp.call_tool(tool, arguments)
                by_mcp[tool] = json.loads(result.content[-1].text)

    anyio.run(scenario)
    for tool, (_, path, params) in asked.items():
        assert get(client, memory["supervisor"], path, **params).json() == by_mcp[tool], tool


# ---------------------------------------------------------------- the server's guards


def test_the_stream_ends_when_its_token_is_revoked(db, memory):
    """Issue 35: an SSE stream does not outlive its token: once revoked, the stream says
    `revoked` and ends (looked at every second)."""
    token = tokens.issue(db, MEMORY, None)
    with served(db, [MEMORY]) as base:
        url = f"{base}/memories/{MEMORY}/stream?access_token={token}"
        with _streamed(url) as (lines, reader):
            tokens.revoke(db, token.split("_")[1])
            reader.join(30)
            assert not reader.is_alive()  # the server ended the stream
    assert b"event: revoked\n" in lines


def test_a_lasting_token_lapses_unless_renewed(db, memory):
    """A console's token lapses `lasts_s` after it was last renewed: a console killed with
    -9 (no revocation) leaves no token that works for long."""
    token = tokens.issue(db, MEMORY, None, lasts_s=0.5)
    token_id = token.split("_")[1]
    assert tokens.verify(db, token).memory == MEMORY
    tokens.renew(db, token_id)
    assert tokens.valid(db, token_id)
    threading.Event().wait(0.7)
    assert not tokens.valid(db, token_id)
    with pytest.raises(tokens.TokenRefused, match="lapsed"):
        tokens.verify(db, token)
    assert token_id not in {t["token_id"] for t in tokens.list_tokens(db, MEMORY)}


def test_answers_carry_security_headers_and_big_bodies_and_foreign_hosts_are_refused(
        db, memory):
    with TestClient(create_app(db, allowed_hosts=["127.0.0.1", "localhost"]),
                    base_url="http://127.0.0.1") as local:
        answer = get(local, memory["supervisor"], "/describe")
        assert answer.status_code == 200
        assert answer.headers["x-frame-options"] == "DENY"
        assert answer.headers["referrer-policy"] == "no-referrer"
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
        big = local.post(f"/memories/{MEMORY}/events", headers=auth(memory["supervisor"]),
                         content=b'{"text": "' + b"x" * (2 * 1024 * 1024) + b'"}')
        assert big.status_code == 413
        rebound = local.get(f"/memories/{MEMORY}/describe",
                            headers={**auth(memory["supervisor"]), "host": "evil.example"})
        assert rebound.status_code == 400


def test_tomc_http_attaches_again_to_a_memory_dropped_and_created_again(db):
    """Issue 35: the request that finds the memory replaced says so (E145, nothing
    written); the next one is answered from the memory there is now."""
    name = "http_recreated"
    catalog.drop(db, name)
    with Session.attach(name, db=db) as s:
        s.apply("agents A\nrooms r\nA enters r\nA sets x.y = 1")
    token = tokens.issue(db, name, None)
    with TestClient(create_app(db, [name])) as c:
        first = c.get(f"/memories/{name}/truth", headers=auth(token), params={"key": "x.y"})
        assert first.status_code == 200 and "1" in first.text
        catalog.drop(db, name)
        with Session.attach(name, db=db) as s:
            s.apply("agents A\nrooms r\nA enters r\nA sets x.y = 2")
        token = tokens.issue(db, name, None)
        replaced = c.get(f"/memories/{name}/truth", headers=auth(token),
                         params={"key": "x.y"})
        assert replaced.status_code == 400 and "E145" in replaced.text
        again = c.get(f"/memories/{name}/truth", headers=auth(token), params={"key": "x.y"})
        assert again.status_code == 200 and again.json() != first.json()
        assert '"2"' in again.text


def test_hostile_text_in_the_servers_log_prints_as_escapes(caplog):
    """A path or header a client sends reaches `tomc http`'s log as text, never as terminal
    control codes."""
    from tomc.web import guards
    guards.printable_logs()
    with caplog.at_level(logging.WARNING, logger="uvicorn.error"):
        logging.getLogger("uvicorn.error").warning("bad request line %s", "/x\x1b[2J\x07")
    assert "\x1b" not in caplog.text and "\\x1b[2J\\x07" in caplog.text


def test_a_chunked_body_over_the_bound_is_a_413(db, memory):
    with TestClient(create_app(db)) as c:
        def chunks():
            for _ in range(3):
                yield b"x" * (600 * 1024)
        answer = c.post(f"/memories/{MEMORY}/events", headers=auth(memory["supervisor"]),
                        content=chunks())
        assert answer.status_code == 413


def test_a_question_about_a_key_no_event_wrote_carries_its_warning(client, memory):
    """W180 ("did you mean") on HTTP as on the CLI and MCP (tomc/wire.py `warned`), and
    only on the question that had it (a pooled session's last warnings are not repeated)."""
    misspelt = get(client, memory["supervisor"], "/believes", chain="Maya",
                   key="refund.stauts")
    assert misspelt.status_code == 200
    (warning,) = misspelt.json()["warnings"]
    assert warning["code"] == "W180" and "refund.status" in warning["hint"]
    assert "W180" in misspelt.json()["rendered_warnings"]
    right = get(client, memory["supervisor"], "/believes", chain="Maya", key="refund.status")
    assert "warnings" not in right.json()
