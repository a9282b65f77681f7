"""The .tom language server (`tomc lsp`): diagnostics, formatting, hover, go to definition
and completion over LSP on stdio (pygls)."""
