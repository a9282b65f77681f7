"""How a session's search reaches meaning (docs/language.md, "Search by meaning"): the
embedder the environment configures, and where the vectors live for its engine.

    recalled(view, engine, "money back?", ["Maya"], everything=False, limit=5,
             mode=None, about=None)  -> SearchResult

The mode defaults to `hybrid` when an embedder is configured (TOMC_EMBED_PROVIDER:
tomc/embedders.py), else `text`; `meaning` or `hybrid` without one is refused (E205). On
FalkorDB the vectors are kept in each graph searched, in its vector index
(tomc/runtime/meaning_index.py); on the reference, in this process (one store for every
session of it, so a text is embedded once). After an applier's writes, `embed_beside`
embeds the new facts on a thread of its own, so a search rarely has any left to embed.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Optional, Sequence

from tomc.analysis.recall import MODES, WORLD, InProcess, recall
from tomc.analysis.search import SearchResult
from tomc.analysis.view import BeliefView
from tomc.compiler.plan import GraphNames
from tomc.dsl import build
from tomc.dsl.diagnostics import Diagnostic
from tomc.embedders import EmbedError, configured
from tomc.engine.falkordb import FalkorEngine
from tomc.runtime.connection import Database
from tomc.runtime.errors import TomError
from tomc.runtime.meaning_index import GraphVectors

log = logging.getLogger(__name__)
_MADE: dict = {}  # the reference's vectors, by (model, text): one store per process


def recalled(view: BeliefView, engine, text: str, minds: Sequence[str], everything: bool,
             limit: int, mode: Optional[str], about: Optional[str]) -> SearchResult:
    """Search `text` in `mode` (None: the default above) over the mind graphs of `minds`
    (and the truth and events, if `everything`), near the subject `about` if given. Raises
    TomError (E205) when meaning is asked for and no embedder can give it."""
    if mode is not None and mode not in MODES:
        raise TomError([Diagnostic("E143", f"search mode must be one of {', '.join(MODES)}, "
                                   f"got {mode!r}", None, build.PATH)])
    try:
        embedder = configured()
    except EmbedError as err:
        if mode == "text":
            embedder = None
        else:
            raise TomError([Diagnostic("E205", str(err), None, build.PATH)]) from None
    mode = mode or ("hybrid" if embedder is not None else "text")
    if mode != "text" and embedder is None:
        raise TomError([Diagnostic(
            "E205", f"search by {mode} needs an embedding model: set TOMC_EMBED_PROVIDER "
            "(local, or openai with TOMC_EMBED_MODEL and TOMC_EMBED_BASE_URL), or search "
            "with --mode text", None, build.PATH)])
    if isinstance(engine, FalkorEngine):
        vectors, graphs = GraphVectors(engine.db), {
            **{a: engine.graphs.mind(a) for a in minds}, WORLD: engine.graphs.world}
    else:
        vectors, graphs = InProcess(view, _MADE), None
    try:
        return recall(view, text, minds, truth=everything, events=everything, limit=limit,
                      mode=mode, embedder=embedder, vectors=vectors, graphs=graphs,
                      about=about)
    except EmbedError as err:
        raise TomError([Diagnostic("E205", str(err), None, build.PATH)]) from None


def embed_beside(db: Database, graphs: GraphNames, step: int) -> None:
    """After an applier's writes reach `step`: the memory's graphs (`graphs`: every mind
    and the world) are embedded up to it on a thread of their own, so that a search finds
    nothing left to embed and no write waits for a model. Nothing when no embedder is
    configured. Coalesced: a memory written again before its turn is embedded once, to its
    latest step."""
    if os.environ.get("TOMC_EMBED_PROVIDER", "").strip():
        _BESIDE.due(db, [graphs.world, *graphs.minds.values()], step)


class _Beside:
    """The one daemon thread that embeds beside the appliers (`embed_beside`); a failure
    (no model, a server gone) is logged, and the next search embeds what is missing."""

    def __init__(self):
        self._lock = threading.Lock()
        self._due: dict[str, tuple[Database, list[str], int]] = {}
        self._wake = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def due(self, db: Database, graphs: list[str], step: int) -> None:
        with self._lock:
            self._due[graphs[0]] = (db, graphs, step)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="tomc-embed",
                                                daemon=True)
                self._thread.start()
        self._wake.set()

    def _run(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            with self._lock:
                due, self._due = self._due, {}
            for db, graphs, step in due.values():
                try:
                    embedder = configured()
                    vectors = GraphVectors(db)
                    for graph in graphs:
                        vectors.sync(embedder, graph, step)
                except Exception as err:  # noqa: BLE001 (the next search embeds instead)
                    log.warning("embedding %s up to step %d failed: %s", graphs[0], step, err)


_BESIDE = _Beside()
