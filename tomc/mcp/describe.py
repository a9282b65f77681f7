"""Registering tools, resources and prompts with their docstrings as descriptions, dedented
(a model reads the description as given; the SDK passes `__doc__` through verbatim)."""

from __future__ import annotations

import inspect
from typing import Any, Callable

from tomc.mcp.sdk import MCPServer


def tool(server: MCPServer, **options: Any) -> Callable[[Callable], Callable]:
    """`server.tool(**options)` with the function's docstring, dedented, as description."""
    def register(fn: Callable) -> Callable:
        return server.tool(description=inspect.cleandoc(fn.__doc__ or ""), **options)(fn)
    return register


def resource(server: MCPServer, uri: str, **options: Any) -> Callable[[Callable], Callable]:
    """`server.resource(uri, **options)`, described by the dedented docstring."""
    def register(fn: Callable) -> Callable:
        return server.resource(uri, description=inspect.cleandoc(fn.__doc__ or ""),
                               **options)(fn)
    return register


def prompt(server: MCPServer, **options: Any) -> Callable[[Callable], Callable]:
    """`server.prompt(**options)`, described by the dedented docstring."""
    def register(fn: Callable) -> Callable:
        return server.prompt(description=inspect.cleandoc(fn.__doc__ or ""), **options)(fn)
    return register
