"""Search (docs/language.md, "Search"): the same ranked hits on both engines, scoped to who
asks (an agent never finds another mind's value, whatever its query holds), through the
API, the CLI and the .tom question form."""

from __future__ import annotations

import json
import warnings

import pytest

from test_memory import tomc
from tomc.api import Session, TomError
from tomc.memory import catalog
from tomc.search_text import MAX_TERMS, terms

STORY = """agents Maya, Billing, Zed
rooms chat, vault
Maya, Billing enter chat
Billing says payments_outage.cause = "db failover"
Billing tells Maya refund_4411.status = approved
Billing says payments_outage.window = "02:00-03:10"
Billing says payments_outage.cause = "expired certificate"
Zed enters vault
in vault: payments_outage.secret = zed_only_payments
Zed tells Zed vault.code = 4411"""
SECRETS = {"zed_only_payments", "4411"}
# Queries a model or a person might send: index syntax of every kind, wildcards, quotes,
# injection attempts, a parameter name, text far longer than any key, other scripts.
CRAFTED = ["*", "payments*", "%payments%", "@words:payments", "@key:secret", "secret | zed",
           "-refund", "(zed_only)", '"zed only"', "zed\\", "' RETURN 1 //", "$query",
           "~zed", "{zed}", "zed* | *", "payments " * 5000, "z" * 100_000, "sécret 秘密 zed",
           "4411", "ZED_ONLY", "", "   ", "\n\t", "zed_onlyy", "zedd_only_paymentz", "valt code"]


@pytest.fixture
def story(db):
    catalog.drop(db, "search_story")
    with Session.attach("search_story", db=db) as session:
        session.apply(STORY.replace("Zed tells Zed vault.code = 4411",
                                    "Zed sets vault.code = 4411"))
    yield "search_story"
    catalog.drop(db, "search_story")


def test_terms_are_words_only_and_bounded():
    assert terms("What did we discuss about the payments outage?") == (
        "discuss", "payments", "outage")
    assert terms("@key:{x} | -y* \"z\"") == ("key", "x", "y", "z")
    assert terms("the") == ("the",)  # only question words: they are the query
    assert len(terms("w" + " w".join(str(i) for i in range(100)))) == MAX_TERMS
    assert terms("z" * 1000) == ("z" * 64,)


@pytest.mark.parametrize("query", ["payments outage", "what caused the outage", "refund",
                                   "cert", "4411", "failover 02", "nothing_like_it"])
def test_both_engines_find_and_rank_the_same(db, query):
    story = STORY.replace("Zed tells Zed vault.code = 4411", "Zed sets vault.code = 4411")
    found = []
    for engine in ("falkordb", "reference"):
        with Session.open(name="search_both", engine=engine, db=db) as session:
            session.apply(story)
            found.append(session.search(query).to_json())
    assert found[0] == found[1]
    if query == "payments outage":
        first = next(h for h in found[0]["hits"] if h["value"] == "expired certificate")
        assert (first["key"], first["value"], first["current"]) == (
            "payments_outage.cause", "expired certificate", True)
        assert ["Maya"] in [c["chain"] for c in first["chains"]]
        closed = next(h for h in found[0]["hits"] if h["value"] == "db failover")
        assert {c["until"] for c in closed["chains"]} == {5}
        assert [e["text"] for e in closed["events"]] == [
            'Billing says payments_outage.cause = "db failover"']
        # one hit per fact: each (key, value) once, whichever chains hold it
        facts = [(h["key"], h["value"]) for h in found[0]["hits"]]
        assert len(facts) == len(set(facts)) == found[0]["total"]


def test_an_agent_finds_only_its_own_mind_whatever_the_query(db, story):
    with Session.attach(story, db=db) as supervisor:
        everything = supervisor.search("zed only payments")
        assert {h.value for h in everything.hits} >= {"zed_only_payments"}
    with Session.attach(story, db=db, as_agent="Maya") as maya:
        for query in CRAFTED:
            found = maya.search(query, limit=1000)
            assert found.events == []
            assert all(c.chain[0] == "Maya" for h in found.hits for c in h.chains), \
                query[:40]
            assert not {h.value for h in found.hits} & SECRETS, query[:40]
        assert {h.value for h in maya.search("payments").hits} == {
            "db failover", "02:00-03:10", "expired certificate"}
        with pytest.raises(TomError):
            maya.search("x", limit=0)


