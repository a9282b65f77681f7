"""AST -> canonical .tom text, for `tomc fmt`.

The canonical form: one statement per line; two spaces of indentation inside `policy` and
`scenario` blocks and four for the rules under an `on CLASS:` header; a blank line between
top-level items, before each section of a policy, and where a scenario passes from
declarations to events to queries. A policy's statements come out in a fixed order: depth,
trust, sources, predicates, then the sections. One agent `enters`/`exits`, several `enter`/
`exit`.

A name is printed bare when it is an identifier that is not a word of the grammar, and
quoted otherwise: the lexer takes any grammar word that may follow a name for that keyword
(`Sally tells Anne to = 1` does not parse), so `"to"` must be quoted. Values are printed as
they were written: numbers and dates as is, strings quoted, names bare.

Comments are kept: each one goes before the statement that followed it in the source
(indented like it), wherever the canonical order puts that statement (a policy's procedure
keeps its comments), and a comment that ended a statement's line still ends that line.
Blank lines are the formatter's own, but for one: a blank line (or several) between two
statements of one group of a scenario (two phases of a story's events) stays, as one.

The guarantee (docs/semantics.md section 5, invariant 6): for every AST `a` the parser can build,
`parse(format_file(a))` is the same program as `a`, and formatting is idempotent.
"""

from __future__ import annotations

import re
from importlib import resources
from typing import Optional

from tomc.dsl import ast

_IDENTIFIER = re.compile(r"[^\W\d]\w*")


def _grammar_words() -> frozenset[str]:
    """Every word written as a literal in grammar.lark (`"enter"`, `"credulous"`, ...)."""
    grammar = resources.files("tomc.dsl").joinpath("grammar.lark").read_text(encoding="utf-8")
    return frozenset(re.findall(r'"(\w+)"', grammar))


# A name equal to one of these may be read as the keyword, so it is always quoted.
_KEYWORDS = _grammar_words()

_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


# A line of output and the source line of the node it prints (None for blank lines and for
# parts of a node, such as a policy's depth, that keep no position): comments are woven in
# by these anchors.
Line = tuple[str, Optional[int]]


def format_file(file: ast.File) -> str:
    """The canonical text of a parsed file (empty for a file with no items or comments)."""
    lines: list[Line] = []
    commented = {c.line for c in file.comments if not c.trailing}
    for item in file.items:
        if lines:
            lines.append(("", None))
        lines += _item(item, commented)
    text = "\n".join(_with_comments(lines, file.comments))
    return text + "\n" if text else ""


def _with_comments(lines: list[Line], comments: list[ast.Comment]) -> list[str]:
    """Each comment before the line printing the first node after it in the source (the
    smallest anchor at or after it: the output may order nodes otherwise), indented like
    that line; a trailing comment at the end of its node's line (or, when its node keeps
    no position, before the next node's); comments after the last node at the end."""
    anchored = sorted((anchor, index) for index, (_, anchor) in enumerate(lines)
                      if anchor is not None)
    before: dict[int, list[str]] = {}
    trailing: dict[int, str] = {}
    last: list[str] = []
    for comment in sorted(comments, key=lambda c: c.line):
        same = [index for anchor, index in anchored if anchor == comment.line]
        if comment.trailing and same and same[0] not in trailing:
            trailing[same[0]] = comment.text
            continue
        after = [index for anchor, index in anchored if anchor >= comment.line]
        if after:
            before.setdefault(after[0], []).append(comment.text)
        else:
            last.append(comment.text)
    out: list[list[str]] = []  # [code, trailing comment or ""]
    for index, (text, _) in enumerate(lines):
        indent = text[:len(text) - len(text.lstrip())]
        indent += "  " if text.strip() == "}" else ""  # inside the block it closes
        out += [[indent + comment, ""] for comment in before.get(index, [])]
        out.append([text, trailing.get(index, "")])
    out += [[comment, ""] for comment in last]
    return _align(out)


def _align(lines: list[list[str]]) -> list[str]:
    """Trailing comments of consecutive lines start in one column, two spaces after the
    longest of those lines."""
    out: list[str] = []
    run: list[list[str]] = []
    for line in [*lines, ["", ""]]:
        if line[1]:
            run.append(line)
            continue
        width = max((len(code) for code, _ in run), default=0)
        out += [f"{code.ljust(width)}  {comment}" for code, comment in run]
        run = []
        out.append(line[0])
    return out[:-1]


