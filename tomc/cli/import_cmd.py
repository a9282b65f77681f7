"""`tomc import hitom [DATA.json] -o DIR`: Hi-ToM stories and questions -> .tom files + index.json.

Without DATA.json it reads the Hi-ToM data shipped with tomc (`BUNDLED_DATA`)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from tomc.cli.common import EXIT_BAD_INPUT, fail
from tomc.importers.hitom import BUNDLED_DATA, INDEX_FILE, HitomImportError, import_hitom

app = typer.Typer(help="Turn benchmark data into .tom files.", no_args_is_help=True)


@app.command("hitom")
def hitom(
    data: Path = typer.Argument(BUNDLED_DATA, show_default=False,
                                help="A Hi-ToM_data.json (default: the released data shipped "
                                     "with tomc, Apache-2.0, He et al. 2023)"),
    out: Path = typer.Option(..., "-o", "--out", help="Folder for the .tom files and index.json"),
    expect: bool = typer.Option(True, "--expect/--ask-only",
                                help="Write a question as `expect LABEL` where its records "
                                     "agree on one label that the Hi-ToM rules give (the "
                                     "default), or every question as an `ask`"),
    json_output: bool = typer.Option(False, "--json", help="Print the summary as JSON"),
) -> None:
    """Turn Hi-ToM stories into one .tom scenario each, with an index joining questions to
    records. `tomc test DIR` then checks every expected label.

    Exit 0 on success, 2 when the data is unreadable or malformed or DIR is unwritable.
    """
    try:
        stories = import_hitom(data, out, expect=expect)
    except HitomImportError as err:
        fail(str(err), EXIT_BAD_INPUT)
    questions = [question for story in stories for question in story.questions]
    records = sum(len(question.records) for question in questions)
    expected = sum(question.expected is not None for question in questions)
    if json_output:
        typer.echo(json.dumps({"stories": len(stories), "questions": len(questions),
                               "records": records, "expects": expected, "out": str(out),
                               "index": str(out / INDEX_FILE)}))
    else:
        typer.echo(f"{len(stories)} stories, {len(questions)} questions ({records} records, "
                   f"{expected} expected labels) written to {out}")
