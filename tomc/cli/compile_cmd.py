"""`tomc compile FILE`: print the plan of parameterised Cypher a run would execute."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from tomc.cli.common import EXIT_BAD_INPUT, EXIT_OK, JSON_OPTION, check_all, diagnostics_json, emit_json
from tomc.compiler.lower import lower
from tomc.compiler.plan import Plan, Statement, describe_minds
from tomc.compiler.templates import render
from tomc.program import QueryModel, ScenarioModel
from tomc.runtime.queries import belief_read


def _statement_json(s: Statement) -> dict:
    return {"graph": s.graph, "minds": list(s.minds), "template": s.template,
            "origin": {"line": s.origin[0], "text": s.origin[1]}, "cypher": s.cypher,
            "params": s.params, "bound_at_run_time": list(s.bound), "binds": s.binds}


def _statement_text(s: Statement, number: int, plan: Plan) -> str:
    target = describe_minds(s.minds) if s.graph == "mind" else f"world graph {plan.world_graph}"
    lines = [f"-- [{number}] {target}   (template {s.template}; line {s.origin[0]})"]
    lines.extend(s.cypher.splitlines())
    lines.append("   params: " + json.dumps(s.params, ensure_ascii=False))
    if s.bound:
        lines.append("   bound at run time by an earlier statement of the event: " + ", ".join(s.bound))
    return "\n".join(lines)


def compile_(file: Path = typer.Argument(..., help="A .tom file."),
             json_output: bool = JSON_OPTION) -> None:
    """Print every parameterised Cypher statement a run executes, in order, with its
    parameters and the .tom line it implements: what a policy review reads. User names and
    values appear only in the parameters, never in the Cypher text."""
    results = check_all([file], quiet_json=json_output)
    if not results[0].ok:
        if json_output:
            emit_json({"diagnostics": diagnostics_json(results)})
        raise typer.Exit(EXIT_BAD_INPUT)
    scenarios = results[0].scenarios
    plans = [lower(s) for s in scenarios]
    if json_output:
        emit_json({"plans": [{"scenario": p.scenario, "world_graph": p.world_graph,
                              "mind_graph_prefix": p.mind_graph_prefix,
                              "setup": [_statement_json(s) for s in p.setup],
                              "events": [{"step": e.step, "line": e.line, "text": e.text,
                                          "statements": [_statement_json(s)
                                                         for s in e.statements]}
                                         for e in p.events],
                              "reads": _reads(scenario, p)}
                             for scenario, p in zip(scenarios, plans)]})
        raise typer.Exit(EXIT_OK)
    for scenario, plan in zip(scenarios, plans):
        typer.echo(f"// scenario {plan.scenario}: world graph {plan.world_graph}, "
                   f"mind graphs {plan.mind_graph_prefix}<agent>")
        number = 0
        typer.echo("\n// setup")
        for s in plan.setup:
            number += 1
            typer.echo(_statement_text(s, number, plan))
        for event in plan.events:
            typer.echo(f"\n// step {event.step} (line {event.line}): {event.text}")
            for s in event.statements:
                number += 1
                typer.echo(_statement_text(s, number, plan))
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
    raise typer.Exit(EXIT_OK)


def _reads(scenario: ScenarioModel, plan: Plan) -> list[dict]:
    """For each expect/ask: the graph, template and parameters of its belief read; for an
    analysis, a pointer to docs/cypher.md."""
    reads = []
    for query in scenario.queries:
        read = {"line": query.line, "text": query.text, "graph": None,
                "template": "analysis (docs/cypher.md)", "params": None}
        if isinstance(query, QueryModel):
            graph, template, params = belief_read(plan.graphs(), query.chain, query.key,
                                                  query.step, query.on_date)
            read.update(graph=graph, template=template, params=params)
        reads.append(read)
    return reads