def _item(item, commented: set[int]) -> list[Line]:
    if isinstance(item, ast.UsePolicy):
        return [(f"use policy {_name(item.target)}", _line(item))]
    if isinstance(item, ast.Policy):
        return _block("policy", item, _policy_lines(item))
    return _block("scenario", item, _scenario_lines(item, commented))


def _line(node: ast.Node) -> Optional[int]:
    return _line_of(node.span)


def _line_of(span: Optional[ast.Span]) -> Optional[int]:
    return span.line if span else None


def _block(keyword: str, node: ast.Policy | ast.Scenario, lines: list[Line]) -> list[Line]:
    body = [(f"  {text}" if text else "", anchor) for text, anchor in lines]
    end = node.span.end_line if node.span else None
    return [(f"{keyword} {_name(node.name)} {{", _line(node)), *body, ("}", end)]


# ---------------------------------------------------------------- policies


def _policy_lines(policy: ast.Policy) -> list[Line]:
    lines: list[Line] = []
    if policy.depth is not None:
        lines.append((f"depth {policy.depth}", _line_of(policy.depth_span)))
    if policy.limits is not None:
        lines.append((f"limits perspectives {policy.limits}", _line_of(policy.limits_span)))
    if policy.trust is not None:
        lines.append((f"trust {policy.trust}", _line_of(policy.trust_span)))
    if policy.ties is not None:
        lines.append((f"ties {policy.ties}", _line_of(policy.ties_span)))
    lines += [(f"source {_name(s.name)} authority {s.authority}", _line(s))
              for s in policy.sources]
    lines += [(f"predicate {_key(p.key)} {p.cardinality}" + (" agent_only" if p.agent_only else ""),
               _line(p)) for p in policy.predicates]
    lines += [(f"alias {_name(a.name)} = {_names(a.aliases)}", _line(a)) for a in policy.aliases]
    for procedure in policy.procedures:
        if lines:
            lines.append(("", None))
        lines += _procedure_lines(procedure)
    for section in policy.sections:
        if lines:
            lines.append(("", None))
        lines.append((f"on {section.event_class}:", _line(section)))
        if section.reveal is not None:
            hidden = f" except {_names(section.hidden)}" if section.hidden else ""
            lines.append((f"  reveal {section.reveal}{hidden}", _line_of(section.reveal_span)))
        lines += [(f"  {_rule(rule)}", _line(rule)) for rule in section.rules]
    return lines


def _rule(rule: ast.Rule) -> str:
    if rule.over:
        text = "every chain over " + " + ".join(rule.over)
    else:
        text = " > ".join(rule.path)
    text += " adopts"
    if rule.excepted:
        text += " except " + ", ".join(rule.excepted)
    if rule.condition is not None:
        cond = rule.condition
        text += f" if {'not ' if cond.negated else ''}trusts({cond.truster}, {cond.trusted})"
    return text


# ---------------------------------------------------------------- scenarios


def _scenario_lines(scenario: ast.Scenario, commented: set[int]) -> list[Line]:
    """The statements, a blank line between two groups (declarations, events, queries,
    procedures) and where the source had one between two statements of a group: a line
    between them that is neither a statement nor a comment (lines in `commented`)."""
    lines: list[Line] = []
    previous, previous_end = None, None
    for stmt in scenario.statements:
        group = _group(stmt)
        blank = (previous_end is not None and stmt.span is not None
                 and any(n not in commented for n in range(previous_end + 1, stmt.span.line)))
        if previous is not None and (group != previous or blank):
            lines.append(("", None))
        previous_end = stmt.span.end_line if stmt.span else None
        if isinstance(stmt, ast.Procedure):
            lines += _procedure_lines(stmt)
        else:
            lines.append((_statement(stmt), _line(stmt)))
        previous = group
    return lines


