"""Typed AST of .tom files: pydantic models, each carrying the source span it came from.

The parser (`tomc.dsl.parser`) builds these; the checker, the formatter, the compiler and
the reference interpreter read them. Two nodes are the same program when their
`canonical()` forms are equal: spans and the spelling of names (quoted or not) are ignored.
"""

from __future__ import annotations

import json
from typing import Callable, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field


class Span(BaseModel):
    """Where a node sits in its file: 1-based line and column of its first and last character."""

    model_config = ConfigDict(frozen=True, defer_build=True)
    line: int
    column: int
    end_line: int
    end_column: int


class Node(BaseModel):
    """Base of every AST node."""

    model_config = ConfigDict(frozen=True, defer_build=True)
    span: Optional[Span] = Field(default=None, repr=False)

    def canonical(self) -> dict:
        """The node as plain data, with each node's type and without spans or quoting, for
        comparing two parses (fmt round trips): `A enters R` and `A exits R` differ."""
        return _canonical(self)


def _canonical(value):
    if isinstance(value, Node):
        fields = {name: _canonical(getattr(value, name)) for name in type(value).model_fields
                  if name not in ("quoted", "comments") and not name.endswith("span")}
        return {"node": type(value).__name__, **fields}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    return value


class Name(Node):
    """An identifier or quoted string naming an agent, room, source, subject or container."""

    text: str
    quoted: bool = False


class Value(Node):
    """A value on the right of `=`: kept as text; `kind` only guides formatting. In
    `supported by`, a source and `via` the agents it was handed through, in order
    (`bulletin_r4 via Scout`: docs/language.md, "handoff S -> R write")."""

    text: str
    kind: Literal["name", "string", "number", "time"] = "name"
    via: list[Name] = []

    @property
    def support_text(self) -> str:
        """The source as a belief's support writes it: `bulletin_r4 via Scout`."""
        return " via ".join([self.text, *(n.text for n in self.via)])


class Key(Node):
    """`subject.predicate`; a bare subject means `subject.location` (docs/semantics.md
    section 1)."""

    subject: Name
    predicate: Optional[Name] = None

    @property
    def text(self) -> str:
        """The canonical key, always `subject.predicate`."""
        predicate = self.predicate.text if self.predicate else "location"
        return f"{_key_part(self.subject.text)}.{_key_part(predicate)}"


def _key_part(text: str) -> str:
    """A key's part as written in .tom: quoted when it holds `.` or `"`, so that `"a.b".c`
    and `a."b.c"` stay two keys."""
    return json.dumps(text, ensure_ascii=False) if "." in text or '"' in text else text


class Fact(Node):
    """`key = value`, or `subject is in container` (which is `subject.location = container`)."""

    key: Key
    value: Value
    form: Literal["assign", "located"] = "assign"


# ---------------------------------------------------------------- policies


class UsePolicy(Node):
    """`use policy NAME` (a shipped policy) or `use policy "path.tom"`."""

    target: Name


class SourceDecl(Node):
    """`source NAME authority N`: a document, channel or agent, with its integer authority."""

    name: Name
    authority: int


class PredicateDecl(Node):
    """`predicate KEY one|many [agent_only]`: the cardinality of a key (docs/semantics.md
    section 4), and whether each agent's value of it is its own note (never handed on)."""

    key: Key
    cardinality: Literal["one", "many"]
    agent_only: bool = False


class AliasDecl(Node):
    """`alias NAME = OTHER, ...`: other names of one subject (`alias Asha = asha, "A. Rao"`):
    a key whose subject is one of them is NAME's key, in events and questions alike, and
    search finds NAME's facts by any of them (docs/language.md, "Aliases")."""

    name: Name
    aliases: list[Name]


class Condition(Node):
    """`if [not] trusts(ROLE, ROLE)`: the trust test of the policy's trust mode."""

    truster: str
    trusted: str
    negated: bool = False


class Rule(Node):
    """One routing rule: which chains adopt the event's value, and when (docs/semantics.md
    section 3).

    Either `over` is set (every chain made only of agents in the union of these role sets)
    or `path` is (one chain of roles, e.g. `listener > speaker`, for each listener).
    """

    over: list[str] = []
    path: list[str] = []
    excepted: list[str] = []
    condition: Optional[Condition] = None

    @property
    def text(self) -> str:
        """The rule as written in canonical form, e.g. `listener > speaker adopts if ...`."""
        head = f"every chain over {' + '.join(self.over)}" if self.over else " > ".join(self.path)
        text = f"{head} adopts"
        if self.excepted:
            text += " except " + ", ".join(self.excepted)
        if self.condition:
            negated = "not " if self.condition.negated else ""
            text += f" if {negated}trusts({self.condition.truster}, {self.condition.trusted})"
        return text


