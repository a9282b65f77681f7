"""A model's answer -> candidates: parsed, tied to the words they came from, timed by their
message, checked in order against the memory, and flagged where they read like instructions.

    candidates(answer_text, messages, session)
        -> [Candidate(statement="Billing says refund.status = approved at 2026-03-02T09:30",
                      message=2, quote="approved", span=(17, 25), status="ok", ...), ...]

A candidate is `ok` (it checks: `apply` writes it), `refused` (its diagnostics say why: it
does not parse, is not an event, cites words its message does not have, speaks for someone
other than its message's author, or fails the checker), `flagged` (it checks, but a value
reads like an instruction: written only when asked), or `present` (the memory holds it
already: a timed event of the same text, at `step`, or a declaration of names all declared;
never written again).
An answer that is not candidate statements at all raises ExtractError: nothing of it is kept.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Literal, Optional, Sequence

from pydantic import ValidationError

from tomc.analysis.quoting import instruction_like
from tomc.dsl import ast
from tomc.dsl.diagnostics import Diagnostic, DiagnosticError
from tomc.dsl.formatter import format_statement
from tomc.dsl.parser import parse_statements
from tomc.engine.live import CHANGES
from tomc.extract.messages import Message
from tomc.extract.prompt import ModelAnswer
from tomc.runtime.errors import TomError

Status = Literal["ok", "refused", "flagged", "present"]
# The statements that take their message's time as `at` when they give none.
TIMED = (ast.Timed, ast.Claim, ast.EndedClaim)
_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(?P<body>.*)\n\s*```\s*$", re.DOTALL)


class ExtractError(TomError):
    """The model's answer is not candidate statements (E200): refused whole, as bad input
    (a TomError whose one diagnostic is `diagnostic`)."""

    def __init__(self, diagnostic: Diagnostic):
        super().__init__([diagnostic])
        self.diagnostic = diagnostic


@dataclass
class Candidate:
    """One proposed statement: its .tom text (`statement`, with the message's time added),
    the message it came from and the words it cites (`quote`, found at `span`: character
    offsets into the message's text, or None), its `status`, the `diagnostics` that refused
    it and the `flags` of instruction-like text in it."""

    index: int
    statement: str
    message: int
    quote: str
    span: Optional[tuple[int, int]] = None
    status: Status = "ok"
    diagnostics: list[Diagnostic] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    node: Optional[ast.Node] = field(default=None, repr=False)
    step: Optional[int] = None  # a `present` event's step in the memory (0: a declaration)

    def as_json(self) -> dict:
        return {"index": self.index, "statement": self.statement, "message": self.message,
                "quote": self.quote, "span": list(self.span) if self.span else None,
                "status": self.status, "flags": self.flags,
                "diagnostics": [d.to_json() for d in self.diagnostics], "step": self.step}


def parse_answer(text: str, origin: str = "<model>") -> ModelAnswer:
    """The model's answer as candidates (a ```json fence around it is allowed). Raises
    ExtractError when it is not JSON of the requested shape."""
    fenced = _FENCE.match(text)
    body = fenced["body"] if fenced else text
    try:
        return ModelAnswer.model_validate(json.loads(body))
    except json.JSONDecodeError as err:
        problem = f"not JSON ({err.msg} at line {err.lineno} column {err.colno})"
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the answer"
        problem = f"not of the requested shape ({where}: {first['msg']})"
    raise ExtractError(Diagnostic(
        "E200", f"the model's answer is {problem}: nothing of it is used", None, origin,
        hint='expected {"statements": [{"statement": ..., "message": N, "quote": ...}]}'))


def candidates(answer: ModelAnswer, messages: Sequence[Message], session,
               include_flagged: bool = False, narration: bool = False) -> list[Candidate]:
    """Every proposed statement as a Candidate, checked in order against `session` (a
    tomc.api.Session: nothing is applied) after the valid ones before it that would be
    written (a flagged one is, only with `include_flagged`). `narration`: a message with no
    speaker is a narrator's account the caller trusts, so its candidates speak for nobody
    in particular (else they may only declare agents and rooms: `authorship`)."""
    by_id = {m.id: m for m in messages}
    found = [_candidate(i, proposed, by_id, narration) for i, proposed in
             enumerate(answer.statements, start=1)]
    parsed = [c for c in found if c.status == "ok"]
    held = already_held(parsed, session.scenario)
    for candidate in parsed:
        if candidate.index in held:
            candidate.status, candidate.step = "present", held[candidate.index]
    parsed = [c for c in parsed if c.status == "ok"]
    for candidate in parsed:
        reason = instruction_like(candidate.statement)
        if reason:
            candidate.flags.append(reason)
    kept = [include_flagged or not c.flags for c in parsed]
    for candidate, problems in zip(parsed, session.check_each([c.node for c in parsed], kept)):
        if problems:
            for problem in problems:
                problem.path = f"<candidate {candidate.index}>"
            _refuse(candidate, *problems)
        elif candidate.flags:
            candidate.status = "flagged"
    return found


def already_held(parsed: Sequence[Candidate], scenario) -> dict[int, int]:
    """{candidate index: step} of the `parsed` candidates the memory (`scenario`) holds
    already: a timed one (an `at`, its message's time) whose text is an event's, each event
    matched once, at its step; a declaration whose names are all declared, at 0. An event
    with no time is never taken for one already held: saying the same thing again is an
    event of its own. So extracting a conversation again, or a longer export of it, writes
    only what the memory lacks; the times of the rest are often the clock's own, which the
    checker lets pass (E148 only refuses times before it)."""
    steps: dict[str, list[int]] = {}
    for event in scenario.events:
        steps.setdefault(_words(event.text), []).append(event.step)
    declared = {ast.Agents: set(scenario.agents), ast.Rooms: set(scenario.rooms)}
    held: dict[int, int] = {}
    for candidate in parsed:
        node = candidate.node
        if isinstance(node, (ast.Agents, ast.Rooms)):
            if all(n.text in declared[type(node)] for n in node.names):
                held[candidate.index] = 0
        elif getattr(node, "at", None) is not None and steps.get(_words(candidate.statement)):
            held[candidate.index] = steps[_words(candidate.statement)].pop(0)
    return held


def _words(text: str) -> str:
    return " ".join(text.split())


def _candidate(index: int, proposed, by_id: dict[int, Message],
               narration: bool) -> Candidate:
    """One proposed statement, tied to its words and parsed (not yet checked against the
    memory): refused here when it cites words its message lacks (E202), is not one event or
    declaration (E203), or speaks for someone other than the message's author (E204)."""
    origin = f"<candidate {index}>"
    candidate = Candidate(index, proposed.statement.strip(), proposed.message, proposed.quote)
    message = by_id.get(proposed.message)
    if message is None:
        return _refuse(candidate, Diagnostic("E202", f"the candidate cites message "
                                             f"{proposed.message}, which the input does not "
                                             "have", None, origin))
    at = message.text.find(proposed.quote) if proposed.quote else -1
    if at < 0:
        return _refuse(candidate, Diagnostic(
            "E202", f"the candidate's quote is not in message {message.id}: "
                    f"{json.dumps(proposed.quote, ensure_ascii=False)[:80]}", None, origin,
            hint="a candidate must cite the words it comes from, exactly"))
    candidate.span = (at, at + len(proposed.quote))
    try:
        statements = parse_statements(candidate.statement, origin)
    except DiagnosticError as err:
        return _refuse(candidate, *err.diagnostics)
    if len(statements) != 1:
        return _refuse(candidate, Diagnostic(
            "E203", f"a candidate is one statement, not {len(statements)}", None, origin))
    if not isinstance(statements[0], CHANGES):
        return _refuse(candidate, Diagnostic(
            "E203", "a candidate is an event or an agents/rooms line, not "
                    f"`{format_statement(statements[0])}`", None, origin))
    node = statements[0]
    foreign = authorship(node, message, narration)
    if foreign is not None:
        foreign.path = origin
        return _refuse(candidate, foreign)
    # A claim's `at` is when its source published it: the message's time too (without
    # one, a memory would stamp the claim with the time it is applied at).
    if isinstance(node, TIMED) and node.at is None and message.time is not None:
        node = node.model_copy(update={"at": message.time})
    candidate.node = node
    candidate.statement = format_statement(node)
    return candidate


def authorship(node: ast.Node, message: Message, narration: bool = False) -> Optional[Diagnostic]:
    """E204 when `node` speaks or acts for someone other than `message`'s author, else None.

    A message is its author's word and nothing more: whoever wrote it cannot make another
    party say, set, enter or claim anything, nor assert the world itself (`in R: FACT`, a
    clock line). Declarations and `noop` speak for nobody and always pass. Names compare
    exactly, case included (`maya` and `Maya` are two agents to the checker), the speaker
    with the spaces at its ends trimmed. A message with no speaker (prose) has no author:
    its candidates may only declare, unless `narration` says the prose is a narrator's
    account the caller trusts."""
    parties = acting_parties(node)
    if parties == []:
        return None
    author = (message.speaker or "").strip()
    if not author:
        if narration:
            return None
        return Diagnostic(
            "E204", f"message {message.id} has no known author (prose, no speaker): a "
                    "candidate from it may only declare agents or rooms", node.span,
            hint="give the conversation as `Speaker: text` lines or a chat export with "
                 "speakers; or, if the prose is a narrator's account you trust, pass "
                 "--narration (tomc extract)")
    if parties is None:
        return Diagnostic(
            "E204", f"`{format_statement(node)}` asserts the world, but message "
                    f"{message.id} is only {author}'s word", node.span,
            hint=_as_author(author, node, None))
    other = next((p for p in parties if p.text != author), None)
    if other is None:
        return None
    return Diagnostic(
        "E204", f"`{other.text}` is not the author of message {message.id}: its author is "
                f"`{author}`, and a message is only its author's word", other.span,
        hint=_as_author(author, node, other))


def acting_parties(node: ast.Node) -> Optional[list[ast.Name]]:
    """Whom a statement speaks or acts for: the speaker of speech and retractions, the actor
    of sets and moves, every agent entering or leaving, the source (and the `by` agent) of
    a claim, the sender of a handoff, the agent who waits, peeks or is distracted. [] for a
    declaration or `noop` (no one's word); None for what no one is said to do (a state
    `in R: FACT`, a clock line, and any statement kind not listed here)."""
    if isinstance(node, (ast.Agents, ast.Rooms, ast.Noop)):
        return []
    if isinstance(node, (ast.Tell, ast.Says, ast.Announce, ast.Retract)):
        return [node.speaker]
    if isinstance(node, (ast.SetValue, ast.Move)):
        return [node.actor]
    if isinstance(node, (ast.Enter, ast.Exit)):
        return list(node.agents)
    if isinstance(node, (ast.Claim, ast.EndedClaim)):
        return [node.source] + ([node.by] if node.by is not None else [])
    if isinstance(node, ast.HandoffWrite):
        return [node.sender]
    if isinstance(node, (ast.Wait, ast.Peek, ast.Distracted)):
        return [node.agent]
    return None


def _as_author(author: str, node: ast.Node, other: Optional[ast.Name]) -> str:
    """What the author could be recorded as saying instead: a report of what `other`
    believes, or the author's own claim (the statement's fact where it has one)."""
    name, fact = _tom_name(author), _fact_text(node)
    believes = f"{_tom_name(other.text)} believes " if other is not None else ""
    about = _tom_name(other.text) if other is not None else "the world"
    return (f"what {name} says about {about} is "
            f"{name}'s word: a report (`{name} says {believes}{fact}`, `{name} tells L "
            f"{believes}{fact}`) or a claim from {name} (`claim {fact} from {name}`)")


def _tom_name(text: str) -> str:
    """`text` as a .tom name: bare when an identifier, else quoted (`"Maya Lopez"`)."""
    return format_statement(ast.Agents(names=[ast.Name(text=text)]))[len("agents "):]


def _fact_text(node: ast.Node) -> str:
    """The statement's fact as .tom text (`refund.status = approved`), or `K = V`."""
    fact = getattr(node, "fact", None)
    if fact is None:
        return "K = V"
    return format_statement(ast.Says(speaker=ast.Name(text="x"), fact=fact))[len("x says "):]


def _refuse(candidate: Candidate, *diagnostics: Diagnostic) -> Candidate:
    candidate.status = "refused"
    candidate.diagnostics.extend(diagnostics)
    return candidate
