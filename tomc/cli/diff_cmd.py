"""`tomc diff --policy A --policy B PATH...`: every scenario under two policies, and what
differs (tomc/review/diff.py); `--search N` looks for a small generated scenario where they
differ (tomc/review/search.py)."""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from tomc.engine import factory as engines
from tomc.analysis.view import chain_text
from tomc.cli.common import (DATA_OPTION, DB_OPTION, EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK,
                             JSON_OPTION, EngineChoice, check_all, database, diagnostics_json,
                             emit_json, expand)
from tomc.cli.extras import needs_extra
from tomc.review.diff import (PolicyRef, ScenarioDiff, Why, check_under, compare, outcome,
                              policy_ref)

if TYPE_CHECKING:  # hypothesis (the review extra) loads only for --search
    from tomc.review.search import Found


def diff(paths: Optional[list[Path]] = typer.Argument(
             None, help=".tom scenario files or folders (every .tom below). Optional with "
                        "--search."),
         policies: list[str] = typer.Option(
             ..., "--policy", help="A policy: a shipped name (default, hitom; always the "
                                   "shipped one) or a .tom file with one policy (a file "
                                   "named like a shipped policy: ./hitom). Give it twice: "
                                   "--policy A --policy B."),
         search_n: int = typer.Option(
             0, "--search", min=0, metavar="N",
             help="Also generate up to N scenarios (the property tests' strategies, over the "
                  "agents and keys named here) and print the smallest where A and B differ."),
         seed: Optional[int] = typer.Option(
             None, "--seed", help="Random seed for --search (default: derandomized: the "
                                  "same scenarios are generated every time; the one shrunk "
                                  "to can vary with Python's hash seed)."),
         engine: EngineChoice = typer.Option(
             EngineChoice.reference, "--engine",
             help="reference (default: the pure-Python interpreter, fast) or falkordb (the "
                  "compiled Cypher; both agree, the property tests check it)."),
         db: Optional[str] = DB_OPTION,
         data: Optional[Path] = DATA_OPTION,
         json_output: bool = JSON_OPTION) -> None:
    """Run every scenario under policy A and under policy B, and list each expect/ask
    answer and each (chain, key, step) belief that differs, with both values and the rule
    and event behind each. Exit 0 when nothing differs, 1 when something does, 2 on bad
    input (3: FalkorDB unavailable, with --engine falkordb)."""
    if search_n:
        with needs_extra("review", "tomc diff --search"):
            from tomc.review.search import search, world_for
    if len(policies) != 2:
        _bad(f"give exactly two policies (--policy A --policy B), not {len(policies)}",
             json_output)
    refs = [_policy(p, json_output) for p in policies]
    if not paths and not search_n:
        _bad("name scenario files or folders, or ask for --search N", json_output)
    pairs, rejected = _checked_pairs(expand(paths or []), refs, json_output)
    connection = (database(db, data, json_output) if engines.stored(engine.value) and pairs
                  else nullcontext(None))
    with connection as conn:
        diffs = [compare(outcome(sa, engine.value, conn), outcome(sb, engine.value, conn))
                 for sa, sb in pairs]
    found: Optional[Found] = None
    if search_n:
        models = [sa for sa, _ in pairs]
        depth = min(r.depth for r in refs)
        found = search(*refs, world_for(*refs, models, depth), search_n, seed)
    differs = (any(d.differs for d in [*diffs, *rejected]) or found is not None)
    if json_output:
        emit_json({"policies": {"a": refs[0].label, "b": refs[1].label},
                   "scenarios": [d.to_json() for d in diffs],
                   "rejected": [r.to_json() for r in rejected],
                   "search": None if not search_n else {
                       "examples": search_n, "seed": seed,
                       "found": None if found is None else {
                           "tom": found.text, "events": found.events,
                           "beliefs": [d.to_json() for d in found.diffs]}},
                   "differs": differs})
    else:
        for d in diffs:
            typer.echo(_report(d, refs))
        for r in rejected:
            typer.echo(r.text())
        if search_n:
            typer.echo(_search_report(found, search_n, refs))
        changed = sum(1 for d in diffs if d.differs)
        summary = []
        if paths:
            summary.append(f"{changed} of {len(diffs)} scenarios differ")
        if rejected:
            summary.append(f"{len(rejected)} file does not check under both policies"
                           if len(rejected) == 1 else
                           f"{len(rejected)} files do not check under both policies")
        if search_n:
            summary.append(f"search: {'a counterexample' if found else 'none'} in up to "
                           f"{search_n} generated scenarios")
        typer.echo("; ".join(summary))
    raise typer.Exit(EXIT_FAILED if differs else EXIT_OK)


