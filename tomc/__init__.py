"""tomc: theory-of-mind memory for teams of AI agents (README.md)."""


def __getattr__(name: str) -> str:
    """`tomc.__version__`, read from the installed metadata on first use: importlib.metadata
    costs 30-45 ms of every command's start-up, and only --version, SARIF, the LSP and the
    HTTP API print the version (eval/startup.py)."""
    if name != "__version__":
        raise AttributeError(f"module 'tomc' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("tomc")
    except PackageNotFoundError:  # run from a source tree that was never installed
        found = "0+unknown"
    globals()["__version__"] = found
    return found
