"""`handoff S -> R`: the smallest set of facts S's model of R lacks, with a receipt.

Read from S's own perspective only (the chains `S` and `S > R`, both in S's mind graph):

- **included**: every value S holds that `S > R` does not hold (a value R lacks, or the
  correction of a different one), unless it is private;
- **excluded**, each with a reason code: `known` (S > R already holds it), `superseded`
  (a value S held before and replaced, or that ended), `contested` (a rival claim S
  recorded against what it holds), `private` (what S learnt in a private tell: kind
  `tell`; its value and source are not shown, and neither are rivals that came in a
  private tell), `agent_only` (S's own note: a key the policy declares `agent_only`; no
  value, rival or caveat of it is shown);
- **caveats**: for each included value, the rival claims against it; for a value `S > R`
  already holds, the rivals `S > R`'s version lacks (`caveats_to_send`);
- **hearsay**: what S thinks a third agent X believes, where S thinks `R > X` lacks it or
  holds another value (`hearsay_to_send`, `ReceiverModels`): never what it holds already;
- **readiness**: for each procedure of the scenario (its policy's and its own) with a step
  on an included key, the verdict (docs/language.md, "Procedures and readiness") from S's
  beliefs, from `S > R` now, and from `S > R` once it takes the included facts in (a `one`
  key takes the value sent, a `many` key adds it).

The message is the included facts, one `KEY = VALUE` line each (with the sources behind
it), plus a line per caveat: the receipt counts them (`size`), and their tokens are
compared with the full event transcript (every event's text up to the step) by
`estimate_tokens`. `handoff S -> R write` sends exactly that (`handed_over`), as one private
message of S routed by the "on tell:" rules (docs/semantics.md section 3), with provenance: each
fact keeps its original sources, each written `SOURCE via S`, and their authority (section
4 resolves it with that authority); a fact S observed has S as its source, with S's
authority as a speaker; each caveat arrives as a contested claim (docs/language.md,
"handoff S -> R write").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Optional

from tomc.analysis.view import BeliefView, Held, Rival
from tomc.dsl import ast
from tomc.dsl.parser import parse_statements
from tomc.readiness import step_status, verdict_of

_TOKEN = re.compile(r"\w+|[^\w\s]")


def estimate_tokens(text: str) -> int:
    """A documented approximation of an LLM tokenizer: words and punctuation marks count one
    token each (BPE tokenizers give about as many for English, more for long numbers and
    rare words). Used to compare a handoff with the transcript, not to bill anyone."""
    return len(_TOKEN.findall(text))


def is_private(kind: str) -> bool:
    """A value that arrived in a private tell is not the receiver's to pass on."""
    return kind == "tell"


def is_own_note(view: BeliefView, key: str) -> bool:
    """An agent's value of a key the policy declares `agent_only` is its own note: never
    handed on, as a fact, caveat, ending or hearsay (docs/language.md, "Own notes")."""
    return view.scenario.policy.is_agent_only(key)


def private_values(view: BeliefView, sender: str) -> set[tuple[str, str]]:
    """The (key, value) pairs the sender's receipt excludes as private: what it holds or
    held from a private tell, and the rivals claimed to it in one. No hearsay repeats
    them."""
    versions = [*view.held([(sender,)]), *view.superseded([(sender,)])]
    return ({(h.key, h.value) for h in versions if is_private(h.kind)}
            | {(h.key, r.value) for h in versions for r in h.rivals if is_private(r.kind)})


@dataclass(frozen=True)
class Included:
    """A fact the handoff sends: `key = value`, the sources behind it, their authority."""

    key: str
    value: str
    sources: tuple[str, ...]
    authority: int
    since: int


@dataclass(frozen=True)
class Excluded:
    """A fact left out, with its reason code; `value` is None for private ones."""

    key: str
    reason: str
    value: Optional[str]
    detail: str


@dataclass(frozen=True)
class Caveat:
    """An included `key = value` contested by `rival`."""

    key: str
    value: str
    rival: Rival


