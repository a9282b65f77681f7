"""Typed events for `POST /memories/{name}/events` (`{"events": [...]}`), each made into
the AST statement the Session's typed method makes (tomc/api.py: enter, tell, claim, ...),
so a batch is checked whole before anything is written.

    {"kind": "tell", "speaker": "Billing", "listener": "Maya",
     "key": "refund_4411.status", "value": "approved"}
"""

from __future__ import annotations

from typing import Annotated, Literal, Optional, Union

from pydantic import BaseModel, Field

from tomc.dsl import ast, build

Names = Union[str, list[str]]
Value = Union[str, int, float, bool]


class Enter(BaseModel):
    """`AGENTS enter ROOM`."""
    kind: Literal["enter"]
    agents: Names
    room: str

    def statement(self) -> ast.Node:
        return ast.Enter(agents=build.names(self.agents), room=build.name(self.room, "room"))


class Exit(BaseModel):
    """`AGENTS exit ROOM`."""
    kind: Literal["exit"]
    agents: Names
    room: str

    def statement(self) -> ast.Node:
        return ast.Exit(agents=build.names(self.agents), room=build.name(self.room, "room"))


class Set(BaseModel):
    """`AGENT sets KEY = VALUE`: the truth changes, seen by the agent's room."""
    kind: Literal["set"]
    agent: str
    key: str
    value: Value

    def statement(self) -> ast.Node:
        return ast.SetValue(actor=build.name(self.agent), fact=build.fact(self.key, self.value))


class Tell(BaseModel):
    """`SPEAKER tells LISTENER KEY = VALUE`: a private message."""
    kind: Literal["tell"]
    speaker: str
    listener: str
    key: str
    value: Value

    def statement(self) -> ast.Node:
        return ast.Tell(speaker=build.name(self.speaker), listener=build.name(self.listener),
                        fact=build.fact(self.key, self.value))


class Says(BaseModel):
    """`SPEAKER says KEY = VALUE`: heard by whoever is in the speaker's room."""
    kind: Literal["says"]
    speaker: str
    key: str
    value: Value

    def statement(self) -> ast.Node:
        return ast.Says(speaker=build.name(self.speaker), fact=build.fact(self.key, self.value))


class Announce(BaseModel):
    """`SPEAKER announces KEY = VALUE`: heard by every agent."""
    kind: Literal["announce"]
    speaker: str
    key: str
    value: Value

    def statement(self) -> ast.Node:
        return ast.Announce(speaker=build.name(self.speaker),
                            fact=build.fact(self.key, self.value))


class Claim(BaseModel):
    """`claim KEY = VALUE from SOURCE [by AGENT] [at T] [valid from D]`, to every agent."""
    kind: Literal["claim"]
    source: str
    key: str
    value: Value
    by: Optional[str] = None
    at: Optional[str] = None
    valid_from: Optional[str] = None

    def statement(self) -> ast.Node:
        return ast.Claim(fact=build.fact(self.key, self.value),
                         source=build.name(self.source, "source"),
                         by=build.name(self.by) if self.by is not None else None,
                         at=self.at, valid_from=self.valid_from)


class Retract(BaseModel):
    """`SPEAKER retracts KEY [= VALUE]`: ends what every agent held on the speaker's word."""
    kind: Literal["retract"]
    speaker: str
    key: str
    value: Optional[Value] = None

    def statement(self) -> ast.Node:
        return ast.Retract(speaker=build.name(self.speaker), key=build.key(self.key),
                           value=None if self.value is None else build.value(self.value))


TypedEvent = Annotated[Union[Enter, Exit, Set, Tell, Says, Announce, Claim, Retract],
                       Field(discriminator="kind")]
