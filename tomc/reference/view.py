"""The belief view over the reference interpreter's state: the same reads as
tomc/runtime/graph_view.py, from Python objects, so every analysis answers the same on both
engines (and tests can compare them)."""

from __future__ import annotations

import copy
import dataclasses
from contextlib import contextmanager
from typing import Iterable, Iterator, Sequence

from tomc.beliefs import Chain, EventInfo, Held, Rival, Standing, ToldPath
from tomc.dsl.program import AnyEvent
from tomc.reference.interpreter import Belief, ReferenceInterpreter, Told
from tomc.search_text import words


class ReferenceView:
    """A BeliefView (tomc/analysis/view.py) of `interpreter`'s state, as of `step`."""

    def __init__(self, interpreter: ReferenceInterpreter, step: int):
        self.interpreter = interpreter
        self.scenario = interpreter.scenario
        self.step = step

    def held(self, chains: Iterable[Chain]) -> list[Held]:
        """The versions `chains` hold at the view's step."""
        step = self.step
        return [self._held(chain, b) for chain in dict.fromkeys(chains)
                for b in self.interpreter.beliefs.get(chain, [])
                if b.since <= step and (b.until is None or b.until > step)]

    def superseded(self, chains: Iterable[Chain]) -> list[Held]:
        """The versions `chains` had closed by the view's step (never-held ones left out)."""
        return [self._held(chain, b) for chain in dict.fromkeys(chains)
                for b in self.interpreter.beliefs.get(chain, [])
                if b.until is not None and b.since < b.until <= self.step]

    def events(self) -> list[EventInfo]:
        """Every event up to the view's step, with witnesses."""
        return [EventInfo(e.step, e.kind, e.text, e.line, tuple(sorted(e.witnesses)))
                for step, e in sorted(self.interpreter.events.items()) if step <= self.step]

    def told_paths(self, holder: str, key: str, value: str, since: int) -> list[ToldPath]:
        """Who-told-whom paths to `holder`: the tell at `since`, then each teller's first
        hearing of the value, back while the steps decrease and no agent repeats."""
        told = sorted((t for t in self.interpreter.told if t.key == key and t.value == value),
                      key=lambda t: t.step)
        first: dict[str, Told] = {}
        for t in told:
            first.setdefault(t.listener, t)
        path = next((ToldPath((t.speaker, holder), (since,)) for t in told
                     if t.listener == holder and t.step == since), None)
        paths = []
        while path is not None:
            paths.append(path)
            heard = first.get(path.agents[0])
            path = (ToldPath((heard.speaker, *path.agents), (heard.step, *path.steps))
                    if heard is not None and heard.step < path.steps[0]
                    and heard.speaker not in path.agents else None)
        return paths

    def linked(self, chain: Chain, key: str, follow: int) -> list[tuple[tuple[str, ...], Held]]:
        """The walk from `key` through links, level by level over the chain's held versions:
        the paths of each level extend those of the level before by one link, to subjects
        no earlier level reached."""
        held = [dataclasses.replace(h, rivals=()) for h in self.held([chain])]
        of_subject: dict[str, list[Held]] = {}
        for h in held:
            of_subject.setdefault(h.key.rpartition(".")[0] or h.key, []).append(h)
        level = [(key.rpartition(".")[0] or key,)]
        reached, paths = set(level[0]), list(level)
        for hop in range(1, follow + 1):
            nxt = []
            for path in level:
                facts = [h for h in held if h.key == key] if hop == 1 else of_subject.get(path[-1], [])
                for h in facts:
                    target = h.value[1:]
                    if h.value.startswith("@") and target not in reached \
                            and (*path, target) not in nxt:
                        nxt.append((*path, target))
            reached |= {p[-1] for p in nxt}
            paths += nxt
            level = nxt
        return [(path, h) for path in paths
                for h in ([h for h in held if h.key == key] if len(path) == 1
                          else of_subject.get(path[-1], []))]

    def near(self, chain: Chain, subject: str,
             within: int) -> list[tuple[tuple[str, ...], Held]]:
        """The walk of `about`, breadth first over the chain's held versions: from each
        subject of a level, in the order they were reached, the subjects its facts link to,
        then those whose facts link to it (each by key and value); the first path to a
        subject is its path."""
        held = sorted((dataclasses.replace(h, rivals=()) for h in self.held([chain])),
                      key=lambda h: (h.key, h.value))
        of_subject: dict[str, list[Held]] = {}
        pointing: dict[str, list[Held]] = {}
        for h in held:
            of_subject.setdefault(h.key.rpartition(".")[0] or h.key, []).append(h)
            if h.value.startswith("@"):
                pointing.setdefault(h.value[1:], []).append(h)
        paths = {subject: (subject,)}
        level = [subject]
        for _ in range(within):
            reached = []
            for name in level:
                targets = [h.value[1:] for h in of_subject.get(name, [])
                           if h.value.startswith("@")]
                targets += [h.key.rpartition(".")[0] or h.key for h in pointing.get(name, [])]
                for target in targets:
                    if target not in paths:
                        paths[target] = (*paths[name], target)
                        reached.append(target)
            level = reached
        return [(path, h) for name, path in paths.items() for h in of_subject.get(name, [])]

    def found(self, terms: tuple[str, ...], minds: Sequence[str], truth: bool) -> list[Held]:
        """Versions matching `terms`: every chain of the minds (and the truth) scanned, each
        version's words compared term by term (a term is a prefix of a word)."""
        wanted = set(minds)
        found = []
        for chain, beliefs in self.interpreter.beliefs.items():
            if not ((chain and chain[0] in wanted) or (not chain and truth)):
                continue
            for b in beliefs:
                if b.since > self.step or (b.until is not None and b.until <= b.since):
                    continue  # not yet held, or never held (closed where it began)
                split = words(b.key, b.value, b.source).split()
                if any(w.startswith(t) for t in terms for w in split):
                    found.append(dataclasses.replace(self._held(chain, b), rivals=()))
        return found

    def standing(self, source: str) -> Standing:
        """`source`'s standing after the view's step (the interpreter's own ledger)."""
        return self.interpreter.ledger.standing(source, self.step + 1)

    def found_events(self, terms: tuple[str, ...]) -> list[EventInfo]:
        """Events up to the view's step whose text's words match one of `terms`."""
        return [e for e in self.events()
                if any(w.startswith(t) for t in terms for w in words(e.text).split())]

    @contextmanager
    def simulate(self, events: Sequence[AnyEvent]) -> Iterator["ReferenceView"]:
        """Apply `events` to a copy of the interpreter (the scenario and policy are shared,
        not copied) and yield a view of the copy."""
        if self.interpreter.events and max(self.interpreter.events) > self.step:
            raise ValueError(f"cannot simulate from step {self.step}: the state is at step "
                             f"{max(self.interpreter.events)}")
        shared = {id(self.scenario): self.scenario, id(self.interpreter.policy):
                  self.interpreter.policy}
        fork = copy.deepcopy(self.interpreter, shared)
        for event in events:
            fork.apply(event)
        yield ReferenceView(fork, events[-1].step)

    def _held(self, chain: Chain, b: Belief) -> Held:
        rivals = sorted((Rival(c.value, c.source, c.authority, c.step, c.kind)
                         for c in b.disputed_at(self.step)),
                        key=lambda x: (x.step, x.value))
        return Held(chain, b.key, b.value, b.since, b.until if b.until is not None and
                    b.until <= self.step else None, b.kind, b.rule, b.source,
                    tuple(b.support_at(self.step)), b.authority_at(self.step), tuple(rivals),
                    b.published_at(self.step), b.valid_from,
                    b.ending if b.until is not None and b.until <= self.step else None)
