"""Access tokens for tomc's HTTP surfaces (`tomc mcp --http`, `tomc http`, `tomc console`;
docs/security.md): one per
agent of a memory, or per supervisor of a memory, issued by `tomc token issue`, revocable.

A token reads `tomc_<token_id>_<secret>`: `token_id` (12 hex digits) names it in listings
and `revoke`; `secret` (43 url-safe characters, 256 random bits) is shown once, when it is
issued, and never stored: the server keeps its SHA-256 only, in the hash TOKENS_KEY
{token_id: JSON {"sha256", "memory", "agent", "issued"}} (docs/storage.md). An agent's
FalkorDB user may HGET one record by its id (its own `tomc mcp --http` checks the tokens it
is sent), any memory's, and can neither list the ids nor read the hash whole
(tomc/memory/acl.py `reading`): a record holds a digest, never a secret, and the ids are 48
random bits.

    secret = issue(db, "support", "Maya")        # agent None: the memory's supervisor
    verify(db, secret)  -> Grant(memory="support", agent="Maya", token_id="3f9c...")
    revoke(db, "3f9c...")
    list_tokens(db, memory="support") -> [{"token_id", "memory", "agent", "issued"}, ...]
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Optional

import redis

from tomc.dsl.diagnostics import Diagnostic
from tomc.runtime.connection import Database
from tomc.runtime.errors import DatabaseUnavailable, TomError

TOKENS_KEY = "tomc:tokens"
_SHAPE = re.compile(r"tomc_([0-9a-f]{12})_([A-Za-z0-9_-]{20,})")


class TokenRefused(TomError):
    """A token that is malformed, unknown or revoked (HTTP: 401), or a token id that
    `revoke` does not know."""

    def __init__(self, message: str):
        super().__init__([Diagnostic("E210", message, None, path="<token>")])


@dataclass(frozen=True)
class Grant:
    """What a verified token allows: `memory`, as `agent` (None: the memory's supervisor)."""

    memory: str
    agent: Optional[str]
    token_id: str


def from_header(authorization: Optional[str]) -> Optional[str]:
    """The token of an `Authorization: Bearer <token>` header value (RFC 6750: the scheme
    is case-insensitive), or None for a missing header, another scheme or an empty token."""
    scheme, _, token = (authorization or "").partition(" ")
    return (token.strip() or None) if scheme.lower() == "bearer" else None


def issue(db: Database, memory: str, agent: Optional[str],
          lasts_s: Optional[float] = None) -> str:
    """A new token for `agent` (None: supervisor) of `memory`; the secret is returned here
    and nowhere else. `lasts_s`: the token lapses that long after it is issued or last
    `renew`ed (a console's: killed, it stops renewing); None: until revoked. Raises
    DatabaseUnavailable if the server refuses the write."""
    token_id = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    record = {"sha256": _digest(secret), "memory": memory, "agent": agent,
              "issued": datetime.now(timezone.utc).isoformat(timespec="seconds"),
              "lasts": lasts_s, "until": None if lasts_s is None else time.time() + lasts_s}
    try:
        db.shard(TOKENS_KEY).redis.hset(TOKENS_KEY, token_id,
                                        json.dumps(record, ensure_ascii=False))
    except redis.RedisError as err:
        raise DatabaseUnavailable(f"cannot store the token: {err}") from None
    return f"tomc_{token_id}_{secret}"


def verify(db: Database, token: str) -> Grant:
    """The grant of `token`; TokenRefused if it is malformed, unknown or revoked (the digest
    is compared in constant time)."""
    match = _SHAPE.fullmatch(token.strip())
    if match is None:
        raise TokenRefused("not a tomc token (tomc_<id>_<secret>, from `tomc token issue`)")
    token_id, secret = match.groups()
    record = _record(db, token_id)
    if record is None or not hmac.compare_digest(record["sha256"], _digest(secret)):
        raise TokenRefused(f"token {token_id} is unknown or revoked")
    if _lapsed(record):
        _forget_lapsed(db, token_id)
        raise TokenRefused(f"token {token_id} lapsed (the console that issued it stopped)")
    return Grant(record["memory"], record["agent"], token_id)


def valid(db: Database, token_id: str) -> bool:
    """Whether token `token_id` is still valid (not revoked, not lapsed): what a long
    answer (the console's event stream) asks again while it runs."""
    record = _record(db, token_id)
    return record is not None and not _lapsed(record)


def renew(db: Database, token_id: str) -> None:
    """Move a lasting token's end to `lasts` seconds from now (its issuer is alive)."""
    record = _record(db, token_id)
    if record is None or record.get("lasts") is None:
        return
    record["until"] = time.time() + record["lasts"]
    try:  # only while it is there: a token revoked meanwhile stays revoked
        db.shard(TOKENS_KEY).redis.eval(_RENEW, 1, TOKENS_KEY, token_id,
                                        json.dumps(record, ensure_ascii=False))
    except redis.RedisError as err:
        raise DatabaseUnavailable(f"cannot renew the token: {err}") from None


_RENEW = ("if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then "
          "return redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) else return 0 end")


def _forget_lapsed(db: Database, token_id: str) -> None:
    try:
        db.shard(TOKENS_KEY).redis.hdel(TOKENS_KEY, token_id)
    except redis.RedisError:
        pass  # refused anyway; `list_tokens` tries again


def _lapsed(record: dict) -> bool:
    return record.get("until") is not None and record["until"] < time.time()


def revoke(db: Database, token_id: str) -> None:
    """Forget the token `token_id`: it is refused from now on. TokenRefused if unknown."""
    try:
        removed = db.shard(TOKENS_KEY).redis.hdel(TOKENS_KEY, token_id)
    except redis.RedisError as err:
        raise DatabaseUnavailable(f"cannot revoke the token: {err}") from None
    if not removed:
        raise TokenRefused(f"no token {token_id!r} (`tomc token list` lists them)")


def revoke_memory(db: Database, memory: str) -> int:
    """Revoke every token of `memory` (it is being dropped: a memory made again under its
    name starts with none); returns how many there were."""
    doomed = [row["token_id"] for row in list_tokens(db, memory)]
    try:
        return db.redis.hdel(TOKENS_KEY, *doomed) if doomed else 0
    except redis.RedisError as err:
        raise DatabaseUnavailable(f"cannot revoke the tokens of {memory}: {err}") from None


def list_tokens(db: Database, memory: Optional[str] = None) -> list[dict]:
    """Every token (of `memory`, if given) as {"token_id", "memory", "agent", "issued"},
    sorted by memory, agent and issue time; never a secret nor its digest."""
    try:
        stored = db.shard(TOKENS_KEY).redis.hgetall(TOKENS_KEY)
    except redis.RedisError as err:
        raise DatabaseUnavailable(f"cannot list tokens: {err}") from None
    rows = []
    for token_id, text in stored.items():
        record = json.loads(text)
        if _lapsed(record):
            _forget_lapsed(db, token_id)  # as good as revoked
            continue
        if memory is None or record["memory"] == memory:
            rows.append({"token_id": token_id, "memory": record["memory"],
                         "agent": record["agent"], "issued": record["issued"]})
    return sorted(rows, key=lambda r: (r["memory"], r["agent"] or "", r["issued"]))


def _record(db: Database, token_id: str) -> Optional[dict]:
    try:
        text = db.shard(TOKENS_KEY).redis.hget(TOKENS_KEY, token_id)
    except redis.RedisError as err:
        raise DatabaseUnavailable(f"cannot check the token: {err}") from None
    return None if text is None else json.loads(text)


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("ascii")).hexdigest()
