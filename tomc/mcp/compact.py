"""Input schemas as short as they can be and still say the same thing: a model reads every
tool's schema with every request (eval/results/mcp-tools.md measures it).

    {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null, "title": "At Step",
     "description": ...}                      (pydantic's `Optional[int] = None`)
    -> {"type": "integer", "description": ...}

An optional argument is already said by its absence from `required`; the `null` branch and
the `null` default only repeat it (the SDK still accepts an explicit null: it validates calls
with the tool's own pydantic model, not with this schema).
"""

from __future__ import annotations

from typing import Any

NULL = {"type": "null"}


def compact(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` (a tool's input schema, changed in place and returned) closed
    (`additionalProperties: false`), untitled, each optional argument without its null."""
    schema["additionalProperties"] = False
    schema.pop("title", None)  # "believesArguments": the tool's name again
    for name, argument in schema.get("properties", {}).items():
        schema["properties"][name] = _argument(argument)
    return schema


def _argument(argument: dict[str, Any]) -> dict[str, Any]:
    """One argument's schema without its title (its name again), null branch and null
    default; a lone remaining branch is merged into it (the argument's own description
    and examples win over the branch's)."""
    argument.pop("title", None)
    if "default" in argument and argument["default"] is None:
        del argument["default"]
    branches = argument.get("anyOf")
    if branches and NULL in branches:
        rest = [b for b in branches if b != NULL]
        if len(rest) == 1:
            del argument["anyOf"]
            return {**{k: v for k, v in rest[0].items() if k != "title"}, **argument}
        argument["anyOf"] = rest
    return argument