@dataclass(frozen=True)
class Readiness:
    """A procedure the handoff touches (`keys`: its steps' keys among the included facts):
    its verdict from the sender's beliefs, from the sender's model of the receiver now, and
    from that model after the handoff."""

    procedure: str
    keys: tuple[str, ...]
    sender: str
    receiver_now: str
    receiver_after: str

    def to_json(self) -> dict:
        """{procedure, keys, sender, receiver_now, receiver_after}."""
        return {"procedure": self.procedure, "keys": list(self.keys), "sender": self.sender,
                "receiver_now": self.receiver_now, "receiver_after": self.receiver_after}


@dataclass
class HandoffReceipt:
    """What `sender` hands `receiver` as of `step`, and what it leaves out and why."""

    sender: str
    receiver: str
    step: int
    included: list[Included]
    excluded: list[Excluded]
    caveats: list[Caveat]
    message: str
    tokens: int
    transcript_tokens: int
    readiness: tuple[Readiness, ...] = ()
    endings: tuple[Included, ...] = ()
    hearsay: tuple[tuple[str, Included], ...] = ()  # (X, what the sender thinks X believes)

    @property
    def size(self) -> int:
        """The lines sent: one per included fact, caveat, ending and hearsay."""
        return len(self.included) + len(self.caveats) + len(self.endings) + len(self.hearsay)

    def items(self, part: Optional[str]) -> list[str]:
        """includes / caveats / endings: keys; excludes: `KEY: REASON`."""
        if part == "includes":
            return [i.key for i in self.included]
        if part == "endings":
            return [e.key for e in self.endings]
        if part == "hearsay":
            return [f"{agent}: {h.key}" for agent, h in self.hearsay]
        if part == "caveats":
            return [c.key for c in self.caveats]
        return [f"{e.key}: {e.reason}" for e in self.excluded]

    def lines(self) -> list[str]:
        """Report lines: included facts with sources, then excluded ones, then the size."""
        out = [f"included ({len(self.included)}):"]
        for i in self.included:
            sources = ", ".join(i.sources) or "observed"
            out.append(f"  {i.key} = {i.value}  [sources: {sources}; authority {i.authority}; "
                       f"since step {i.since}]")
        out += [f"  caveat: {c.key} = {c.value} is contested by {c.rival.value} "
                f"({c.rival.source or 'observed'}, authority {c.rival.authority}, "
                f"step {c.rival.step})" for c in self.caveats]
        out += [f"  ended: {e.key} = {e.value}  [sources: {', '.join(e.sources)}; "
                f"authority {e.authority}; ended at step {e.since}]" for e in self.endings]
        out += [f"  hearsay: {agent} believes {h.key} = {h.value}  [sources: "
                f"{', '.join(h.sources) or 'observed'}; since step {h.since}]"
                for agent, h in self.hearsay]
        out.append(f"excluded ({len(self.excluded)}):")
        for e in self.excluded:
            shown_value = "" if e.value is None else f" = {e.value}"
            out.append(f"  {e.key}{shown_value}: {e.reason} ({e.detail})")
        ended = f", {len(self.endings)} endings" if self.endings else ""
        ended += f", {len(self.hearsay)} hearsay" if self.hearsay else ""
        out.append(f"size: {self.size} lines ({len(self.included)} facts, {len(self.caveats)} "
                   f"caveats{ended}), {self.tokens} tokens, against {self.transcript_tokens} for the "
                   f"full transcript (words and punctuation marks)")
        out += [f"readiness: {r.procedure} ({', '.join(r.keys)}): {self.sender} "
                f"{r.sender}; {self.sender} > {self.receiver} {r.receiver_now} now, "
                f"{r.receiver_after} after the handoff" for r in self.readiness]
        return out

    def to_json(self) -> dict:
        """{sender, receiver, step, included, excluded, caveats, endings, hearsay, message,
        size, tokens, readiness}."""
        return {
            "sender": self.sender, "receiver": self.receiver, "step": self.step,
            "included": [{"key": i.key, "value": i.value, "sources": list(i.sources),
                          "authority": i.authority, "since": i.since} for i in self.included],
            "excluded": [{"key": e.key, "reason": e.reason, "value": e.value,
                          "detail": e.detail} for e in self.excluded],
            "caveats": [{"key": c.key, "value": c.value, "rival": c.rival.value,
                         "source": c.rival.source, "authority": c.rival.authority,
                         "step": c.rival.step} for c in self.caveats],
            "endings": [{"key": e.key, "value": e.value, "sources": list(e.sources),
                         "authority": e.authority, "step": e.since} for e in self.endings],
            "hearsay": [{"about": agent, "key": h.key, "value": h.value,
                         "sources": list(h.sources), "since": h.since}
                        for agent, h in self.hearsay],
            "message": self.message,
            "size": {"lines": self.size, "facts": len(self.included),
                     "caveats": len(self.caveats), "endings": len(self.endings),
                     "hearsay": len(self.hearsay)},
            "tokens": {"handoff": self.tokens, "transcript": self.transcript_tokens,
                       "tokenizer": "words and punctuation marks (approximation)"},
            "readiness": [r.to_json() for r in self.readiness],
        }


