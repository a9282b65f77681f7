"""The events `python -m eval.bench` times: a deterministic mix of what agents do, written as
.tom statements and applied the way users write them (`Session.apply`).

`mixed_events(agents, n, seed)` yields enter / exit / move / tell / announce / claim in
equal shares, always valid for the presence so far (an agent that is in no room enters one
instead of exiting or moving). `depth_policy(folder, depth)` writes a policy file that is
the shipped default at another depth (for the broadcast memories).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Iterator, Optional

ROOMS = ("hall", "office")
KINDS = ("enter", "exit", "move", "tell", "announce", "claim")
KEYS = 10  # ticket0.status .. ticket9.status
VALUES = 4
OBJECTS = 5
CONTAINERS = 3


def agent_names(count: int) -> list[str]:
    return [f"agent{i}" for i in range(count)]


def setup_statements(agents: list[str]) -> list[str]:
    """Declare the agents and rooms, and put everyone in the first room."""
    return ["agents " + ", ".join(agents), "rooms " + ", ".join(ROOMS),
            ", ".join(agents) + f" enter {ROOMS[0]}"]


def mixed_events(agents: list[str], count: int, seed: int = 11) -> Iterator[str]:
    """`count` events, in equal shares of KINDS, valid after `setup_statements`."""
    rng = random.Random(seed)
    where: dict[str, Optional[str]] = {a: ROOMS[0] for a in agents}
    for i in range(count):
        kind = KINDS[i % len(KINDS)]
        actor = rng.choice(agents)
        key = f"ticket{rng.randrange(KEYS)}.status"
        value = f"state{rng.randrange(VALUES)}"
        if kind in ("exit", "move") and where[actor] is None:
            kind = "enter"
        if kind == "enter":
            room = rng.choice([r for r in ROOMS if r != where[actor]])
            where[actor] = room
            yield f"{actor} enters {room}"
        elif kind == "exit":
            yield f"{actor} exits {where[actor]}"
            where[actor] = None
        elif kind == "move":
            yield (f"{actor} moves parcel{rng.randrange(OBJECTS)} to "
                   f"shelf{rng.randrange(CONTAINERS)}")
        elif kind == "tell":
            listener = rng.choice([a for a in agents if a != actor])
            yield f"{actor} tells {listener} {key} = {value}"
        elif kind == "announce":
            yield f"{actor} announces {key} = {value}"
        else:
            yield f"claim {key} = {value} from {actor}"


def broadcasts(agents: list[str], count: int, seed: int = 5) -> Iterator[str]:
    """`count` announcements to every agent, over a few keys (new values supersede)."""
    rng = random.Random(seed)
    for _ in range(count):
        yield (f"{rng.choice(agents)} announces notice{rng.randrange(3)}.text = "
               f"v{rng.randrange(VALUES)}")


def depth_policy(folder: Path, depth: int) -> Path:
    """A policy file: the shipped default policy, tracking chains up to `depth`."""
    path = Path(folder) / f"bench_depth{depth}.tom"
    path.write_text(f"policy bench_depth{depth} {{\n  depth {depth}\n}}\n", encoding="utf-8")
    return path


def scale_scenario(name: str, agents: list[str]) -> str:
    """A small scenario of 1 world + len(agents) minds and eight events, as a .tom file."""
    a = agents
    lines = [f"scenario {name} {{", "  agents " + ", ".join(a), "  rooms " + ", ".join(ROOMS),
             f"  {', '.join(a)} enter {ROOMS[0]}",
             f"  {a[0]} moves parcel0 to shelf1",
             f"  {a[1]} tells {a[2]} ticket0.status = open",
             f"  {a[3]} exits {ROOMS[0]}",
             f"  {a[4]} announces ticket1.status = closed",
             f"  claim ticket0.status = done from {a[2]}",
             f"  {a[3]} enters {ROOMS[1]}",
             f"  {a[0]} moves parcel0 to shelf2", "}"]
    return "use policy default\n\n" + "\n".join(lines) + "\n"
