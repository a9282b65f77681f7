"""Human-readable reports of scenario runs: answers with provenance, expectations pass/fail."""

from __future__ import annotations

from typing import Optional

from tomc.analysis.answer import AnalysisAnswer
from tomc.answers import Answer
from tomc.cli.terminal import paint
from tomc.readiness import ReadyAnswer
from tomc.runner import ScenarioRun


def describe_subject(answer: Answer) -> str:
    """`truth KEY` or `A > B believes KEY`, at step N when asked about the past."""
    q = answer.query
    who = "truth" if not q.chain else " > ".join(q.chain) + " believes"
    return f"{who} {q.key}"


def provenance_lines(answer: Answer) -> list[str]:
    """One line per value: the step, .tom line and text of the event, its witnesses."""
    lines = []
    for p in answer.provenance:
        source = f"; source: {', '.join(p.support)}" if p.support else ""
        rule = f"; rule: {p.rule}" if p.rule else ""
        witnesses = ", ".join(p.witnesses) or "none"
        lines.append(f"      from step {p.step} (line {p.line}): {p.text}"
                     f"  [witnesses: {witnesses}{source}{rule}]")
    if answer.contested:
        lines.append(f"      contested by: {', '.join(answer.contested)}")
    return lines


def render_run(run: ScenarioRun) -> str:
    """The report of one scenario: a header, then each expect and ask in file order."""
    s = run.scenario
    out = [f"scenario {s.name}  ({s.path}, policy {s.policy.name}, {len(s.events)} events)"]
    for answer in run.answers:
        q = answer.query
        if isinstance(answer, AnalysisAnswer):
            out.extend(analysis_lines(answer))
        elif isinstance(answer, ReadyAnswer):
            out.extend(ready_lines(answer))
        elif q.kind == "ask":
            at = f" at step {q.step}" if q.step != len(s.events) else ""
            at += f" on {q.on_date.removesuffix('T00:00:00')}" if q.on_date is not None else ""
            out.append(f"  ask  {describe_subject(answer)}{at} = {answer.shown}"
                       f"   (line {q.line})")
            out.extend(provenance_lines(answer))
        elif answer.passed:
            out.append(f"  {paint('PASS', 'green')} {q.text}   (line {q.line})")
        else:
            out.append(f"  {paint('FAIL', 'red')} {q.text}   (line {q.line})")
            out.append(f"      actual: {answer.shown}")
            out.extend(provenance_lines(answer))
    return "\n".join(out)


def analysis_lines(answer: AnalysisAnswer) -> list[str]:
    """An analysis: its statement, then its evidence; for an expect, PASS or FAIL first (and
    the actual items when it fails)."""
    return _judged(answer.query, answer.passed, "", answer.shown, answer.lines())


def ready_lines(answer: ReadyAnswer) -> list[str]:
    """`ask ready ...`: the verdict, then each step's evidence; for an expect, PASS or FAIL
    (with the actual answer and the evidence when it fails)."""
    actual = {"verdict": answer.verdict, "blockers": answer.blockers,
              "unknown": answer.unknown}.get(answer.query.part, answer.verdict)
    if isinstance(actual, list):
        actual = "{" + ", ".join(actual) + "}"
    return _judged(answer.query, answer.passed, f" = {answer.shown}",
                   f"{actual} ({answer.shown})", answer.lines())


def _judged(q, passed: Optional[bool], asked: str, actual: str,
            evidence: list[str]) -> list[str]:
    """An ask (`asked` after its text) or an expect (PASS alone, or FAIL with `actual`),
    then the evidence lines."""
    if q.kind == "ask":
        head = [f"  ask  {q.text.removeprefix('ask ')}{asked}   (line {q.line})"]
    elif passed:
        return [f"  {paint('PASS', 'green')} {q.text}   (line {q.line})"]
    else:
        head = [f"  {paint('FAIL', 'red')} {q.text}   (line {q.line})",
                f"      actual: {actual}"]
    return head + [f"      {line}" for line in evidence]


def summary_line(runs: list[ScenarioRun]) -> str:
    """`N passed, N failed` over every expectation of every run."""
    passed = sum(1 for r in runs for a in r.answers if a.passed is True)
    failed = sum(1 for r in runs for a in r.answers if a.passed is False)
    return f"{passed} passed, {failed} failed"