def facts_to_send(view: BeliefView, sender: str, receiver: str) -> list[Held]:
    """The values `sender` holds that its model of `receiver` lacks, private ones left out,
    sorted by key and value: what `handoff sender -> receiver write` sends."""
    model = {(h.key, h.value) for h in view.held([(sender, receiver)])}
    return sorted((h for h in view.held([(sender,)])
                   if not is_private(h.kind) and not is_own_note(view, h.key)
                   and (h.key, h.value) not in model),
                  key=lambda h: (h.key, h.value))


@dataclass(frozen=True)
class Sent:
    """One fact of `handoff S -> R write` as the receiver gets it: `key = value` with its
    provenance, each source written `SOURCE via S` (`support`, the first one the version's
    `source`), the `authority` S held it with, its publication time and valid interval
    (`published`, `valid_from`: the receiver resolves with them, docs/semantics.md section 3),
    and the rivals S recorded against it (the receipt's caveats), to be recorded as
    contested claims, their sources `via S` too. Hearsay (`about` X) is what S thinks X
    believes: the receiver's model of X takes it (`S > X` becomes `R > X`). An ending
    (`ended`) is S's knowledge that
    `key = value` no longer holds: its support is the ending's source via S, its authority
    and publication time the ending's, `valid_to` where the ended value stopped holding.
    A caveat (`known`) is a value S thinks R already holds: only its `rivals` are sent
    (recorded as contested claims against what R holds), never the value itself."""

    key: str
    value: str
    support: tuple[str, ...]
    authority: int
    rivals: tuple[Rival, ...]
    published: Optional[str] = None
    valid_from: str = ""
    ended: bool = False
    valid_to: str = ""
    about: Optional[str] = None
    known: bool = False

    def to_row(self, many: bool) -> dict:
        """The fact as the compiler's bindings take it (tomc/compiler/reads.py `handed`)."""
        return {"key": self.key, "value": self.value, "many": many,
                "support": list(self.support), "authority": self.authority,
                "published": self.published, "valid_from": self.valid_from,
                "ended": self.ended, "valid_to": self.valid_to, "about": self.about,
                "known": self.known,
                "rivals": [{"value": r.value, "source": r.source, "authority": r.authority}
                           for r in self.rivals]}


def via(source: str, agent: str) -> str:
    """A source as it reaches a receiver through `agent`: `bulletin_r4 via Scout` (handed on
    again: `bulletin_r4 via Scout via Planner`)."""
    return f"{source} via {agent}"