EventClass = Literal["observe", "enter", "tell", "announce", "claim"]


class Section(Node):
    """`on CLASS:` and the rules under it; for `enter`, also what entering reveals."""

    event_class: EventClass
    reveal: Optional[Literal["nothing", "contents"]] = None
    rules: list[Rule] = []
    reveal_span: Optional[Span] = Field(default=None, repr=False)
    # `reveal contents except P, ...`: predicates (the part of a key after the dot; a bare
    # subject's is `location`) whose values entering does not show: invisible properties.
    hidden: list[Name] = []


class Requirement(Node):
    """`requires KEY [= V]`: one step of a procedure, satisfied when the perspective asked
    holds V (for a `many` key: V is in its set), or any value when V is left out."""

    key: Key
    value: Optional[Value] = None


class Procedure(Node):
    """`procedure NAME { requires ... }`: steps that `ready NAME` checks, in a scenario or in
    a policy (then shared by its scenarios)."""

    name: Name
    requires: list[Requirement] = []


class Policy(Node):
    """`policy NAME { ... }`: depth, trust mode, sources, predicates, routing sections and
    procedures."""

    name: Name
    depth: Optional[int] = None
    limits: Optional[int] = None  # `limits perspectives N`: the most chains a scenario may have
    trust: Optional[Literal["credulous", "exit_order", "authority", "learned"]] = None
    # Same authority, same date: the rival is contested (default), the newer supersedes,
    # or the first stays and the rival is dropped (docs/semantics.md section 4).
    ties: Optional[Literal["contested", "newest", "first"]] = None
    sources: list[SourceDecl] = []
    predicates: list[PredicateDecl] = []
    aliases: list[AliasDecl] = []
    sections: list[Section] = []
    procedures: list[Procedure] = []
    depth_span: Optional[Span] = Field(default=None, repr=False)
    limits_span: Optional[Span] = Field(default=None, repr=False)
    trust_span: Optional[Span] = Field(default=None, repr=False)
    ties_span: Optional[Span] = Field(default=None, repr=False)


# ---------------------------------------------------------------- scenario statements


class Timed(Node):
    """An event that may say when it happened: `... at T` (knowledge time by date: the
    time of its step, which moves the scenario's clock; docs/language.md, "Time")."""

    at: Optional[str] = None


class Clock(Node):
    """`clock T`: the time of the events that follow (until another clock or `at T`)."""

    time: str


class Agents(Node):
    """`agents A, B, ...`"""

    names: list[Name]


class Rooms(Node):
    """`rooms R, S, ...`"""

    names: list[Name]


class Enter(Timed):
    """`A, B enter R`: each leaves its previous room silently."""

    agents: list[Name]
    room: Name


class Exit(Timed):
    """`A, B exit R`: each must be in R; afterwards in no room."""

    agents: list[Name]
    room: Name


class State(Timed):
    """`in R: FACT`: a state observed by everyone in R, located in R."""

    room: Name
    fact: Fact


class Move(Timed):
    """`A moves X to C`: X.location = C, witnessed by everyone in A's room."""

    actor: Name
    subject: Name
    container: Name


class SetValue(Timed):
    """`A sets KEY = V`: a world change, witnessed by everyone in A's room (or A alone)."""

    actor: Name
    fact: Fact


class Tell(Timed):
    """`S tells L FACT`: a private message; with `about` X, a report `S tells L X believes
    FACT` (what X believes, docs/semantics.md section 3, "Reports")."""

    speaker: Name
    listener: Name
    fact: Fact
    about: Optional[Name] = None


class Says(Timed):
    """`S says [X believes] FACT`: public to everyone in S's room (`about`: a report)."""

    speaker: Name
    fact: Fact
    about: Optional[Name] = None


class Announce(Timed):
    """`S announces [X believes] FACT`: public to every agent of the scenario (`about`: a
    report)."""

    speaker: Name
    fact: Fact
    about: Optional[Name] = None


class Claim(Node):
    """`claim FACT from SOURCE [by A] [at T] [valid from D] [to all | in R | to A, B]`."""

    fact: Fact
    source: Name
    by: Optional[Name] = None
    at: Optional[str] = None
    valid_from: Optional[str] = None
    audience: Literal["all", "room", "agents"] = "all"
    room: Optional[Name] = None
    recipients: list[Name] = []


class EndedClaim(Node):
    """`claim KEY [= V] ended from SOURCE [by A] [at T] [valid to D] [to all | in R | to A,
    B]`: the source says the fact no longer holds (all of a `many` key's values, or only V):
    the belief is closed on both clocks, by the resolution table (docs/semantics.md section 4)."""

    key: Key
    value: Optional[Value] = None
    source: Name
    by: Optional[Name] = None
    at: Optional[str] = None
    valid_to: Optional[str] = None
    audience: Literal["all", "room", "agents"] = "all"
    room: Optional[Name] = None
    recipients: list[Name] = []


