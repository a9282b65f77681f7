"""`tomc serve --data DIR`: the embedded FalkorDB as a long-lived server that several
processes share, and the appliers that commit what they write to its memories, one per
memory (tomc/memory/applier.py; docs/storage.md)."""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import Optional

import typer

from tomc.cli.common import EXIT_BAD_INPUT, EXIT_NO_DATABASE, EXIT_OK, fail
from tomc.runtime.errors import DatabaseUnavailable
from tomc.runtime.server import (
    FSYNC_MODES,
    QUERY_MEMORY_MB,
    QUERY_TIMEOUT_S,
    EmbeddedServer,
    default_data_dir,
    default_max_memory_mb,
)

# How long `tomc serve --check` waits for PING: below a container HEALTHCHECK's timeout.
CHECK_TIMEOUT_S = 3.0


def serve(data: Optional[Path] = typer.Option(
              None, "--data", help="Data folder (default: $TOMC_DATA or ~/.local/share/tomc)."),
          port: int = typer.Option(0, "--port", min=0, max=65535,
                                   help="Also listen on HOST:PORT (default: unix socket "
                                        "only)."),
          host: str = typer.Option(
              "127.0.0.1", "--host",
              help="Address --port listens on: 0.0.0.0 for every interface (a container's "
                   "published port). TCP clients log in with the admin password."),
          socket: Optional[Path] = typer.Option(
              None, "--socket", help="Unix socket path (default: DATA/redis.sock)."),
          fsync: str = typer.Option(
              "everysec", "--fsync",
              help="everysec: a killed server loses at most the last second of acknowledged "
                   "writes; always: none (each write is on disk before it is acknowledged)."),
          query_timeout: float = typer.Option(
              QUERY_TIMEOUT_S, "--query-timeout", min=0, metavar="SECONDS",
              help="Longest any query may run, whoever sends it (an agent's own user too): "
                   "FalkorDB's TIMEOUT_MAX and TIMEOUT_DEFAULT. 0: no bound."),
          query_memory: int = typer.Option(
              QUERY_MEMORY_MB, "--query-memory", min=0, metavar="MB",
              help="Most memory any one query may take (FalkorDB's QUERY_MEM_CAPACITY). 0: no "
                   "bound."),
          max_memory: Optional[int] = typer.Option(
              None, "--max-memory", min=0, metavar="MB",
              help="Most memory the server may use (maxmemory, noeviction: when full, writes "
                   "are refused with a clear error and nothing stored is dropped). Default: "
                   "half the machine's memory. 0: no bound."),
          workers: Optional[int] = typer.Option(
              None, "--workers", min=1, max=256, metavar="N",
              help="Threads that apply the memories' writes (each holds one connection while "
                   "it applies; default: the machine's cores, at least 2)."),
          warm: Optional[int] = typer.Option(
              None, "--warm", min=0, max=100000, metavar="N",
              help="Memories kept attached between writes (each holds its state and one "
                   "connection; default 64); the rest attach again when written."),
          db: Optional[str] = typer.Option(
              None, "--db", metavar="URL",
              help="Start no FalkorDB: run only the appliers, for the memories of the server "
                   "or cluster at URL (redis+cluster://HOST:PORT,... for a cluster; "
                   "docs/deployment.md). Takes none of the server options."),
          check: bool = typer.Option(
              False, "--check",
              help="Start nothing: exit 0 if the `tomc serve` of --data answers PING, 3 if "
                   "not (a container's or a supervisor's health check). Takes only --data; "
                   "or, with --db URL, exit 0 if that server or cluster is highly available "
                   "as tomc needs it, 3 saying why not (docs/deployment.md).")
          ) -> None:
    """Serve a data folder's FalkorDB until SIGTERM or Ctrl-C, for several processes at
    once: `--db unix://SOCKET` (or `--data DIR`, which finds this server) in every other
    tomc command, Session.attach or `tomc mcp`. Writes to memories go through one applier
    per memory, run here (group commit; docs/storage.md, "The applier"). Persistence: AOF
    (`--fsync`), agents' users in DATA/users.acl. Every query is bounded in time and memory
    (`--query-timeout`, `--query-memory`; docs/security.md). The folder is kept private
    (700, files 600). Stops cleanly (the AOF is flushed). Exit 3 if it cannot start."""
    given = [name for name, value, default in (
        ("--data", data, None), ("--port", port, 0), ("--host", host, "127.0.0.1"),
        ("--socket", socket, None), ("--fsync", fsync, "everysec"),
        ("--query-timeout", query_timeout, QUERY_TIMEOUT_S),
        ("--query-memory", query_memory, QUERY_MEMORY_MB),
        ("--max-memory", max_memory, None), ("--workers", workers, None),
        ("--warm", warm, None), ("--db", db, None)) if value != default]
    if check and db is not None:
        extra = ", ".join(sorted(set(given) - {"--db"}))
        if extra:
            fail(f"--check --db checks the cluster at --db: {extra} configure a server; "
                 "drop them", EXIT_BAD_INPUT)
        _check_db(db)
    if check:
        if set(given) - {"--data"}:
            fail(f"--check only asks the server of --data whether it answers: "
                 f"{', '.join(sorted(set(given) - {'--data'}))} configure a server; drop them",
                 EXIT_BAD_INPUT)
        _check(data or default_data_dir())
    if db is not None:
        given = [name for name in given if name not in ("--workers", "--warm", "--db")]
        if given:
            from tomc.runtime.connection import shown_url
            fail(f"--db {shown_url(db)} serves appliers for a FalkorDB tomc does not start: "
                 f"{', '.join(given)} configure a server it starts; drop them, or --db",
                 EXIT_BAD_INPUT)
        _serve_appliers_only(db, workers, warm)
    if fsync not in FSYNC_MODES:
        fail(f"--fsync must be one of {', '.join(FSYNC_MODES)}, not {fsync!r}", EXIT_BAD_INPUT)
    folder = data or default_data_dir()
    if host != "127.0.0.1" and not port:
        fail(f"--host {host} needs --port (without it, only the unix socket listens)",
             EXIT_BAD_INPUT)
    try:
        # Not tied to this process: a killed `tomc serve` leaves its clients a working
        # server (docs/storage.md); SIGTERM and Ctrl-C stop it below.
        server = EmbeddedServer(folder, fsync=fsync, port=port, socket=socket, host=host,
                                query_timeout_s=query_timeout, query_memory_mb=query_memory,
                                max_memory_mb=default_max_memory_mb() if max_memory is None
                                else max_memory, tied=False)
    except ValueError as err:
        fail(f"--socket: {err}", EXIT_BAD_INPUT)
    try:
        server.start()
    except DatabaseUnavailable as err:
        fail(f"cannot serve {folder}: {err}", EXIT_NO_DATABASE)
    stopped = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopped.set())
    appliers = None
    try:
        appliers = _appliers(server, stopped, workers, warm)
        server.announce()
        where = f"unix://{server.socket_path}" + (f" and redis://{host}:{port}" if port
                                                  else "")
        typer.echo(f"tomc: serving {server.data_dir} on {where} (fsync {fsync}; queries "
                   f"bounded to {_bound(query_timeout, 's')} and {_bound(query_memory, ' MB')};"
                   f" the server to {_bound(server.max_memory_mb, ' MB')}); Ctrl-C or SIGTERM "
                   "stops", err=True)
        typer.echo(f"tomc: the admin password is in {server.data_dir / 'admin.secret'} "
                   "(used by itself for the unix socket; for TCP: redis://default:PASSWORD@"
                   "HOST:PORT)", err=True)
        while not stopped.wait(1.0):
            if server.process.poll() is not None:
                fail(f"FalkorDB exited (code {server.process.returncode}); see "
                     f"{server.data_dir / 'redis.log'}", EXIT_NO_DATABASE)
    finally:
        stopped.set()
        if appliers is not None:
            appliers.join(timeout=10)
        server.stop()
    typer.echo("tomc: stopped", err=True)
    raise typer.Exit(EXIT_OK)


