"""Start-up and packaging conventions (issue 20, items 3 and 5), checked structurally, never
by timing (the machine is shared; eval/bench.py measures the start-up):

- each command's module, and the optional extras' packages (hypothesis, the MCP SDK,
  pygls, the model vendors' SDKs), load only when a command needs them: `tomc --version` and `tomc memory apply`
  import none of them;
- a command whose extra is missing says which extra to install and exits 2 (the package is
  hidden by a finder placed first on sys.meta_path: the process runs as it would in an
  environment without it);
- `--help` still lists every command; shell completion, -v/-vv and --log-level/TOMC_LOG work;
- the parser's analysed grammar is cached in the user's cache folder, and a damaged cache
  file is rebuilt.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest

from conftest import REPO, SCENARIOS
from tomc.cli.main import COMMANDS
from tomc.memory.applier import serve_appliers
from tomc.runtime.keys import appliers_key
from tomc.runtime.connection import connect

HEAVY = ("hypothesis", "mcp", "pygls", "lsprotocol", "rich", "anthropic", "openai")
EXTRAS = ["mcp", "pygls", "hypothesis", "anthropic", "openai"]  # hidden: no extra installed

# Runs the CLI in this process, then prints (on the last stderr line) which of the
# top-level modules in HIDDEN were imported; the ones in HIDE are made missing first.
RUN = """
import atexit, json, sys
HIDE = set(json.loads(sys.argv[1])); WATCH = set(json.loads(sys.argv[2]))

class Missing:
    def find_spec(self, name, path=None, target=None):
        if any(name == hidden or name.startswith(hidden + ".") for hidden in HIDE) \
                or name.split(".")[0] in HIDE:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, Missing())
atexit.register(lambda: print("IMPORTED " + json.dumps(sorted(
    {m.split(".")[0] for m in sys.modules} & WATCH)), file=sys.stderr))
