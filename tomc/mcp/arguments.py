"""The typed tool arguments both modes share, each described with examples (what a model
reads in the tool's input schema)."""

from __future__ import annotations

from typing import Annotated, Literal, Optional, Union

from pydantic import Field

Agent = Annotated[str, Field(description="An agent of the memory.",
                             examples=["Maya", "Billing"])]
Agents = Annotated[Union[str, list[str]], Field(
    description="One agent, or a list of agents.", examples=["Maya", ["Maya", "Billing"]])]
Room = Annotated[str, Field(description="A room or channel of the memory.",
                            examples=["chat", "ops"])]
Chain = Annotated[Union[str, list[str]], Field(
    description="Whose belief: an agent, or a chain of agents outermost first "
                "(['Maya', 'Billing'] is what Maya thinks Billing believes).",
    examples=["Maya", ["Maya", "Billing"]])]
Key = Annotated[str, Field(
    description="A key, subject.predicate; a bare subject means subject.location.",
    examples=["refund_4411.status", "parcel"])]
Value = Annotated[Union[str, int, float, bool], Field(
    description="The value (text, a number or a boolean; compared as text).",
    examples=["approved", 3, "2026-03-01"])]
About = Annotated[Optional[str], Field(
    description="A report: the agent whose belief this is (`S tells L X believes KEY = "
                "VALUE`: the listener's model of X takes it, not the listener's own belief); "
                "omit to say it as your own.", examples=["Maya"])]
AtStep = Annotated[Optional[int], Field(
    description="Knowledge time: what was held after this step (omit for now).",
    examples=[2])]
On = Annotated[Optional[str], Field(
    description="Valid time: the value valid in the world on this date (omit for now).",
    examples=["2026-03-01"])]
Procedure = Annotated[str, Field(
    description="A procedure declared in the memory's policy (`procedure NAME { requires "
                "KEY = VALUE ... }`).", examples=["deploy"])]
SearchText = Annotated[str, Field(
    description="Words to look for in keys, values, sources and events (each word also "
                "finds longer words it starts: `pay` finds `payments`; a word that finds "
                "nothing is read as the names a few edits from it: `refnd` finds "
                "`refund`); question words such as `what`, `the` are left out.",
    examples=["payments outage", "who decided the helios pause"])]
SearchLimit = Annotated[int, Field(description="At most this many hits, one per fact "
                                               "(best first).",
                                   ge=1, le=1000, examples=[20])]
SearchMode = Annotated[Optional[Literal["text", "meaning", "hybrid"]], Field(
    description="`text`: words only; `meaning`: nearest in meaning (an embedding model); "
                "`hybrid`: both, with closeness to `about`, authority and recency; each "
                "hit's `scores` show the parts. Omit for hybrid when the server has an "
                "embedding model (TOMC_EMBED_PROVIDER), else text.", examples=["hybrid"])]
SearchAbout = Annotated[Optional[str], Field(
    description="A focal subject: hits fewer links from it (values `\"@NAME\"`) rank "
                "higher by meaning or hybrid.", examples=["payments_outage"])]