def _serve_appliers_only(url: str, workers: Optional[int], warm: Optional[int]) -> None:
    """`tomc serve --db URL`: the appliers of the memories at URL until SIGTERM or Ctrl-C,
    then exit 0 (exit 3 if URL does not answer). On a cluster, one applier waits on every
    memory's queue (tomc/memory/applier.py `serve_cluster_appliers`)."""
    from urllib.parse import parse_qs, urlsplit

    import redis

    from tomc.memory.applier import serve_appliers, serve_cluster_appliers
    from tomc.runtime.connection import from_url, shown_url

    try:
        database = from_url(url)
        database.redis.ping()
    except (DatabaseUnavailable, redis.RedisError) as err:
        fail(f"cannot serve appliers for {shown_url(url)}: {err}", EXIT_NO_DATABASE)
    stopped = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopped.set())
    for problem in _problems(database, url):
        typer.echo(f"tomc: warning: {problem}", err=True)
    if database.clustered and "wait_replicas" not in parse_qs(urlsplit(url).query):
        try:
            replicated = len(database.nodes(replicas=True)) > len(database.nodes())
        except DatabaseUnavailable as err:
            fail(f"cannot serve appliers for {shown_url(url)}: {err}", EXIT_NO_DATABASE)
        if replicated:
            # A failover must not lose what an applier acknowledged (docs/deployment.md).
            database.options.wait_replicas = 1
            typer.echo("tomc: each commit waits for 1 replica (wait_replicas=0 in the URL "
                       "waits for none)", err=True)
    kind = "cluster" if database.clustered else "server"
    typer.echo(f"tomc: serving the appliers of the memories on the {kind} at "
               f"{shown_url(url)}; Ctrl-C or SIGTERM stops", err=True)
    try:
        if database.clustered:
            serve_cluster_appliers(database, stopped)
        else:
            serve_appliers(database, stopped, **_pool(workers, warm))
    except (DatabaseUnavailable, redis.RedisError) as err:
        fail(f"lost {shown_url(url)}: {err}", EXIT_NO_DATABASE)
    finally:
        database.close()
    typer.echo("tomc: stopped", err=True)
    raise typer.Exit(EXIT_OK)