sys.argv = ["tomc", *sys.argv[3:]]
from tomc.cli.main import main
main()
"""


def tomc(*args, hide=(), watch=HEAVY, env=None):
    """(exit code, stdout, stderr without the IMPORTED line, modules of `watch` imported)."""
    done = subprocess.run([sys.executable, "-c", RUN, json.dumps(list(hide)),
                           json.dumps(list(watch)), *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NO_COLOR": "1", **(env or {})})
    lines = done.stderr.splitlines()
    imported = json.loads(lines[-1].removeprefix("IMPORTED ")) if lines and \
        lines[-1].startswith("IMPORTED ") else None
    return done.returncode, done.stdout, "\n".join(lines[:-1]), imported


@pytest.fixture(scope="module")
def db_url(db) -> str:
    return db.url


def test_version_imports_no_command_module_and_no_extra():
    code, out, _, imported = tomc("--version", watch=(*HEAVY, "tomc.cli.common", "redis"))
    assert code == 0 and out.startswith("tomc ")
    assert imported == []


def test_memory_apply_imports_no_extra_and_no_rich(db_url):
    code, out, err, imported = tomc("memory", "apply", "startup", "--db", db_url,
                                    "agents A, B", "A tells B x.y = 1")
    assert code == 0, err
    assert "memory startup at step" in out
    assert imported == []


@pytest.fixture(scope="module")
def applier_url(tmp_path_factory):
    """A server of its own with its appliers running, as `tomc serve` runs them."""
    with connect(None, tmp_path_factory.mktemp("startup") / "data") as db:
        stop = threading.Event()
        thread = threading.Thread(target=serve_appliers, args=(db, stop, 1))
        thread.start()
        while not db.redis.exists(appliers_key()):
            time.sleep(0.05)
        try:
            yield db.url
        finally:
            stop.set()
            thread.join()


def test_memory_apply_through_an_applier_loads_neither_the_compiler_nor_pydantic(applier_url):
    # the applier checks and compiles; the client only submits text and prints the step.
    # pydantic alone would cost 0.1 s of start-up (and typer 0.29 loads it: pyproject.toml).
    for events in (["agents A, B"], ["A tells B x.y = 1"]):
        code, out, err, imported = tomc("memory", "apply", "startup", "--db", applier_url,
                                        *events, watch=(*HEAVY, "pydantic", "lark", "jinja2"))
        assert code == 0, err
        assert imported == []
    assert "memory startup at step 1" in out


def test_help_lists_every_command_in_order_without_the_extras():
    code, out, _, _ = tomc("--help", hide=EXTRAS)
    assert code == 0
    listed = [line.split()[1] for line in out.splitlines()
              if line.startswith("│ ") and len(line.split()) > 2 and line.split()[1] in COMMANDS]
    assert listed == list(COMMANDS)


@pytest.mark.parametrize("args, extra, command, hidden", [
    (["mcp", "--memory", "m"], "mcp", "tomc mcp", "mcp"),
    (["lsp"], "lsp", "tomc lsp", "pygls"),
    (["diff", "--policy", "default", "--policy", "hitom", "--search", "5"], "review",
     "tomc diff --search", "hypothesis"),
])
def test_a_missing_extra_is_named_with_its_install_command(args, extra, command, hidden):
    code, out, err, _ = tomc(*args, hide=[hidden])
    assert code == 2, err
    assert err.startswith(f"tomc: '{command}' needs the {extra} extra: "
                          f"pip install 'tomc[{extra}]'")
    assert "Traceback" not in err


def test_commands_without_extras_run_without_them():
    code, out, err, imported = tomc("check", SCENARIOS / "sally_anne.tom",
                                    hide=EXTRAS)
    assert code == 0, err
    assert imported == []


def test_shell_completion_script_and_completions():
    # `--show-completion` detects the shell from the parent processes (none under a
    # detached runner); the completion variable names it, as the installed script does.
    code, out, err, _ = tomc(env={"_TOMC_COMPLETE": "source_bash"})
    assert code == 0 and "_TOMC_COMPLETE=complete_bash" in out, err
    env = {"_TOMC_COMPLETE": "complete_bash", "COMP_WORDS": "tomc memory ap", "COMP_CWORD": "2"}
    code, out, _, imported = tomc(env=env)
    assert code == 0 and out.split() == ["apply"]
    assert imported == []  # completing `memory` loads that command's module, nothing else


def test_verbose_logs_the_connection_and_very_verbose_each_statement(db_url):
    code, _, quiet, _ = tomc("memory", "list", "--db", db_url)
    assert code == 0 and quiet == ""
    code, _, info, _ = tomc("-v", "memory", "list", "--db", db_url)
    assert code == 0
    assert "INFO tomc.runtime.connection: connecting to FalkorDB at unix://" in info
    assert "GRAPH." not in info
    code, _, debug, _ = tomc("memory", "apply", "logged", "--db", db_url, "agents A, B",
                             "A tells B x.y = 1", env={"TOMC_LOG": "debug"})
    assert code == 0, debug
    assert "DEBUG tomc.runtime.connection: GRAPH.QUERY tomem:{logged}:" in debug


def test_a_log_level_that_does_not_exist_is_bad_input():
    code, _, err, _ = tomc("--log-level", "loud", "check", SCENARIOS / "sally_anne.tom")
    assert code == 2  # typer's error box may wrap the message: check its two halves
    assert "'loud' is not one of" in err and "debug, info, warning, error" in err


def test_the_grammar_cache_is_written_and_a_damaged_one_rebuilt(tmp_path):
    env = {"XDG_CACHE_HOME": str(tmp_path)}
    code, _, err, _ = tomc("check", SCENARIOS / "sally_anne.tom", env=env)
    assert code == 0, err
    cache = tmp_path / "tomc" / "grammar.lark-cache"
    assert cache.stat().st_size > 0
    cache.write_bytes(cache.read_bytes()[:100])  # cut short, as by a full disk
    code, _, err, _ = tomc("check", SCENARIOS / "sally_anne.tom", env=env)
    assert code == 0, err
    assert cache.stat().st_size > 100  # rewritten whole


def test_an_extra_of_a_version_too_old_is_named_apart_from_a_missing_one():
    """An SDK installed without a module tomc imports (an older mcp) is not called
    missing: the message says to upgrade it."""
    code, out, err, _ = tomc("mcp", "--memory", "m", hide=["mcp.server.transport_security"])
    assert code == 2, err
    assert err.startswith("tomc: 'tomc mcp' needs a newer mcp than the ")
    assert "pip install --upgrade 'tomc[mcp]'" in err and "Traceback" not in err