def _group(stmt) -> str:
    if isinstance(stmt, (ast.Agents, ast.Rooms)):
        return "declarations"
    if isinstance(stmt, ast.Procedure):
        return "procedures"
    if isinstance(stmt, (ast.Expect, ast.Ask, ast.AskAnalysis, ast.ExpectAnalysis,
                         ast.AskReady, ast.ExpectReady)):
        return "queries"
    return "events"


def _statement(stmt) -> str:
    text = _untimed(stmt)
    if isinstance(stmt, ast.Timed) and stmt.at is not None:
        text += f" at {stmt.at}"
    return text


def _untimed(stmt) -> str:
    """A statement without the `at T` an event may end with."""
    match stmt:
        case ast.Agents(names=names):
            return f"agents {_names(names)}"
        case ast.Rooms(names=names):
            return f"rooms {_names(names)}"
        case ast.Clock(time=time):
            return f"clock {time}"
        case ast.Enter(agents=agents, room=room):
            return f"{_names(agents)} {_verb('enter', agents)} {_name(room)}"
        case ast.Exit(agents=agents, room=room):
            return f"{_names(agents)} {_verb('exit', agents)} {_name(room)}"
        case ast.State(room=room, fact=fact):
            return f"in {_name(room)}: {_fact(fact)}"
        case ast.Move(actor=actor, subject=subject, container=container):
            return f"{_name(actor)} moves {_name(subject)} to {_name(container)}"
        case ast.SetValue(actor=actor, fact=fact):
            return f"{_name(actor)} sets {_fact(fact)}"
        case ast.Tell(speaker=speaker, listener=listener, fact=fact, about=about):
            return f"{_name(speaker)} tells {_name(listener)} {_about(about)}{_fact(fact)}"
        case ast.Says(speaker=speaker, fact=fact, about=about):
            return f"{_name(speaker)} says {_about(about)}{_fact(fact)}"
        case ast.Announce(speaker=speaker, fact=fact, about=about):
            return f"{_name(speaker)} announces {_about(about)}{_fact(fact)}"
        case ast.Claim():
            return _claim(stmt)
        case ast.EndedClaim():
            return _ended_claim(stmt)
        case ast.Retract(speaker=speaker, key=key, value=value):
            return f"{_name(speaker)} retracts {_key(key)}{_ended_value(value)}"
        case ast.HandoffWrite(sender=sender, receiver=receiver):
            return f"handoff {_name(sender)} -> {_name(receiver)} write"
        case ast.Wait(agent=agent):
            return f"{_name(agent)} waits"
        case ast.Peek(agent=agent):
            return f"{_name(agent)} peeks"
        case ast.Distracted(agent=agent):
            return f"{_name(agent)} is distracted"
        case ast.Noop(text=text):
            return "noop" if text is None else f"noop {_quote(text)}"
        case ast.Expect(subject=subject, when=when):
            return f"expect {_subject(subject)} {_expectation(stmt)}{_when(when)}"
        case ast.Ask(subject=subject, when=when):
            return f"ask {_subject(subject)}{_when(when)}"
        case ast.AskAnalysis(analysis=analysis):
            return f"ask {_analysis(analysis)}"
        case ast.ExpectAnalysis(analysis=analysis):
            return f"expect {_analysis(analysis)} {_analysis_expectation(stmt)}"
        case ast.AskReady(ready=ready, when=when):
            return f"ask {_ready(ready)}{_when(when)}"
        case ast.ExpectReady(ready=ready, part="verdict", verdict=verdict, when=when):
            return f"expect {_ready(ready)} = {verdict}{_when(when)}"
        case ast.ExpectReady(ready=ready, part=part, keys=keys, when=when):
            items = ", ".join(_key(k) for k in keys)
            return f"expect {_ready(ready)} {part} = {{{items}}}{_when(when)}"
        case ast.Procedure():
            return "\n".join(text for text, _ in _procedure_lines(stmt))
    raise TypeError(f"not a scenario statement: {stmt!r}")


def format_statement(stmt) -> str:
    """One scenario statement (an event, an expect, an ask, ...) in canonical form: how the
    Python API writes the statements its typed methods stand for."""
    return _statement(stmt)