def _bad(message: str, json_output: bool):
    typer.echo(f"tomc: {message}", err=True)
    if json_output:
        emit_json({"error": message, "exit_code": EXIT_BAD_INPUT})
    raise typer.Exit(EXIT_BAD_INPUT)


def _policy(given: str, json_output: bool) -> PolicyRef:
    ref, problems = policy_ref(given)
    if ref is None:
        for d in problems:
            if d.span is None:  # about the option itself, not a line of a policy file
                hint = f"; {d.hint}" if d.hint else ""
                typer.echo(f"tomc: {d.path}: error[{d.code}]: {d.message}{hint}", err=True)
            else:
                typer.echo(d.render(d.source), err=True)
        if json_output:
            emit_json({"diagnostics": [d.to_json() for d in problems]})
        raise typer.Exit(EXIT_BAD_INPUT)
    return ref


@dataclass
class Rejected:
    """A file that checks under its own policy but not under `policies` (labels): the
    first `diagnostic` (rendered header line) and how many there are."""

    path: str
    policies: list[str]
    diagnostic: str
    count: int

    @property
    def differs(self) -> bool:
        """Rejected by one policy only: the policies disagree about the file itself."""
        return len(self.policies) == 1

    def to_json(self) -> dict:
        return {"path": self.path, "rejected_by": self.policies, "diagnostic": self.diagnostic,
                "count": self.count}

    def text(self) -> str:
        under = " and ".join(self.policies)
        more = f" (and {self.count - 1} more)" if self.count > 1 else ""
        verdict = "differs: " if self.differs else "skipped: "
        return f"file {self.path}: {verdict}does not check under {under}: {self.diagnostic}{more}"


def _checked_pairs(files: list[Path], refs: list[PolicyRef],
                   json_output: bool) -> tuple[list, list[Rejected]]:
    """Each scenario checked under A and under B. A file that does not check under its own
    policy is bad input (exit 2, its diagnostics); one that does not check under A or B
    (a source or a depth only its own policy has) is `Rejected`."""
    own = check_all(files, quiet_json=json_output)
    if not all(r.ok for r in own):
        if json_output:
            emit_json({"diagnostics": diagnostics_json(own)})
        raise typer.Exit(EXIT_BAD_INPUT)
    pairs, rejected = [], []
    for file, mine in zip(files, own):
        results = [check_under(str(file), mine.source, ref) for ref in refs]
        bad = [(r, ref) for r, ref in zip(results, refs) if not r.ok]
        if bad:
            first = bad[0][0].diagnostics[0] if bad[0][0].diagnostics else None
            header = first.render(bad[0][0].source).splitlines()[0] if first else "errors"
            rejected.append(Rejected(str(file), [ref.label for _, ref in bad], header,
                                     len(bad[0][0].diagnostics)))
            continue
        pairs.extend(zip(results[0].scenarios, results[1].scenarios))
    return pairs, rejected


def _why(whys: list[Why]) -> str:
    return "; ".join(w.describe() for w in whys)


def _report(d: ScenarioDiff, refs: list[PolicyRef]) -> str:
    a, b = refs[0].label, refs[1].label
    width = max(len(a), len(b))
    head = (f"scenario {d.name}  ({d.path}, {d.steps} events): "
            f"{len(d.answers)} answers and {len(d.beliefs)} beliefs differ")
    if not d.differs:
        return f"scenario {d.name}  ({d.path}, {d.steps} events): no difference"
    out = [head]
    for x in d.answers:
        out.append(f"  answer, line {x.line}: {x.text}")
        for label, value, why in ((a, x.a, x.why_a), (b, x.b, x.why_b)):
            suffix = f"   from {_why(why)}" if why else ""
            out.append(f"    {label:<{width}}  {value}{suffix}")
    for x in d.beliefs:
        out.append(f"  belief {chain_text(x.chain)}  {x.key}  at {x.steps}")
        for label, side, why in ((a, "a", x.why_a), (b, "b", x.why_b)):
            reason = f"   from {_why(why)}" if why else (
                "" if (x.a if side == "a" else x.b) is None else "   (no rule gave it a value)")
            out.append(f"    {label:<{width}}  {x.shown(side)}{reason}")
    return "\n".join(out)


def _search_report(found: Optional[Found], examples: int, refs: list[PolicyRef]) -> str:
    a, b = refs[0].label, refs[1].label
    if found is None:
        return (f"search: no difference between {a} and {b} in {examples} generated "
                "scenarios (not a proof: try more with --search, or another --seed)")
    lines = [f"search: smallest scenario found where {a} and {b} differ "
             f"({found.events} events, {len(found.diffs)} beliefs differ):", "",
             found.text.rstrip(), ""]
    return "\n".join(lines)
