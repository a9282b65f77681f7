"""An agent's tools (`tomc mcp --agent Maya`): only what Maya may know, and speech as Maya.

Reads go through `reader`, a session attached `as_agent`: it reads Maya's mind graph only
and refuses every other mind (AccessDenied, an `access_denied`
tool error). Writes go through `writer`, a supervisor session that this module uses for one
thing only: `tell` and `say` with Maya as the speaker. A call naming another speaker is
refused before anything is written; the supervisor's other tools are not offered at all.

    my_beliefs(about=None)               -> {"agent", "chain", "step", "beliefs": [...]}
    what_do_i_think(chain, key)          -> the `believes` answer, chain starting with Maya
    can_i_run(procedure, chain=None)     -> the `ready` answer, from Maya's beliefs
    who_is_misinformed()                 -> {"agent", "step", "misinformed": [...]}
    context_for(other)                   -> {"agent", "other", "text", "differences", ...}
    tell(listener, key, value) / say(key, value) -> {"memory", "step", "events": [...]}
"""

# No `from __future__ import annotations`: the SDK reads the tools' signatures, whose
# argument types (`Speaker`) and examples are made here, per agent, not at module level.
from typing import Annotated, Optional, Sequence, Union

from pydantic import Field

from tomc.api import AccessDenied, Session
from tomc.dsl.program import AnyEvent
from tomc.mcp.arguments import (About, Agent, AtStep, Key, On, Procedure, SearchAbout,
                                SearchLimit, SearchMode, SearchText, Value)
from tomc.mcp.describe import tool
from tomc.mcp.results import Guard, answer
from tomc.wire import event_json, held_json, warned
from tomc.mcp.sdk import CallToolResult, MCPServer, ToolAnnotations

READ = ToolAnnotations(readOnlyHint=True, openWorldHint=False)
SPEAK = ToolAnnotations(readOnlyHint=False, destructiveHint=False, openWorldHint=False)


def register(server: MCPServer, reader: Session, writer: Session, guard: Guard) -> None:
    """Add the tools of the agent `reader` reads as to `server`."""
    me = reader.agent
    assert me is not None, "an agent server reads through an as_agent session"

    Speaker = Annotated[Optional[str], Field(
        description=f"Leave out: you speak as {me} (another speaker is refused).")]

    def result(payload: dict) -> CallToolResult:
        return answer(payload, reader.history())  # flags traced to events I witnessed

    def spoken(events: Sequence[AnyEvent]) -> CallToolResult:
        return answer({"memory": writer.memory, "step": writer.step,
                       "events": [event_json(e) for e in events]}, events)

    def as_me(speaker: Optional[str]) -> None:
        if speaker is not None and speaker != me:
            raise AccessDenied(f"this server speaks as {me}: it cannot speak as {speaker}")

    @tool(server, title=f"What {me} believes", annotations=READ)
    def my_beliefs(about: Annotated[Optional[str], Field(
            description=f"Another agent: what {me} thinks it believes (omit: {me}'s own).",
            examples=["Billing"])] = None) -> CallToolResult:
        """Everything I believe (or think another agent believes), with where each came from."""
        chain = [me] if about is None else [me, about]
        return guard(lambda: result({"agent": me, "chain": chain, "step": reader.step,
                                     "beliefs": [held_json(h) for h in reader.beliefs(chain)]}))

    @tool(server, title=f"What {me} thinks about a key", annotations=READ)
    def what_do_i_think(key: Key, chain: Annotated[Optional[Union[str, list[str]]], Field(
            description=f"A chain from {me}: [\"{me}\", \"Billing\"] is what {me} thinks "
                        f"Billing believes (omit: {me}'s own).",
            examples=[[me, "Billing"]])] = None, at_step: AtStep = None, on: On = None) \
            -> CallToolResult:
        """What I believe about a key (or think another believes), with provenance."""
        return guard(lambda: result(warned(reader.believes(chain or me, key, at_step=at_step,
                                                    on=on).to_json(), reader)))

    @tool(server, title=f"Open tasks {me} knows of", annotations=READ)
    def open_tasks() -> CallToolResult:
        """The tasks I believe open, claimed (by whom) or not: what I could take."""
        return guard(lambda: result(reader.open_tasks(me).to_json()))

    @tool(server, title=f"What {me} may know of", annotations=READ)
    def describe() -> CallToolResult:
        """The names to ask with: agents, rooms, sources, procedures, keys I witnessed."""
        return guard(lambda: result(reader.describe().to_json()))

    @tool(server, title=f"Search {me}'s memory", annotations=READ)
    def search(text: SearchText, limit: SearchLimit = 20, mode: SearchMode = None,
               about: SearchAbout = None) -> CallToolResult:
        """What I hold (or think others hold) matching some words (or meaning), ranked."""
        return guard(lambda: result(reader.search(text, limit=limit, mode=mode,
                                                   about=about).to_json()))

    @tool(server, title=f"Can {me} run a procedure", annotations=READ)
    def can_i_run(procedure: Procedure, chain: Annotated[Optional[Union[str, list[str]]], Field(
            description=f"A chain from {me}: [\"{me}\", \"Billing\"] is by what {me} "
                        f"thinks Billing believes (omit: {me}'s own).")] = None,
                  at_step: AtStep = None, on: On = None) -> CallToolResult:
        """Whether a procedure's steps hold by my beliefs: `ready`, `blocked` or `unknown`."""
        return guard(lambda: result(reader.ready(procedure, for_=chain or me,
                                                 at_step=at_step, on=on).to_json()))

    @tool(server, title="Who I think is misinformed", annotations=READ)
    def who_is_misinformed() -> CallToolResult:
        """Who I think holds a value other than mine, or lacks what I know."""
        def body() -> CallToolResult:
            found = []
            for other in reader.scenario.agents:
                if other == me:
                    continue
                for d in reader.context_for(me, other).differences:
                    if d.action in ("correct", "tell"):
                        found.append({"agent": other, "key": d.key, "mine": list(d.mine),
                                      "theirs": list(d.theirs), "action": d.action})
            return result({"agent": me, "step": reader.step, "misinformed": found})
        return guard(body)

    @tool(server, title="Context block before talking", annotations=READ)
    def context_for(other: Agent) -> CallToolResult:
        """A compact text block for my prompt before talking to another agent."""
        return guard(lambda: result(reader.context_for(me, other).to_json()))

    @tool(server, title=f"Tell one agent, as {me}", annotations=SPEAK)
    def tell(listener: Agent, key: Key, value: Value, speaker: Speaker = None,
             about: About = None) -> CallToolResult:
        """Tell one agent KEY = VALUE in private (or, with `about`, what another believes)."""
        def body() -> CallToolResult:
            as_me(speaker)
            return spoken([writer.tell(me, listener, key, value, about=about)])
        return guard(body)

    @tool(server, title=f"Say in the room, as {me}", annotations=SPEAK)
    def say(key: Key, value: Value, speaker: Speaker = None) -> CallToolResult:
        """Say KEY = VALUE in the room I am in."""
        def body() -> CallToolResult:
            as_me(speaker)
            return spoken([writer.says(me, key, value)])
        return guard(body)
