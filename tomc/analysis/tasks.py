"""`open_tasks [for CHAIN]`: the blackboard's tasks still open, from one perspective.

A task is a subject with a `status` key (`task_42.status = open`, announced or told); it is
**done** when its status is one of DONE_STATUSES, else open. An open task is **claimed**
when the perspective holds a `claimed_by` value for it (`task_42.claimed_by = Dev`), else
**unclaimed**; its **findings** are the values held of its `findings` key (declare it
`predicate task_42.findings many` to collect several). Read from the perspective's current
beliefs (the truth when no chain is given), so an agent asks what it believes is unclaimed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from tomc.analysis.view import BeliefView, chain_text

DONE_STATUSES = frozenset({"done", "closed", "cancelled", "resolved"})


@dataclass(frozen=True)
class Task:
    """An open task: its subject, status (with the step it was adopted), who claimed it
    (empty: unclaimed) and its findings."""

    subject: str
    status: str
    since: int
    claimed_by: tuple[str, ...]
    findings: tuple[str, ...]

    def to_json(self) -> dict:
        """{subject, status, since, claimed_by, findings}."""
        return {"subject": self.subject, "status": self.status, "since": self.since,
                "claimed_by": list(self.claimed_by), "findings": list(self.findings)}


@dataclass
class OpenTasks:
    """The open tasks `chain` believes in at `step` (empty chain: the truth), by subject;
    `done` counts the tasks it believes done."""

    chain: tuple[str, ...]
    step: int
    tasks: list[Task]
    done: int

    def items(self, part: Optional[str]) -> list[str]:
        """`unclaimed`: the subjects of open tasks nobody claimed; else every open task."""
        return [t.subject for t in self.tasks if part != "unclaimed" or not t.claimed_by]

    def lines(self) -> list[str]:
        """One line per open task, claimed or not, with its findings."""
        out = [f"open tasks for {chain_text(self.chain)}: {len(self.tasks)} "
               f"({self.done} done)"]
        for t in self.tasks:
            who = f"claimed by {', '.join(t.claimed_by)}" if t.claimed_by else "unclaimed"
            found = f"; findings: {', '.join(t.findings)}" if t.findings else ""
            out.append(f"  {t.subject}: {t.status} since step {t.since}, {who}{found}")
        return out

    def to_json(self) -> dict:
        """{chain, step, done, tasks: [...]}."""
        return {"chain": list(self.chain), "step": self.step, "done": self.done,
                "tasks": [t.to_json() for t in self.tasks]}


def open_tasks(view: BeliefView, chain: tuple[str, ...]) -> OpenTasks:
    """The open tasks of `chain`'s current beliefs (module docstring)."""
    held: dict[tuple[str, str], list] = {}
    for h in view.held([chain]):
        subject, _, predicate = h.key.rpartition(".")
        if subject:
            held.setdefault((subject, predicate), []).append(h)
    tasks, done = [], 0
    for (subject, predicate), statuses in sorted(held.items()):
        if predicate != "status":
            continue
        status = min(statuses, key=lambda h: (-h.since, h.value))
        if status.value.lower() in DONE_STATUSES:
            done += 1
            continue
        claimed = tuple(sorted(h.value for h in held.get((subject, "claimed_by"), [])))
        findings = tuple(sorted(h.value for h in held.get((subject, "findings"), [])))
        tasks.append(Task(subject, status.value, status.since, claimed, findings))
    return OpenTasks(chain, view.step, tasks, done)