def handed_over(view: BeliefView, sender: str, receiver: str,
                speaking_authority: int) -> list[Sent]:
    """What `handoff sender -> receiver write` sends, as of the view's step: the included
    facts with their sources, authority and dates (a fact the sender observed: the sender
    itself, with its `speaking_authority`), and their non-private rivals; then the caveats
    about values the receiver holds (`caveats_to_send`), the endings (`endings_to_send`)
    and the hearsay (`hearsay_to_send`)."""
    out = []
    for h in facts_to_send(view, sender, receiver):
        if h.support:
            support, authority = tuple(via(s, sender) for s in h.support), h.authority
        else:
            support, authority = (sender,), speaking_authority
        out.append(Sent(h.key, h.value, support, authority, _rivals_via(h.rivals, sender),
                        h.published, h.valid_from))
    for h, rivals in caveats_to_send(view, sender, receiver):
        support = tuple(via(s, sender) for s in h.support) or (sender,)
        out.append(Sent(h.key, h.value, support, h.authority, _rivals_via(rivals, sender),
                        h.published, h.valid_from, known=True))
    for h in endings_to_send(view, sender, receiver):
        ending = h.ending
        source = via(ending.source, sender) if ending.source else sender
        out.append(Sent(h.key, h.value, (source,), ending.authority, (), ending.published,
                        h.valid_from, True, ending.valid_to))
    for h in hearsay_to_send(view, sender, receiver):
        support = tuple(via(s, sender) for s in h.support) or (sender,)
        authority = h.authority if h.support else speaking_authority
        out.append(Sent(h.key, h.value, support, authority, (), h.published, h.valid_from,
                        about=h.chain[1]))
    return out


def _rivals_via(rivals, sender: str) -> tuple[Rival, ...]:
    """Rivals as the receiver records them: non-private ones, each source `via` the sender
    (the sender itself for an observation)."""
    return tuple(Rival(r.value, via(r.source, sender) if r.source else sender,
                       r.authority, r.step, r.kind)
                 for r in rivals if not is_private(r.kind))


def caveats_to_send(view: BeliefView, sender: str,
                    receiver: str) -> list[tuple[Held, tuple[Rival, ...]]]:
    """The caveats about values `sender > receiver` already holds (so not sent themselves):
    for each non-private value the sender holds that its model of the receiver holds too,
    the non-private rivals the sender recorded against it whose value the model's version
    is not contested by, by key and value (docs/semantics.md section 3, "Handoffs")."""
    model = {(h.key, h.value): {r.value for r in h.rivals}
             for h in view.held([(sender, receiver)])}
    out = []
    for h in sorted(view.held([(sender,)]), key=lambda h: (h.key, h.value)):
        if is_private(h.kind) or is_own_note(view, h.key) or (h.key, h.value) not in model:
            continue
        rivals = tuple(r for r in h.rivals if not is_private(r.kind)
                       and r.value not in model[(h.key, h.value)])
        if rivals:
            out.append((h, rivals))
    return out


def is_private_model(h: Held, sender: str) -> bool:
    """What the sender thinks X believes is private when X told it in private (a tell
    whose source is not the sender: the sender's own tells to X are the sender's to report)."""
    return is_private(h.kind) and h.source != sender


def hearsay_to_send(view: BeliefView, sender: str, receiver: str) -> list[Held]:
    """The sender's models of third parties it hands on (docs/semantics.md section 3): what
    `sender > X` holds, for each agent X other than the two whose `receiver > X` the policy
    tracks, unless private (X told the sender in private, or the sender's receipt excludes
    the value as private: `private_values`), X's own note (`is_own_note`), or what the
    receiver's model of X holds already as the sender sees it (`ReceiverModels`), by X,
    key and value: hearsay corrects or fills that model, it never repeats it."""
    chains = set(view.scenario.chains())
    models = ReceiverModels(view, sender, receiver)
    secret = private_values(view, sender)
    out = []
    for agent in view.scenario.agents:
        if agent in (sender, receiver) or (receiver, agent) not in chains:
            continue
        known = models.of(agent)
        out += sorted((h for h in view.held([(sender, agent)])
                       if not is_private_model(h, sender) and not is_own_note(view, h.key)
                       and (h.key, h.value) not in known and (h.key, h.value) not in secret),
                      key=lambda h: (h.key, h.value))
    return out


