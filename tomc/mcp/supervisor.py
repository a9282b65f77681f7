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
WRITE = ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=False,
                        openWorldHint=False)

# The most events one `history` answer holds: a long memory is read in pages, not as one
# answer of megabytes (issue 26 measured 4.3 MB).
Statements = Annotated[str, Field(
    description="One or more .tom statements, one per line: events and `agents` / `rooms` "
                "declarations (the syntax is the resource tomc://syntax/record).",
    examples=["agents Maya, Billing\nrooms chat\nMaya, Billing enter chat",
              "Billing says refund_4411.status = approved"])]
AfterStep = Annotated[Optional[int], Field(
    description="The step this write expects to follow; if another writer got there first, "
                "nothing is written and a stale_write error comes back (omit: no check).",
    examples=[4])]
IdempotencyKey = Annotated[Optional[str], Field(
    description="A name for this write, chosen by you: a retry with the same key returns the "
                "original steps instead of recording again (omit: one is generated).",
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
        """Record .tom statements (events, agents/rooms declarations) in memory, in order.

        All are checked first: bad text comes back as an error with diagnostics (code,
        message, line, hint) and nothing is written. Each event becomes one step, with
        its witnesses worked out from who is in which room. Retrying with the same
        `idempotency_key` never records a statement twice; an error after part of a batch
        committed lists those events under `committed`."""
        return guard(lambda: recorded(memory.apply(statements, after_step, idempotency_key)),
                     "<record>")

    @tool(server, title="Agents enter a room", annotations=WRITE)
    def enter(agents: Agents, room: Room) -> CallToolResult:
        """Record `AGENTS enter ROOM`: each leaves its previous room, then is in ROOM."""
        return guard(lambda: recorded([memory.enter(agents, room)]))

    @tool(server, name="exit", title="Agents exit a room", annotations=WRITE)
    def exit_room(agents: Agents, room: Room) -> CallToolResult:
        """Record `AGENTS exit ROOM` (each must be in it)."""
        return guard(lambda: recorded([memory.exit(agents, room)]))

    @tool(server, name="set", title="An agent changes the world", annotations=WRITE)
    def set_value(agent: Agent, key: Key, value: Value) -> CallToolResult:
        """Record `AGENT sets KEY = VALUE`: the truth changes, seen by the agent's room."""
        return guard(lambda: recorded([memory.set(agent, key, value)]))

    @tool(server, title="A private message", annotations=WRITE)
    def tell(speaker: Agent, listener: Agent, key: Key, value: Value,
             about: About = None) -> CallToolResult:
        """Record `SPEAKER tells LISTENER KEY = VALUE`: only the two of them know it. With
        `about` X, a report: `SPEAKER tells LISTENER X believes KEY = VALUE`."""
        return guard(lambda: recorded([memory.tell(speaker, listener, key, value,
                                                   about=about)]))

    @tool(server, title="Say in the room", annotations=WRITE)
    def say(speaker: Agent, key: Key, value: Value) -> CallToolResult:
        """Record `SPEAKER says KEY = VALUE`: heard by everyone in the speaker's room."""
        return guard(lambda: recorded([memory.says(speaker, key, value)]))

    @tool(server, title="Announce to every agent", annotations=WRITE)
    def announce(speaker: Agent, key: Key, value: Value) -> CallToolResult:
        """Record `SPEAKER announces KEY = VALUE`: heard by every agent."""
        return guard(lambda: recorded([memory.announce(speaker, key, value)]))

    @tool(server, title="A source's claim", annotations=WRITE)
    def claim(source: Annotated[str, Field(description="Where the claim comes from: a source "
                                           "the policy declares, or an agent.",
                                           examples=["crm", "Finance"])],
              key: Key, value: Value,
              by: Annotated[Optional[str], Field(description="The agent who relays it.",
                                                 examples=["Finance"])] = None,
              at: Annotated[Optional[str], Field(description="Publication time.",
                                                 examples=["2026-03-01"])] = None,
              valid_from: Annotated[Optional[str], Field(
                  description="When the value starts to hold in the world.",
                  examples=["2026-03-01"])] = None) -> CallToolResult:
        """Record `claim KEY = VALUE from SOURCE`, to every agent; the policy's trust and
        authority rules decide what each adopts."""
        return guard(lambda: recorded([memory.claim(source, key, value, by=by, at=at,
                                                    valid_from=valid_from)]))

    # ------------------------------------------------------------ questions

    @tool(server, title="What someone believes", annotations=READ)
    def believes(chain: Chain, key: Key, at_step: AtStep = None, on: On = None) \
            -> CallToolResult:
        """What an agent (or a chain: what Maya thinks Billing believes) believes about a
        key, with provenance: the event it came from, witnesses, sources, the rule."""
        return guard(lambda: result(warned(memory.believes(chain, key, at_step=at_step,
                                                    on=on).to_json(), memory)))

    @tool(server, title="Can a procedure run", annotations=READ)
    def ready(procedure: Procedure, chain: Annotated[Optional[Chain], Field(
            description="Whose beliefs to read the steps from: an agent or a chain (omit "
                        "for the truth).", examples=["Planner", ["Scout", "Planner"]])] = None,
              at_step: AtStep = None, on: On = None) -> CallToolResult:
        """Whether every step of a procedure is satisfied: `ready`, `blocked` (some step
        holds another value) or `unknown`; each step with the value held, its sources,
        authority and caveats (contested rivals)."""
        return guard(lambda: result(memory.ready(procedure, for_=chain, at_step=at_step,
                                                 on=on).to_json()))

    @tool(server, title="Who is out of date", annotations=READ)
    def false_beliefs(depth: Annotated[int, Field(
            description="1: agents wrong about the world; 2: agents wrong about what "
                        "another agent believes.", examples=[1, 2])] = 1) -> CallToolResult:
        """Which agents (or chains) hold a value other than what they model, and the event
        each missed."""
        return guard(lambda: result(memory.false_beliefs(depth).to_json()))

    @tool(server, title="Who knows a key", annotations=READ)
    def who_knows(key: Key) -> CallToolResult:
        """For one key, every agent: up to date, out of date (with what it holds), or
        unknown."""
        return guard(lambda: result(warned(memory.who_knows(key).to_json(), memory)))

    @tool(server, title="What a handoff would send", annotations=READ)
    def handoff(sender: Agent, receiver: Agent) -> CallToolResult:
        """The smallest set of facts the sender's model of the receiver lacks, with a
        receipt: included (value, sources, authority), excluded and why, caveats, size."""
        return guard(lambda: result(memory.handoff(sender, receiver).to_json()))

    @tool(server, title="Send a handoff", annotations=WRITE)
    def handoff_write(sender: Agent, receiver: Agent) -> CallToolResult:
        """Send what `handoff` would include, as one private message of the sender (an
        event); returns the receipt of what was sent."""
        def body() -> CallToolResult:
            receipt = memory.handoff_write(sender, receiver).to_json()
            return result({**receipt, "written_at_step": memory.step})
        return guard(body)

    @tool(server, title="What two agents agree on", annotations=READ)
    def common_ground(first: Agent, second: Agent) -> CallToolResult:
        """The keys on which both agents agree and each knows the other agrees."""
        return guard(lambda: result(memory.common_ground(first, second).to_json()))

    @tool(server, title="Why someone believes something", annotations=READ)
    def explain(chain: Chain, key: Key) -> CallToolResult:
        """The source event, its witnesses, supporting and contesting sources, and who told
        whom, for each value the chain holds about the key."""
        return guard(lambda: result(warned(memory.explain(chain, key).to_json(), memory)))

    @tool(server, title="Private tells or one announcement", annotations=READ)
    def plan_announcements(key: Key, speaker: Agent) -> CallToolResult:
        """How the speaker should spread its value of the key: private tells to the agents
        who need them against one announcement, both simulated on copies of memory."""
        return guard(lambda: result(warned(memory.plan_announcements(key, speaker).to_json(), memory)))

    @tool(server, title="Context block for a prompt", annotations=READ)
    def context_for(agent: Agent, other: Agent) -> CallToolResult:
        """A compact text block for the agent's prompt before talking to the other: what it
        believes, what it thinks the other believes, what to correct first (values quoted,
        with their source and authority)."""
        return guard(lambda: result(memory.context_for(agent, other).to_json()))

    @tool(server, title="Everything linked to a subject", annotations=READ)
    def about(subject: Annotated[str, Field(description="A subject: the part of a key before "
                                            "its predicate.", examples=["helios_pause"])],
              chain: Annotated[Optional[Chain], Field(
                  description="Whose beliefs (omit for the truth).", examples=["Lena"])] = None,
              within: Annotated[int, Field(description="How many links to follow.", ge=0,
                                           le=10, examples=[2])] = 2) -> CallToolResult:
        """The facts about a subject and those within N links (values "@NAME" name another
        subject), each with its path from the subject, source and step."""
        return guard(lambda: result(memory.about(subject, for_=chain, within=within)
                                    .to_json()))

    @tool(server, title="The evidence walk from a key through its links", annotations=READ)
    def follow(key: Key,
               chain: Annotated[Optional[Chain], Field(
                   description="Whose beliefs (omit for the truth).", examples=["Lena"])] = None,
               hops: Annotated[int, Field(description="How many links to follow.", ge=0,
                                          le=10, examples=[2])] = 2) -> CallToolResult:
        """`explain [CHAIN] KEY follow N`: the values held of the key, and through each that
        links to a subject ("@NAME") the facts about it, on up to N links, each with its
        hop, path, source, step and time."""
        return guard(lambda: result(warned(memory.follow(key, for_=chain, hops=hops)
                                           .to_json(), memory)))

    @tool(server, title="Open tasks on the blackboard", annotations=READ)
    def open_tasks(chain: Annotated[Optional[Chain], Field(
            description="Whose beliefs: an agent or a chain (omit for the truth).",
            examples=["Dev", ["Dev", "Priya"]])] = None) -> CallToolResult:
        """Tasks (subjects with a `status` not done) believed open, each claimed (by whom)
        or unclaimed, with their findings."""
        return guard(lambda: result(memory.open_tasks(chain).to_json()))

    @tool(server, title="Who knows a topic best", annotations=READ)
    def who_knows_best(topic: SearchText) -> CallToolResult:
        """Agents ranked for a topic: true values naming them, documents they authored,
        what they hold (weighted by authority), how recently; says which count broke each
        tie, and when agents tie on every count."""
        return guard(lambda: result(memory.who_knows_best(topic).to_json()))

    @tool(server, title="What this memory has", annotations=READ)
    def describe() -> CallToolResult:
        """Agents, rooms, sources with their authority, procedures, the keys written so far
        (how many events, last step), policy and depth: the names to ask with."""
        return guard(lambda: result(memory.describe().to_json()))

    @tool(server, title="Search the memory", annotations=READ)
    def search(text: SearchText, limit: SearchLimit = 20, mode: SearchMode = None,
               about: SearchAbout = None) -> CallToolResult:
        """Keys, values, sources and events' text matching some words, ranked: one hit per
        fact (key and value) with the chains that hold it (step, source) and the events
        that gave it; misspelt words forgiven (`forgiven`); `weights` say how hits are
        scored. With an embedding model, by meaning too (`mode`): each hit's `scores`."""
        return guard(lambda: result(memory.search(text, limit=limit, mode=mode,
                                                   about=about).to_json()))

    @tool(server, title="Ask any question in .tom", annotations=READ)
    def ask(question: Annotated[str, Field(
            description="One `ask` or `expect` line (the leading `ask` may be left out).",
            examples=["truth refund_4411.status",
                      "expect Maya believes refund_4411.status = rejected",
                      "Maya > Billing believes refund_4411.status at step 2"])]) \
            -> CallToolResult:
        """Answer one .tom question or expectation; an expect says whether it holds."""
        return guard(lambda: result(warned(memory.ask(question).to_json(), memory)), "<ask>")

    @tool(server, title="The events so far", annotations=READ)
    def history(after_step: Annotated[int, Field(
                    ge=0, description="Only events after this step (0: from the start). "
                                      "To page, pass the `next_after_step` of the last "
                                      "answer.")] = 0,
                limit: Annotated[int, Field(
                    ge=1, le=HISTORY_LIMIT,
                    description=f"At most this many events (1-{HISTORY_LIMIT}).")] = 100) \
            -> CallToolResult:
        """The events recorded so far, in step order, each with its .tom text and
        witnesses (who saw or heard it): a page of `limit` after `after_step`;
        `next_after_step` is where the next page starts (null: none left)."""
        def body() -> CallToolResult:
            events = memory.history()  # first: it brings `step` up to date
            return result(history_page(memory.memory, memory.step, events, after_step, limit))
        return guard(body)

    @tool(server, title="Check .tom text", annotations=READ)
    def check(statements: Annotated[str, Field(
            description="Events, declarations or questions to check after the events so "
                        "far, one per line.",
            examples=["Mayaa enters chat", "expect Maya believes refund_4411.status = x"])]) \
            -> CallToolResult:
        """Diagnostics for .tom text (code, message, line, hint), without applying it:
        `ok` is true when it is valid."""
        def body() -> CallToolResult:
            found = memory.check(statements)
            return answer({"ok": not found, "diagnostics": [d.to_json() for d in found],
                           "rendered": "\n".join(d.render(statements) for d in found)})
        return guard(body)