def test_the_tom_form_and_the_cli(db, story):
    with Session.attach(story, db=db, as_agent="Maya") as maya, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        answer = maya.ask('expect search "payments zed" keys = {payments_outage.cause, '
                          'payments_outage.window}')
        assert answer.passed, answer.actual
    shown = tomc("memory", "search", story, "payments outage", "--json", "--as", "Zed",
                 url=db.url)
    assert shown.returncode == 0, shown.stderr
    hits = json.loads(shown.stdout)["hits"]
    assert [([c["chain"] for c in h["chains"]], h["value"]) for h in hits] == [
        ([["Zed"]], "zed_only_payments")]
    text = tomc("memory", "search", story, "certificate", url=db.url)
    assert text.returncode == 0 and "payments_outage.cause = expired certificate" \
        in text.stdout and "event step 5" in text.stdout
    held = text.stdout.split("payments_outage.cause = expired certificate\n")[1].split("\n")[0]
    assert "Maya" in held and "step 5, current from Billing" in held
    bad = tomc("memory", "search", story, "x", "--limit", "0", url=db.url)
    assert bad.returncode == 2


def test_who_knows_best_says_a_full_tie_out_loud(db):
    with Session.open(name="best_tie", engine="reference") as session:
        session.apply("agents Ananya, Dev\nrooms eng\nAnanya, Dev enter eng\n"
                      "in eng: kafka.skilled = Dev\nin eng: kafka.expert = Ananya")
        ranking = session.who_knows_best("kafka")
    assert [c.agent for c in ranking.ranking] == ["Ananya", "Dev"]
    assert ranking.ties == ["tie: Ananya and Dev are equal on every count (listed by name)"]
    assert ranking.items("first") == []


def test_describe_names_what_the_reader_may_know_of(db, story):
    with Session.attach(story, db=db) as supervisor:
        everything = supervisor.describe().to_json()
    assert everything["agents"] == ["Maya", "Billing", "Zed"] and everything["step"] == 8
    assert [(k["key"], k["events"], k["last_step"]) for k in everything["keys"]] == [
        ("payments_outage.cause", 2, 5), ("payments_outage.secret", 1, 7),
        ("payments_outage.window", 1, 4), ("refund_4411.status", 1, 3), ("vault.code", 1, 8)]
    shown = tomc("memory", "describe", story, "--as", "Maya", "--json", url=db.url)
    assert shown.returncode == 0, shown.stderr
    mine = json.loads(shown.stdout)
    assert mine["agent"] == "Maya" and mine["step"] == 8
    assert {k["key"] for k in mine["keys"]} == {"payments_outage.cause",
                                                 "payments_outage.window", "refund_4411.status"}


WALK = """agents Lena, Omar, Ana
rooms planning
Lena, Omar, Ana enter planning
Lena says pause.decided_in = "@rfc"
Lena says pause.decided_by = Lena
Omar says rfc.rests_on = "@review"
Omar says rfc.cites = "@memo"
Omar says memo.cites = "@review"
Omar says review.back = "@rfc"
Omar says review.finding = "disk at 92%"
Lena tells Ana memo.note = later
Lena sets pause.decided_in = "@rfc" """


