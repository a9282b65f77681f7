"""How much of a model's context `tools/list` takes: both MCP servers (the supervisor's and
an agent's, `tomc mcp --agent Maya`) started over stdio and listed by the official SDK's
client, as a model's host would; the answer measured as JSON in characters and tokens, and
split into its parts (tool descriptions, argument descriptions, examples, `anyOf`).

    python -m eval.mcp_tools --label after [--out eval/results]

Tokens are counted by `tiktoken` (cl100k_base) when it is installed with that encoding
already cached (no download is attempted), else approximated as characters / 4; each row
says which. A run adds its `--label` row to NAME.json in the output folder, keeping the
other labels (so `before` and `after` are measured by the same code).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from eval.results_files import DEFAULT_OUT, write_results

NAME = "mcp-tools"
PARTS = ("description", "examples", "anyOf")


def tokenizer() -> tuple[str, Callable[[str], int]]:
    """(name, count): cl100k_base if tiktoken has it cached (offline), else characters/4."""
    try:
        import os
        import tiktoken
        os.environ.setdefault("TIKTOKEN_OFFLINE", "1")
        encoding = tiktoken.get_encoding("cl100k_base")  # raises when it would download
        return "tiktoken cl100k_base", lambda text: len(encoding.encode(text))
    except Exception:  # not installed, or the encoding not cached: no download here
        return "characters/4 (approximation)", lambda text: -(-len(text) // 4)


async def listed(data: Path, *options: str) -> list[dict[str, Any]]:
    """tools/list of `tomc mcp --memory toolsize --data DATA OPTIONS`, as sent (wire names,
    no nulls)."""
    tomc = Path(sys.executable).with_name("tomc")
    command = [str(tomc)] if tomc.exists() else [sys.executable, "-m", "tomc"]
    params = StdioServerParameters(command=command[0], args=[
        *command[1:], "mcp", "--memory", "toolsize", "--data", str(data), *options])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        tools = (await client.list_tools()).tools
    return [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in tools]


def measure(tools: list[dict[str, Any]], count: Callable[[str], int]) -> dict[str, Any]:
    """{"tools", "characters", "tokens", "tool_descriptions", "argument_descriptions",
    "examples", "anyOf"}: sizes of the JSON text (parts in characters)."""
    text = json.dumps(tools)
    parts = dict.fromkeys(PARTS, 0)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in parts:
                    parts[key] += len(json.dumps(value))
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
    walk([t.get("inputSchema", {}) for t in tools])
    described = sum(len(json.dumps(t.get("description", ""))) for t in tools)
    return {"tools": len(tools), "characters": len(text), "tokens": count(text),
            "tool_descriptions": described, "argument_descriptions": parts["description"],
            "examples": parts["examples"], "anyOf": parts["anyOf"]}


def run() -> dict[str, dict[str, Any]]:
    """Both servers measured, on a fresh embedded memory with agents Maya and Ben."""
    name, count = tokenizer()
    with tempfile.TemporaryDirectory(prefix="tomc-mcp-tools-") as folder:
        data = Path(folder)
        supervisor = anyio.run(listed, data, "--create")
        from tomc.api import Session  # (the supervisor created it; the agent needs Maya)
        with Session.attach("toolsize", data_dir=data) as session:
            session.apply("agents Maya, Ben")
        agent = anyio.run(listed, data, "--agent", "Maya")
    return {server: {**measure(tools, count), "tokenizer": name}
            for server, tools in (("supervisor", supervisor), ("agent Maya", agent))}


def markdown(document: dict[str, Any]) -> str:
    rows = ["# tools/list size (`python -m eval.mcp_tools`)", "",
            "What a model reads before its first call: the JSON of `tools/list` as the "
            "official SDK client receives it over stdio (wire names, no nulls), written by "
            "`json.dumps`. Parts are characters of that text. Tokens: `tiktoken` "
            "cl100k_base when it is installed with its encoding cached, else characters/4, "
            "an approximation (JSON often runs nearer 3 characters a token); the tokenizer "
            "column says which.", "",
            "| run | server | tools | characters | tokens | tokenizer | tool descriptions "
            "| argument descriptions | examples | anyOf |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for label, servers in document["runs"].items():
        for server, m in servers.items():
            rows.append(f"| {label} | {server} | {m['tools']} | {m['characters']} | "
                        f"{m['tokens']} | {m['tokenizer']} | {m['tool_descriptions']} | "
                        f"{m['argument_descriptions']} | {m['examples']} | {m['anyOf']} |")
    rows += ["", *(f"- {label}: {note}" for label, note in document.get("notes", {}).items()
                   if note)]
    return "\n".join(rows) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", default="now", help="the row's name (e.g. before, after)")
    parser.add_argument("--note", default="", help="what the run measured (its commit)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    previous = args.out / f"{NAME}.json"
    document = json.loads(previous.read_text()) if previous.exists() else {"runs": {}}
    document["runs"][args.label] = run()
    document.setdefault("notes", {})[args.label] = args.note
    write_results(args.out, NAME, document, markdown(document))
    print(markdown(document))


if __name__ == "__main__":
    main()
