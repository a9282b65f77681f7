"""A model's answer -> candidates: parsed, tied to the words they came from, timed by their
message, checked in order against the memory, and flagged where they read like instructions.

    candidates(answer_text, messages, session)
        -> [Candidate(statement="Billing says refund.status = approved at 2026-03-02T09:30",
                      message=2, quote="approved", span=(17, 25), status="ok", ...), ...]

A candidate is `ok` (it checks: `apply` writes it), `refused` (its diagnostics say why: it
does not parse, is not an event, cites words its message does not have, or fails the checker),
or `flagged` (it checks, but a value reads like an instruction: written only when asked).
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

Status = Literal["ok", "refused", "flagged"]
_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(?P<body>.*)\n\s*```\s*$", re.DOTALL)


class ExtractError(Exception):
    """The model's answer is not candidate statements (E200): refused whole."""

    def __init__(self, diagnostic: Diagnostic):
        super().__init__(diagnostic.message)
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

    def as_json(self) -> dict:
        return {"index": self.index, "statement": self.statement, "message": self.message,
                "quote": self.quote, "span": list(self.span) if self.span else None,
                "status": self.status, "flags": self.flags,
                "diagnostics": [d.to_json() for d in self.diagnostics]}


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
               include_flagged: bool = False) -> list[Candidate]:
    """Every proposed statement as a Candidate, checked in order against `session` (a
    tomc.api.Session: nothing is applied) after the valid ones before it that would be
    written (a flagged one is, only with `include_flagged`)."""
    by_id = {m.id: m for m in messages}
    found = [_candidate(i, proposed, by_id) for i, proposed in
             enumerate(answer.statements, start=1)]
    parsed = [c for c in found if c.status == "ok"]
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


def _candidate(index: int, proposed, by_id: dict[int, Message]) -> Candidate:
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
    if isinstance(node, ast.Timed) and node.at is None and message.time is not None:
        node = node.model_copy(update={"at": message.time})
    candidate.node = node
    candidate.statement = format_statement(node)
    return candidate


def _refuse(candidate: Candidate, *diagnostics: Diagnostic) -> Candidate:
    candidate.status = "refused"
    candidate.diagnostics.extend(diagnostics)
    return candidate
