"""Names as they appear inside graph and key names (a module of its own: the thin client
of `tomc memory apply` names a memory's keys without importing the compiler)."""

from __future__ import annotations


def graph_key(name: str) -> str:
    """A scenario or agent name as it appears inside a graph name: `%`, `:`, `~`, the glob
    characters `*?[]\\`, spaces and control characters become `%XX` (UTF-8 bytes), so that
    `:` only separates the parts of a graph name, `~` only starts a staging suffix, and an
    ACL key pattern built from a name matches that one graph (docs/falkordb.md checks 5.1, 5.8):
    no two scenarios' or agents' graphs can share a name."""
    return "".join("".join(f"%{b:02X}" for b in c.encode("utf-8"))
                   if c in "%:~*?[]\\" or c.isspace() or ord(c) < 32 or ord(c) == 127 else c
                   for c in name)
