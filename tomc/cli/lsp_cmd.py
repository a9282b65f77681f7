"""`tomc lsp`: the .tom language server on stdio (tomc/lsp/server.py)."""

from __future__ import annotations


def lsp() -> None:
    """Start the .tom language server on stdin/stdout (for editors: diagnostics as you
    type, formatting, hover, go to definition, completion). README.md, "Editor support",
    shows the setup for VS Code, Neovim and Helix."""
    from tomc.lsp.server import main  # pygls loads only for this verb

    main()
