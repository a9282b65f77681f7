"""The .tom statements the `record` tool takes, as the `tomc://syntax/record` resource reads
(abridged from docs/language.md, "Scenario statements")."""

RECORD_SYNTAX = """\
# .tom statements for the `record` tool (one per line; `#` starts a comment)

Names are identifiers (letters, digits, `_`; any Unicode letter) or "double-quoted strings".
A key is `subject.predicate` (`refund_4411.status`); a bare subject means `subject.location`.
A value is a name, a "quoted string", a number or a date (YYYY-MM-DD); values compare as text.
Quote any value with spaces or punctuation: `note.text = "call back after 5pm"`.

## Declarations (before the agents and rooms are used)
agents Maya, Billing, Finance       # declare agents (more can be declared later)
rooms chat, ops                     # declare rooms or channels

## Events (each is one step; witnesses are worked out from who is in which room)
Maya, Billing enter chat            # each leaves its previous room; `Maya enters chat` for one
Maya exits chat                     # `A, B exit R` for several; each must be in R
in chat: refund_4411.status = open  # a state observed by everyone in the room
Finance sets refund_4411.status = rejected      # a world change, seen by the actor's room
Maya moves parcel to shelf          # parcel.location = shelf, seen by Maya's room
Billing tells Maya refund_4411.status = approved    # a private message: Billing and Maya
Billing says refund_4411.status = approved      # heard by everyone in Billing's room
Finance announces refund_4411.status = rejected # heard by every agent
claim refund_4411.status = rejected from crm by Finance at 2026-03-01 valid from 2026-03-01 to all
                                    # a source's claim (source: a policy source or an agent);
                                    # audience: `to all` (default), `in R`, or `to A, B`
claim refund_4411.carrier ended from crm at 2026-03-02   # the fact no longer holds (no new value)
Billing retracts refund_4411.status # Billing takes back what it said (heard by every agent)
handoff Finance -> Maya write       # Finance sends Maya what `handoff Finance -> Maya` includes,
                                    # with its sources (`crm via Finance`) and caveats
Maya peeks                          # Maya sees the next event (in a room she is not in), unseen
Maya is distracted                  # Maya, in the room, misses the next event; others think not
Maya waits                          # nothing changes
noop "free text"                    # nothing changes (kept for provenance)
Maya waits at 2026-03-02T09:30      # `at T` on an event: when it happened (times never go back)

Speech (tells, says, announces) never changes the truth; sets, moves, states and claims do.
Questions are not recorded: use the question tools (believes, false_beliefs, who_knows,
handoff, common_ground, explain, plan_announcements, context_for) or `ask` for any
`ask` / `expect` line, e.g. `expect Maya believes refund_4411.status = rejected`;
`... at 2026-03-02T10:00` asks what was held after the last event at or before that time.
"""