def _procedure_lines(procedure: ast.Procedure) -> list[Line]:
    """`procedure NAME {`, one `requires` line per step, `}`."""
    steps = [(f"  requires {_key(r.key)}" + (f" = {_value(r.value)}" if r.value else ""),
              _line(r)) for r in procedure.requires]
    end = procedure.span.end_line if procedure.span else None
    return [(f"procedure {_name(procedure.name)} {{", _line(procedure)), *steps, ("}", end)]


def _ready(ready: ast.Ready) -> str:
    """`ready NAME [for CHAIN]`."""
    chain = f" for {_chain(ready.chain)}" if ready.chain else ""
    return f"ready {_name(ready.procedure)}{chain}"


def _verb(verb: str, agents: list[ast.Name]) -> str:
    """`Sally enters`, `Sally, Anne enter`: the grammar takes both spellings."""
    return f"{verb}s" if len(agents) == 1 else verb


def _claim(claim: ast.Claim) -> str:
    text = f"claim {_fact(claim.fact)} from {_name(claim.source)}"
    if claim.valid_from is not None:
        return _claim_tail(claim, text) + f" valid from {claim.valid_from}" + _audience(claim)
    return _claim_tail(claim, text) + _audience(claim)


def _ended_claim(claim: ast.EndedClaim) -> str:
    text = f"claim {_key(claim.key)}{_ended_value(claim.value)} ended from {_name(claim.source)}"
    text = _claim_tail(claim, text)
    if claim.valid_to is not None:
        text += f" valid to {claim.valid_to}"
    return text + _audience(claim)


def _ended_value(value: Optional[ast.Value]) -> str:
    """` = V` of an ending that names one value (`claim K = V ended`, `A retracts K = V`)."""
    return "" if value is None else f" = {_value(value)}"


def _claim_tail(claim: ast.Claim | ast.EndedClaim, text: str) -> str:
    if claim.by is not None:
        text += f" by {_name(claim.by)}"
    if claim.at is not None:
        text += f" at {claim.at}"
    return text


def _audience(claim: ast.Claim | ast.EndedClaim) -> str:
    if claim.audience == "room":
        return f" in {_name(claim.room)}"
    if claim.audience == "agents":
        return f" to {_names(claim.recipients)}"
    return " to all"


def _subject(subject: ast.Subject) -> str:
    if not subject.chain:
        return f"truth {_key(subject.key)}"
    return f"{_chain(subject.chain)} believes {_key(subject.key)}"


def _expectation(expect: ast.Expect) -> str:
    values = ", ".join(_value(v) for v in expect.values)
    if expect.kind == "unknown":
        return "unknown"
    if expect.kind == "set":
        return f"= {{{values}}}"
    if expect.kind == "supported":
        return "supported by " + ", ".join(
            " via ".join([_value(v), *(_name(n) for n in v.via)]) for v in expect.values)
    if expect.kind == "contested":  # `contested by {}`: expected uncontested
        return f"contested by {values}" if expect.values else "contested by {}"
    return f"is in {values}" if expect.form == "located" else f"= {values}"


def _analysis(analysis) -> str:
    match analysis:
        case ast.FalseBeliefs(depth=depth):
            return "false_beliefs" if depth is None else f"false_beliefs depth {depth}"
        case ast.WhoKnows(key=key):
            return f"who_knows {_key(key)}"
        case ast.Handoff(sender=sender, receiver=receiver):
            return f"handoff {_name(sender)} -> {_name(receiver)}"
        case ast.CommonGround(first=first, second=second):
            return f"common_ground {_name(first)}, {_name(second)}"
        case ast.Explain(chain=chain, key=key):
            return f"explain {_chain(chain)} {_key(key)}"
        case ast.PlanAnnouncements(key=key, speaker=speaker):
            return f"plan_announcements {_key(key)} by {_name(speaker)}"
        case ast.ContextFor(agent=agent, other=other):
            return f"context_for {_name(agent)} talking_to {_name(other)}"
        case ast.Search(text=text):
            return f"search {_quote(text)}"
        case ast.WhoKnowsBest(text=text):
            return f"who_knows_best {_quote(text)}"
        case ast.ExplainFollow(chain=chain, key=key, follow=links):
            return (f"explain {_chain(chain) + ' ' if chain else ''}{_key(key)} "
                    f"follow {links}")
        case ast.About(subject=subject, chain=chain, within=within):
            return (f"about {_name(subject)}" + (f" for {_chain(chain)}" if chain else "")
                    + (f" within {within}" if within is not None else ""))
        case ast.OpenTasks(chain=chain):
            return "open_tasks" + (f" for {_chain(chain)}" if chain else "")
    raise TypeError(f"not an analysis: {analysis!r}")


