"""`tomc compile FILE`: print the plan of parameterised Cypher a run would execute."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from tomc.cli.common import EXIT_BAD_INPUT, EXIT_OK, JSON_OPTION, check_all, diagnostics_json, emit_json
from tomc.compiler.lower import lower
from tomc.compiler.plan import Plan, Statement, describe_minds


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
    plans = [lower(s) for s in results[0].scenarios]
    if json_output:
        emit_json({"plans": [{"scenario": p.scenario, "world_graph": p.world_graph,
                              "mind_graph_prefix": p.mind_graph_prefix,
                              "setup": [_statement_json(s) for s in p.setup],
                              "events": [{"step": e.step, "line": e.line, "text": e.text,
                                          "statements": [_statement_json(s)
                                                         for s in e.statements]}
                                         for e in p.events]} for p in plans]})
        raise typer.Exit(EXIT_OK)
    for plan in plans:
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
    raise typer.Exit(EXIT_OK)
