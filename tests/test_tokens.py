"""Access tokens (tomc/runtime/tokens.py, `tomc token`; docs/security.md): issued once,
stored as a SHA-256 only, refused when unknown or revoked. On the test FalkorDB."""

from __future__ import annotations

import hashlib
import json

import pytest
from typer.testing import CliRunner

from tomc.api import Session, TomError
from tomc.cli.main import app
from tomc.memory import catalog
from tomc.runtime import tokens


@pytest.fixture
def support(db):
    catalog.drop(db, "tok_support")
    with Session.attach("tok_support", db=db) as session:
        session.apply("agents Maya, Billing")
    yield "tok_support"
    for row in tokens.list_tokens(db, "tok_support"):
        tokens.revoke(db, row["token_id"])
    catalog.drop(db, "tok_support")


def test_a_token_is_verified_listed_without_secret_and_revoked(db, support):
    maya = tokens.issue(db, support, "Maya")
    boss = tokens.issue(db, support, None)
    grant = tokens.verify(db, maya)
    assert (grant.memory, grant.agent) == (support, "Maya")
    assert tokens.verify(db, boss).agent is None
    stored = json.dumps(db.redis.hgetall(tokens.TOKENS_KEY))
    secret = maya.split("_", 2)[2]
    assert secret not in stored and hashlib.sha256(secret.encode()).hexdigest() in stored
    listed = tokens.list_tokens(db, support)
    assert {r["agent"] for r in listed} == {"Maya", None}
    assert secret not in json.dumps(listed)
    tokens.revoke(db, grant.token_id)
    with pytest.raises(tokens.TokenRefused) as refused:
        tokens.verify(db, maya)
    assert isinstance(refused.value, TomError) and "E210" in str(refused.value)
    assert tokens.verify(db, boss).memory == support


@pytest.mark.parametrize("token", ["", "Bearer x", "tomc_000000000000_" + "A" * 43,
                                   "tomc_zz_secret", "tomc_" + "0" * 12])
def test_a_malformed_or_unknown_token_is_refused(db, token):
    with pytest.raises(tokens.TokenRefused):
        tokens.verify(db, token)


def test_a_token_with_another_secret_is_refused(db, support):
    real = tokens.issue(db, support, "Maya")
    forged = real[:-4] + ("AAAA" if not real.endswith("AAAA") else "BBBB")
    with pytest.raises(tokens.TokenRefused):
        tokens.verify(db, forged)


def test_token_cli_issues_lists_and_revokes(db, support):
    runner = CliRunner()
    issued = runner.invoke(app, ["token", "issue", support, "--agent", "Maya", "--db", db.url,
                                 "--json"])
    assert issued.exit_code == 0, issued.output
    token = json.loads(issued.stdout)["token"]
    assert tokens.verify(db, token).agent == "Maya"
    listed = runner.invoke(app, ["token", "list", support, "--db", db.url, "--json"])
    (row,) = json.loads(listed.stdout)["tokens"]
    assert token not in listed.stdout and row["agent"] == "Maya"
    revoked = runner.invoke(app, ["token", "revoke", row["token_id"], "--db", db.url])
    assert revoked.exit_code == 0 and "revoked" in revoked.stdout
    again = runner.invoke(app, ["token", "revoke", row["token_id"], "--db", db.url])
    assert again.exit_code == 2
    nobody = runner.invoke(app, ["token", "issue", support, "--agent", "Nobody", "--db", db.url])
    assert nobody.exit_code == 2 and "no agent 'Nobody'" in nobody.stderr
    missing = runner.invoke(app, ["token", "issue", "tok_nowhere", "--db", db.url])
    assert missing.exit_code == 2


def test_dropping_a_memory_revokes_its_tokens(db, support):
    token = tokens.issue(db, support, "Maya")
    catalog.drop(db, support)
    with Session.attach(support, db=db) as session:  # made again under the same name
        session.apply("agents Maya")
    with pytest.raises(tokens.TokenRefused):
        tokens.verify(db, token)
