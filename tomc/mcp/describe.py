"""Registering tools, resources and prompts with their docstrings as descriptions, dedented
(a model reads the description as given; the SDK passes `__doc__` through verbatim).
On the SDK's v1, a tool runs in a worker thread, as v2 runs it."""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

import anyio

from tomc.mcp.sdk import SDK_V2, MCPServer


def tool(server: MCPServer, **options: Any) -> Callable[[Callable], Callable]:
    """`server.tool(**options)` with the function's docstring, dedented, as description."""
    def register(fn: Callable) -> Callable:
        run = fn if SDK_V2 or inspect.iscoroutinefunction(fn) else _in_a_thread(fn)
        return server.tool(description=inspect.cleandoc(fn.__doc__ or ""), **options)(run)
    return register


def _in_a_thread(fn: Callable) -> Callable:
    """`fn` as a coroutine that runs it in a worker thread: v1's FastMCP calls a plain
    function on its event loop, so a `record` waiting on its applier held every other call
    (tests/test_mcp.py). Its signature is `fn`'s, annotations resolved (the SDK builds the
    tool's input schema from it)."""
    @functools.wraps(fn)
    async def threaded(*args: Any, **kwargs: Any) -> Any:
        return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs))
    threaded.__signature__ = inspect.signature(fn, eval_str=True)
    return threaded


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
