"""The typed tool arguments both modes share, each described with examples (what a model
reads in the tool's input schema)."""

from __future__ import annotations

from typing import Annotated, Literal, Optional, Union

from pydantic import Field

Agent = Annotated[str, Field(description="An agent of the memory.", examples=["Maya"])]
Agents = Annotated[Union[str, list[str]], Field(
    description="One agent, or a list of agents.", examples=["Maya", ["Maya", "Billing"]])]
Room = Annotated[str, Field(description="A room or channel of the memory.",
                            examples=["chat", "ops"])]
Chain = Annotated[Union[str, list[str]], Field(
    description="Whose belief: an agent, or a chain outermost first ([\"Maya\", \"Billing\"]: "
                "what Maya thinks Billing believes).",
    examples=["Maya", ["Maya", "Billing"]])]
Key = Annotated[str, Field(
    description="subject.predicate (a bare subject means subject.location).",
    examples=["refund_4411.status", "parcel"])]
Value = Annotated[Union[str, int, float, bool], Field(
    description="Text, a number or a boolean (compared as text).",
    examples=["approved", 3])]
About = Annotated[Optional[str], Field(
    description="Report what this agent believes (the listener's model of it takes the "
                "value); omit to say it as your own.", examples=["Maya"])]
# (numbers and enumerations go without examples: their type says what to write)
AtStep = Annotated[Optional[int], Field(
    description="What was held after this step (omit: now).")]
On = Annotated[Optional[str], Field(
    description="The value valid in the world on this date (omit: now).",
    examples=["2026-03-01"])]
Procedure = Annotated[str, Field(
    description="A procedure of the memory's policy.", examples=["deploy"])]
SearchText = Annotated[str, Field(
    description="Words (a prefix finds longer words; a misspelt word is forgiven).",
    examples=["payments outage"])]
SearchLimit = Annotated[int, Field(description="At most this many hits, best first.",
                                   ge=1, le=1000)]
SearchMode = Annotated[Optional[Literal["text", "meaning", "hybrid"]], Field(
    description="Words only, nearest in meaning, or both (omit: hybrid when the server has "
                "an embedding model, else text).")]
SearchAbout = Annotated[Optional[str], Field(
    description="A subject: hits fewer links from it rank higher (meaning, hybrid).",
    examples=["payments_outage"])]