@pytest.mark.parametrize("hops", [0, 1, 2, 3])
def test_both_engines_walk_the_same_evidence(db, hops):
    """`explain KEY follow N` on FalkorDB (one bounded-traversal read) and on the reference
    (its own walk): the same facts, paths and provenance, for a chain and for the truth; a
    subject reached at one hop is not walked again (review links back to rfc, memo on to
    review), and a chain walks only what it holds."""
    walks = []
    for engine in ("falkordb", "reference"):
        with Session.open(name="walk_both", engine=engine, db=db) as session:
            session.apply(WALK)
            walks.append([session.follow("pause.decided_in", for_="Ana", hops=hops).to_json(),
                          session.follow("pause.decided_in", for_="Omar", hops=hops).to_json(),
                          session.follow("pause.decided_in", hops=hops).to_json()])
    assert walks[0] == walks[1]
    ana, omar, truth = walks[0]
    paths = [(h["hops"], tuple(h["path"]), h["key"], h["value"]) for h in ana["hops"]]
    expected = [(0, ("pause",), "pause.decided_in", "@rfc"),
                (1, ("pause", "rfc"), "rfc.cites", "@memo"),
                (1, ("pause", "rfc"), "rfc.rests_on", "@review"),
                (2, ("pause", "rfc", "memo"), "memo.cites", "@review"),
                (2, ("pause", "rfc", "memo"), "memo.note", "later"),
                (2, ("pause", "rfc", "review"), "review.back", "@rfc"),
                (2, ("pause", "rfc", "review"), "review.finding", "disk at 92%")]
    assert paths == [p for p in expected if p[0] <= hops]
    first = ana["hops"][0]
    assert (first["source"], first["step"], first["chain"]) == ("Lena", 2, ["Ana"])
    # Omar holds what Lena said, not what he said himself (the default policy: `adopts
    # except speaker`): his walk stops at the RFC, whose facts only others hold
    assert [h["key"] for h in omar["hops"]] == ["pause.decided_in"]
    assert [h["key"] for h in truth["hops"]] == ["pause.decided_in"]  # set only: no walk


@pytest.mark.parametrize("within", [0, 1, 2, 3])
def test_both_engines_find_the_same_things_about_a_subject(db, within):
    """`about SUBJECT within N` on FalkorDB (one bounded-traversal read, read_near.cypher)
    and on the reference (its own walk): the same facts, paths and provenance. From review,
    links go both ways: review.back leads to rfc, and memo and rfc link to review; rfc is
    reached first forward (its back-link is not a second path), memo by its back-link, and
    pause, at two links, only through rfc."""
    answers = []
    for engine in ("falkordb", "reference"):
        with Session.open(name="about_both", engine=engine, db=db) as session:
            session.apply(WALK)
            answers.append([session.about("review", for_="Ana", within=within).to_json(),
                            session.about("pause", within=within).to_json()])
    assert answers[0] == answers[1]
    ana, truth = answers[0]
    found = [(f["hops"], tuple(f["path"]), f["key"], f["source"]) for f in ana["found"]]
    expected = [(0, ("review",), "review.back", "Omar"),
                (0, ("review",), "review.finding", "Omar"),
                (1, ("review", "rfc"), "rfc.cites", "Omar"),
                (1, ("review", "rfc"), "rfc.rests_on", "Omar"),
                (1, ("review", "memo"), "memo.cites", "Omar"),
                (1, ("review", "memo"), "memo.note", "Lena"),
                (2, ("review", "rfc", "pause"), "pause.decided_by", "Lena"),
                (2, ("review", "rfc", "pause"), "pause.decided_in", "Lena")]
    assert found == [f for f in expected if f[0] <= within]
    # the truth holds only what was set: pause.decided_in, whose link leads nowhere held
    assert [f["key"] for f in truth["found"]] == ["pause.decided_in"]


NAMES = """agents Maya, Billing, Asha
rooms chat
Maya, Billing, Asha enter chat
Billing tells Maya refund.status = approved
Billing says Asha.role = lead
Maya says asha.role = lead
Billing says payments_outage.cause = "expired certificate" """


@pytest.mark.parametrize("query, forgiven, key", [
    ("refund", {}, "refund.status"),
    ("refunds", {"refunds": ["refund"]}, "refund.status"),
    ("refnd", {"refnd": ["refund"]}, "refund.status"),
    ("Refnud STATSU", {"refnud": ["refund"], "statsu": ["status"]}, "refund.status"),
    ("asha", {}, "Asha.role"),
    ("ASHA", {}, "Asha.role"),
    ("ahsa rol", {"ahsa": ["asha"]}, "Asha.role"),
    ("paymnts", {"paymnts": ["payments"]}, "payments_outage.cause"),
])
def test_names_forgive_plurals_misspellings_and_case(db, query, forgiven, key):
    """A term that matches nothing is searched as the names within a few edits of it
    (rapidfuzz), alike on both engines; keys that differ only in case are one fact."""
    found = []
    for engine in ("falkordb", "reference"):
        with Session.open(name="search_names", engine=engine, db=db) as session:
            session.apply(NAMES)
            found.append(session.search(query).to_json())
    assert found[0] == found[1]
    answer = found[0]
    assert answer["forgiven"] == forgiven
    assert answer["hits"][0]["key"].lower() == key.lower()
    facts = [(h["key"].lower(), h["value"]) for h in answer["hits"]]
    assert len(facts) == len(set(facts))
    if key == "Asha.role":  # Billing's `Asha.role` and Maya's `asha.role`: one fact
        (hit,) = [h for h in answer["hits"] if h["key"].lower() == "asha.role"]
        assert {c["key"] for c in hit["chains"]} == {"Asha.role", "asha.role"}
        assert [e["step"] for e in hit["events"]] == [3, 4]


