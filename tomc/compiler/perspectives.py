"""Perspectives stored as divergences: which chains hold a key themselves, which read it
from their parent (docs/semantics.md section 2 allows it: "storing only divergences ... is an
allowed implementation of the same meaning").

Each mind graph holds the chains that start with its agent as a tree: the parent of
`a1 > ... > ak` is `a1 > ... > ak-1`, and the root `a1` holds every key it has a belief
about. Any other chain **owns** a key once it has diverged from its parent on it; until
then it reads its parent's history for that key (and the parent may read its own parent).
A chain that owns a key holds that key's whole history (the versions it inherited are
copied when it starts to own the key), so a read walks up the tree to the nearest owner and
reads there, at any step.

The meaning stays the reference one, where every chain starts unknown and changes only when
a rule names it. That holds by copy-on-write, planned here for each event:

- a chain the event updates keeps reading from its parent when the parent is updated in the
  same event by the same rule with the same force (both then hold the same new history);
  otherwise it is **written**, after copying its parent's history if it did not own the key;
- a chain the event does not update, whose parent it updates, is **copied** first (it keeps
  the history it had), unless it owns the key already.

Ownership depends only on which chains events name, not on values, so the compiler tracks it
exactly; the mind graphs record it too (`owns` on each perspective), for readers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, NamedTuple, Sequence

from tomc.compiler.routing import Chain, Models, Route, Routing


class Copy(NamedTuple):
    """Before the event, `chain` starts to own `key`: its parent's history (read at
    `source`, the nearest chain above it that owns the key) is copied to it."""

    chain: Chain
    source: Chain
    key: str


class Write(NamedTuple):
    """`chain` resolves the event's facts about `keys` (docs/semantics.md section 4)."""

    chain: Chain
    rule: str
    force: bool
    keys: tuple[str, ...]


@dataclass
class MindPlan:
    """What one mind graph does for one event: copies first, then writes."""

    copies: list[Copy] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)


class Perspectives:
    """The chains of one scenario as trees (one per mind) and the keys each chain owns.

    `plan(routes, keys)` gives each mind's copies and writes for an event; `accept` records
    the ownership they create, once the event is committed (a write that loses a race to
    another writer is planned again). The state is a function of the events accepted so
    far: a live session keeps one, a writer that attaches rebuilds it from the graphs (`own`).
    """

    def __init__(self, chains: Iterable[Chain] = ()):
        self.owned: dict[Chain, set[str]] = {}
        self.children: dict[Chain, list[Chain]] = {}
        self.roots: list[Chain] = []
        self.owners: dict[str, set[Chain]] = {}  # by key: the chains below a root owning it
        self.keys: dict[str, set[str]] = {}  # by mind: every key routed into it so far
        self.add(chains)

    def add(self, chains: Iterable[Chain]) -> dict[Chain, list[str]]:
        """Take in chains (a scenario's, or those a later `agents` line makes possible).
        Returns what each new chain owns from the start: a new chain must read unknown for
        every key, so one whose parent existed before owns every key routed so far (with no
        history: unknown); one whose parent is new too reads that parent."""
        new = [c for c in chains if c not in self.owned]
        owns: dict[Chain, list[str]] = {}
        for chain in new:
            parent_existed = len(chain) > 1 and chain[:-1] in self.owned
            owns[chain] = sorted(self.keys.get(chain[0], ())) if parent_existed else []
        for chain in new:
            self.owned[chain] = set()
            self.own(chain, owns[chain])
            self.children.setdefault(chain, [])
            if len(chain) > 1:
                self.children.setdefault(chain[:-1], []).append(chain)
            else:
                self.roots.append(chain)
        return owns

    def own(self, chain: Chain, keys: Iterable[str]) -> None:
        """Record keys `chain` owns (as read back from its mind graph, or copied)."""
        for key in keys:
            self.owned[chain].add(key)
            if len(chain) > 1:
                self.owners.setdefault(key, set()).add(chain)

    def owner(self, chain: Chain, key: str) -> Chain:
        """The chain whose history `chain` reads for `key`: itself, or the nearest above it."""
        while len(chain) > 1 and key not in self.owned[chain]:
            chain = chain[:-1]
        return chain

    def plan(self, routing: Routing | Models, keys: Sequence[str]) -> dict[str, MindPlan]:
        """Each mind's copies and writes for an event whose facts (about `keys`) `routing`
        routes, keyed by the mind's agent. Changes nothing: see `accept`.

        Visits the roots, then goes down only where `routing.descend` says a chain can
        differ from its parent, or towards a chain that owns the key: a broadcast that
        names every chain visits the few it writes."""
        plans: dict[str, MindPlan] = {}
        writes: dict[Chain, tuple[Route, list[str]]] = {}
        for key in dict.fromkeys(keys):
            owners = self.owners.get(key, ())
            towards = {c[:n] for c in owners for n in range(1, len(c))}
            copies = []
            stack = [(root, None) for root in reversed(self.roots)]
            while stack:
                chain, above = stack.pop()
                route = routing.route(chain)
                if route is not None:
                    inherits = len(chain) > 1 and key not in self.owned[chain]
                    if not (inherits and above is not None
                            and (above.rule, above.force) == (route.rule, route.force)):
                        writes.setdefault(chain, (route, []))[1].append(key)
                        if inherits:
                            copies.append(Copy(chain, self.owner(chain, key), key))
                if not (routing.descend(chain, route)
                        or (route is not None and chain in towards)):
                    continue
                for child in reversed(self.children[chain]):
                    if route is not None and key not in self.owned[child] \
                            and routing.route(child) is None:
                        copies.append(Copy(child, self.owner(child, key), key))
                    stack.append((child, route))
            for copy in copies:
                plans.setdefault(copy.chain[0], MindPlan()).copies.append(copy)
        for chain, (route, chain_keys) in writes.items():
            plans.setdefault(chain[0], MindPlan()).writes.append(
                Write(chain, route.rule, route.force, tuple(chain_keys)))
        return plans

    def accept(self, plans: dict[str, MindPlan]) -> None:
        """Record what a committed event's copies made each chain own, and the keys it
        routed into each mind."""
        for agent, plan in plans.items():
            keys = self.keys.setdefault(agent, set())
            for copy in plan.copies:
                self.own(copy.chain, [copy.key])
                keys.add(copy.key)
            for write in plan.writes:
                keys.update(write.keys)
