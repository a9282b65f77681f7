"""`tomc compile FILE`: print the plan of parameterised Cypher a run would execute; for a
policy file (or with `--policy-only`), the policy's entries beside their Cypher
(tomc/review/listing.py)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from tomc.cli.common import EXIT_BAD_INPUT, EXIT_OK, JSON_OPTION, check_all, diagnostics_json, emit_json
from tomc.compiler.lower import compile_scenario
from tomc.compiler.plan import GraphNames, Plan, Statement, describe_target
from tomc.compiler.reads import reads_for
from tomc.compiler.templates import render
from tomc.dsl import ast
from tomc.dsl.checker import CheckResult
from tomc.dsl.parser import parse
from tomc.dsl.program import QueryModel, ReadyQuery, ScenarioModel
from tomc.review.listing import LEGEND, PolicyListing, list_policy, policy_file
from tomc.runtime.queries import belief_read, ready_read


def _statement_json(s: Statement, graphs: GraphNames) -> dict:
    # target: the agent whose mind graph it runs on, null for the world graph
    return {"graph": graphs.graph(s.graph), "target": s.graph, "template": s.template,
            "origin": {"line": s.origin[0], "text": s.origin[1]}, "cypher": s.cypher,
            "params": s.params}


def _statement_text(s: Statement, number: int, graphs: GraphNames) -> str:
    lines = [f"-- [{number}] {describe_target(s, graphs)}   (template {s.template}; "
             f"line {s.origin[0]})"]
    lines.extend(s.cypher.splitlines())
    lines.append("   params: " + json.dumps(s.params, ensure_ascii=False))
    return "\n".join(lines)


def _event_reads(scenario: ScenarioModel) -> dict[int, list[Statement]]:
    """For each step, the world-graph reads its event needs before it is compiled
    (tomc/compiler/reads.py); a handoff's read goes through the sender's belief view."""
    return {e.step: [r.statement for r in reads_for(e, scenario.policy) if r.statement]
            for e in scenario.events}


def compile_(file: Path = typer.Argument(..., help="A .tom file: a scenario or a policy."),
             policy_only: bool = typer.Option(
                 False, "--policy-only",
                 help="For a scenario file: list the policy it uses (and the chains each "
                      "rule names in its events) instead of the plan."),
             json_output: bool = JSON_OPTION) -> None:
    """Print every parameterised Cypher statement a run executes, in order, with its
    parameters and the .tom line it implements. User names and values appear only in the
    parameters, never in the Cypher text. Values an event reads from the graphs first (who
    trusts a speaker, what entering reveals, what a handoff sends) appear with the read
    that binds them, and empty placeholders in the plan.

    For a policy file (or a scenario file with --policy-only): each routing rule, trust
    mode, reveal mode, authority and cardinality as written, with its file and line, the
    Cypher lines that read its decision, the parameter it sets and the chains it can touch
    (docs/review.md)."""
    results = check_all([file], quiet_json=json_output)
    if not results[0].ok:
        if json_output:
            emit_json({"diagnostics": diagnostics_json(results)})
        raise typer.Exit(EXIT_BAD_INPUT)
    scenarios = results[0].scenarios
    if policy_only or not scenarios:
        listings = _listings(results[0], with_scenarios=bool(scenarios))
        if json_output:
            emit_json({"policies": [listing.to_json() for listing in listings]})
        else:
            typer.echo("\n\n".join(_listing_text(listing) for listing in listings))
        raise typer.Exit(EXIT_OK)
    plans = [compile_scenario(s) for s in scenarios]
    if json_output:
        emit_json({"plans": [_plan_json(scenario, p) for scenario, p in zip(scenarios, plans)]})
        raise typer.Exit(EXIT_OK)
    for scenario, plan in zip(scenarios, plans):
        _print_plan(scenario, plan)
    raise typer.Exit(EXIT_OK)


def _plan_json(scenario: ScenarioModel, plan: Plan) -> dict:
    g = plan.graphs
    event_reads = _event_reads(scenario)
    return {"scenario": plan.scenario, "world_graph": g.world, "mind_graphs": g.minds,
            "setup": [_statement_json(s, g) for s in plan.setup],
            "events": [{"step": e.step, "line": e.line, "text": e.text,
                        "reads_first": [_statement_json(s, g) for s in event_reads[e.step]],
                        "statements": [_statement_json(s, g) for s in e.statements]}
                       for e in plan.events],
            "reads": _reads(scenario, plan)}


def _print_plan(scenario: ScenarioModel, plan: Plan) -> None:
    g = plan.graphs
    typer.echo(f"// scenario {plan.scenario}: world graph {g.world}, "
               f"{len(g.minds)} mind graphs ({', '.join(g.minds.values())})")
    number = 0
    typer.echo("\n// setup")
    for s in plan.setup:
        number += 1
        typer.echo(_statement_text(s, number, g))
    event_reads = _event_reads(scenario)
    for event in plan.events:
        typer.echo(f"\n// step {event.step} (line {event.line}): {event.text}")
        for s in event_reads[event.step]:
            typer.echo("-- read before the event (binds its placeholders):")
            typer.echo(_statement_text(s, 0, g).split("\n", 1)[1])
        for s in event.statements:
            number += 1
            typer.echo(_statement_text(s, number, g))
    typer.echo("\n// reads: the belief read behind each expect and ask (an analysis's reads "
               "are listed in docs/cypher.md)")
    reads = _reads(scenario, plan)
    for template in dict.fromkeys(r["template"] for r in reads if r["params"] is not None):
        typer.echo(f"-- template {template}:\n{render(template)}")
    for read in reads:
        typer.echo(f"-- line {read['line']}: {read['text']}   "
                   f"(graph {read['graph']}; template {read['template']})")
        if read["params"] is not None:
            typer.echo("   params: " + json.dumps(read["params"], ensure_ascii=False))


def _reads(scenario: ScenarioModel, plan: Plan) -> list[dict]:
    """For each expect/ask (and `ready`): the graph, template and parameters of its read;
    for an analysis, a pointer to docs/cypher.md."""
    reads = []
    for query in scenario.queries:
        read = {"line": query.line, "text": query.text, "graph": None,
                "template": "analysis (docs/cypher.md)", "params": None}
        if isinstance(query, QueryModel):
            graph, template, params = belief_read(plan.graphs, query, None)
            read.update(graph=graph, template=template, params=params)
        elif isinstance(query, ReadyQuery):
            graph, template, params = ready_read(plan.graphs, query)
            read.update(graph=graph, template=template, params=params)
        reads.append(read)
    return reads


def _listings(result: CheckResult, with_scenarios: bool) -> list[PolicyListing]:
    """A policy file: each policy it defines. A scenario file: the policy its scenarios use,
    with the chains each rule named in their events. (The file checked without errors.)"""
    file = parse(result.source, result.path)
    inline = {i.name.text: i for i in file.items if isinstance(i, ast.Policy)}
    if not with_scenarios:
        return [list_policy(p, result.path) for p in inline.values()]
    model = result.scenarios[0].policy
    uses = [i for i in file.items if isinstance(i, ast.UsePolicy)]
    source = policy_file(uses[0] if uses else None, inline, Path(result.path).parent,
                         result.path)
    written = parse(Path(source).read_text(encoding="utf-8"), source)
    policy = next(p for p in written.items
                  if isinstance(p, ast.Policy) and p.name.text == model.name)
    return [list_policy(policy, source, result.scenarios)]


def _listing_text(listing: PolicyListing) -> str:
    """The reviewer's text: per entry, `where: as written`, then its Cypher, parameter and
    chains, indented."""
    out = [f"// policy {listing.name}  ({listing.file})",
           "// chain shapes: " + "; ".join(f"{k} {v}" for k, v in LEGEND.items())]
    for e in listing.entries:
        section = f"on {e.section}: " if e.kind == "routing" else ""
        origin = "  (from the default policy)" if e.inherited else ""
        out.append(f"\n{e.kind}: {section}{e.text}   ({e.file}:{e.line}){origin}")
        if e.cypher:
            label = "cypher" if all(t.endswith(".cypher") for t in e.templates) else "code"
            out.append(f"  {label} ({', '.join(e.templates)}):")
            out.extend(f"    {line}" for line in e.cypher.splitlines())
        out.append(f"  sets: {e.parameter}")
        out.append(f"  can touch: {', '.join(e.chains) or 'no chain'}")
        if e.touched is not None:
            out.append(f"  touched in these scenarios: {', '.join(e.touched) or 'no chain'}")
    return "\n".join(out)
