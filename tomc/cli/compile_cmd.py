"""`tomc compile FILE`: print the plan of parameterised Cypher a run would execute."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from tomc.cli.common import EXIT_BAD_INPUT, EXIT_OK, JSON_OPTION, check_all, diagnostics_json, emit_json
from tomc.compiler.lower import compile_scenario
from tomc.compiler.plan import GraphNames, Plan, Statement, describe_target
from tomc.compiler.reads import reads_for
from tomc.compiler.templates import render
from tomc.dsl.program import QueryModel, ScenarioModel
from tomc.runtime.queries import belief_read


def _statement_json(s: Statement, graphs: GraphNames) -> dict:
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


def compile_(file: Path = typer.Argument(..., help="A .tom file."),
             json_output: bool = JSON_OPTION) -> None:
    """Print every parameterised Cypher statement a run executes, in order, with its
    parameters and the .tom line it implements: what a policy review reads. User names and
    values appear only in the parameters, never in the Cypher text. Values an event reads
    from the graphs first (who trusts a speaker, what entering reveals, what a handoff
    sends) are shown as the read that binds them, with empty placeholders in the plan."""
    results = check_all([file], quiet_json=json_output)
    if not results[0].ok:
        if json_output:
            emit_json({"diagnostics": diagnostics_json(results)})
        raise typer.Exit(EXIT_BAD_INPUT)
    scenarios = results[0].scenarios
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
    """For each expect/ask: the graph, template and parameters of its belief read; for an
    analysis, a pointer to docs/cypher.md."""
    reads = []
    for query in scenario.queries:
        read = {"line": query.line, "text": query.text, "graph": None,
                "template": "analysis (docs/cypher.md)", "params": None}
        if isinstance(query, QueryModel):
            graph, template, params = belief_read(plan.graphs, query)
            read.update(graph=graph, template=template, params=params)
        reads.append(read)
    return reads
