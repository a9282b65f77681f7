"""Errors of the runtime layer."""


class DatabaseUnavailable(Exception):
    """FalkorDB could not be started or reached; the CLI prints one line and exits 3."""
