"""Which chains an event updates (docs/semantics.md section 3), from the policy's routing rules.

The compiler evaluates the rules itself: who witnessed an event, who heard it and who
trusts the speaker are known before it runs (presence is replayed by the checker; trust is
static under `trust credulous` and `trust authority`, and read from the world graph just
before the event under `trust exit_order`). Each rule becomes the exact list of chains it
names, and each chain gets the rule that named it and whether it adopts outright (`force`)
or through the resolution table of section 4. The reference interpreter reads the same
rules independently (tomc/reference/interpreter.py); the property tests compare the two.
"""

from __future__ import annotations

from typing import Iterable, NamedTuple, Optional, Sequence

from tomc.dsl import ast
from tomc.dsl.program import Communication, Handoff, PolicyModel

Chain = tuple[str, ...]
# A role set's agents, as (those who may head a chain, those who may follow the head): the
# same for every set but those of observations, where peekers and distracted agents differ.
RoleSets = dict[str, tuple[set[str], set[str]]]


class Route(NamedTuple):
    """A chain an event updates, the text of the rule that names it, and whether it adopts
    the value outright (`force`) instead of resolving it by authority (docs/semantics.md section 4).
    A named tuple: a broadcast at 16 agents, depth 3 makes 3,615 of them, and a frozen
    dataclass took five times as long to build."""

    chain: Chain
    rule: str
    force: bool


def observation_sets(witnesses: Iterable[str], peekers: Iterable[str] = (),
                     distracted: Iterable[str] = ()) -> RoleSets:
    """The role sets of an observed event (docs/language.md, "Peeking and distraction").
    `witnesses` may head a chain if they saw it (in the room and not distracted, or
    peeking) and follow the head if the others think they saw it (in the room, distracted
    ones included, peekers not); `peekers` and `distracted` are each both."""
    peeking, missing = set(peekers), set(distracted)
    in_room = set(witnesses) - peeking
    return {"witnesses": ((in_room - missing) | peeking, in_room),
            "peekers": (peeking, peeking), "distracted": (missing, missing)}


def observation_routes(policy: PolicyModel, chains: Sequence[Chain], witnesses: Iterable[str],
                       peekers: Iterable[str] = (),
                       distracted: Iterable[str] = ()) -> list[Route]:
    """The chains an observed world event (or what entering reveals) updates: the `on
    observe:` rules over its witnesses (`observation_sets`); observations are always
    adopted."""
    section = policy.sections.get("observe")
    sets = observation_sets(witnesses, peekers, distracted)
    routes: dict[Chain, Route] = {}
    for rule in section.rules if section else []:
        text = rule.text  # computed from the rule's fields: once, not once per chain
        for chain in _over(rule, sets, chains, excepted=set()):
            if chain not in routes:
                routes[chain] = Route(chain, text, True)
    return list(routes.values())


def communication_routes(policy: PolicyModel, chains: Sequence[Chain],
                         event: Communication | Handoff,
                         believers: Iterable[str]) -> list[Route]:
    """The chains a communication updates: the rules of its section (`on tell:`, `on
    announce:`, `on claim:`) over its speaker, listeners and believers (the listeners who
    trust the speaker, and the peekers who do). The speaker's own belief never changes
    because it spoke. Under `trust authority`, chains that end with the speaker adopt
    outright (the speaker is taken to believe what it says); the others resolve by the
    table. A peeker (who overheard it) may head a chain and never follow; a distracted
    listener may follow and never head (docs/semantics.md section 3)."""
    section = policy.sections.get(event.event_class)
    speaker: Optional[str] = event.speaker
    listeners = list(event.listeners)
    peekers = list(getattr(event, "peekers", ()))
    missing = set(getattr(event, "distracted", ()))
    believing = set(believers)
    heads = {"listeners": (set(listeners) - missing) | set(peekers),
             "believers": believing - missing,
             "speaker": {speaker} if speaker is not None else set()}
    follows = {"listeners": set(listeners), "believers": believing - set(peekers),
               "speaker": {speaker} if speaker is not None else set()}
    sets = {name: (heads[name], follows[name]) for name in heads}
    known = set(chains)
    own = (speaker,)
    routes: dict[Chain, Route] = {}
    for rule in section.rules if section else []:
        if rule.over:
            excepted = set()
            for role in rule.excepted:
                excepted |= {(speaker,)} if role == "speaker" else {(a,) for a in listeners}
            named = _over(rule, sets, chains, excepted)
        elif "listener" in rule.path:
            named = _path(rule, speaker, listeners, believing, missing)
            named += _overheard(rule, speaker, listeners, believing, peekers)
        else:
            named = [tuple(speaker for _ in rule.path)] + [
                (k, *(speaker for _ in rule.path[1:])) for k in peekers]
        text = rule.text  # computed from the rule's fields: once, not once per chain
        for chain in named:
            if chain in known and chain != own and chain not in routes:
                routes[chain] = Route(chain, text, _forced(policy, chain, speaker))
    return list(routes.values())


