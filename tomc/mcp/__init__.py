"""`tomc mcp`: a named memory served over the Model Context Protocol (the official `mcp` SDK).

- server.py: attach the memory, build the MCPServer (supervisor or agent mode), serve it
  over stdio or streamable HTTP on loopback;
- supervisor.py: the supervisor's tools (record events, ask every question, check text);
- agent.py: an agent's tools (its own mind only, and speaking as itself);
- results.py: tool results (the `--json` fields) and tool errors (diagnostics);
- syntax.py: the .tom syntax `record` takes, served as a resource;
- sdk.py: the SDK's server on its v2 (MCPServer) or v1 (FastMCP, 1.24+) API.
"""
