"""Output formats for code-review tools: `--format text|json|junit|sarif|github`.

Both `check` (diagnostics) and `test` (diagnostics, or expectations that passed and failed)
report through one shape, `Finding`: a file, a line and column, a rule id (a diagnostic code,
or `expect` for an expectation), a message and whether it failed. Each format turns a list of
them into one document on stdout:

- `junit`: JUnit XML (one testsuite per file for `check`, per scenario for `test`);
- `sarif`: SARIF 2.1.0, one result per diagnostic or failed expectation, at its file and line;
- `github`: GitHub Actions workflow commands (`::error file=F,line=L,col=C,title=T::message`),
  which put annotations on the pull request's lines, then one `::notice title=tomc::SUMMARY`
  (`5 passed, 0 failed`), so that a run with nothing to annotate still says what it did.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from enum import Enum
from typing import Optional

import typer

import tomc
from tomc.dsl.diagnostics import CODES, Diagnostic


class OutputFormat(str, Enum):
    """What `--format` takes."""

    text = "text"
    json = "json"
    junit = "junit"
    sarif = "sarif"
    github = "github"


FORMAT_OPTION = typer.Option(
    OutputFormat.text, "--format",
    help="text (for people), json, junit (JUnit XML), sarif (SARIF 2.1.0, for code scanning) "
         "or github (GitHub Actions annotations on the file and line).")

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
EXPECT_RULE = "expect"  # the rule id of a failed expectation in SARIF and GitHub output


@dataclass(frozen=True)
class Finding:
    """One diagnostic or one expectation, located in a .tom file.

    `group` is what JUnit groups test cases by (the file for `check`, the scenario for
    `test`); `failed` is False for a passed expectation (JUnit lists those too).
    """

    path: str
    line: int
    column: int
    rule: str
    message: str
    group: str
    failed: bool = True
    name: Optional[str] = None  # the test case's name (JUnit); the message when None
    detail: Optional[str] = None  # more text for people (a hint, the actual value)


def from_diagnostic(d: Diagnostic) -> Finding:
    """A diagnostic as a failed finding, grouped by its file."""
    line, column = (d.span.line, d.span.column) if d.span else (1, 1)
    return Finding(d.path, line, column, d.code, d.message, group=d.path,
                   failed=d.severity == "error", detail=d.hint)


def emit(findings: list[Finding], output: OutputFormat, summary: str) -> None:
    """Print `findings` in a structured format (junit, sarif or github) on stdout; `summary`
    is the run's one-line summary, which the github format ends with as a notice."""
    if output == OutputFormat.junit:
        typer.echo(junit_xml(findings))
    elif output == OutputFormat.sarif:
        typer.echo(json.dumps(sarif(findings), indent=2, ensure_ascii=False))
    elif output == OutputFormat.github:
        for finding in findings:
            if finding.failed:
                typer.echo(github_line(finding))
        typer.echo(f"::notice title=tomc::{_github_data(summary)}")


def xml_text(text: str) -> str:
    """`text` with U+FFFD for each character XML 1.0 cannot hold (control characters,
    lone surrogates, U+FFFE, U+FFFF), which names may contain."""
    def allowed(c: str) -> bool:
        code = ord(c)
        return c in "\t\n\r" or (code >= 32 and not 0xD800 <= code <= 0xDFFF
                                   and code not in (0xFFFE, 0xFFFF))
    return "".join(c if allowed(c) else "\ufffd" for c in text)


def junit_tree(findings: list[Finding], files: Optional[dict[str, str]] = None) -> ET.Element:
    """`<testsuites>` with one suite per group; `files` maps a group to its file path (a
    scenario's file). A group with no finding still needs listing by the caller."""
    suites = ET.Element("testsuites", name="tomc")
    groups: dict[str, list[Finding]] = {}
    for finding in findings:
        groups.setdefault(finding.group, []).append(finding)
    for group, members in groups.items():
        path = (files or {}).get(group, members[0].path)
        suite = ET.SubElement(suites, "testsuite", name=xml_text(group), file=xml_text(path),
                              tests=str(len(members)),
                              failures=str(sum(1 for f in members if f.failed)))
        for f in members:
            case = ET.SubElement(suite, "testcase", classname=xml_text(group),
                                 name=xml_text(f.name or f"line {f.line}: {f.message}"),
                                 file=xml_text(f.path), line=str(f.line))
            if f.failed:
                failure = ET.SubElement(case, "failure", type=f.rule,
                                        message=xml_text(f.detail or f.message))
                failure.text = xml_text(f"{f.path}:{f.line}:{f.column}: {f.message}"
                                        + (f"\n{f.detail}" if f.detail else ""))
    return suites


def junit_xml(findings: list[Finding]) -> str:
    """The JUnit XML document as text."""
    return ET.tostring(junit_tree(findings), encoding="unicode", xml_declaration=True)


def sarif(findings: list[Finding]) -> dict:
    """A SARIF 2.1.0 log with one run of tomc: a result per failed finding."""
    failed = [f for f in findings if f.failed]
    rules = sorted({f.rule for f in failed})
    descriptions = {**CODES, EXPECT_RULE: "expectation does not hold"}
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "tomc", "version": tomc.__version__,
                "rules": [{"id": r, "shortDescription": {"text": descriptions.get(r, r)}}
                          for r in rules]}},
            "results": [{
                "ruleId": f.rule, "ruleIndex": rules.index(f.rule), "level": "error",
                "message": {"text": f.message + (f" ({f.detail})" if f.detail else "")},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": f.path},
                    "region": {"startLine": f.line, "startColumn": f.column}}}],
            } for f in failed],
        }],
    }


def github_line(f: Finding) -> str:
    """One GitHub Actions `::error` command; properties and message escaped as the runner
    expects (% CR LF, and , : in properties)."""
    def prop(text: str) -> str:
        return _github_data(text).replace(":", "%3A").replace(",", "%2C")

    message = f.message + (f"\n{f.detail}" if f.detail else "")
    return (f"::error file={prop(f.path)},line={f.line},col={f.column},"
            f"title={prop(f'tomc {f.rule}')}::{_github_data(message)}")


def _github_data(text: str) -> str:
    """A workflow command's message, escaped as the runner expects (% CR LF)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
