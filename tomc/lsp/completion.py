"""What fits at the cursor: the keywords the grammar takes there and, where it takes a name,
the declared names of the kind that goes there (agents after `expect`, `>`, `handoff A ->`;
rooms after `enters`, `in`; keys after `believes`; sources after `from`; ...).

    complete(source, line, column, symbols) -> list[Candidate]   # 1-based, code points

The keywords come from Lark's interactive parser: the text before the cursor (the lines
above it as syntax recovery leaves them, so an error above does not end completion) is
lexed and fed to the LALR parser, whose `accepts()` are the terminals that may come next.
Where a name may come, the tokens before the cursor on its line say which kind: statements
are one per line, and a name's kind is set by the keyword before it (tomc/dsl/grammar.lark).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from lark import Token
from lark.exceptions import UnexpectedInput

from tomc.dsl.parser import next_terminals, recovered_text, words_of
from tomc.lsp.symbols import Symbols
from tomc.rules import shipped_names


@dataclass(frozen=True)
class Candidate:
    """One completion: `kind` is keyword, agent, room, source, key, procedure or policy;
    `detail` the declaring line (for names)."""

    label: str
    kind: str
    detail: Optional[str] = None


# The kind of name that follows a keyword (the token before the cursor). A keyword that
# declares a new name (`agents`, `rooms`, `scenario`, `source`, ...) maps to None: nothing
# declared fits there.
_AFTER = {
    "expect": "agent", "ask": "agent", ">": "agent", "handoff": "agent", "->": "agent",
    "tells": "agent", "common_ground": "agent", "context_for": "agent",
    "talking_to": "agent", "for": "agent", "via": "agent", "explain": "agent",
    "enter": "room", "enters": "room", "exit": "room", "exits": "room",
    "believes": "key", "truth": "key", "who_knows": "key", "requires": "key", "sets": "key",
    "says": "key", "announces": "key", "retracts": "key", "claim": "key",
    "plan_announcements": "key", "predicate": "key",
    "from": "source", "ready": "procedure",
}
# Keys sit after a name here: `A tells B KEY`, `explain A > B KEY`.
_KEY_AFTER_NAME = ("tells", "explain")


def complete(source: str, line: int, column: int, symbols: Optional[Symbols]) -> list[Candidate]:
    """The candidates at (line, column): the keywords that fit, then the names."""
    lines = source.split("\n")
    if not 0 < line <= len(lines):
        return []
    typed = lines[line - 1][:column - 1]
    word = re.search(r"\w*$", typed)[0]
    before = _lines_above(source, lines, line) + typed[:len(typed) - len(word)]
    try:
        tokens, accepted = next_terminals(before)
    except UnexpectedInput:  # the line itself is wrong before the cursor: nothing fits
        return []
    tokens = [t for t in tokens if t.line == line and t.type != "_NL"]
    found = [Candidate(w, "keyword") for w in sorted(_keywords(accepted))]
    if accepted & {"NAME", "STRING"}:
        kind = _name_kind(tokens)
        found += _names(kind, line, symbols) if kind else []
    return found


def _lines_above(source: str, lines: list[str], line: int) -> str:
    """The lines above `line`, ending in a newline, as syntax recovery leaves them (with
    their errors blanked) when it gets past them; else as written."""
    recovered = recovered_text(source)
    above = (recovered.split("\n") if recovered else lines)[:line - 1]
    return "".join(text + "\n" for text in above)


def _keywords(accepted: set[str]) -> set[str]:
    """The keyword texts among the terminals `accepted` (word alternations included)."""
    return {word for name in accepted for word in words_of(name)}


def _name_kind(tokens: list[Token]) -> Optional[str]:
    """The kind of name that goes after `tokens` (those before the cursor on its line)."""
    values = [str(t) for t in tokens]
    if not values:
        return "agent"  # an event starts with its agents: `A, B enter r`, `A moves ...`
    last, previous = values[-1], values[-2] if len(values) > 1 else None
    if tokens[-1].type in ("NAME", "STRING"):  # a key after `tells B`, `explain A > B`
        start = len(tokens) - 1
        while start > 1 and values[start - 1] == ">":
            start -= 2
        return "key" if start > 0 and values[start - 1] in _KEY_AFTER_NAME else None
    if last == "," or last == "{":
        return _list_kind(values)
    if last == "policy" and values[0] == "use":
        return "policy"
    if last == "in":  # `in ROOM: ...`, `... in ROOM` (a claim's audience); not `is in C`
        return None if previous == "is" else "room"
    if last == "by":  # `claim ... by AGENT`, `plan_announcements K by AGENT`
        return {"contested": None, "supported": "source"}.get(previous, "agent")
    if last == "to":  # a claim's audience `to A, B`, not `moves X to C`
        return "agent" if values[0] == "claim" else None
    if last == ":":  # `in ROOM: KEY = V`, `{A > B: KEY}`
        return "key"
    return _AFTER.get(last)


def _list_kind(values: list[str]) -> Optional[str]:
    """The kind of the next item of the list or set the cursor is in."""
    if "{" in values:
        if "believes" in values or "truth" in values:
            return None  # a set of values: `expect A believes k = {v, w}`
        return "agent" if any(v in values for v in ("who_knows", "tells", "false_beliefs")) \
            else "key"
    start = len(values)
    while start > 0 and values[start - 1] not in _AFTER and values[start - 1] not in (
            "agents", "rooms", "to", "common_ground", "by", "contested"):
        start -= 1
    if start == 0:
        return "agent"  # `A, B enter r`
    head = values[start - 1]
    if head == "by":  # `contested by V, W` (values), `supported by S, T` (sources)
        return {"contested": None, "supported": "source"}.get(values[start - 2], "agent")
    return {"to": "agent", "common_ground": "agent"}.get(
        head, None if head in ("agents", "rooms", "contested") else _AFTER.get(head))


def _names(kind: str, line: int, symbols: Optional[Symbols]) -> list[Candidate]:
    """The declared names of `kind` that fit at `line` (its scenario's, and the policy's)."""
    if kind == "policy":
        inline = [d.name for d in symbols.decls if d.kind == "policy"] if symbols else []
        return [Candidate(n, "policy") for n in dict.fromkeys([*inline, *shipped_names()])]
    if symbols is None:
        return []
    if kind == "key":
        return [Candidate(k, "key", detail) for k, detail in symbols.keys(line).items()]
    kinds = ("source", "agent") if kind == "source" else (kind,)  # an agent may be a source
    return [Candidate(d.name, d.kind, d.statement) for d in symbols.names(line)
            if d.kind in kinds]


__all__ = ["Candidate", "complete"]
