"""The checked program: what the checker hands to the compiler and to the reference interpreter.

Names are resolved to plain strings, events are numbered by step (1..n in file order), every
fact carries its canonical key, and the policy is resolved (sections missing from a user
policy are taken from the shipped default, docs/semantics.md section 3).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Optional, Union

from tomc.dsl import ast

EventKind = Literal["enter", "exit", "state", "move", "set", "tell", "says", "announce",
                    "claim", "retract", "handoff", "wait", "peek", "distracted", "noop"]

# Which routing section of a policy an event kind goes through (None: no beliefs change).
EVENT_CLASS: dict[str, Optional[str]] = {
    "enter": "enter", "exit": None, "state": "observe", "move": "observe", "set": "observe",
    "tell": "tell", "says": "announce", "announce": "announce", "claim": "claim",
    "retract": "announce", "handoff": "tell", "wait": None, "peek": None, "distracted": None,
    "noop": None,
}
# Statements that change no belief themselves but the witnesses of the next event (which
# takes them as its `peekers` and `distracted`).
MODIFIERS = ("peek", "distracted")


@dataclass(frozen=True)
class Requirement:
    """One step of a procedure: the perspective asked must hold `value` about `key` (for a
    `many` key: `value` among its set), or any value when `value` is None (docs/language.md,
    "Procedures")."""

    key: str
    value: Optional[str] = None

    @property
    def text(self) -> str:
        """`requires KEY [= V]`, as written in canonical form."""
        return f"requires {self.key}" + (f" = {self.value}" if self.value is not None else "")


@dataclass(frozen=True)
class Procedure:
    """`procedure NAME { requires ... }`: its steps in order, and the line it starts on."""

    name: str
    requires: tuple[Requirement, ...]
    line: int = 0


@dataclass(frozen=True)
class PolicyModel:
    """A resolved policy.

    `authorities` maps a source (or speaking agent) to its integer authority (default 0);
    `cardinality` maps a key to "one" or "many" (default "one"); `sections` maps an event
    class (observe, enter, tell, announce, claim) to its routing section; `aliases` maps
    another name of a subject to the subject (docs/language.md, "Aliases").
    """

    name: str
    depth: int
    trust: Literal["credulous", "exit_order", "authority", "learned"]
    authorities: dict[str, int]
    cardinality: dict[str, str]
    sections: dict[str, ast.Section]
    max_perspectives: int = 100_000
    ties: Literal["contested", "newest", "first"] = "contested"
    procedures: dict[str, Procedure] = field(default_factory=dict)
    # `alias NAME = OTHER, ...`: each other name of a subject -> the subject's name.
    aliases: dict[str, str] = field(default_factory=dict)
    # `predicate KEY one|many agent_only`: keys whose values are each agent's own notes.
    agent_only: frozenset[str] = frozenset()

    def subject(self, name: str) -> str:
        """The subject `name` stands for: itself, or the subject it is an alias of."""
        return self.aliases.get(name, name)

    @property
    def reveal(self) -> str:
        """What entering a room reveals: "nothing" or "contents"."""
        return self.sections["enter"].reveal or "nothing"

    @property
    def hidden(self) -> frozenset[str]:
        """The predicates entering never reveals (`reveal contents except P, ...`)."""
        return frozenset(n.text for n in self.sections["enter"].hidden)

    def visible(self, key: str) -> bool:
        """Whether entering a room shows a value of `key` located there."""
        return key.rsplit(".", 1)[-1] not in self.hidden

    @property
    def by_authority(self) -> bool:
        """Whether the resolution table decides (`trust authority`, and `trust learned`,
        where a source's authority is its standing: docs/semantics.md section 4)."""
        return self.trust in ("authority", "learned")

    def authority(self, source: Optional[str]) -> int:
        """The authority of a source or speaking agent; 0 when the policy does not name it."""
        return self.authorities.get(source, 0) if source is not None else 0

    def is_agent_only(self, key: str) -> bool:
        """True when an agent's value of `key` is its own note: never handed on
        (docs/language.md, "Own notes")."""
        return key in self.agent_only

    def is_many(self, key: str) -> bool:
        """True when `key` is declared `many` (a set of values)."""
        return self.cardinality.get(key, "one") == "many"


# How many links `about SUBJECT` follows when `within N` is left out, and at most (`within
# N`, `follow N`): each read builds its walk's levels whole (read_linked.cypher,
# read_near.cypher), so N is bounded before anything reaches FalkorDB.
DEFAULT_HOPS = 2
MAX_HOPS = 8

# How a contested ending is shown among a belief's rivals (`contested by`): an ending has
# no value of its own (the reference and tomc/compiler/resolve.py record it).
ENDED = "(ended)"


@dataclass(frozen=True)
class Fact:
    """`key = value` as an event carries it; `many` when the policy declares the key `many`.

    An **ending** (`ended`: `claim KEY [= V] ended`, `A retracts KEY [= V]`) says the
    current belief no longer holds (docs/language.md "Endings", extending docs/semantics.md
    section 4): it closes the current versions of `key` (only the one of `value` when
    given, else all of them; only those adopted from source `of` when given: a
    retraction), instead of adopting a value.
    """

    key: str
    value: Optional[str]
    many: bool = False
    ended: bool = False
    of: Optional[str] = None


@dataclass(frozen=True)
class Event:
    """One event at `step` (1..n in order), with the .tom `text` and `line` it came from.

    `witnesses` are the agents who saw or heard it (docs/semantics.md section 3), known statically
    from presence: the checker replays who is in which room at every step. An event is one
    of five families below; each stage (lowering, the reference interpreter) dispatches on
    the family's class through one table.
    """

    step: int
    kind: EventKind
    text: str
    line: int
    witnesses: tuple[str, ...]
    # When it happened (canonical ISO, UTC): its `at T`, else the scenario's clock; None
    # before any time is stated. Never decreasing with the step (E148).
    time: Optional[str] = field(default=None, kw_only=True)

    @property
    def event_class(self) -> Optional[str]:
        """The policy section that routes this event, or None."""
        return EVENT_CLASS[self.kind]


@dataclass(frozen=True)
class Presence(Event):
    """`enter` or `exit`: `agents` join or leave `room`; entering leaves the previous room
    silently. Witnesses of an entering: everyone in the room afterwards (and `peekers`);
    `peekers` and `distracted` as for an Observation."""

    agents: tuple[str, ...]
    room: str
    peekers: tuple[str, ...] = ()
    distracted: tuple[str, ...] = ()


@dataclass(frozen=True)
class Observation(Event):
    """`state` (`in R: FACT`), `move` or `set`: a world change observed by everyone in `room`
    (the given room, else the actor's; None when the actor is in no room, and then only the
    actor sees it). The value is located in `room`.

    `peekers` (`A peeks` before it) saw it from outside the room, unseen: they are among the
    witnesses. `distracted` (`A is distracted`) are witnesses in the room who missed it while
    the others think they saw it. Routing reads both (tomc/compiler/routing.py)."""

    agents: tuple[str, ...]
    room: Optional[str]
    fact: Fact
    peekers: tuple[str, ...] = ()
    distracted: tuple[str, ...] = ()


@dataclass(frozen=True)
class Communication(Event):
    """`tell`, `says`, `announce`, `claim` or `retract`: `fact` from `source` (the speaker for
    speech; the claim's source) with its `authority`, reaching `listeners` (the speaker
    excluded): the listener of a tell, everyone in the speaker's room (says), every agent
    (announce, retract, claims to all), a room's occupants or named agents (claims).
    `speaker` is None for a claim without `by`; `room` is the room of a claim made `in R`.
    `published` (a claim's `at T`) and `valid_from` are canonical ISO times or None; an
    ending (`fact.ended`) has instead `valid_to`, where it ends the closed value's valid
    interval (`valid to D`, else `published`, else the event's time, else "": the
    beginning of time). A report (`about` X: `S tells L X believes FACT`) changes, instead of
    each chain the rules name, that chain's model of X (docs/semantics.md section 3,
    "Reports")."""

    speaker: Optional[str]
    listeners: tuple[str, ...]
    source: str
    authority: int
    fact: Fact
    room: Optional[str] = None
    published: Optional[str] = None
    valid_from: Optional[str] = None
    valid_to: Optional[str] = None
    about: Optional[str] = None
    # A tell, says or announce overheard by `peekers` (among the witnesses, not the
    # listeners) or missed by `distracted` listeners (docs/semantics.md section 3).
    peekers: tuple[str, ...] = ()
    distracted: tuple[str, ...] = ()


@dataclass(frozen=True)
class Handoff(Event):
    """`handoff S -> R write`: `speaker` sends `listener` the facts `ask handoff S -> R`
    includes, read from its mind when the event runs, as one private message with the
    speaker's `authority` (docs/semantics.md section 3, `on tell:` rules)."""

    speaker: str
    listener: str
    authority: int

    @property
    def listeners(self) -> tuple[str, ...]:
        """The one listener, as communications name them."""
        return (self.listener,)


@dataclass(frozen=True)
class Quiet(Event):
    """`wait`, `noop`, `peek` or `distracted`: recorded for provenance; nothing else changes
    (a peek or a distraction changes the witnesses of the next event: MODIFIERS)."""

    agents: tuple[str, ...] = ()


AnyEvent = Union[Presence, Observation, Communication, Handoff, Quiet]


@dataclass(frozen=True)
class QueryModel:
    """An `expect` or `ask`, evaluated at `step` (the events before it, or `at step N`).

    `chain` is empty for the truth. `on_date` (ISO text) asks about valid time instead of
    the current value. For an expect, `aspect` says what is compared with `expected`: the
    values held (empty for `unknown`), the contested rivals, or the supporting sources;
    `expect_set` says whether a set was written.
    """

    kind: Literal["expect", "ask"]
    chain: tuple[str, ...]
    key: str
    step: int
    text: str
    line: int
    span: Optional[ast.Span] = None
    expected: tuple[str, ...] = ()
    expect_set: bool = False
    many: bool = False
    aspect: Literal["value", "contested", "supported"] = "value"
    on_date: Optional[str] = None


AnalysisName = Literal["false_beliefs", "who_knows", "handoff", "common_ground", "explain",
                       "plan_announcements", "context_for", "search", "who_knows_best",
                       "open_tasks", "about", "explain_follow"]


@dataclass(frozen=True)
class AnalysisQuery:
    """An `ask ANALYSIS` or `expect ANALYSIS ...`, answered from the beliefs held at `step`
    (the events before it).

    Arguments: `depth` (false_beliefs), `key` (who_knows, explain, plan_announcements),
    `chain` (explain), `agents` (sender and receiver of handoff, the two agents of
    common_ground and context_for, the speaker of plan_announcements), `search` (search).
    For an expect, `part` names the part of the answer compared (None: the whole answer of
    false_beliefs or common_ground; see docs/language.md) and `expected` holds its items as
    canonical text (`Maya: refund.status`, `refund.status: private`, `Escalation > Shipping`,
    `4`, `announce`); for part "left", `plan` and `plan_depth` say which count.
    """

    kind: Literal["expect", "ask"]
    analysis: AnalysisName
    step: int
    text: str
    line: int
    span: Optional[ast.Span] = None
    depth: int = 1
    key: Optional[str] = None
    chain: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()
    part: Optional[str] = None
    plan: Optional[str] = None
    plan_depth: Optional[int] = None
    expected: tuple[str, ...] = ()
    search: Optional[str] = None  # the text of `search "TEXT"`, `who_knows_best "TOPIC"`


@dataclass(frozen=True)
class ReadyQuery:
    """An `ask ready` or `expect ready`: whether `procedure` can run, from the truth (`chain`
    empty) or from the chain's beliefs, at `step` (knowledge time) or `on_date` (valid time,
    ISO text). For an expect, `part` names what is compared with `expected`: the verdict
    (`ready`, `blocked` or `unknown`), or the keys of the blocked or unknown steps.
    """

    kind: Literal["expect", "ask"]
    procedure: Procedure
    chain: tuple[str, ...]
    step: int
    text: str
    line: int
    span: Optional[ast.Span] = None
    on_date: Optional[str] = None
    part: Optional[Literal["verdict", "blockers", "unknown"]] = None
    expected: tuple[str, ...] = ()


@dataclass
class ScenarioModel:
    """A checked scenario, ready to compile or interpret; `line` is where it starts."""

    name: str
    path: str
    policy: PolicyModel
    agents: list[str] = field(default_factory=list)
    rooms: list[str] = field(default_factory=list)
    events: list[AnyEvent] = field(default_factory=list)
    queries: list[QueryModel | AnalysisQuery | ReadyQuery] = field(default_factory=list)
    line: int = 1
    procedures: dict[str, Procedure] = field(default_factory=dict)  # the policy's and its own

    def chains(self) -> list[tuple[str, ...]]:
        """Every chain of pairwise distinct agents of length 1..depth, in a stable order."""
        out: list[tuple[str, ...]] = []
        frontier: list[tuple[str, ...]] = [()]
        for _ in range(self.policy.depth):
            frontier = [c + (a,) for c in frontier for a in self.agents if a not in c]
            out.extend(frontier)
        return out
