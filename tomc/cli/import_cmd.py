"""`tomc import hitom DATA.json -o DIR` (being written)."""

import typer


def hitom(data: str = typer.Argument(..., help="Hi-ToM_data.json")) -> None:
    """Turn Hi-ToM stories into .tom files."""
    raise typer.Exit(2)
