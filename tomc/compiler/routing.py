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

from typing import Collection, Iterable, NamedTuple, Optional, Sequence

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


class Rule(NamedTuple):
    """One routing rule of an event, as a test on a chain: `every chain over SETS` names the
    chains headed by one of `heads` and followed only by `members`, minus `excepted`
    (chains of one agent); a path rule names exactly `named`."""

    text: str
    heads: frozenset = frozenset()
    members: frozenset = frozenset()
    excepted: frozenset = frozenset()
    named: Optional[frozenset] = None

    def names(self, chain: Chain) -> bool:
        if self.named is not None:
            return chain in self.named
        return (chain[0] in self.heads and chain not in self.excepted
                and all(a in self.members for a in chain[1:]))


class Routing:
    """What an event's rules name: `route(chain)` is the first rule naming a chain (None: the
    event leaves it alone), with its force. Computed per chain, so the compiler visits
    only the chains where something changes (tomc/compiler/perspectives.py `plan`) rather
    than every chain a broadcast names; `descend` says below which chains that can be.

    `agents` are the scenario's; `own` a chain never routed (the speaker's own belief);
    `speaker` forces the chains that end with it when `by_speaker` (trust authority)."""

    def __init__(self, rules: Sequence[Rule], agents: Iterable[str],
                 own: Optional[Chain] = None, speaker: Optional[str] = None,
                 by_speaker: bool = False):
        self.rules = list(rules)
        self.agents = frozenset(agents)
        self.own = own
        self.speaker = speaker
        self.by_speaker = by_speaker
        # Below these an unnamed chain may have named descendants: the chains leading to
        # a path rule's chains, chains a rule excepts (another rule may name them) and
        # the speaker's own chain (never routed, though rules name the chains below it).
        self.paths = frozenset(c[:n] for r in self.rules if r.named is not None
                               for c in r.named for n in range(1, len(c) + 1))
        self.excepted = frozenset(c for r in self.rules for c in r.excepted) | {own}

    def route(self, chain: Chain) -> Optional[Route]:
        if chain == self.own:
            return None
        for rule in self.rules:
            if rule.names(chain):
                force = not self.by_speaker or (len(chain) >= 2 and chain[-1] == self.speaker)
                return Route(chain, rule.text, force)
        return None

    def descend(self, chain: Chain, route: Optional[Route]) -> bool:
        """Whether a chain below `chain` (whose route is `route`) can be named differently
        from `chain`, or not at all while `chain` is named: otherwise its whole subtree
        reads `chain`'s history, as before. A rule's tests only narrow as a chain grows
        (its head stays, its members only add), so below an unnamed chain nothing is named
        but under a path rule or an exception; below a chain an `over` rule names, a child
        is named by the same rule unless its new agent is not a member of it."""
        if chain in self.paths or chain in self.excepted:
            return True
        if route is None:
            return False
        rule = next(r for r in self.rules if r.text == route.rule and r.names(chain))
        if rule.named is not None:
            return True
        if self.by_speaker and self.speaker in rule.members:
            return True  # a chain that ends with the speaker is forced, its parent not
        return not (self.agents - set(chain)) <= rule.members

    def routes(self, chains: Iterable[Chain]) -> list[Route]:
        """Every route among `chains` (review listings, tests: off the write path)."""
        return [r for r in map(self.route, chains) if r is not None]


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


def observation_routing(policy: PolicyModel, agents: Iterable[str], witnesses: Iterable[str],
                        peekers: Iterable[str] = (),
                        distracted: Iterable[str] = ()) -> Routing:
    """The chains an observed world event (or what entering reveals) updates: the `on
    observe:` rules over its witnesses (`observation_sets`); observations are always
    adopted."""
    section = policy.sections.get("observe")
    sets = observation_sets(witnesses, peekers, distracted)
    return Routing([_over(rule, sets, frozenset()) for rule in section.rules]
                   if section else [], agents)


def observation_routes(policy: PolicyModel, chains: Sequence[Chain], witnesses: Iterable[str],
                       peekers: Iterable[str] = (),
                       distracted: Iterable[str] = ()) -> list[Route]:
    """`observation_routing`'s routes among `chains`."""
    agents = {a for c in chains for a in c}
    return observation_routing(policy, agents, witnesses, peekers,
                               distracted).routes(chains)


def communication_routing(policy: PolicyModel, agents: Collection[str],
                          event: Communication | Handoff,
                          believers: Iterable[str]) -> Routing:
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
    rules = []
    for rule in section.rules if section else []:
        if rule.over:
            excepted = set()
            for role in rule.excepted:
                excepted |= {(speaker,)} if role == "speaker" else {(a,) for a in listeners}
            rules.append(_over(rule, sets, frozenset(excepted)))
            continue
        if "listener" in rule.path:
            named = _path(rule, speaker, listeners, believing, missing)
            named += _overheard(rule, speaker, listeners, believing, peekers)
        else:
            named = [tuple(speaker for _ in rule.path)] + [
                (k, *(speaker for _ in rule.path[1:])) for k in peekers]
        # A path that repeats an agent, or is longer than the policy's depth, is no chain.
        rules.append(Rule(rule.text, named=frozenset(
            c for c in named if len(set(c)) == len(c) <= policy.depth
            and all(a in agents for a in c))))
    return Routing(rules, agents, (speaker,), speaker, policy.trust == "authority")


def communication_routes(policy: PolicyModel, chains: Sequence[Chain],
                         event: Communication | Handoff,
                         believers: Iterable[str]) -> list[Route]:
    """`communication_routing`'s routes among `chains`."""
    agents = {a for c in chains for a in c}
    return communication_routing(policy, agents, event, believers).routes(chains)


class Models:
    """A routing moved to each chain's model of `agent` (`C > agent`), where the policy
    tracks it and `agent` is not in C: where a report about `agent`, or hearsay a handoff
    carries, goes (docs/semantics.md section 3, "Reports"). The rule text gets `prefix`;
    the force is C's. Such chains are found below every chain that does not hold `agent`
    (reports and hearsay are rare: no shortcut)."""

    def __init__(self, base: Routing, agent: str, prefix: str = ""):
        self.base, self.agent, self.prefix = base, agent, prefix

    def route(self, chain: Chain) -> Optional[Route]:
        if len(chain) < 2 or chain[-1] != self.agent or self.agent in chain[:-1]:
            return None
        route = self.base.route(chain[:-1])
        return None if route is None else Route(chain, self.prefix + route.rule, route.force)

    def descend(self, chain: Chain, route: Optional[Route]) -> bool:
        return route is not None or self.agent not in chain  # (copies below a named one)

    def routes(self, chains: Iterable[Chain]) -> list[Route]:
        return [r for r in map(self.route, chains) if r is not None]


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


def _over(rule: ast.Rule, sets: RoleSets, excepted: frozenset) -> Rule:
    """`every chain over SETS`: the chains headed by an agent who may head one in the union
    of the sets and followed only by agents who may follow, minus excepted ones."""
    none = (set(), set())
    heads = set().union(*(sets.get(name, none)[0] for name in rule.over))
    members = set().union(*(sets.get(name, none)[1] for name in rule.over))
    return Rule(rule.text, frozenset(heads), frozenset(members), excepted)
