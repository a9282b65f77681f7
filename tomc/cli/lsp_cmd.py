"""`tomc lsp`: the .tom language server on stdio (tomc/lsp/server.py)."""

from __future__ import annotations

from tomc.cli.extras import needs_extra


def lsp() -> None:
    """Start the .tom language server on stdin/stdout (for editors: diagnostics as you
    type, formatting, hover, go to definition, completion). README.md, "Editor support",
    shows the setup for VS Code, Neovim and Helix."""
    with needs_extra("lsp", "tomc lsp"):  # pygls loads only for this verb
        from tomc.lsp.server import main

    main()
