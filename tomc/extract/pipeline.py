"""The whole extraction: messages -> prompt -> model -> checked candidates -> (on request)
applied.

    extraction = extract(messages, provider, session)   # nothing written
    extraction.ok        -> the candidates that check
    events = apply(extraction, session)                  # only those, in one write

`apply` writes the `ok` candidates (and the `flagged` ones only with `include_flagged`) as
one batch that expects the memory at the step it was checked against: if another writer got
there first, StaleWrite, and nothing is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

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

    @property
    def ok(self) -> list[Candidate]:
        return [c for c in self.candidates if c.status == "ok"]

    @property
    def to_write(self) -> list[Candidate]:
        """What `apply` writes: the ok candidates, and the flagged ones if the extraction
        was checked with them (`include_flagged`)."""
        keep = {"ok", "flagged"} if self.include_flagged else {"ok"}
        return [c for c in self.candidates if c.status in keep]

    def as_json(self) -> dict:
        return {"model": self.model, "step": self.step,
                "messages": [m.as_json() for m in self.messages],
                "candidates": [c.as_json() for c in self.candidates],
                "applied": [{"step": e.step, "text": e.text} for e in self.applied]}


def prompt_for(messages: Sequence[Message], session) -> Prompt:
    """The request for `messages`, with what `session`'s memory holds."""
    return build_prompt(messages, Context.of(session.scenario))


def extract(messages: Sequence[Message], provider: Provider, session,
            include_flagged: bool = False) -> Extraction:
    """Ask `provider` for candidates from `messages` and check them against `session` (a
    tomc.api.Session); nothing is written. Raises ProviderError, ExtractError (an answer
    that is not candidate statements)."""
    prompt = prompt_for(messages, session)
    answer = provider.complete(prompt)
    return judged(list(messages), prompt, answer, session, provider.label, include_flagged)


def judged(messages: list[Message], prompt: Prompt, answer: str, session,
           model: str = "", include_flagged: bool = False) -> Extraction:
    """The Extraction of a model's `answer` (already had: a recorded one, or the calling
    model's own over MCP), checked against `session` as `apply` will write it."""
    step = session.step
    found = candidates(parse_answer(answer), messages, session, include_flagged)
    return Extraction(messages, prompt, answer, found, step, model, include_flagged)


def apply(extraction: Extraction, session) -> list:
    """Write the candidates that check (and the flagged ones, if the extraction was checked
    with `include_flagged`) in one batch after the step they were checked at; returns the
    events. Raises StaleWrite, TomError, DatabaseUnavailable."""
    nodes = [c.node for c in extraction.to_write]
    if not nodes:
        return []
    extraction.applied = session.apply(nodes, after_step=extraction.step)
    return extraction.applied
