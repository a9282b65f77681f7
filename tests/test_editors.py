"""The editor set-ups the README gives, run for real: its Neovim `init.lua` block in a
headless Neovim (skipped where none is installed), which must start `tomc lsp`, attach it
to a .tom buffer and receive its diagnostics."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

NVIM = shutil.which("nvim")

# Prints, once the server's diagnostics for the buffer arrive (or after 60 s), the number
# of LSP clients attached to it and the diagnostics' codes, then quits.
PROBE = """
local buf = vim.api.nvim_get_current_buf()
vim.wait(60000, function() return #vim.diagnostic.get(buf) > 0 end, 100)
local codes = {}
for _, d in ipairs(vim.diagnostic.get(buf)) do table.insert(codes, d.code) end
table.sort(codes)
local clients = 0  -- vim.lsp.get_clients since 0.10, buf_get_clients before
for _ in pairs(vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = buf })
               or vim.lsp.buf_get_clients(buf)) do clients = clients + 1 end
io.stdout:write(string.format("filetype=%s clients=%d codes=%s\\n", vim.bo.filetype,
  clients, table.concat(codes, ",")))
vim.cmd("qa!")
"""


def _readme_lua() -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("**Neovim**"):]
    return re.search(r"```lua\n(.*?)```", section, re.S)[1]


@pytest.mark.skipif(NVIM is None, reason="no nvim installed")
def test_the_readme_neovim_config_attaches_tomc_lsp(tmp_path):
    (tmp_path / "init.lua").write_text(_readme_lua(), encoding="utf-8")
    (tmp_path / "probe.lua").write_text(PROBE, encoding="utf-8")
    scenario = tmp_path / "demo.tom"
    scenario.write_text("scenario demo {\n  agents A\n  B enters room\n}\n", encoding="utf-8")
    bin_dir = Path(sys.executable).parent  # where this venv's `tomc` is
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path / "data"),
           "XDG_STATE_HOME": str(tmp_path / "state")}
    result = subprocess.run(
        [NVIM, "--headless", "-n", "-i", "NONE", "-u", str(tmp_path / "init.lua"),
         str(scenario), "-c", f"luafile {tmp_path / 'probe.lua'}"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert "filetype=tom clients=1 codes=E101,E102" in result.stdout, (
        result.stdout + result.stderr)