def models_of(routes: Sequence[Route], agent: str, chains: Sequence[Chain],
              prefix: str = "") -> list[Route]:
    """Each route moved to its chain's model of `agent` (`C > agent`), where the policy
    tracks it and `agent` is not in C: where a report about `agent`, or hearsay a handoff
    carries, goes (docs/semantics.md section 3, "Reports"). The rule text gets `prefix`."""
    known = set(chains)
    return [Route((*r.chain, agent), prefix + r.rule, r.force) for r in routes
            if agent not in r.chain and (*r.chain, agent) in known]


def _path(rule: ast.Rule, speaker: Optional[str], listeners: list[str], believing: set[str],
          missing: set[str]) -> list[Chain]:
    """A path rule's chains, one per listener meeting its condition, none headed by a
    distracted listener."""
    chosen = listeners
    if rule.condition is not None:
        chosen = [a for a in listeners if (a in believing) != rule.condition.negated]
    named = [tuple(a if role == "listener" else speaker for role in rule.path) for a in chosen]
    return [c for c in named if c[0] not in missing]


def _overheard(rule: ast.Rule, speaker: Optional[str], listeners: list[str],
               believing: set[str], peekers: list[str]) -> list[Chain]:
    """A path rule's chains with a peeker in place of its first role: `listener adopts`
    gives the peeker, `speaker > listener` the peeker's model of each listener. The trust
    condition is the peeker's when the rule's head is the listener, else the listener's."""
    named = []
    tail = rule.path[1:]
    for peeker in peekers:
        for listener in (listeners if "listener" in tail else [None]):
            if rule.condition is not None:
                trusted = peeker in believing if rule.path[0] == "listener" else (
                    listener is None or listener in believing)
                if trusted == rule.condition.negated:
                    continue
            chain = (peeker, *(listener if role == "listener" else speaker for role in tail))
            if len(set(chain)) == len(chain):
                named.append(chain)
    return named


def truth_adopts(event: Communication, policy: PolicyModel) -> Optional[bool]:
    """Whether the truth takes a communication's value outright (True), by the resolution
    table (False), or not at all (None: speech never changes the truth, claims do)."""
    if event.kind != "claim":
        return None
    return policy.trust != "authority"


def _forced(policy: PolicyModel, chain: Chain, speaker: Optional[str]) -> bool:
    return policy.trust != "authority" or (len(chain) >= 2 and chain[-1] == speaker)


def _over(rule: ast.Rule, sets: RoleSets, chains: Sequence[Chain],
          excepted: set[Chain]) -> list[Chain]:
    """`every chain over SETS`: the chains headed by an agent who may head one in the union
    of the sets and followed only by agents who may follow, minus excepted ones."""
    none = (set(), set())
    heads = set().union(*(sets.get(name, none)[0] for name in rule.over))
    members = set().union(*(sets.get(name, none)[1] for name in rule.over))
    return [c for c in chains if c[0] in heads and set(c[1:]) <= members
            and c not in excepted]
