"""What a memory takes, and the header a new one starts from: the text-level half of
opening a memory, shared by the API (tomc/api.py), the applier of `tomc serve`
(tomc/memory/applier.py) and tomc/memory/environment.py (which builds what opens it). Every
refusal is a TomError whose diagnostic says what to write instead.

    header = header_for("support", "default", inline=True)   # .tom text of an empty scenario
    text, parsed = statements_of("Maya enters chat")        # (text, AST statements)
    refuse(parsed, text, in_memory=True)                    # E144 for what apply does not take
"""

from __future__ import annotations

from typing import Sequence, Union

from tomc.dsl import ast, build
from tomc.dsl.diagnostics import Diagnostic, DiagnosticError
from tomc.dsl.formatter import format_file, format_statement
from tomc.dsl.parser import parse, parse_statements, read_source
from tomc.engine.live import CHANGES
from tomc.memory import catalog
from tomc.rules import shipped_names
from tomc.runtime.errors import TomError

# What `apply` takes: .tom text, one AST statement, or several.
Statements = Union[str, ast.Node, Sequence[ast.Node]]


def statements_of(statements: Statements, origin: str = "<apply>") -> tuple[str, list]:
    """(text for diagnostics, AST statements) from .tom text or AST; TomError otherwise.
    `origin` names the text in diagnostics (`<apply>`, `<ask>`, `<check>`)."""
    if isinstance(statements, str):
        try:
            parsed = parse_statements(statements, origin)
        except DiagnosticError as err:
            raise TomError(err.diagnostics, statements) from None
        if not parsed:  # empty, blank or comments only: nothing to do is bad input
            raise TomError([Diagnostic(
                "E160", "no statement: the text is empty or holds only comments", None,
                origin, hint='e.g. "Maya enters chat" (a comment starts with #)')],
                statements)
        return statements, parsed
    items = [statements] if isinstance(statements, ast.Node) else statements
    if isinstance(items, (list, tuple)) and items and all(isinstance(s, ast.Node)
                                                          for s in items):
        return "", list(items)
    raise TomError([Diagnostic(
        "E143", f"expected .tom text or AST statements, got {type(statements).__name__}",
        None, build.PATH, hint='e.g. "Maya enters chat"')])


def refuse(parsed: list, text: str, in_memory: bool) -> None:
    """TomError (E144) for the first statement `apply` does not take: questions, clock
    lines, procedures, and in a memory peeks and distractions."""
    refused = [s for s in parsed if not isinstance(s, CHANGES) or isinstance(s, ast.Clock)
               or (in_memory and isinstance(s, (ast.Peek, ast.Distracted)))]
    if refused:
        raise TomError([Diagnostic(
            "E144", f"{'a memory' if in_memory else 'apply'} takes events and "
            f"agents/rooms lines, not `{format_statement(refused[0])}`", refused[0].span,
            "<apply>", hint=refused_hint(refused[0]))], text)


def name_text(name: object) -> str:
    try:
        return build.name(name, "memory or scenario name").text
    except DiagnosticError as err:
        raise TomError(err.diagnostics) from None


def refused_hint(statement) -> str:
    """What to do instead of applying `statement` (E144)."""
    if isinstance(statement, (ast.Peek, ast.Distracted)):
        return ("peeks and distractions belong in scenario files: in a memory, another "
                "writer's event could come between one and the event it modifies")
    if isinstance(statement, ast.Clock):
        return ("write `at T` at the end of each event instead of a clock line (in a "
                "memory, another writer's event could come between it and yours)")
    if isinstance(statement, ast.Procedure):
        return "declare procedures in the policy (or the scenario file)"
    return "ask questions with ask()"


def header_for(name: str, policy: str, inline: bool = False) -> str:
    """The .tom text of an empty scenario `name` under `policy` (a shipped name, or a .tom
    file defining one policy). With `inline`, a file's policy is written out in full (a
    memory must not depend on a file that may change)."""
    if not isinstance(policy, str):
        raise TomError([Diagnostic("E143", f"policy must be a policy name or a .tom file path, "
                                   f"got {policy!r}", None, build.PATH)])
    if policy in shipped_names() or not policy.endswith(".tom"):
        if policy not in shipped_names():
            raise TomError([Diagnostic("E104", f"unknown policy `{policy}`", None, "<policy>",
                                       hint="a shipped policy (" + ", ".join(shipped_names())
                                       + ") or a .tom file")])
        return catalog.header_source(name, ast.Policy(name=ast.Name(text=policy)), True)
    try:
        source = read_source(policy)
        file = parse(source, policy)
    except DiagnosticError as err:
        raise TomError(err.diagnostics) from None
    found = [i for i in file.items if isinstance(i, ast.Policy)]
    if len(found) != 1:
        raise TomError([Diagnostic("E104", f"`{policy}` must define exactly one policy", None,
                                   policy)])
    if inline:
        return catalog.header_source(name, found[0], False)
    return format_file(ast.File(items=[ast.UsePolicy(target=ast.Name(text=policy, quoted=True)),
                                       ast.Scenario(name=ast.Name(text=name))]))


def same_policy(asked: str, stored: str) -> bool:
    """Whether `policy=` given to attach names the memory's policy (by name, or a file
    defining a policy of that name)."""
    if not asked.endswith(".tom"):
        return asked == stored
    try:
        file = parse(read_source(asked), asked)
    except DiagnosticError:
        return False
    return any(isinstance(i, ast.Policy) and i.name.text == stored for i in file.items)
