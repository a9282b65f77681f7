"""`tomc fmt FILE...`: canonical formatting (being written)."""

import typer


def fmt(files: list[str] = typer.Argument(..., help=".tom files to format")) -> None:
    """Rewrite files in canonical form."""
    raise typer.Exit(2)
