"""The HTTP API of a memory: `/memories/{name}/...`, each route one Session method, its
answer the `--json` fields `tomc memory ask --json` and the MCP tools give (tomc/wire.py):

    GET  /memories/{name}                  memory, policy, depth, agents, rooms, step, agent
    GET  /memories/{name}/events           {"memory", "step", "events": [...]}  (= /history)
    POST /memories/{name}/events           {"statements": ".tom text"} or {"events": [typed]},
                                           optional "after_step" (409 when stale)
    GET  /memories/{name}/believes         ?chain=Maya&chain=Billing&key=K[&at_step=N][&on=D]
    GET  /memories/{name}/beliefs          ?chain=Maya[&at_step=N]: every key a chain holds
    GET  /memories/{name}/truth            ?key=K
    GET  /memories/{name}/false_beliefs    ?depth=1
    GET  /memories/{name}/who_knows        ?key=K
    GET  /memories/{name}/handoff          ?sender=A&receiver=B   (POST: send it, as an event)
    GET  /memories/{name}/ready            ?procedure=P[&chain=A]...
    GET  /memories/{name}/common_ground    ?first=A&second=B
    GET  /memories/{name}/explain          ?chain=A&key=K
    GET  /memories/{name}/follow           ?key=K&chain=A&hops=N
    GET  /memories/{name}/context_for      ?agent=A&other=B
    GET  /memories/{name}/plan_announcements ?key=K&speaker=A
    POST /memories/{name}/ask              {"question": "Maya believes K"}
    POST /memories/{name}/check            {"statements": "..."}: diagnostics, nothing written

Writes need a supervisor token; an agent token reads only chains that start with its agent.
"""

# No `from __future__ import annotations`: FastAPI reads the routes' signatures, whose
# dependency types (`Granted`) are made inside router().

from typing import Annotated, Literal, Optional

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from tomc.analysis.search import DEFAULT_LIMIT
from tomc.api import AccessDenied, Session, TomError
from tomc.dsl.diagnostics import Diagnostic
from tomc.runtime import tokens
from tomc.web.errors import STATUSES
from tomc.web.memories import Memories
from tomc.web.typed import TypedEvent
from tomc.wire import (
    HISTORY_LIMIT,
    error_json,
    event_json,
    held_json,
    history_page,
    warned,
    with_flags,
)

Chain = Annotated[list[str], Query(description="An agent, or agents outermost first "
                                   "(chain=Maya&chain=Billing: what Maya thinks Billing "
                                   "believes).", examples=[["Maya", "Billing"]])]
# The chain a question is asked for, when it may be left out (the truth, or every chain).
ForChain = Annotated[Optional[list[str]], Query()]
Key = Annotated[str, Query(description="subject.predicate (a bare subject: its location).",
                           examples=["refund_4411.status"])]
AtStep = Annotated[Optional[int], Query(ge=0, description="Knowledge time: after this step.")]
On = Annotated[Optional[str], Query(description="Valid time: the value valid on this date.",
                                    examples=["2026-03-01"])]
Agent = Annotated[str, Query(description="An agent of the memory.", examples=["Maya"])]


class Write(BaseModel):
    """Events to record: `.tom` text, or typed events; checked whole before any is written."""
    statements: Optional[str] = Field(None, description="Events and agents/rooms lines, one "
                                      "per line.", examples=["Billing says refund.status = ok"])
    events: Optional[list[TypedEvent]] = Field(None, description="Typed events, in order.")
    after_step: Optional[int] = Field(None, ge=0, description="The step this write expects "
                                      "to follow: 409 stale_write (nothing written) if "
                                      "another writer got there first.")


class Question(BaseModel):
    """One `ask` or `expect` line (the leading `ask` may be left out)."""
    question: str = Field(examples=["Maya > Billing believes refund_4411.status"])


class Text(BaseModel):
    """.tom text to check after the events so far, without applying it."""
    statements: str = Field(examples=["Mayaa enters chat"])


class Handoff(BaseModel):
    """A handoff to send, as one private message of the sender."""
    sender: str
    receiver: str


ERRORS = {status: {"description": kind, "content": {"application/json": {"example":
          error_json(kind, "...", code)}}} for status, (kind, code) in STATUSES.items()}