class ReceiverModels:
    """What the sender thinks the receiver's models of third agents hold (`of`)."""

    def __init__(self, view: BeliefView, sender: str, receiver: str):
        self.view, self.sender, self.receiver = view, sender, receiver
        self.tracked = set(view.scenario.chains())

    def of(self, agent: str) -> set[tuple[str, str]]:
        """The (key, value) pairs the sender thinks `receiver > agent` holds: `sender >
        receiver > agent` when the policy tracks it. Else, of what `sender > agent` holds,
        the versions `sender > receiver` took in at the same event (the same step: an
        event the sender saw both take in, which the receiver saw the agent take in too,
        so the rules gave `receiver > agent` the value as well; a tell has one listener, so
        it never counts), and those held since the sender's last `handoff sender ->
        receiver write` (it sent them as hearsay, or knew the receiver held them)."""
        s, r = self.sender, self.receiver
        if (s, r, agent) in self.tracked:
            return {(h.key, h.value) for h in self.view.held([(s, r, agent)])}
        theirs = self.view.held([(s, agent)])
        handed = self.handed
        together = {(h.key, h.value, h.since) for h in self.view.held([(s, r)])}
        return {(h.key, h.value) for h in theirs
                if (h.key, h.value, h.since) in together
                or (handed is not None and h.since <= handed)}

    @cached_property
    def handed(self) -> Optional[int]:
        """The step of the sender's latest handoff to the receiver (None: none yet), read
        from the events once, when a model is not tracked."""
        return next((e.step for e in reversed(self.view.events()) if e.kind == "handoff"
                     and _is_handoff(e.text, self.sender, self.receiver)), None)


def _is_handoff(text: str, sender: str, receiver: str) -> bool:
    """Whether an event's .tom text is `handoff sender -> receiver write` (names as parsed,
    so a quoted name reads as its text)."""
    statements = parse_statements(text)
    return (len(statements) == 1 and isinstance(statements[0], ast.HandoffWrite)
            and (statements[0].sender.text, statements[0].receiver.text) == (sender, receiver))


def endings_to_send(view: BeliefView, sender: str, receiver: str) -> list[Held]:
    """The versions `sender` held that an ending closed (docs/semantics.md section 4,
    "Endings") while its model of `receiver` still holds their value, private ones left out,
    by key and value: what the handoff ends at the receiver. A cardinality-one key the
    sender holds a value of again is left to that value (it supersedes or contests)."""
    model = {(h.key, h.value) for h in view.held([(sender, receiver)])}
    held = view.held([(sender,)])
    holding = {(h.key, h.value) for h in held}
    keys_held = {h.key for h in held}
    latest: dict[tuple[str, str], Held] = {}
    for h in view.superseded([(sender,)]):
        if (h.ending is None or is_private(h.kind) or is_own_note(view, h.key)
                or (h.key, h.value) not in model
                or (h.key, h.value) in holding
                or (h.key in keys_held and not view.scenario.policy.is_many(h.key))):
            continue
        if (h.key, h.value) not in latest or latest[(h.key, h.value)].until < h.until:
            latest[(h.key, h.value)] = h
    return [latest[k] for k in sorted(latest)]


def _line(i: Included) -> str:
    """A sent fact: `KEY = VALUE`, with its sources and authority unless observed."""
    if not i.sources:
        return f"{i.key} = {i.value}"
    return f"{i.key} = {i.value} (from {', '.join(i.sources)}; authority {i.authority})"


def _caveat_line(c: Caveat) -> str:
    """A caveat as sent: who claims the rival value, and with what authority (the value it
    disputes is the fact's line above, or what the receiver holds already)."""
    claimant = f"{c.rival.source} claims" if c.rival.source else "observed:"
    return f"caveat: {claimant} {c.key} = {c.rival.value} (authority {c.rival.authority})"


