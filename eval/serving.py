"""`tomc http`'s app on a free loopback port, in a thread of this process, for as long as
a block runs: what the browser tests and the screenshots point Chromium at.

    with served(database, ["support"]) as base:    # base: "http://127.0.0.1:PORT"
        ...
"""

from __future__ import annotations

import socket
import threading
import time
from contextlib import contextmanager
from typing import Iterator, Optional, Sequence

import uvicorn

from tomc.runtime.connection import Database
from tomc.web.app import create_app


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def served(db: Database, memories: Optional[Sequence[str]] = None) -> Iterator[str]:
    """The app over `db` on 127.0.0.1, until the block ends (SSE streams are cut then)."""
    port = free_port()
    config = uvicorn.Config(create_app(db, memories), host="127.0.0.1", port=port,
                            log_level="warning", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the HTTP server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