def _analysis_expectation(expect: ast.ExpectAnalysis) -> str:
    """What follows the analysis in `expect ANALYSIS ...`, by part."""
    keys = "{" + ", ".join(_key(k) for k in expect.keys) + "}"
    names = "{" + _names(expect.names) + "}"
    match expect.part:
        case None if isinstance(expect.analysis, ast.FalseBeliefs):
            items = ", ".join(f"{_chain(i.chain)}: {_key(i.key)}" for i in expect.believer_keys)
            return f"= {{{items}}}"
        case "hearsay":
            items = ", ".join(f"{_chain(i.chain)}: {_key(i.key)}" for i in expect.believer_keys)
            return f"hearsay = {{{items}}}"
        case None:
            return f"= {keys}"
        case ("up_to_date" | "out_of_date" | "incomplete" | "unknown" | "unverified" | "tells"
              | "open" | "unclaimed"):
            return f"{expect.part} = {names}"
        case "includes" | "caveats" | "endings" | "differ" | "keys":
            return f"{expect.part} = {keys}"
        case "excludes":
            items = ", ".join(f"{_key(i.key)}: {i.reason}" for i in expect.excluded)
            return f"excludes = {{{items}}}"
        case "from_step":
            return f"from step {expect.number}"
        case "path":
            return f"path = {_chain(expect.names)}"
        case "best":
            return f"best = {expect.plan}"
        case "left":
            return f"{expect.plan} depth {expect.depth} = {expect.number}"
        case "first" if isinstance(expect.analysis, ast.WhoKnowsBest):
            return f"first = {names}"
        case "first":
            return f"first = {_key(expect.keys[0])}"
    raise TypeError(f"not an analysis expectation: {expect!r}")


def _chain(chain: list[ast.Name]) -> str:
    return " > ".join(_name(n) for n in chain)


def _when(when: ast.When | None) -> str:
    if when is None:
        return ""
    if when.date is not None:
        return f" on {when.date}"
    return f" at {when.time}" if when.time is not None else f" at step {when.step}"


# ---------------------------------------------------------------- names, keys, values, facts


def _fact(fact: ast.Fact) -> str:
    if fact.form == "located":
        return f"{_name(fact.key.subject)} is in {_value(fact.value)}"
    return f"{_key(fact.key)} = {_value(fact.value)}"


def _key(key: ast.Key) -> str:
    """`subject.predicate`. After the `.` the grammar takes only a name, so a predicate that
    is a word of the language (`release.requires`) stays bare."""
    if key.predicate is None:
        return _name(key.subject)
    predicate = key.predicate.text
    if not _IDENTIFIER.fullmatch(predicate):
        predicate = _quote(predicate)
    return f"{_name(key.subject)}.{predicate}"


def _value(value: ast.Value) -> str:
    """Numbers and times as written; a name bare (a value position takes no keyword)."""
    if value.kind in ("number", "time"):
        return value.text
    if value.kind == "name" and _IDENTIFIER.fullmatch(value.text):
        return value.text
    return _quote(value.text)


def _names(names: list[ast.Name]) -> str:
    return ", ".join(_name(n) for n in names)


def _name(name: ast.Name) -> str:
    text = name.text
    if _IDENTIFIER.fullmatch(text) and text not in _KEYWORDS:
        return text
    return _quote(text)


def _quote(text: str) -> str:
    """A double-quoted string the parser reads back as `text` (Python escapes)."""
    return '"' + "".join(_escape(ch) for ch in text) + '"'


def _escape(ch: str) -> str:
    if ch in _ESCAPES:
        return _ESCAPES[ch]
    if ch.isprintable():
        return ch
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _about(about: Optional[ast.Name]) -> str:
    """`X believes ` before a reported fact, or nothing."""
    return "" if about is None else f"{_name(about)} believes "