def _problems(database, url: str) -> list[str]:
    """What keeps the cluster at `url` from failing over safely (tomc/runtime/
    cluster_health.py); exit 3 when it cannot be asked."""
    from tomc.runtime.cluster_health import problems
    from tomc.runtime.connection import shown_url

    try:
        return problems(database)
    except DatabaseUnavailable as err:
        fail(f"cannot check {shown_url(url)}: {err}", EXIT_NO_DATABASE)


def _check_db(url: str) -> None:
    """`tomc serve --check --db URL`: exit 0 if the server or cluster at URL answers and
    nothing keeps it from failing over safely, else say why and exit 3."""
    import redis

    from tomc.runtime.connection import from_url, shown_url

    try:
        database = from_url(url)
        database.redis.ping()
    except (DatabaseUnavailable, redis.RedisError) as err:
        fail(f"unhealthy: {shown_url(url)} does not answer: {err}", EXIT_NO_DATABASE)
    try:
        found = _problems(database, url)
    finally:
        database.close()
    if found:
        fail("unhealthy:\n" + "\n".join(f"  {p}" for p in found), EXIT_NO_DATABASE)
    kind = "cluster" if database.clustered else "server"
    typer.echo(f"healthy: the {kind} at {shown_url(url)} answers" +
               (", every master has a replica in sync and full coverage is off"
                if database.clustered else ""))
    raise typer.Exit(EXIT_OK)


def _check(folder: Path) -> None:
    """`tomc serve --check`: exit 0 if the server of `folder` answers PING, else print why
    and exit 3. It connects as any client of the folder does (its socket, its admin secret),
    never starts a server, and waits at most CHECK_TIMEOUT_S."""
    import redis

    from tomc.runtime.control import control_client
    from tomc.runtime.server import SECRET, folder_secret, serving

    try:
        path = serving(folder)
    except DatabaseUnavailable as err:
        fail(f"unhealthy: {err}", EXIT_NO_DATABASE)
    if path is None:
        fail(f"unhealthy: no `tomc serve` runs on {folder} (no serving.json)", EXIT_NO_DATABASE)
    client = control_client(path, folder_secret(folder / SECRET), CHECK_TIMEOUT_S)
    try:
        client.ping()
    except (redis.RedisError, OSError) as err:
        fail(f"unhealthy: the server of {folder} does not answer PING on {path}: {err}",
             EXIT_NO_DATABASE)
    finally:
        client.close()
    typer.echo(f"tomc: the server of {folder} answers", err=True)
    raise typer.Exit(EXIT_OK)


def _pool(workers: Optional[int], warm: Optional[int]) -> dict:
    """serve_appliers' pool arguments given (the others its defaults)."""
    return {k: v for k, v in (("workers", workers), ("warm", warm)) if v is not None}


def _bound(value: float, unit: str) -> str:
    return "no limit" if not value else f"{value:g}{unit}"


def _appliers(server: EmbeddedServer, stop: threading.Event, workers: Optional[int],
              warm: Optional[int]) -> threading.Thread:
    """The thread that runs one applier per memory written to (tomc/memory/applier.py)
    until `stop`: writers submit to it instead of committing themselves."""
    from tomc.memory.applier import serve_appliers
    from tomc.runtime.connection import from_socket

    db = from_socket(server.socket_path, password=server.secret)

    def run() -> None:
        try:
            serve_appliers(db, stop, **_pool(workers, warm))
        finally:
            db.close()

    thread = threading.Thread(target=run, name="appliers", daemon=True)
    thread.start()
    return thread
