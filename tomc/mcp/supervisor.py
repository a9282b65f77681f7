"""The supervisor's tools: record events (as .tom text, or typed), ask every question, check
text. Each answers with the fields `tomc run --json` gives (tomc/mcp/results.py).

    record(statements="Maya, Billing enter chat", after_step=None)
        -> {"memory", "step", "events": [{"step", "kind", "text", "witnesses", ...}]}
    believes(chain=["Maya", "Billing"], key="refund.status")
        -> {"chain", "key", "value", "provenance": [...], ...}
    false_beliefs(depth=1) -> {"depth", "step", "false_beliefs": [...]}
    ready(procedure="deploy", chain="Planner") -> {"verdict", "blockers", "unknown", "steps"}
"""

from __future__ import annotations

from typing import Annotated, Optional, Sequence

from pydantic import Field

from tomc.api import Session
from tomc.dsl.program import AnyEvent
from tomc.mcp.arguments import (About, Agent, Agents, AtStep, Chain, Key, On, Procedure, Room,
                                SearchAbout, SearchLimit, SearchMode, SearchText, Value)
from tomc.mcp.describe import tool
from tomc.mcp.results import Guard, answer
from tomc.wire import HISTORY_LIMIT, event_json, history_page, warned
from tomc.mcp.sdk import CallToolResult, MCPServer, ToolAnnotations

READ = ToolAnnotations(readOnlyHint=True, openWorldHint=False)
WRITE = ToolAnnotations(readOnlyHint=False, destructiveHint=False, openWorldHint=False)

Statements = Annotated[str, Field(
    description=".tom statements, one per line: events, `agents` and `rooms` (syntax: "
                "resource tomc://syntax/record).",
    examples=["agents Maya, Billing\nrooms chat\nMaya, Billing enter chat",
              "Billing says refund_4411.status = approved"])]
AfterStep = Annotated[Optional[int], Field(
    description="The step this write expects to follow: if another writer got there first, "
                "nothing is written (a stale_write error).")]
IdempotencyKey = Annotated[Optional[str], Field(
    description="Your name for this write: a retry with it records nothing twice.",
    examples=["order-4411-refund"])]


