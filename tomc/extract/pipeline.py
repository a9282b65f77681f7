"""The whole extraction: messages -> prompt -> model -> checked candidates -> (on request)
applied.

    extraction = extract(messages, provider, session)   # nothing written
    extraction.ok        -> the candidates that check
    events = apply(extraction, session)                  # only those, in one write

`apply` writes the `ok` candidates (and the `flagged` ones only with `include_flagged`) as
one batch that expects the memory at the step it was checked against: if another writer got
there first, StaleWrite, and nothing is written. Nothing is stored twice: a candidate the
memory holds already is `present` and left out (candidates.already_held), and the batch's
idempotency key names the conversation and the memory (`idempotency_key`), so the same
conversation applied again to the same memory with other statements to write (untimed
events, which cannot be matched) writes nothing (`Extraction.repeated`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Sequence

from tomc.api import TomError
from tomc.dsl import ast
from tomc.extract.candidates import Candidate, candidates, parse_answer
from tomc.extract.messages import Message
from tomc.extract.prompt import Context, Prompt, build_prompt
from tomc.extract.providers import Provider


@dataclass
class Extraction:
    """What one extraction found: the `messages`, the `prompt` sent, the model's raw
    `answer`, and the `candidates`, checked against the session at `step`."""

    messages: list[Message]
    prompt: Prompt
    answer: str
    candidates: list[Candidate]
    step: int
    model: str = ""
    include_flagged: bool = False  # checked as if the flagged candidates were written too
    applied: list = field(default_factory=list)
    repeated: bool = False  # applied before: `applied` holds what that write wrote, if known

    @property
    def ok(self) -> list[Candidate]:
        return [c for c in self.candidates if c.status == "ok"]

    @property
    def to_write(self) -> list[Candidate]:
        """What `apply` writes: the ok candidates, and the flagged ones if the extraction
        was checked with them (`include_flagged`)."""
        keep = {"ok", "flagged"} if self.include_flagged else {"ok"}
        return [c for c in self.candidates if c.status in keep]

    @property
    def statements(self) -> list:
        """The statements `apply` writes (and MCP's `record` is given): those of `to_write`,
        timed for a memory (`timed_for_memory`)."""
        return [node for _, node in timed_for_memory(self.to_write)]

    @property
    def already_applied(self) -> bool:
        """Whether the memory held this extraction already: applied before under its key
        (`repeated`), or nothing left to write but candidates it holds (`present`)."""
        return self.repeated or (not self.to_write and
                                 any(c.status == "present" for c in self.candidates))

    def as_json(self) -> dict:
        return {"model": self.model, "step": self.step,
                "messages": [m.as_json() for m in self.messages],
                "candidates": [c.as_json() for c in self.candidates],
                "applied": [{"step": e.step, "text": e.text} for e in self.applied],
                "already_applied": self.already_applied}


def prompt_for(messages: Sequence[Message], session, narration: bool = False) -> Prompt:
    """The request for `messages`, with what `session`'s memory holds (`narration`: prose
    is a narrator's account to trust)."""
    return build_prompt(messages, Context.of(session.scenario), narration)


def extract(messages: Sequence[Message], provider: Provider, session,
            include_flagged: bool = False, narration: bool = False) -> Extraction:
    """Ask `provider` for candidates from `messages` and check them against `session` (a
    tomc.api.Session); nothing is written. Raises ProviderError, ExtractError (an answer
    that is not candidate statements)."""
    prompt = prompt_for(messages, session, narration)
    answer = provider.complete(prompt)
    return judged(list(messages), prompt, answer, session, provider.label, include_flagged,
                  narration)


def judged(messages: list[Message], prompt: Prompt, answer: str, session,
           model: str = "", include_flagged: bool = False,
           narration: bool = False) -> Extraction:
    """The Extraction of a model's `answer` (already had: a recorded one, or the calling
    model's own over MCP), checked against `session` as `apply` will write it.
    `narration`: prose (a message with no speaker) is a narrator's account to trust
    (candidates.authorship)."""
    step = session.step
    found = candidates(parse_answer(answer), messages, session, include_flagged, narration)
    extraction = Extraction(messages, prompt, answer, found, step, model, include_flagged)
    _checked_as_written(extraction, session)
    return extraction


def _checked_as_written(extraction: Extraction, session) -> None:
    """Where `apply` writes a time marker (`timed_for_memory`), which `candidates` did not
    check, check the write again whole: the claim after a marker that fails (its message's
    time before the memory's clock: E148) is refused with why, and so on until it checks."""
    while True:
        written = timed_for_memory(extraction.to_write)
        if len(written) == len(extraction.to_write):
            return  # no marker: checked as written already
        problems = session.check_each([node for _, node in written])
        failed = next(((c, found) for (c, _), found in zip(written, problems) if found), None)
        if failed is None:
            return
        candidate, diagnostics = failed
        for diagnostic in diagnostics:
            diagnostic.path = f"<candidate {candidate.index}>"
        candidate.status = "refused"
        candidate.diagnostics.extend(diagnostics)


def apply(extraction: Extraction, session) -> list:
    """Write the candidates that check (and the flagged ones, if the extraction was checked
    with `include_flagged`) in one batch after the step they were checked at, under the
    conversation's idempotency key; returns the events written now ([] when the conversation
    was applied to this memory before: then `extraction.repeated`, and `extraction.applied`
    holds that write's events when these are the statements it wrote). Raises StaleWrite,
    TomError, DatabaseUnavailable."""
    nodes = extraction.statements
    if not nodes:
        return []
    key = idempotency_key(session.memory, extraction.messages) if session.memory else None
    try:
        events = session.apply(nodes, after_step=extraction.step, idempotency_key=key)
    except TomError as err:
        # E146: the key wrote other statements: this conversation was extracted into this
        # memory before, and checked again now its events are in, its candidates differ.
        if key is None or [d.code for d in err.diagnostics] != ["E146"]:
            raise
        extraction.repeated = True
        return []
    # The same statements, all recorded under the key before: their original steps.
    extraction.repeated = bool(events) and all(e.step <= extraction.step for e in events)
    extraction.applied = events
    return [] if extraction.repeated else events


def timed_for_memory(written: Sequence[Candidate]) -> list[tuple[Candidate, ast.Node]]:
    """(candidate, statement) for each statement of `written`, with `noop "time of message
    N" at T` (paired with the claim's candidate) before the first claim when no timed event
    comes before it: a memory stamps a claim that nothing before it in the same write gave
    a time with the time it is applied at (docs/storage.md, "Time"), and then every later
    event of the conversation would go back in time (E148). The claim arrived when its
    message was sent (T, its `at`: candidates.TIMED)."""
    out: list[tuple[Candidate, ast.Node]] = []
    timed = False
    for candidate in written:
        node = candidate.node
        if isinstance(node, (ast.Claim, ast.EndedClaim)) and not timed and node.at:
            out.append((candidate, ast.Noop(text=f"time of message {candidate.message}",
                                            at=node.at)))
        timed = timed or isinstance(node, (ast.Claim, ast.EndedClaim)) or (
            isinstance(node, ast.Timed) and node.at is not None)
        out.append((candidate, node))
    return out


def idempotency_key(memory: str, messages: Sequence[Message]) -> str:
    """The name of the write of an extraction of `messages` into `memory`: `extract-` and a
    sha256 of both as canonical JSON. It names the input and the memory, not the model's
    answer nor the candidates written: a model asked again answers otherwise, and a second
    run leaves out what the memory holds (`present`), so its statements differ too; an
    untimed event cannot be matched as held, so a key that changed with them would let a
    second answer write it again. Only the conversation stays the same when it is applied
    twice."""
    canonical = json.dumps({"memory": memory, "messages": [m.as_json() for m in messages]},
                           sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "extract-" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()
