"""The official MCP SDK's server on either major version: v2 (`MCPServer`) or v1 from 1.24
(`FastMCP`, the same server under its old name), so that tomc installs beside packages that
still require `mcp<2`, such as langchain-mcp-adapters (README.md, "Agents over MCP").

The rest of tomc/mcp/ uses only what both versions have: the server's `tool`, `resource`
and `prompt` decorators, and the protocol types (`CallToolResult`, `ToolAnnotations`, ...)
built with their wire names (`structuredContent`, `isError`, `readOnlyHint`): v1's fields
are named so, and v2 accepts them as aliases of its snake_case fields.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, TextContent, ToolAnnotations

from tomc.dsl.diagnostics import Diagnostic, did_you_mean
from tomc.mcp.compact import compact

try:
    from mcp.server.mcpserver import MCPServer
    SDK_V2 = True
except ModuleNotFoundError as err:
    if err.name != "mcp.server.mcpserver":  # no SDK at all: the mcp extra is missing
        raise
    from mcp.server.fastmcp import FastMCP as MCPServer
    SDK_V2 = False

__all__ = ["LOOPBACK_HOSTS", "CallToolResult", "ClosedServer", "MCPServer", "SDK_V2",
           "TextContent", "ToolAnnotations", "new_server", "run"]

# The Host names of the loopback interface, answered by default (DNS rebinding).
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")


class ClosedServer(MCPServer):
    """The SDK's server with closed tool arguments: each tool's input schema says
    `additionalProperties: false` (and is compacted: tomc/mcp/compact.py), and a call
    naming an argument the tool does not take is refused as bad input (E143, tomc/mcp/results.py), naming the closest one: the SDK
    would drop it silently (`believes` with `at: 3` answered for now)."""

    async def list_tools(self, *args, **kwargs):
        for tool in self._tool_manager.list_tools():
            compact(tool.parameters)  # closed, and no longer than it needs to be
        return await super().list_tools(*args, **kwargs)

    async def call_tool(self, name: str, arguments: dict[str, Any], *args, **kwargs):
        tool = self._tool_manager.get_tool(name)
        if tool is not None:
            taken = tool.parameters.get("properties", {})
            unknown = sorted(set(arguments or {}) - set(taken))
            if unknown:
                from tomc.mcp.results import EXIT_BAD_INPUT, failure  # (it needs the API)

                return failure("bad_input", f"tool `{name}` takes no argument "
                               + ", ".join(f"`{u}`" for u in unknown), EXIT_BAD_INPUT,
                               [unknown_argument(name, u, taken) for u in unknown])
        return await super().call_tool(name, arguments, *args, **kwargs)


def unknown_argument(tool: str, name: str, taken: Sequence[str]) -> Diagnostic:
    """E143 for argument `name` of a call of `tool`, which takes only `taken`: the closest
    of them, or the list."""
    # (a short name is a prefix of the one meant: `at` for `at_step`, too far for difflib)
    prefixed = sorted(t for t in taken if t.startswith(name) or name.startswith(t))
    close = f"did you mean `{prefixed[0]}`?" if len(prefixed) == 1 \
        else did_you_mean(name, taken) if taken else None
    listed = ("its arguments: " + ", ".join(f"`{t}`" for t in sorted(taken))) if taken \
        else "it takes no arguments"
    hint = f"{close} ({listed})" if close and close.startswith("did you mean") else listed
    return Diagnostic("E143", f"tool `{tool}` takes no argument `{name}`", None, f"<{tool}>",
                      hint=hint)


def new_server(name: str, title: str, instructions: str) -> MCPServer:
    """A server (closed tool arguments: `ClosedServer`) that logs warnings only (stdio
    carries the protocol; logs go to stderr). `title` (the name shown to people) is given
    where the SDK takes one: v2 only."""
    if SDK_V2:
        return ClosedServer(name, title=title, instructions=instructions, log_level="WARNING")
    return ClosedServer(name, instructions=instructions, log_level="WARNING")


def run(server: MCPServer, http_port: Optional[int] = None,
        gate: Optional[Callable] = None, host: str = "127.0.0.1",
        hosts: Optional[Sequence[str]] = LOOPBACK_HOSTS) -> None:
    """Serve on stdio, or streamable HTTP on http://HOST:PORT/mcp (v1 takes the address as
    settings, v2 as arguments), its ASGI app wrapped in `gate(app)` (the bearer token
    check: tomc/mcp/bearer.py) when given, answering only requests whose Host header (and
    Origin, if sent) names one of `hosts` at any port (None: any)."""
    if http_port is None:
        server.run("stdio")
        return
    import uvicorn  # a dependency of the SDK's HTTP transport, on both versions

    security = _security(hosts)
    if SDK_V2:
        app = server.streamable_http_app(host=host, transport_security=security)
    else:
        server.settings.host, server.settings.port = host, http_port
        server.settings.transport_security = security
        app = server.streamable_http_app()
    uvicorn.Server(uvicorn.Config(gate(app) if gate else app, host=host, port=http_port,
                                  log_level="warning")).run()


def _security(hosts: Optional[Sequence[str]]) -> TransportSecuritySettings:
    """The SDK's DNS-rebinding check for `hosts` (each at any port, or none), and the
    browser origins on them; off for None (any Host: a server on every interface that was
    given no names)."""
    if hosts is None:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    names = [form for host in hosts for form in (host, f"{host}:*")]
    return TransportSecuritySettings(
        allowed_hosts=names,
        allowed_origins=[f"{scheme}://{name}" for scheme in ("http", "https") for name in names])
