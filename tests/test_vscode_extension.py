"""The VS Code extension (editors/vscode/) as a language client: its manifest, its build
(`npm ci`, then `vsce package`, which type-checks and bundles through `vscode:prepublish`)
and the .vsix that makes, and `tomc lsp` driven under node by the extension's own launch
code (src/server.ts) and protocol module (test/lsp-session.ts).

The build runs in a copy of the extension under tmp_path, so node_modules never lands in the
checkout. It needs node and npm (skipped without them) and the npm registry or npm's cache
(skipped when neither answers). A real VS Code is not started: editors/vscode/README.md,
"Tests", says why."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import REPO

EXTENSION = REPO / "editors" / "vscode"
MANIFEST = json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))
NPM = shutil.which("npm")
NODE = shutil.which("node")
# What the build makes or fetches: not copied from a developer's checkout into the test's.
BUILT = {"node_modules", "dist", "out"}
# npm's codes for a registry it cannot reach (offline, no DNS, proxy down).
OFFLINE = re.compile(r"\b(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH)\b")


def test_the_manifest_starts_tomc_lsp_as_a_language_client():
    settings = MANIFEST["contributes"]["configuration"]["properties"]
    assert settings["tom.server.path"]["default"] == "tomc"
    assert settings["tom.server.args"]["default"] == ["lsp"]
    assert "tomc[lsp]" in settings["tom.server.path"]["markdownDescription"]
    assert MANIFEST["main"] == "./dist/extension.js"
    assert MANIFEST["activationEvents"] == ["onLanguage:tom"]
    assert MANIFEST["scripts"]["vscode:prepublish"] == "npm run compile"
    assert "vscode-languageclient" in MANIFEST["dependencies"]
    # A folder's own settings must not pick the command VS Code runs until it is trusted.
    untrusted = MANIFEST["capabilities"]["untrustedWorkspaces"]
    assert untrusted["restrictedConfigurations"] == ["tom.server.path", "tom.server.args"]
    # vscode-languageclient sets the lowest VS Code it runs in; the manifest must not claim less.
    lock = json.loads((EXTENSION / "package-lock.json").read_text(encoding="utf-8"))
    client = lock["packages"]["node_modules/vscode-languageclient"]
    assert client["engines"]["vscode"] == MANIFEST["engines"]["vscode"]
    assert lock["packages"][""]["dependencies"] == MANIFEST["dependencies"]
    assert lock["packages"][""]["devDependencies"] == MANIFEST["devDependencies"]
    assert (EXTENSION / "LICENSE").read_text() == (REPO / "LICENSE").read_text()


def test_the_build_output_stays_out_of_git():
    for built in ("node_modules/x", "dist/extension.js", "out/lsp-session.js",
                  "tom-language-0.1.0.vsix"):
        ignored = subprocess.run(["git", "check-ignore", "-q", f"editors/vscode/{built}"],
                                 cwd=REPO)
        assert ignored.returncode == 0, built
    assert subprocess.run(["git", "check-ignore", "-q", "editors/vscode/package-lock.json"],
                          cwd=REPO).returncode == 1


def _npm(args: list[str], cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([NPM, *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """A copy of the extension after `npm ci` and `npm run package` (`vsce package`)."""
    if NPM is None or NODE is None:
        pytest.skip("node and npm are not installed: the extension cannot be built here")
    folder = tmp_path_factory.mktemp("vscode") / "extension"
    # LICENSE is a symlink into the repository: copied as the file it points to.
    shutil.copytree(EXTENSION, folder, ignore=lambda _, names: [
        n for n in names if n in BUILT or n.endswith(".vsix")])
    installed = _npm(["ci", "--prefer-offline", "--no-audit", "--no-fund"], folder)
    if installed.returncode != 0 and OFFLINE.search(installed.stdout + installed.stderr):
        pytest.skip("npm ci: the npm registry is unreachable and npm's cache lacks packages")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    packaged = _npm(["run", "package"], folder)
    assert packaged.returncode == 0, packaged.stdout + packaged.stderr
    return folder


@pytest.mark.slow
def test_vsce_packages_the_bundled_client(built):
    """The .vsix holds the manifest, grammar, configuration, README, LICENSE and one bundle
    that requires nothing but node's own modules and `vscode`: node_modules is not in it."""
    vsix = built / f"{MANIFEST['name']}-{MANIFEST['version']}.vsix"
    with zipfile.ZipFile(vsix) as archive:
        names = set(archive.namelist())
        bundle = archive.read("extension/dist/extension.js").decode()
        packaged = json.loads(archive.read("extension/package.json"))
    assert {"extension/package.json", "extension/dist/extension.js",
            "extension/syntaxes/tom.tmLanguage.json", "extension/language-configuration.json",
            "extension/readme.md", "extension/LICENSE.txt"} <= names
    assert not [n for n in names if n.startswith(("extension/node_modules/", "extension/src/",
                                                  "extension/test/"))], sorted(names)
    assert packaged["main"] == "./dist/extension.js"
    builtins = set(subprocess.run(
        [NODE, "-p", "require('module').builtinModules.join('\\n')"],
        capture_output=True, text=True, check=True).stdout.split())
    required = set(re.findall(r'require\("([^"]+)"\)', bundle))
    assert "vscode" in required
    assert required - {"vscode"} <= builtins | {f"node:{b}" for b in builtins}, required


@pytest.mark.slow
def test_tomc_lsp_through_the_extensions_launch_code(built, tmp_path):
    """test/lsp-session.ts: the extension's defaults (`tomc lsp`) found on PATH as the
    extension finds them, initialize, diagnostics for an opened document, completion, hover,
    go to definition, shutdown; and the message for a command that is not there."""
    bin_dir = Path(sys.executable).parent  # where this venv's `tomc` is
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("TOM_SERVER_PATH", None)
    session = _npm(["run", "test:lsp", "--", str(tmp_path)], built, env)
    assert session.returncode == 0, session.stdout + session.stderr
    assert f"ok: {bin_dir / 'tomc'} lsp initialized" in session.stdout
    for check in ("a missing command says: install tomc[lsp]",
                  "diagnostics for the open document: E101@5, E102@5",
                  "completion after `enters`: room", "hover on Anne", "go to definition of room",
                  "shutdown and exit 0"):
        assert f"ok: {check}" in session.stdout, session.stdout