def handoff(view: BeliefView, sender: str, receiver: str) -> HandoffReceipt:
    """The receipt of a handoff from `sender` to `receiver` as of the view's step."""
    held = sorted(view.held([(sender,)]), key=lambda h: (h.key, h.value))
    model = {(h.key, h.value) for h in view.held([(sender, receiver)])}
    sent = {(h.key, h.value) for h in facts_to_send(view, sender, receiver)}
    # Caveats about values the receiver holds: rival values its version lacks.
    lacking = {(h.key, h.value, r.value) for h, rivals in caveats_to_send(view, sender, receiver)
               for r in rivals}
    included, excluded, caveats = [], [], []
    for h in held:
        if is_own_note(view, h.key):
            excluded.append(Excluded(h.key, "agent_only", None, f"{sender}'s own note"))
            continue
        if is_private(h.kind):
            excluded.append(Excluded(h.key, "private", None, "learnt in a private tell"))
            continue
        if (h.key, h.value) in sent:
            included.append(Included(h.key, h.value, h.support, h.authority, h.since))
        elif (h.key, h.value) in model:
            excluded.append(Excluded(h.key, "known", h.value,
                                     f"{sender} > {receiver} already holds it"))
        for rival in h.rivals:
            if is_private(rival.kind):
                excluded.append(Excluded(h.key, "private", None, "claimed in a private tell"))
                continue
            excluded.append(Excluded(
                h.key, "contested", rival.value,
                f"claimed by {rival.source or 'an observation'} (authority {rival.authority}) "
                f"at step {rival.step}; {sender} holds {h.value}"))
            if (h.key, h.value) in sent or (h.key, h.value, rival.value) in lacking:
                caveats.append(Caveat(h.key, h.value, rival))
    closed = view.superseded([(sender,)])
    # A version closed with no successor was ended (docs/language.md "Endings").
    began = {(h.key, h.since) for h in [*held, *closed]}
    for old in closed:
        if is_own_note(view, old.key):
            excluded.append(Excluded(old.key, "agent_only", None, f"{sender}'s own note"))
        elif is_private(old.kind):
            excluded.append(Excluded(old.key, "private", None, "learnt in a private tell"))
        else:
            how = "replaced" if (old.key, old.until) in began else "ended"
            excluded.append(Excluded(old.key, "superseded", old.value,
                                     f"held from step {old.since}, {how} at step {old.until}"))
    # The detail breaks ties (one value held twice): both engines list them in one order.
    excluded.sort(key=lambda e: (e.key, e.reason, e.value or "", e.detail))
    endings = tuple(Included(h.key, h.value, (h.ending.source,) if h.ending.source else (),
                             h.ending.authority, h.until)
                    for h in endings_to_send(view, sender, receiver))
    hearsay = tuple((h.chain[1], Included(h.key, h.value, h.support, h.authority, h.since))
                    for h in hearsay_to_send(view, sender, receiver))
    message = "\n".join([_line(i) for i in included]
                        + [_caveat_line(c) for c in caveats]
                        + [f"ended: {e.key} = {e.value} no longer holds (from "
                           f"{', '.join(e.sources) or sender}; authority {e.authority})"
                           for e in endings]
                        + [f"{agent} believes {h.key} = {h.value}" for agent, h in hearsay])
    transcript = "\n".join(e.text for e in view.events())
    return HandoffReceipt(sender, receiver, view.step, included, excluded, caveats, message,
                          estimate_tokens(message), estimate_tokens(transcript),
                          _readiness(view, sender, receiver, included), endings, hearsay)


def _readiness(view: BeliefView, sender: str, receiver: str,
               included: list[Included]) -> tuple[Readiness, ...]:
    """The procedures with a step on an included key, each with three verdicts (sender,
    receiver's model now, and after taking the included facts in)."""
    sent: dict[str, list[str]] = {}
    for fact in included:
        sent.setdefault(fact.key, []).append(fact.value)
    procedures = [p for p in view.scenario.procedures.values()
                  if any(r.key in sent for r in p.requires)]
    if not procedures:
        return ()
    mine, model = ({}, {})
    for chain, into in (((sender,), mine), ((sender, receiver), model)):
        for h in view.held([chain]):
            into.setdefault(h.key, []).append(h.value)
    after = dict(model)
    for key, values in sent.items():
        many = view.scenario.policy.is_many(key)
        after[key] = sorted({*model.get(key, ()), *values}) if many else values

    def verdict(held: dict[str, list[str]], requires) -> str:
        return verdict_of([step_status(r, held.get(r.key, ())) for r in requires])

    return tuple(Readiness(p.name, tuple(dict.fromkeys(r.key for r in p.requires
                                                       if r.key in sent)),
                           verdict(mine, p.requires), verdict(model, p.requires),
                           verdict(after, p.requires)) for p in procedures)
