"""What the HTTP API costs over the Session it calls, and how soon the console hears of a
write (issue 24), measured in one run on an embedded FalkorDB:

- `GET /believes` through uvicorn on loopback (a fresh keep-alive connection per run of
  requests) beside `Session.believes` in process: the ratio is the HTTP layer's price;
- `POST /events` beside `Session.apply`;
- a write by `Session.apply` in this process until the `step` event arrives on
  `GET /stream` (the stream polls the revision every 200 ms: expect 0-200 ms plus a read).

`python -m eval.http [--runs N] [--out eval/results]` prints the table and writes http.json
and http.md.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

from eval.results_files import DEFAULT_OUT, write_results
from eval.serving import served
from tomc.api import Session
from tomc.runtime import tokens
from tomc.runtime.connection import connect

STORY = ("agents Maya, Billing, Finance\nrooms chat, ops\nMaya, Billing enter chat\n"
         "Billing says refund.status = approved\nFinance enters ops\n"
         "Finance sets refund.status = rejected")


def _median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 2)


def measure(runs: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp, connect(None, Path(tmp) / "data") as db:
        with Session.attach("bench", db=db) as session:
            session.apply(STORY)
        token = tokens.issue(db, "bench", None)
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        with served(db, ["bench"]) as base, Session.attach("bench", db=db) as session:
            where = urlparse(base)
            client = http.client.HTTPConnection(where.hostname, where.port, timeout=60)

            def call(method: str, path: str, body: str | None = None) -> float:
                start = time.perf_counter()
                client.request(method, f"/memories/bench{path}", body=body, headers=headers)
                reply = client.getresponse()
                reply.read()
                assert reply.status == 200, reply.status
                return time.perf_counter() - start

            def direct(work) -> float:
                start = time.perf_counter()
                work()
                return time.perf_counter() - start

            read_http = [call("GET", "/believes?chain=Maya&key=refund.status")
                         for _ in range(runs)]
            read_direct = [direct(lambda: session.believes("Maya", "refund.status"))
                           for _ in range(runs)]
            write_http = [call("POST", "/events", json.dumps(
                {"statements": f"Billing says n{i}.x = {i}"})) for i in range(runs)]
            write_direct = [direct(lambda i=i: session.apply(f"Billing says m{i}.x = {i}"))
                            for i in range(runs)]
            heard = _stream_latency(base, token, session, min(runs, 20))
    return {"runs": runs,
            "believes_http_ms": _median_ms(read_http),
            "believes_session_ms": _median_ms(read_direct),
            "believes_ratio": round(statistics.median(read_http)
                                    / statistics.median(read_direct), 2),
            "apply_http_ms": _median_ms(write_http),
            "apply_session_ms": _median_ms(write_direct),
            "apply_ratio": round(statistics.median(write_http)
                                 / statistics.median(write_direct), 2),
            "stream_median_ms": _median_ms(heard), "stream_max_ms": round(max(heard) * 1000, 1)}


def _stream_latency(base: str, token: str, session: Session, count: int) -> list[float]:
    """Seconds from each write's return to its `step` event on the stream."""
    where = urlparse(base)
    stream = http.client.HTTPConnection(where.hostname, where.port, timeout=60)
    stream.request("GET", f"/memories/bench/stream?access_token={token}")
    reply = stream.getresponse()
    arrived: list[float] = []
    ready = threading.Event()

    def listen() -> None:
        for line in reply:
            if line.startswith(b"data: "):
                arrived.append(time.perf_counter())
                ready.set()
                if len(arrived) > count:
                    return

    threading.Thread(target=listen, daemon=True).start()
    ready.wait(30)  # the first event: the revision now
    heard = []
    for i in range(count):
        ready.clear()
        session.apply(f"Finance says s{i}.x = {i}")
        wrote = time.perf_counter()
        assert ready.wait(30), "no step event"
        heard.append(arrived[-1] - wrote)
        time.sleep(0.05)
    stream.close()
    return heard


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    found = measure(args.runs)
    table = "\n".join(["| measure | value |", "| --- | --- |",
                       *(f"| {k} | {v} |" for k, v in found.items())])
    write_results(args.out, "http", found,
                  "# The HTTP API over the Session (python -m eval.http)\n\n" + table)
    print(table)


if __name__ == "__main__":
    main()