def register(server: MCPServer, memory: Session, guard: Guard) -> None:
    """Add the supervisor's tools for `memory` to `server`."""

    def recorded(events: Sequence[AnyEvent]) -> CallToolResult:
        return answer({"memory": memory.memory, "step": memory.step,
                       "events": [event_json(e) for e in events]}, events)

    def result(payload: dict) -> CallToolResult:
        return answer(payload, memory.scenario.events)

    # ------------------------------------------------------------ writing

    @tool(server, title="Record events", annotations=WRITE)
    def record(statements: Statements, after_step: AfterStep = None,
               idempotency_key: IdempotencyKey = None) -> CallToolResult:
        """Record .tom statements in order, one step per event; invalid text writes nothing
        and comes back as diagnostics."""
        return guard(lambda: recorded(memory.apply(statements, after_step, idempotency_key)),
                     "<record>")

    @tool(server, title="Agents enter a room", annotations=WRITE)
    def enter(agents: Agents, room: Room) -> CallToolResult:
        """Record `AGENTS enter ROOM` (each leaves its previous room)."""
        return guard(lambda: recorded([memory.enter(agents, room)]))

    @tool(server, name="exit", title="Agents exit a room", annotations=WRITE)
    def exit_room(agents: Agents, room: Room) -> CallToolResult:
        """Record `AGENTS exit ROOM`."""
        return guard(lambda: recorded([memory.exit(agents, room)]))

    @tool(server, name="set", title="An agent changes the world", annotations=WRITE)
    def set_value(agent: Agent, key: Key, value: Value) -> CallToolResult:
        """Record `AGENT sets KEY = VALUE`: the truth changes, seen by the agent's room."""
        return guard(lambda: recorded([memory.set(agent, key, value)]))

    @tool(server, title="A private message", annotations=WRITE)
    def tell(speaker: Agent, listener: Agent, key: Key, value: Value,
             about: About = None) -> CallToolResult:
        """Record `SPEAKER tells LISTENER KEY = VALUE`, known to the two only."""
        return guard(lambda: recorded([memory.tell(speaker, listener, key, value,
                                                   about=about)]))

    @tool(server, title="Say in the room", annotations=WRITE)
    def say(speaker: Agent, key: Key, value: Value) -> CallToolResult:
        """Record `SPEAKER says KEY = VALUE`, heard by the speaker's room."""
        return guard(lambda: recorded([memory.says(speaker, key, value)]))

    @tool(server, title="Announce to every agent", annotations=WRITE)
    def announce(speaker: Agent, key: Key, value: Value) -> CallToolResult:
        """Record `SPEAKER announces KEY = VALUE`, heard by every agent."""
        return guard(lambda: recorded([memory.announce(speaker, key, value)]))

    @tool(server, title="A source's claim", annotations=WRITE)
    def claim(source: Annotated[str, Field(description="A source of the policy, or an agent.",
                                           examples=["crm", "Finance"])],
              key: Key, value: Value,
              by: Annotated[Optional[str], Field(description="The agent who relays it.",
                                                 examples=["Finance"])] = None,
              at: Annotated[Optional[str], Field(description="Publication time.",
                                                 examples=["2026-03-01"])] = None,
              valid_from: Annotated[Optional[str], Field(
                  description="When the value starts to hold in the world.",
                  examples=["2026-03-01"])] = None) -> CallToolResult:
        """Record `claim KEY = VALUE from SOURCE`; the policy decides who adopts it."""
        return guard(lambda: recorded([memory.claim(source, key, value, by=by, at=at,
                                                    valid_from=valid_from)]))

    # ------------------------------------------------------------ questions

    @tool(server, title="What someone believes", annotations=READ)
    def believes(chain: Chain, key: Key, at_step: AtStep = None, on: On = None) \
            -> CallToolResult:
        """What an agent (or chain) believes about a key, with provenance."""
        return guard(lambda: result(warned(memory.believes(chain, key, at_step=at_step,
                                                    on=on).to_json(), memory)))

    @tool(server, title="Can a procedure run", annotations=READ)
    def ready(procedure: Procedure, chain: Annotated[Optional[Chain], Field(
            description="Whose beliefs: an agent or a chain (omit: the truth).")] = None,
              at_step: AtStep = None, on: On = None) -> CallToolResult:
        """Whether a procedure's steps hold: `ready`, `blocked` or `unknown`, step by step."""
        return guard(lambda: result(memory.ready(procedure, for_=chain, at_step=at_step,
                                                 on=on).to_json()))

    @tool(server, title="Who is out of date", annotations=READ)
    def false_beliefs(depth: Annotated[int, Field(
            description="1: wrong about the world; 2: wrong about another's belief.")] = 1) -> CallToolResult:
        """Which agents (or chains) hold an outdated value, and the event each missed."""
        return guard(lambda: result(memory.false_beliefs(depth).to_json()))

    @tool(server, title="Who knows a key", annotations=READ)
    def who_knows(key: Key) -> CallToolResult:
        """For one key, each agent: up to date, out of date or unknown."""
        return guard(lambda: result(warned(memory.who_knows(key).to_json(), memory)))

    @tool(server, title="What a handoff would send", annotations=READ)
    def handoff(sender: Agent, receiver: Agent) -> CallToolResult:
        """The smallest set of facts the receiver lacks, with a receipt (nothing sent)."""
        return guard(lambda: result(memory.handoff(sender, receiver).to_json()))

    @tool(server, title="Send a handoff", annotations=WRITE)
    def handoff_write(sender: Agent, receiver: Agent) -> CallToolResult:
        """Send what `handoff` would include as one private message; returns the receipt."""
        def body() -> CallToolResult:
            receipt = memory.handoff_write(sender, receiver).to_json()
            return result({**receipt, "written_at_step": memory.step})
        return guard(body)

    @tool(server, title="What two agents agree on", annotations=READ)
    def common_ground(first: Agent, second: Agent) -> CallToolResult:
        """The keys both agents agree on and each knows the other agrees on."""
        return guard(lambda: result(memory.common_ground(first, second).to_json()))

    @tool(server, title="Why someone believes something", annotations=READ)
    def explain(chain: Chain, key: Key) -> CallToolResult:
        """Why a chain holds each value of a key: source event, witnesses, sources, tells."""
        return guard(lambda: result(warned(memory.explain(chain, key).to_json(), memory)))

    @tool(server, title="Private tells or one announcement", annotations=READ)
    def plan_announcements(key: Key, speaker: Agent) -> CallToolResult:
        """Private tells against one announcement for spreading the speaker's value, both
        simulated."""
        return guard(lambda: result(warned(memory.plan_announcements(key, speaker).to_json(), memory)))

    @tool(server, title="Context block for a prompt", annotations=READ)
    def context_for(agent: Agent, other: Agent) -> CallToolResult:
        """A compact text block for the agent's prompt before talking to the other."""
        return guard(lambda: result(memory.context_for(agent, other).to_json()))

    @tool(server, title="Everything linked to a subject", annotations=READ)
    def about(subject: Annotated[str, Field(description="A subject: the part of a key before "
                                            "its predicate.", examples=["helios_pause"])],
              chain: Annotated[Optional[Chain], Field(
                  description="Whose beliefs (omit: the truth).")] = None,
              within: Annotated[int, Field(description="How many links to follow.", ge=0,
                                           le=10)] = 2) -> CallToolResult:
        """The facts about a subject and those within N links, each with its path."""
        return guard(lambda: result(memory.about(subject, for_=chain, within=within)
                                    .to_json()))

    @tool(server, title="The evidence walk from a key through its links", annotations=READ)
    def follow(key: Key,
               chain: Annotated[Optional[Chain], Field(
                   description="Whose beliefs (omit: the truth).")] = None,
               hops: Annotated[int, Field(description="How many links to follow.", ge=0,
                                          le=10)] = 2) -> CallToolResult:
        """The values of a key and the facts its links ("@NAME") lead to, up to N hops."""
        return guard(lambda: result(warned(memory.follow(key, for_=chain, hops=hops)
                                           .to_json(), memory)))

    @tool(server, title="Open tasks on the blackboard", annotations=READ)
    def open_tasks(chain: Annotated[Optional[Chain], Field(
            description="Whose beliefs (omit: the truth).")] = None) -> CallToolResult:
        """Tasks believed open, claimed (by whom) or not, with their findings."""
        return guard(lambda: result(memory.open_tasks(chain).to_json()))

    @tool(server, title="Who knows a topic best", annotations=READ)
    def who_knows_best(topic: SearchText) -> CallToolResult:
        """Agents ranked by how much they know of a topic."""
        return guard(lambda: result(memory.who_knows_best(topic).to_json()))

    @tool(server, title="What this memory has", annotations=READ)
    def describe() -> CallToolResult:
        """The names to ask with: agents, rooms, sources, procedures, keys, policy."""
        return guard(lambda: result(memory.describe().to_json()))

    @tool(server, title="Search the memory", annotations=READ)
    def search(text: SearchText, limit: SearchLimit = 20, mode: SearchMode = None,
               about: SearchAbout = None) -> CallToolResult:
        """Facts and events matching some words (or meaning), ranked, with who holds them."""
        return guard(lambda: result(memory.search(text, limit=limit, mode=mode,
                                                   about=about).to_json()))

    @tool(server, title="Ask any question in .tom", annotations=READ)
    def ask(question: Annotated[str, Field(
            description="One `ask` or `expect` line (the leading `ask` may be left out).",
            examples=["Maya > Billing believes refund_4411.status at step 2",
                      "expect Maya believes refund_4411.status = rejected"])]) \
            -> CallToolResult:
        """Answer one .tom question or expectation."""
        return guard(lambda: result(warned(memory.ask(question).to_json(), memory)), "<ask>")

    @tool(server, title="The events so far", annotations=READ)
    def history(after_step: Annotated[int, Field(
                    ge=0, description="Only events after this step: the last answer's "
                                      "`next_after_step` for the next page.")] = 0,
                limit: Annotated[int, Field(
                    ge=1, le=HISTORY_LIMIT,
                    description="At most this many events.")] = 100) \
            -> CallToolResult:
        """The events recorded so far, a page at a time, with their witnesses."""
        def body() -> CallToolResult:
            events = memory.history()  # first: it brings `step` up to date
            return result(history_page(memory.memory, memory.step, events, after_step, limit))
        return guard(body)

    @tool(server, title="Check .tom text", annotations=READ)
    def check(statements: Annotated[str, Field(
            description="Events, declarations or questions, one per line.",
            examples=["Mayaa enters chat"])]) \
            -> CallToolResult:
        """Diagnostics for .tom text, without applying it (`ok`: valid)."""
        def body() -> CallToolResult:
            found = memory.check(statements)
            return answer({"ok": not found, "diagnostics": [d.to_json() for d in found],
                           "rendered": "\n".join(d.render(statements) for d in found)})
        return guard(body)