def router(held: Memories):
    """(the routes of every memory `held` serves, the token dependency they use)."""
    api = APIRouter(prefix="/memories/{name}", responses=ERRORS)

    def grant(request: Request, name: str) -> tokens.Grant:
        """The request's token (Authorization: Bearer, or ?access_token= for EventSource,
        which sets no header), verified, for memory `name`."""
        token = (tokens.from_header(request.headers.get("authorization"))
                 or request.query_params.get("access_token"))
        if not token:
            raise tokens.TokenRefused("no token: send `Authorization: Bearer <token>` (from "
                                      "`tomc token issue`)")
        found = tokens.verify(held.db, token)
        if found.memory != name:
            raise AccessDenied(f"this token is for memory {found.memory!r}, not {name!r}")
        return found

    Granted = Annotated[tokens.Grant, Depends(grant)]

    def answer(session: Session, payload: dict) -> JSONResponse:
        events = session.history() if session.agent else session.scenario.events
        return JSONResponse(with_flags(payload, events))

    def ask(name: str, who: tokens.Grant, question) -> JSONResponse:
        """The answer of `question(session)`, with the warnings of the question it asked
        (W180, "did you mean": `warned`), as the CLI and MCP give them."""
        with held.use(name, who.agent) as session:
            session.warnings = []  # (a pooled session's: its last question's)
            return answer(session, warned(question(session).to_json(), session))

    def writer(name: str, who: tokens.Grant):
        if who.agent is not None:
            raise AccessDenied(f"an agent token ({who.agent}) reads only; writes need the "
                               "memory's supervisor token")
        return held.use(name)

    @api.get("", summary="The memory: policy, agents, rooms, step")
    def info(name: str, who: Granted) -> JSONResponse:
        with held.use(name, who.agent) as session:
            session.refresh()
            scenario = session.scenario
            return JSONResponse({"memory": session.memory, "policy": scenario.policy.name,
                                 "depth": scenario.policy.depth,
                                 "agents": list(scenario.agents), "rooms": list(scenario.rooms),
                                 "step": session.step, "agent": session.agent})

    def history(name: str, who: tokens.Grant, after_step: int, limit: int) -> JSONResponse:
        with held.use(name, who.agent) as session:
            events = session.history()
            return answer(session, history_page(session.memory, session.step, events,
                                                after_step, limit))

    AfterStep = Annotated[int, Query(ge=0, description="only events after this step (0: from "
                                                       "the start); to page, the last answer's "
                                                       "`next_after_step`")]
    Limit = Annotated[int, Query(ge=1, le=HISTORY_LIMIT, description="at most this many events")]

    @api.get("/events", summary="The events so far, a page at a time (an agent token: those "
                                "it witnessed)")
    def events(name: str, who: Granted, after_step: AfterStep = 0,
               limit: Limit = 100) -> JSONResponse:
        return history(name, who, after_step, limit)

    @api.get("/history", summary="The events so far (the same as GET /events)")
    def history_route(name: str, who: Granted, after_step: AfterStep = 0,
                      limit: Limit = 100) -> JSONResponse:
        return history(name, who, after_step, limit)

    @api.post("/events", summary="Record events (supervisor token)")
    def record(name: str, who: Granted, body: Write) -> JSONResponse:
        if (body.statements is None) == (body.events is None):
            raise TomError([Diagnostic("E143", "give either `statements` (.tom text) or "
                                       "`events` (typed), not both or neither", None, "<http>",
                                       hint='{"statements": "Maya enters chat"}')])
        given = body.statements if body.statements is not None else \
            [e.statement() for e in body.events]
        if not given:
            raise TomError([Diagnostic("E143", "no events to record", None, "<http>")])
        with writer(name, who) as session:
            written = session.apply(given, after_step=body.after_step)
            return answer(session, {"memory": session.memory, "step": session.step,
                                    "events": [event_json(e) for e in written]})

    @api.get("/believes", summary="What a chain believes about a key, with provenance")
    def believes(name: str, who: Granted, chain: Chain, key: Key, at_step: AtStep = None,
                 on: On = None) -> JSONResponse:
        return ask(name, who, lambda s: s.believes(chain, key, at_step=at_step, on=on))

    @api.get("/beliefs", summary="Every version a chain holds, every key")
    def beliefs(name: str, who: Granted, chain: Chain, at_step: AtStep = None) -> JSONResponse:
        with held.use(name, who.agent) as session:
            found = session.beliefs(chain, at_step=at_step)
            return answer(session, {"chain": chain, "step": at_step if at_step is not None
                                    else session.step, "beliefs": [held_json(h) for h in found]})

    @api.get("/truth", summary="The value in the world")
    def truth(name: str, who: Granted, key: Key, at_step: AtStep = None,
              on: On = None) -> JSONResponse:
        return ask(name, who, lambda s: s.truth(key, at_step=at_step, on=on))

    @api.get("/false_beliefs", summary="Who is out of date, and the event each missed")
    def false_beliefs(name: str, who: Granted, depth: Annotated[int, Query(ge=1)] = 1) \
            -> JSONResponse:
        return ask(name, who, lambda s: s.false_beliefs(depth))

    @api.get("/who_knows", summary="For one key: every agent up to date, out of date, unknown")
    def who_knows(name: str, who: Granted, key: Key) -> JSONResponse:
        return ask(name, who, lambda s: s.who_knows(key))

    @api.get("/handoff", summary="What a handoff would send, with its receipt")
    def handoff(name: str, who: Granted, sender: Agent, receiver: Agent) -> JSONResponse:
        return ask(name, who, lambda s: s.handoff(sender, receiver))

    @api.post("/handoff", summary="Send a handoff, as an event (supervisor token)")
    def handoff_write(name: str, who: Granted, body: Handoff) -> JSONResponse:
        with writer(name, who) as session:
            receipt = session.handoff_write(body.sender, body.receiver).to_json()
            return answer(session, {**receipt, "written_at_step": session.step})

    @api.get("/ready", summary="Whether a procedure can run: ready, blocked or unknown")
    def ready(name: str, who: Granted, procedure: Annotated[str, Query(examples=["deploy"])],
              chain: ForChain = None, at_step: AtStep = None,
              on: On = None) -> JSONResponse:
        return ask(name, who, lambda s: s.ready(procedure, for_=chain, at_step=at_step, on=on))

    @api.get("/common_ground", summary="What two agents agree on and know they agree on")
    def common_ground(name: str, who: Granted, first: Agent, second: Agent) -> JSONResponse:
        return ask(name, who, lambda s: s.common_ground(first, second))

    @api.get("/explain", summary="Why a chain believes what it does")
    def explain(name: str, who: Granted, chain: Chain, key: Key) -> JSONResponse:
        return ask(name, who, lambda s: s.explain(chain, key))

    @api.get("/search", summary="Search keys, values, sources and events by words and (with "
                                "an embedding model) meaning, one hit per fact, misspelt "
                                "names forgiven (an agent token: its own mind only)")
    def search(name: str, who: Granted, text: Annotated[str, Query(examples=["outage"])],
               limit: Annotated[int, Query(ge=1, le=HISTORY_LIMIT)] = DEFAULT_LIMIT,
               mode: Annotated[Optional[Literal["text", "meaning", "hybrid"]], Query(
                   description="text, meaning or hybrid (default: hybrid with an embedding "
                               "model, else text)")] = None,
               about: Annotated[Optional[str], Query(
                   description="a focal subject: hits near it rank higher")] = None) \
            -> JSONResponse:
        return ask(name, who, lambda s: s.search(text, limit=limit, mode=mode, about=about))

    @api.get("/describe", summary="Agents, rooms, sources, procedures and keys written so far "
                                  "(an agent token: what it may see)")
    def describe(name: str, who: Granted) -> JSONResponse:
        return ask(name, who, lambda s: s.describe())

    @api.get("/who_knows_best", summary="Agents ranked by what they hold about a topic")
    def who_knows_best(name: str, who: Granted,
                       topic: Annotated[str, Query(examples=["redis"])]) -> JSONResponse:
        return ask(name, who, lambda s: s.who_knows_best(topic))

    @api.get("/open_tasks", summary="Announced tasks: open and unclaimed")
    def open_tasks(name: str, who: Granted,
                   chain: ForChain = None) -> JSONResponse:
        return ask(name, who, lambda s: s.open_tasks(chain))

    @api.get("/about", summary="What is held within N links of a subject")
    def about(name: str, who: Granted, subject: Annotated[str, Query(examples=["helios_pause"])],
              chain: ForChain = None,
              within: Annotated[int, Query(ge=0, le=8)] = 2) -> JSONResponse:
        return ask(name, who, lambda s: s.about(subject, for_=chain, within=within))

    @api.get("/follow", summary="The evidence walk from a key through its links")
    def follow(name: str, who: Granted, key: Key, chain: ForChain = None,
               hops: Annotated[int, Query(ge=0, le=8)] = 2) -> JSONResponse:
        return ask(name, who, lambda s: s.follow(key, for_=chain, hops=hops))

    @api.get("/context_for", summary="The context block before one agent talks to another")
    def context_for(name: str, who: Granted, agent: Agent, other: Agent) -> JSONResponse:
        return ask(name, who, lambda s: s.context_for(agent, other))

    @api.get("/plan_announcements", summary="Private tells or one announcement")
    def plan_announcements(name: str, who: Granted, key: Key, speaker: Agent) -> JSONResponse:
        return ask(name, who, lambda s: s.plan_announcements(key, speaker))

    @api.post("/ask", summary="Answer one .tom `ask` or `expect` line")
    def ask_line(name: str, who: Granted, body: Question) -> JSONResponse:
        return ask(name, who, lambda s: s.ask(body.question))

    @api.post("/check", summary="Diagnostics of .tom text, nothing written")
    def check(name: str, who: Granted, body: Text) -> JSONResponse:
        with held.use(name, who.agent) as session:
            found = session.check(body.statements)
            return JSONResponse({"ok": not found, "diagnostics": [d.to_json() for d in found],
                                 "rendered": "\n".join(d.render(body.statements)
                                                       for d in found)})

    return api, grant