class Retract(Timed):
    """`A retracts KEY [= V]`: A takes back what it said; heard by every agent, it closes
    the beliefs held on A's word (their source is A), routed by the `on announce:` rules."""

    speaker: Name
    key: Key
    value: Optional[Value] = None


class HandoffWrite(Timed):
    """`handoff S -> R write`: S sends R the facts of `ask handoff S -> R`, as one private
    message (routed by the policy's `on tell:` rules)."""

    sender: Name
    receiver: Name


class Wait(Timed):
    """`A waits`: the agent does nothing (Hi-ToM's "made no movements")."""

    agent: Name


class Peek(Timed):
    """`A peeks`: A witnesses the next event, in a room A is not in, unseen by the others
    (docs/language.md, "Peeking and distraction")."""

    agent: Name


class Distracted(Timed):
    """`A is distracted`: A, in the room, misses the next event; the others think A saw it."""

    agent: Name


class Noop(Timed):
    """`noop "text"`: an event that changes nothing (noise sentences)."""

    text: Optional[str] = None


class Subject(Node):
    """What a query asks about: the truth (`chain` empty) or a chain's belief, of one key."""

    chain: list[Name] = []
    key: Key


class When(Node):
    """`at step N` or `at TIME` (knowledge time: what was held then; a time means the last
    event at or before it) or `on DATE` (valid time: what held in the world then,
    docs/semantics.md section 4, "Two clocks")."""

    step: Optional[int] = None
    time: Optional[str] = None
    date: Optional[str] = None


class Expect(Node):
    """`expect SUBJECT (= V | is in C | = {V, ...} | unknown | contested by V, ... |
    supported by S, ...) [at step N | on DATE]`: an assertion."""

    subject: Subject
    kind: Literal["value", "set", "unknown", "contested", "supported"]
    values: list[Value] = []
    form: Literal["assign", "located"] = "assign"
    when: Optional[When] = None


class Ask(Node):
    """`ask SUBJECT [at step N | on DATE]`: print the answer with its provenance."""

    subject: Subject
    when: Optional[When] = None


# ---------------------------------------------------------------- analyses (docs/language.md,
# "Asking memory"): what agents ask of memory, each answered from the beliefs held then.


class FalseBeliefs(Node):
    """`false_beliefs [depth N]`: chains of N agents whose belief differs from what the
    perspective they model holds (the truth, for N = 1). No depth: 1."""

    depth: Optional[int] = None


class WhoKnows(Node):
    """`who_knows KEY`: each agent up to date, out of date, incomplete, unknown or
    unverified."""

    key: Key


class Handoff(Node):
    """`handoff S -> R`: what S's model of R lacks, with a receipt of what was left out."""

    sender: Name
    receiver: Name


class CommonGround(Node):
    """`common_ground A, B`: the keys where A, B, A > B and B > A all agree."""

    first: Name
    second: Name


class Explain(Node):
    """`explain CHAIN KEY`: the event, witnesses, sources and who-told-whom path of a belief."""

    chain: list[Name]
    key: Key


class PlanAnnouncements(Node):
    """`plan_announcements KEY by S`: private tells to the misinformed, or one announcement."""

    key: Key
    speaker: Name


class ContextFor(Node):
    """`context_for A talking_to B`: a prompt block from A's own perspective."""

    agent: Name
    other: Name


class Search(Node):
    """`search "TEXT"`: versions and events whose words match TEXT, ranked."""

    text: str


class WhoKnowsBest(Node):
    """`who_knows_best "TOPIC"`: agents ranked by what the memory holds about them and TOPIC."""

    text: str


class OpenTasks(Node):
    """`open_tasks [for CHAIN]`: tasks (subjects with a status not done) the truth or the
    chain believes open, claimed or not, with findings."""

    chain: list[Name] = []


class About(Node):
    """`about SUBJECT [for CHAIN] [within N]`: what is held within N links of SUBJECT."""

    subject: Name
    chain: list[Name] = []
    within: Optional[int] = None


class ExplainFollow(Node):
    """`explain [CHAIN] KEY follow N`: the facts on the walk from KEY through links."""

    chain: list[Name] = []
    key: Key
    follow: int


Analysis = Union[FalseBeliefs, WhoKnows, Handoff, CommonGround, Explain, PlanAnnouncements,
                 ContextFor, Search, WhoKnowsBest, OpenTasks, About, ExplainFollow]


class AskAnalysis(Node):
    """`ask ANALYSIS`: print the analysis with its evidence."""

    analysis: Analysis


class BelieverKey(Node):
    """`CHAIN: KEY`, an item of `expect false_beliefs ... = {...}`."""

    chain: list[Name]
    key: Key


