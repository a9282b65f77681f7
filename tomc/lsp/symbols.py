"""What an editor asks about a parsed .tom file: the declaration of a name, the node under
the cursor, the names to complete. Pure functions over the AST (tomc/dsl/ast.py); positions
are the AST's 1-based line and column.

    index = Symbols.of(file, path)             # ast.File of a document -> its declarations
    index.at(line, column) -> Target | None    # the name or key under the cursor
    index.hover(target) -> str | None          # markdown: the declaration (and cardinality)
    index.definition(target) -> Decl | None    # where it is declared
    index.names(line) -> list[Decl]            # every declared name, for completion
    index.keys(line) -> {key: declaring line}  # keys declared or used, for completion
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional

from tomc.dsl import ast
from tomc.dsl.policies import load_policy
from tomc.rules import shipped_policy_path


@dataclass(frozen=True)
class Decl:
    """A declared name: `kind` is agent, room, source, policy, procedure or key (a
    `predicate` line); `span` is the declared name's; `statement` the declaring line's text;
    `detail` what hover adds (a source's authority, a key's cardinality, a procedure's
    keys)."""

    kind: str
    name: str
    span: ast.Span
    statement: str
    scenario: Optional[str] = None
    detail: Optional[str] = None
    path: Optional[str] = None  # None: this document; else the policy file declaring it


@dataclass(frozen=True)
class Target:
    """The name (`kind` "name") or key (`kind` "key", `text` canonical) under the cursor, and
    the scenario it sits in."""

    kind: str
    text: str
    span: ast.Span
    scenario: Optional[str]


def _contains(span: Optional[ast.Span], line: int, column: int) -> bool:
    if span is None:
        return False
    after_start = (line, column) >= (span.line, span.column)
    before_end = (line, column) <= (span.end_line, span.end_column)
    return after_start and before_end


def _nodes(node) -> Iterator[ast.Node]:
    """`node` and every node below it."""
    if isinstance(node, ast.Node):
        yield node
        for name in type(node).model_fields:
            yield from _nodes(getattr(node, name))
    elif isinstance(node, list):
        for item in node:
            yield from _nodes(item)


def _procedure(procedure: ast.Procedure, lines: list[str], scenario: Optional[str],
               path: Optional[str]) -> Decl:
    """A procedure's declaration; hover lists its steps' keys."""
    line = procedure.span.line if procedure.span else 0
    statement = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    keys = ", ".join(dict.fromkeys(r.key.text for r in procedure.requires))
    return Decl("procedure", procedure.name.text, procedure.name.span, statement, scenario,
                detail=f"steps on {keys}", path=path)


class Symbols:
    """The declarations of one parsed document (and of the policy it uses)."""

    def __init__(self, file: ast.File, source: str, path: str):
        self.file = file
        self.lines = source.split("\n")
        self.decls: list[Decl] = []
        for item in file.items:
            if isinstance(item, ast.Scenario):
                self._scenario(item)
            elif isinstance(item, ast.Policy):
                self._policy(item, None, self.lines)
        self._used_policy(path)

    def _line(self, span: Optional[ast.Span], lines: list[str]) -> str:
        return lines[span.line - 1].strip() if span and 0 < span.line <= len(lines) else ""

    def _scenario(self, scenario: ast.Scenario) -> None:
        for stmt in scenario.statements:
            if isinstance(stmt, (ast.Agents, ast.Rooms)):
                kind = "agent" if isinstance(stmt, ast.Agents) else "room"
                for name in stmt.names:
                    self.decls.append(Decl(kind, name.text, name.span,
                                           self._line(stmt.span, self.lines),
                                           scenario.name.text))
            elif isinstance(stmt, ast.Procedure):
                self.decls.append(_procedure(stmt, self.lines, scenario.name.text, None))

    def _policy(self, policy: ast.Policy, path: Optional[str], lines: list[str]) -> None:
        self.decls.append(Decl("policy", policy.name.text, policy.name.span,
                               self._line(policy.span, lines), path=path))
        for source in policy.sources:
            self.decls.append(Decl("source", source.name.text, source.name.span,
                                   self._line(source.span, lines),
                                   detail=f"authority {source.authority}", path=path))
        for procedure in policy.procedures:
            self.decls.append(_procedure(procedure, lines, None, path))
        for predicate in policy.predicates:
            self.decls.append(Decl("key", predicate.key.text, predicate.key.span,
                                   self._line(predicate.span, lines),
                                   detail=f"cardinality {predicate.cardinality}"
                                   + (", each agent's own note (agent_only)"
                                      if predicate.agent_only else ""), path=path))

    def _used_policy(self, path: str) -> None:
        """The declarations of a policy the file uses from elsewhere (a policy file or a
        shipped one), so hover and definition reach its sources and keys too."""
        uses = [i for i in self.file.items if isinstance(i, ast.UsePolicy)]
        inline = {i.name.text: i for i in self.file.items if isinstance(i, ast.Policy)}
        if not uses or uses[0].target.text in inline:
            return
        policy, problems = load_policy(uses[0], inline, Path(path).parent, path)
        if policy is None or problems or policy.span is None:
            return
        target = uses[0].target
        where = (Path(path).parent / target.text if target.quoted
                 else shipped_policy_path(target.text))
        lines = where.read_text(encoding="utf-8").split("\n") if where and where.is_file() else []
        self._policy(policy, str(where), lines)

    def scenario_at(self, line: int) -> Optional[str]:
        """The name of the scenario whose block holds `line`."""
        for item in self.file.items:
            if isinstance(item, ast.Scenario) and item.span and \
                    item.span.line <= line <= item.span.end_line:
                return item.name.text
        return None

    def at(self, line: int, column: int) -> Optional[Target]:
        """The key or name under the cursor (a key wins over the subject name inside it)."""
        scenario = self.scenario_at(line)
        found: Optional[Target] = None
        for node in _nodes(self.file.items):
            if isinstance(node, ast.Key) and _contains(node.span, line, column):
                return Target("key", node.text, node.span, scenario)
            if isinstance(node, ast.Name) and _contains(node.span, line, column):
                found = Target("name", node.text, node.span, scenario)
        return found

    def definition(self, target: Target) -> Optional[Decl]:
        """The declaration `target` refers to: in its own scenario first."""
        kinds = ("key",) if target.kind == "key" else ("agent", "room", "source", "policy",
                                                        "procedure")
        matches = [d for d in self.decls if d.kind in kinds and d.name == target.text]
        own = [d for d in matches if d.scenario in (None, target.scenario)]
        ordered = [d for d in own if d.scenario] + [d for d in own if not d.scenario] + matches
        return ordered[0] if ordered else None

    def hover(self, target: Target) -> Optional[str]:
        """Markdown for the hover of `target`: what it is and where it is declared; a key
        shows its cardinality (one unless a `predicate` line says many)."""
        decl = self.definition(target)
        if target.kind == "key":
            if decl is None:
                return (f"**key** `{target.text}`: cardinality one (the default; no "
                        "`predicate` line declares it)")
            return (f"**key** `{target.text}`: {decl.detail}\n\n"
                    f"declared {self._where(decl)}: `{decl.statement}`")
        if decl is None:
            return None
        extra = f", {decl.detail}" if decl.detail else ""
        scope = f" of scenario `{decl.scenario}`" if decl.scenario else ""
        return (f"**{decl.kind}** `{decl.name}`{scope}{extra}\n\n"
                f"declared {self._where(decl)}: `{decl.statement}`")

    @staticmethod
    def _where(decl: Decl) -> str:
        place = f" of {decl.path}" if decl.path else ""
        return f"at line {decl.span.line}{place}"

    def keys(self, line: Optional[int] = None) -> dict[str, Optional[str]]:
        """The keys worth completing at `line`: those declared by a `predicate` line (with
        its text) and those the scenario at `line` (every scenario, without one) writes or
        asks about, in order of first mention."""
        scenario = self.scenario_at(line) if line else None
        found: dict[str, Optional[str]] = {d.name: d.statement for d in self.decls
                                           if d.kind == "key"}
        for item in self.file.items:
            if isinstance(item, ast.Scenario) and scenario in (None, item.name.text):
                for node in _nodes(item.statements):
                    if isinstance(node, ast.Key):
                        found.setdefault(node.text, None)
        return found

    def names(self, line: Optional[int] = None) -> list[Decl]:
        """Declared names worth completing at `line`: those of its scenario and of the
        policy, each once."""
        scenario = self.scenario_at(line) if line else None
        seen: dict[tuple[str, str], Decl] = {}
        for d in self.decls:
            if d.kind != "policy" and (scenario is None or d.scenario in (None, scenario)):
                seen.setdefault((d.kind, d.name), d)
        return list(seen.values())


