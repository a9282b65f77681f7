"""Search by meaning (docs/language.md, "Search by meaning"): the same scores on both
engines, an agent's recall scoped to its own mind graph, an OpenAI-compatible embeddings
server (a real HTTP server this test starts, deterministic), a changed model re-embedding,
text search with no provider, and every surface: API, CLI --json, MCP (the SDK's client)
and HTTP."""

from __future__ import annotations

import hashlib
import json
import math
import os
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anyio
import pytest

from test_memory import python
from tomc.api import Session, TomError
from tomc.memory import catalog

pytest.importorskip("wordllama")

STORY = """agents Maya, Billing, Zed
rooms chat, vault
Maya, Billing enter chat
Billing says payments_outage.cause = "db failover"
Billing tells Maya refund_4411.status = approved
Billing says payments_outage.window = "02:00-03:10"
Billing says payments_outage.cause = "expired certificate"
Billing says payments_outage.postmortem = "@helios_rfc"
Zed enters vault
in vault: payments_outage.secret = zed_only_payments
Zed sets vault.code = 4411"""
SECRETS = {"zed_only_payments", "4411"}
PARTS = {"text", "meaning", "graph", "authority", "recency", "total"}


@pytest.fixture
def local(monkeypatch):
    """The bundled local model (no download)."""
    monkeypatch.setenv("TOMC_EMBED_PROVIDER", "local")
    for name in ("TOMC_EMBED_MODEL", "TOMC_EMBED_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def story(db, local):
    catalog.drop(db, "recall_story")
    with Session.attach("recall_story", db=db) as session:
        session.apply(STORY)
    yield "recall_story"
    catalog.drop(db, "recall_story")


class Embeddings(BaseHTTPRequestHandler):
    """POST /embeddings: each text a bag of its words, hashed into DIMENSION buckets (the
    model's name picks the dimension: `fake-8`), normalised. Counts the texts it embeds."""

    texts: list[str] = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path != "/v1/embeddings":
            self.send_error(404)
            return
        dimension = int(body["model"].rsplit("-", 1)[1])
        Embeddings.texts += body["input"]
        data = [{"index": i, "embedding": bag(t, dimension)} for i, t in enumerate(body["input"])]
        reply = json.dumps({"data": data, "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


def bag(text: str, dimension: int) -> list[float]:
    vector = [0.0] * dimension
    for word in text.lower().replace(".", " ").replace("_", " ").split():
        vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % dimension] += 1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


@contextmanager
def embeddings_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Embeddings)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_both_engines_rank_by_meaning_alike(db, local):
    found = []
    for engine in ("falkordb", "reference"):
        with Session.open(name="recall_both", engine=engine, db=db) as session:
            session.apply(STORY)
            found.append([session.search(q, mode=m, about=a, limit=4).to_json()
                          for q, m, a in [("money back for the customer", "hybrid", None),
                                          ("why did payments break", "meaning", None),
                                          ("outage", "hybrid", "payments_outage"),
                                          ("outage", "text", None)]])
    assert found[0] == found[1]
    hybrid, meaning, near, text = found[0]
    assert hybrid["mode"] == "hybrid" and hybrid["model"].startswith("local:")
    assert all(set(h["scores"]) == PARTS for h in hybrid["hits"])
    # no word of the query is in the refund, but its meaning is: it is found
    assert ("refund_4411.status", "approved") in [(h["key"], h["value"])
                                                  for h in hybrid["hits"]]
    assert meaning["ranking"] == {"meaning": 1.0}
    assert [h["score"] for h in meaning["hits"]] == sorted(
        (h["scores"]["meaning"] for h in meaning["hits"]), reverse=True)
    assert all(h["scores"]["graph"] == 1.0 for h in near["hits"]
               if h["key"].startswith("payments_outage."))
    assert text["mode"] == "text" and "scores" not in text["hits"][0]


def test_an_agent_recalls_from_its_own_mind_graph_only(db, story):
    with Session.attach(story, db=db, as_agent="Maya") as maya:
        for query in ("zed only payments secret", "vault code 4411", "payments"):
            found = maya.search(query, mode="hybrid", limit=100)
            assert all(c.chain[0] == "Maya" for h in found.hits for c in h.chains), query
            assert not {h.value for h in found.hits} & SECRETS, query
    graphs = {g for g in db.graph_names() if g.startswith("so:") or ":mind:" in g}
    stored = {}
    for graph in graphs:
        try:
            stored[graph] = {r["v"] for r in db.read(graph, "MATCH (m:Meaning) RETURN m.value AS v",
                                                     {})}
        except Exception:  # a graph of another test gone meanwhile
            continue
    maya_graph = next(g for g in stored if g.endswith("Maya") and "recall_story" in g)
    assert stored[maya_graph] and not stored[maya_graph] & SECRETS


def test_an_openai_compatible_server_and_a_changed_model(db, monkeypatch):
    with embeddings_server() as url:
        monkeypatch.setenv("TOMC_EMBED_PROVIDER", "openai")
        monkeypatch.setenv("TOMC_EMBED_BASE_URL", url)
        monkeypatch.setenv("TOMC_EMBED_MODEL", "fake-16")
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        catalog.drop(db, "recall_openai")
        try:
            with Session.attach("recall_openai", db=db) as session:
                session.apply(STORY)
                Embeddings.texts = []
                first = session.search("refund status", mode="meaning", limit=3)
                assert first.model == f"openai:fake-16 at {url}"
                assert first.hits[0].key == "refund_4411.status"
                embedded = len(Embeddings.texts)
                assert embedded > 1
                Embeddings.texts = []
                session.search("refund status", mode="meaning", limit=3)
                assert Embeddings.texts == ["refund status"]  # facts are embedded once
                session.apply("Billing tells Maya refund_4411.amount = 120")
                Embeddings.texts = []
                session.search("refund amount", mode="hybrid")
                # only the new fact (in each mind graph that holds it), and the query
                assert set(Embeddings.texts) == {"refund 4411 amount: 120", "refund amount"}
                # another model (of another dimension): every fact is embedded again
                monkeypatch.setenv("TOMC_EMBED_MODEL", "fake-8")
                Embeddings.texts = []
                again = session.search("refund status", mode="meaning", limit=3)
                assert again.model.startswith("openai:fake-8") and len(again.hits) == 3
                assert len(Embeddings.texts) >= embedded
        finally:
            catalog.drop(db, "recall_openai")
    # the server gone: a diagnostic, not a traceback
    with Session.open(name="recall_gone", engine="reference") as session:
        session.apply(STORY)
        with pytest.raises(TomError) as err:
            session.search("refund", mode="meaning")
        assert "E205" in str(err.value)


def test_text_search_needs_no_provider(db, monkeypatch):
    monkeypatch.delenv("TOMC_EMBED_PROVIDER", raising=False)
    with Session.open(name="recall_text", engine="reference") as session:
        session.apply(STORY)
        assert session.search("refund").mode == "text"
        for mode in ("meaning", "hybrid"):
            with pytest.raises(TomError) as err:
                session.search("refund", mode=mode)
            assert "E205" in str(err.value) and "TOMC_EMBED_PROVIDER" in str(err.value)
        with pytest.raises(TomError):
            session.search("refund", mode="vibes")
    monkeypatch.setenv("TOMC_EMBED_PROVIDER", "nonesuch")
    with Session.open(name="recall_text", engine="reference") as session:
        session.apply(STORY)
        assert session.search("refund", mode="text").hits  # text still works
        with pytest.raises(TomError):
            session.search("refund")


def cli(*args: str, url: str, **env: str):
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        return python("from tomc.cli.main import main; main()", url, *args, check=False)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def test_the_cli(db, story):
    shown = cli("memory", "search", story, "money back", "--json", "--as", "Maya",
                "--mode", "hybrid", url=db.url, TOMC_EMBED_PROVIDER="local")
    assert shown.returncode == 0, shown.stderr
    out = json.loads(shown.stdout)
    assert out["mode"] == "hybrid" and out["hits"]
    assert all(set(h["scores"]) == PARTS and h["chains"] and h["events"] for h in out["hits"])
    assert all(c["chain"][0] == "Maya" for h in out["hits"] for c in h["chains"])
    text = cli("memory", "search", story, "outage", "--about", "payments_outage",
               url=db.url, TOMC_EMBED_PROVIDER="local")
    assert text.returncode == 0 and "hybrid by local:" in text.stdout and "graph 1.00" \
        in text.stdout, text.stdout
    bad = cli("memory", "search", story, "outage", "--mode", "meaning", url=db.url,
              TOMC_EMBED_PROVIDER="")
    assert bad.returncode == 2 and "E205" in bad.stderr and "Traceback" not in bad.stderr


def test_mcp_and_http(db, story):
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from test_mcp import TIMEOUT, call, server_url, tomc_command

    async def scenario():
        command = tomc_command()
        params = StdioServerParameters(
            command=command[0], args=[*command[1:], "mcp", "--memory", story, "--db",
                                      server_url(db)],
            env={"PYTHONPATH": os.environ.get("PYTHONPATH", ""),
                 "TOMC_EMBED_PROVIDER": "local"})
        async with stdio_client(params) as (read, write), \
                ClientSession(read, write, read_timeout_seconds=TIMEOUT) as client:
            await client.initialize()
            return await call(client, "search", text="money back", mode="hybrid",
                              about="payments_outage", limit=5)

    found = anyio.run(scenario)
    with Session.attach(story, db=db) as session:
        assert found == session.search("money back", mode="hybrid", about="payments_outage",
                                       limit=5).to_json()

    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient
    from tomc.runtime import tokens
    from tomc.web.app import create_app
    maya = tokens.issue(db, story, "Maya")
    with TestClient(create_app(db)) as client:
        reply = client.get(f"/memories/{story}/search", headers={
            "Authorization": f"Bearer {maya}"}, params={"text": "money back", "mode": "meaning"})
        assert reply.status_code == 200, reply.text
        assert reply.json()["mode"] == "meaning"
        assert all(c["chain"][0] == "Maya" for h in reply.json()["hits"] for c in h["chains"])
        wrong = client.get(f"/memories/{story}/search", headers={
            "Authorization": f"Bearer {maya}"}, params={"text": "x", "mode": "vibes"})
        assert wrong.status_code == 400
    with Session.attach(story, db=db, as_agent="Maya") as as_maya:
        assert reply.json() == as_maya.search("money back", mode="meaning").to_json()


def test_the_applier_embeds_beside_its_writes(db, local):
    """A memory written through its applier has its facts embedded on a thread of their
    own: the mark reaches the memory's step with no search asking for it."""
    from tomc.memory.applier import serve_appliers
    from tomc.runtime.keys import appliers_key
    import time
    stop = threading.Event()
    thread = threading.Thread(target=serve_appliers, args=(db, stop, 2))
    thread.start()
    catalog.drop(db, "recall_beside")
    try:
        while not db.redis.exists(appliers_key()):
            time.sleep(0.05)
        with Session.attach("recall_beside", db=db) as session:
            session.apply(STORY)
            step = session.step
        graphs = [g for g in db.graph_names() if "recall_beside" in g
                  and (":mind:" in g or g.endswith(":world"))]
        maya = next(g for g in graphs if g.endswith("Maya"))
        deadline = time.monotonic() + 60

        def marked() -> set:
            return {g for g in graphs if db.read(
                g, "MATCH (k:MeaningMark) RETURN k.step AS step", {}) == [{"step": step}]}

        # every graph embedded (none still being written when the memory is dropped)
        while marked() != set(graphs) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert maya in graphs and marked() == set(graphs), (graphs, marked())
        values = {r["v"] for r in db.read(maya, "MATCH (m:Meaning) RETURN m.value AS v", {})}
        assert "approved" in values and not values & SECRETS
    finally:
        stop.set()
        thread.join()
        catalog.drop(db, "recall_beside")


def test_the_recall_eval_runs_on_a_small_memory(db, local):
    """eval/recall.py's generated memory, small: every mode ranks, hybrid keeps what words
    find, and the report renders."""
    from eval.recall import MODES, generated, render
    figures = generated(db, 100, 5)
    assert figures["facts"] == 100 and set(figures["modes"]) == set(MODES)
    assert figures["modes"]["hybrid"]["recall_at_5"] >= figures["modes"]["text"]["recall_at_5"]
    page = render({"python": "3", "falkordb": "4", "model": "local", "generated": [figures],
                   "scenarios": {"queries": 0, "rows": [],
                                 "modes": {m: figures["modes"][m] for m in MODES}}})
    assert "A generated memory of 100 facts" in page
