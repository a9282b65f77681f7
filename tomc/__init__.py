"""tomc: theory-of-mind memory for teams of AI agents (README.md)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("tomc")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"