def test_nothing_near_is_not_forgiven(db):
    """Short words and words far from every name stay as they are: nothing found."""
    with Session.open(name="search_far", engine="reference") as session:
        session.apply(NAMES)
        for query in ("zz", "quux", "certificatezzz"):
            answer = session.search(query)
            assert (answer.hits, answer.forgiven) == ([], {}), query


@pytest.fixture
def names_memory(db):
    catalog.drop(db, "search_names_cli")
    with Session.attach("search_names_cli", db=db) as session:
        session.apply(NAMES)
    yield "search_names_cli"
    catalog.drop(db, "search_names_cli")


def test_the_cli_gives_one_hit_per_fact_and_forgives(db, names_memory):
    """`tomc memory search NAME TEXT --json`: a `hits` list, one per fact, each with its
    key, the chains that hold it and the events that gave it; `refunds` and `refnd` find
    `refund.status`; an agent's forgiven words come from what it witnessed only."""
    answers = {}
    for query in ("refund", "refunds", "refnd"):
        shown = tomc("memory", "search", names_memory, query, "--json", url=db.url)
        assert shown.returncode == 0, shown.stderr
        answers[query] = json.loads(shown.stdout)
    for query, answer in answers.items():
        (hit,) = answer["hits"]
        assert (hit["key"], hit["value"], hit["current"]) == ("refund.status", "approved", True)
        assert sorted(c["chain"] for c in hit["chains"]) == [["Billing", "Maya"], ["Maya"]]
        assert [(e["step"], e["text"]) for e in hit["events"]] == [
            (2, "Billing tells Maya refund.status = approved")]
    assert answers["refnd"]["forgiven"] == {"refnd": ["refund"]}
    text = tomc("memory", "search", names_memory, "refunds", url=db.url)
    assert text.returncode == 0, text.stderr
    assert "refunds read as refund" in text.stdout
    assert text.stdout.count("  refund.status = approved") == 1  # and its event
    asha = tomc("memory", "search", names_memory, "asha", "--json", "--as", "Asha", url=db.url)
    assert asha.returncode == 0, asha.stderr
    (hit,) = json.loads(asha.stdout)["hits"]
    assert {c["key"] for c in hit["chains"]} == {"Asha.role", "asha.role"}
    assert all(c["chain"][0] == "Asha" for c in hit["chains"])
    # Asha never heard of refunds: the word is not hers to be forgiven into
    theirs = tomc("memory", "search", names_memory, "refnd", "--json", "--as", "Asha",
                  url=db.url)
    assert theirs.returncode == 0, theirs.stderr
    assert json.loads(theirs.stdout)["forgiven"] == {} and json.loads(theirs.stdout)["hits"] == []


def test_agents_are_found_misspelt_or_in_any_case(db):
    """An agent's name is a name search forgives: `Bilingg` is read as `billing`, which
    finds what Billing is the source of; `MAYA` is `maya`."""
    with Session.open(name="search_agents", engine="reference") as session:
        session.apply(NAMES + "\nMaya says owner.name = Billing")
        misspelt = session.search("Bilingg")
        assert misspelt.forgiven == {"bilingg": ("billing",)}
        assert misspelt.hits[0].key == "owner.name"  # the value names Billing: 2 > source 1
        assert {h.key for h in misspelt.hits} >= {"refund.status", "payments_outage.cause"}
        assert session.search("MAYA").hits[0].chains[0].source == "Maya"
