"""The Hi-ToM generator's own update order, replayed over a story's sentences: a diagnostic.

tomc implements the Hi-ToM policy of docs/semantics.md section 3. The released labels come from the
generator's code (ying-hui-he/Hi-ToM_dataset, `dynamic_actions.py`), which updates beliefs
differently in two ways that change answers:

1. `The X is in the C.` and a move update only the chains whose agents appear in the order of
   an observer list (the generator iterates `itertools.combinations`, not every ordering). For
   a statement the list is the agents present, in the order they entered; for a move it is the
   other agents present, in that order, then the mover. So when Avery moves the X while
   Charlotte watches, `Charlotte > Avery` learns the new place but `Avery > Charlotte` does not.
2. The generator places every object before it writes a chapter, so entering a room (other than
   the waiting room) shows every chain over the entrants, in every order, where each object of
   that room is, including an object whose first `The X is in the C.` comes later in the story.

Public claims and private tells are replayed as in docs/semantics.md (exit-order trust).

This replay is neither a policy nor a scoring target: `eval.hitom` uses it only to say which
disagreements between the engine and a released label the generator's update order explains.
On the released data it reproduces all 600 VP labels (and 462 of the 600 CoTP labels).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from typing import Optional

Chain = tuple[str, ...]

DEPTH = 4
WAITING_ROOM = "waiting_room"

_ENTER = re.compile(r"(?P<agents>\w+(?:, \w+)*(?: and \w+)?) entered the (?P<room>\w+)\.")
_STATE = re.compile(r"The (?P<object>\w+) is in the (?P<container>\w+)\.")
_MOVE = re.compile(r"(?P<agent>\w+) moved the (?P<object>\w+) to the (?P<container>\w+)\.")
_EXIT = re.compile(r"(?P<agent>\w+) exited the (?P<room>\w+)\.")
_CLAIM = re.compile(r"(?P<speaker>\w+) publicly claimed that (?:the )?(?P<object>\w+)"
                    r" is in the (?P<container>\w+)(?: now)?\.")
_TELL = re.compile(r"(?P<speaker>\w+) privately told (?P<listener>\w+) that (?:the )?"
                   r"(?P<object>\w+) is in the (?P<container>\w+)(?: now)?\.")


def _names(agents: str) -> list[str]:
    return re.split(r", | and ", agents)


def _chains(observers: Sequence[str], every_order: bool) -> list[Chain]:
    """Chains of 1..DEPTH distinct observers: every ordering, or only the list's own order."""
    choose = itertools.permutations if every_order else itertools.combinations
    return [chain for k in range(1, DEPTH + 1) for chain in choose(observers, k)]


class GeneratorReplay:
    """Replays one story's sentences; `belief(chain, object)` then reads the final state."""

    def __init__(self, sentences: Sequence[str]):
        self.truth: dict[str, str] = {}
        self.beliefs: dict[tuple[Chain, str], str] = {}
        self._object_room: dict[str, str] = {}
        self._agent_room: dict[str, Optional[str]] = {}
        self._entered: dict[str, list[str]] = {}  # room -> agents of its latest entry, in order
        self._last_exit: dict[tuple[str, str], int] = {}
        self._agents: list[str] = []
        self._placed = self._initial_places(sentences)
        for match in map(_ENTER.fullmatch, sentences):
            for agent in _names(match["agents"]) if match else []:
                if agent not in self._agents:
                    self._agents.append(agent)
        self._room: Optional[str] = None
        for step, sentence in enumerate(sentences, 1):
            self._apply(step, sentence)

    def belief(self, chain: Sequence[str], obj: str) -> Optional[str]:
        """Where `chain` thinks `obj` is (the truth for an empty chain); None if never told."""
        if not chain:
            return self.truth.get(obj)
        return self.beliefs.get((tuple(chain), obj))

    @staticmethod
    def _initial_places(sentences: Sequence[str]) -> dict[str, tuple[str, str]]:
        """object -> (room, container) of its first `The X is in the C.`."""
        placed: dict[str, tuple[str, str]] = {}
        room = None
        for sentence in sentences:
            if (enter := _ENTER.fullmatch(sentence)) and enter["room"] != WAITING_ROOM:
                room = enter["room"]
            elif (state := _STATE.fullmatch(sentence)) and room is not None:
                placed.setdefault(state["object"], (room, state["container"]))
        return placed

    def _present(self, room: Optional[str]) -> list[str]:
        return [a for a in self._entered.get(room, []) if self._agent_room.get(a) == room]

    def _trusts(self, listener: str, speaker: str, obj: str) -> bool:
        room = self._object_room.get(obj)
        return self._last_exit.get((speaker, room), 0) > self._last_exit.get((listener, room), 0)

    def _adopt(self, chains: list[Chain], obj: str, container: str) -> None:
        for chain in chains:
            self.beliefs[(chain, obj)] = container

    def _apply(self, step: int, sentence: str) -> None:
        if enter := _ENTER.fullmatch(sentence):
            agents, room = _names(enter["agents"]), enter["room"]
            for agent in agents:
                self._agent_room[agent] = room
            if room == WAITING_ROOM:
                return
            self._room, self._entered[room] = room, agents
            shown = {o: c for o, c in self.truth.items() if self._object_room[o] == room}
            for obj, (first_room, container) in self._placed.items():
                if first_room == room and obj not in self.truth:
                    shown[obj] = container
            for obj, container in shown.items():
                self._adopt(_chains(agents, every_order=True), obj, container)
        elif state := _STATE.fullmatch(sentence):
            obj, container = state["object"], state["container"]
            self.truth[obj], self._object_room[obj] = container, self._room
            self._adopt(_chains(self._present(self._room), every_order=False), obj, container)
        elif move := _MOVE.fullmatch(sentence):
            mover, obj, container = move["agent"], move["object"], move["container"]
            room = self._agent_room.get(mover)
            self.truth[obj], self._object_room[obj] = container, room
            observers = [a for a in self._present(room) if a != mover] + [mover]
            self._adopt(_chains(observers, every_order=False), obj, container)
        elif exit_ := _EXIT.fullmatch(sentence):
            self._last_exit[(exit_["agent"], exit_["room"])] = step
            self._agent_room[exit_["agent"]] = None
        elif claim := _CLAIM.fullmatch(sentence):
            speaker, obj, container = claim["speaker"], claim["object"], claim["container"]
            for listener in (a for a in self._agents if a != speaker):
                if self._trusts(listener, speaker, obj):
                    self._adopt([(listener,), (listener, speaker)], obj, container)
                self._adopt([(speaker, listener)], obj, container)
        elif tell := _TELL.fullmatch(sentence):
            speaker, listener = tell["speaker"], tell["listener"]
            obj, container = tell["object"], tell["container"]
            if self._trusts(listener, speaker, obj):
                self._adopt([(listener,), (listener, speaker)], obj, container)
            self._adopt([(speaker, listener)], obj, container)


def places_of(sentences: Sequence[str], obj: str) -> set[str]:
    """Every container a sentence of the story puts `obj` in: stated, moved, claimed or told."""
    places = set()
    for sentence in sentences:
        for pattern in (_STATE, _MOVE, _CLAIM, _TELL):
            if (match := pattern.fullmatch(sentence)) and match["object"] == obj:
                places.add(match["container"])
    return places