class Excluded(Node):
    """`KEY: REASON`, an item of `expect handoff S -> R excludes = {...}`."""

    key: Key
    reason: Literal["superseded", "contested", "private", "known", "agent_only"]


class ExpectAnalysis(Node):
    """`expect ANALYSIS [PART] = ...`: one part of an analysis compared with what is written.

    `part` names the part (None for false_beliefs and common_ground, whose answer is one
    set). The items sit in the field their shape needs: `names` (who_knows groups, plan
    tells, the explain path), `keys` (handoff includes/caveats/endings, common_ground, context
    differ/first), `believer_keys` (false_beliefs; handoff hearsay, each an agent and a
    key), `excluded` (handoff excludes); `number`
    is the step of `explain ... from step N` or the count of `plan_announcements ... PLAN
    depth D = N`, with `plan` and `depth` naming what is counted.
    """

    analysis: Analysis
    part: Optional[Literal["up_to_date", "out_of_date", "incomplete", "unknown", "unverified",
                          "includes", "endings", "hearsay",
                           "caveats", "excludes", "from_step", "path", "best", "tells", "left",
                           "differ", "first", "keys", "open", "unclaimed"]] = None
    plan: Optional[Literal["private", "announce"]] = None
    depth: Optional[int] = None
    number: Optional[int] = None
    names: list[Name] = []
    keys: list[Key] = []
    believer_keys: list[BelieverKey] = []
    excluded: list[Excluded] = []


class Ready(Node):
    """`ready NAME [for CHAIN]`: whether procedure NAME can run, from the truth (`chain`
    empty) or from a chain's beliefs."""

    procedure: Name
    chain: list[Name] = []


class AskReady(Node):
    """`ask ready NAME [for CHAIN] [at step N | on DATE]`: the verdict with every step's
    answer."""

    ready: Ready
    when: Optional[When] = None


class ExpectReady(Node):
    """`expect ready NAME [for CHAIN] = VERDICT` or `... blockers|unknown = {KEY, ...}`,
    optionally `at step N` / `on DATE`."""

    ready: Ready
    part: Literal["verdict", "blockers", "unknown"]
    verdict: Optional[Literal["ready", "blocked", "unknown"]] = None
    keys: list[Key] = []
    when: Optional[When] = None


Event = Union[Enter, Exit, State, Move, SetValue, Tell, Says, Announce, Claim, EndedClaim,
              Retract, HandoffWrite, Wait, Peek, Distracted, Noop]
Statement = Union[Agents, Rooms, Clock, Event, Expect, Ask, AskAnalysis, ExpectAnalysis,
                  Procedure, AskReady, ExpectReady]
EVENT_TYPES = (Enter, Exit, State, Move, SetValue, Tell, Says, Announce, Claim, EndedClaim,
               Retract, HandoffWrite, Wait, Peek, Distracted, Noop)


class Scenario(Node):
    """`scenario NAME { ... }`: declarations, events in step order, expectations and asks."""

    name: Name
    statements: list[Statement] = []


class Comment(Node):
    """A `# ...` comment: its text (from `#`), its line, and whether code precedes it there.
    Not part of the program (`canonical()` leaves comments out); `tomc fmt` keeps them."""

    text: str
    line: int
    trailing: bool = False


class File(Node):
    """One parsed .tom file."""

    items: list[Union[UsePolicy, Policy, Scenario]] = []
    comments: list[Comment] = []


def renamed_subjects(node, subject: Callable[[str], str]):
    """`node` with every key's subject, every link value (`"@NAME"`) and every `about`
    subject read through `subject` (a policy's aliases: docs/language.md, "Aliases"); the
    same object where nothing changes."""
    if isinstance(node, Key):
        named = subject(node.subject.text)
        if named == node.subject.text:
            return node
        return node.model_copy(update={"subject": Name(text=named, span=node.subject.span)})
    if isinstance(node, Value):
        if node.text.startswith("@") and subject(node.text[1:]) != node.text[1:]:
            return node.model_copy(update={"text": "@" + subject(node.text[1:])})
        return node
    if isinstance(node, About) and subject(node.subject.text) != node.subject.text:
        node = node.model_copy(update={"subject": Name(text=subject(node.subject.text),
                                                       span=node.subject.span)})
    if not isinstance(node, Node):
        return node
    update = {}
    for name in type(node).model_fields:
        value = getattr(node, name)
        if isinstance(value, Node):
            new = renamed_subjects(value, subject)
        elif isinstance(value, list) and any(isinstance(v, Node) for v in value):
            new = [renamed_subjects(v, subject) for v in value]
            new = value if all(a is b for a, b in zip(new, value)) else new
        else:
            continue
        if new is not value:
            update[name] = new
    return node.model_copy(update=update) if update else node
