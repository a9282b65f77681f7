"""Hostile queue entries against one memory's applier (issue 35: "0 applier deaths in a fuzz
of 10,000 hostile queue entries").

    python -m eval.fuzz_applier [--entries 10000] [--seed 7] [--out DIR]

On a fresh embedded FalkorDB of its own, `tomc serve`'s appliers run in a thread and one
memory holds three agents in a room. ENTRIES entries are pushed on the memory's queue as an
agent's user could push them (RPUSH and the wake list: docs/security.md), in rounds of 250,
each round followed by one honest write that must be applied:

- junk: text that is not JSON, bytes that are not UTF-8, arrays and objects nested up to
  100,000 deep, numbers of 5,000 digits, JSON of the wrong type;
- shaped: objects with the request's fields, one of them of the wrong type or missing, a
  reply list outside the memory or another user's, a `mac` that is not the sender's;
- signed: requests the administrator signed, holding hostile text: deep parentheses, long
  lines, control characters, names of 10,000 characters, unknown agents, questions,
  declarations of thousands of agents, a policy or memory to create that is not one.

Counted: applier deaths (a thread that died, or a drain the applier logs as failed), honest
writes applied, entries left queued, entries in the dead-letter list. Writes applier-fuzz.json and applier-fuzz.md.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

from eval.results_files import DEFAULT_OUT, write_results
from tomc.api import Session, TomError
from tomc.memory import dead_letters
from tomc.memory.applier import serve_appliers
from tomc.runtime.keys import appliers_key, memory_key
from tomc.memory import submit
from tomc.runtime.connection import Database, connect

NAME = "fuzz"
ROUND = 250


def _junk(rng: random.Random) -> bytes:
    depth = rng.choice([10, 1000, 100_000])
    return rng.choice([
        b"not json",
        bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64))),
        b"[" * depth + b"]" * depth,
        b'{"a":' * depth + b"1" + b"}" * depth,
        b"9" * 5000,
        b'"a string"',
        b"null",
        json.dumps([{"id": "x"}] * 10).encode(),
    ])


def _shaped(rng: random.Random, reply_base: str) -> bytes:
    fields = {"id": uuid.uuid4().hex, "key": "k", "text": "A says x.y = 1",
              "after_step": None, "create": None, "policy": None, "incarnation": None,
              "reply": f"{reply_base}:{uuid.uuid4().hex}", "as": None, "mac": "0" * 64}
    name = rng.choice(list(fields))
    fields[name] = rng.choice([5, 1.5, True, [], {}, "x" * 10_000, None, -1, 10 ** 40])
    if rng.random() < 0.3:
        fields["reply"] = rng.choice(["tomc:appliers", "elsewhere", reply_base + "x:1",
                                      memory_key("other", "reply", "1")])
    if rng.random() < 0.3:
        fields["as"] = rng.choice(["A", "Nobody", "\u0000", "B" * 1000])
    return json.dumps(fields).encode()


HOSTILE_TEXTS = [
    lambda r: "(" * r.choice([100, 10_000]) + "A says x.y = 1",
    lambda r: "A says x.y = " + "9" * 10_000,
    lambda r: "A says " + "k" * 10_000 + ".y = 1",
    lambda r: "A tells Zed x.y = 1",
    lambda r: "ask A believes x.y",
    lambda r: "agents " + ", ".join(f"a{i}" for i in range(r.choice([10, 3000]))),
    lambda r: "A says x.y = 1\u0000\u0001\u202e",
    lambda r: "\n".join("A says x.y = 1" for _ in range(r.choice([2, 500]))),
    lambda r: "clock 1999-01-01\nA says x.y = 1",
    lambda r: "policy p { depth 9 }",
    lambda r: "".join(chr(r.randrange(32, 0x3000)) for _ in range(200)),
]


def _signed(rng: random.Random, name: str, password: str) -> bytes:
    fields = {"id": uuid.uuid4().hex, "key": rng.choice(["k", uuid.uuid4().hex]),
              "text": rng.choice(HOSTILE_TEXTS)(rng), "after_step": rng.choice(
                  [None, None, 0, 10 ** 18]),
              "create": rng.choice([None, None, "nosuchpolicy", "policy p { depth 9 }"]),
              "policy": rng.choice([None, None, "other"]), "incarnation": rng.choice(
                  [None, None, "wrong"]),
              "reply": memory_key(name, "reply", uuid.uuid4().hex), "as": None}
    body = json.dumps(fields)
    return json.dumps({**fields, "mac": submit.signature(body, password)}).encode()


class _Failed(logging.Handler):
    """Counts the drains the applier logs as failed."""

    def __init__(self, deaths: list[str]):
        super().__init__(logging.ERROR)
        self.deaths = deaths

    def emit(self, record: logging.LogRecord) -> None:
        if "drain failed" in record.getMessage():
            self.deaths.append(record.getMessage())


def run(db: Database, entries: int, seed: int = 7) -> dict:
    """Push `entries` hostile entries on memory NAME's queue in rounds, an honest write
    after each round, while appliers serve `db`; returns what was counted."""
    rng = random.Random(seed)
    deaths: list[str] = []
    hook = threading.excepthook
    threading.excepthook = lambda args: deaths.append(f"{args.exc_type.__name__}: "
                                                      f"{args.exc_value}")
    # A drain that fails is logged and tried again (tomc/memory/applier.py): a death too.
    failed = _Failed(deaths)
    logging.getLogger("tomc.memory.applier").addHandler(failed)
    stop = threading.Event()
    thread = threading.Thread(target=serve_appliers, args=(db, stop, 2), daemon=True)
    thread.start()
    started = time.perf_counter()
    try:
        while not db.redis.exists(appliers_key()):
            time.sleep(0.05)
        with Session.attach(NAME, db=db) as s:
            s.apply("agents A, B, C\nrooms r\nA, B, C enter r")
        password = db.redis.connection_pool.connection_kwargs.get("password") or ""
        queue, honest, kinds = memory_key(NAME, "queue"), 0, {"junk": 0, "shaped": 0,
                                                              "signed": 0}
        reply_base = memory_key(NAME, "reply")
        pushed = 0
        with Session.attach(NAME, db=db) as s:
            while pushed < entries:
                batch = []
                for _ in range(min(ROUND, entries - pushed)):
                    kind = rng.choice(list(kinds))
                    kinds[kind] += 1
                    batch.append(_junk(rng) if kind == "junk" else
                                 _shaped(rng, reply_base) if kind == "shaped" else
                                 _signed(rng, NAME, password))
                pushed += len(batch)
                db.redis.rpush(queue, *batch)
                submit.wake(db.redis, NAME)
                try:
                    (event,) = s.apply(f"A says honest.n{pushed} = {pushed}")
                    honest += event.text.startswith("A says honest")
                except TomError as err:  # a hostile declaration may have changed the room
                    print(f"honest write refused: {err}", file=sys.stderr)
                print(f"{pushed}/{entries} entries, {honest} honest writes applied",
                      file=sys.stderr)
            alive = thread.is_alive()
        dead = dead_letters.listed(db, NAME)
        left = db.redis.llen(queue) + db.redis.llen(memory_key(NAME, "processing"))
    finally:
        stop.set()
        thread.join(timeout=10)
        threading.excepthook = hook
        logging.getLogger("tomc.memory.applier").removeHandler(failed)
    return {"entries": entries, "seed": seed, "kinds": kinds, "applier_deaths": len(deaths),
            "deaths": deaths[:10], "honest_writes": entries // ROUND
            + bool(entries % ROUND), "honest_applied": honest,
            "dead_letters_kept": len(dead), "left_queued": left, "applier_alive": alive,
            "seconds": round(time.perf_counter() - started, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp, connect(None, Path(tmp) / "data") as db:
        found = run(db, args.entries, args.seed)
    lines = ["# Hostile queue entries against an applier (eval/fuzz_applier.py)", "",
             f"{found['entries']:,} entries (seed {found['seed']}: {found['kinds']['junk']:,}"
             f" junk, {found['kinds']['shaped']:,} shaped, {found['kinds']['signed']:,} "
             "signed with hostile text), an honest write after every 250.", "",
             "| | |", "|---|---|",
             f"| applier deaths | {found['applier_deaths']} |",
             f"| honest writes applied | {found['honest_applied']} of "
             f"{found['honest_writes']} |",
             f"| entries left queued at the end | {found['left_queued']} |",
             f"| dead-letter list (newest 1,000 kept) | {found['dead_letters_kept']} |",
             f"| seconds | {found['seconds']} |"]
    write_results(args.out, "applier-fuzz", found, "\n".join(lines))
    print("\n".join(lines))
    return 0 if found["applier_deaths"] == 0 and \
        found["honest_applied"] == found["honest_writes"] else 1


if __name__ == "__main__":
    sys.exit(main())
