"""Policy checks and resolution: ast.Policy -> PolicyModel.

Which roles a rule may name depends on its section (E151); depth is 1..4 (E150); sources
and predicates are declared once (E110). Sections a policy leaves out come from the shipped
`default` policy, as do depth and trust when unset.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Optional

from tomc.dsl import ast
from tomc.dsl.diagnostics import Diagnostic, DiagnosticError, did_you_mean
from tomc.dsl.parser import parse, parse_file, read_source
from tomc.dsl.program import PolicyModel, Procedure, Requirement
from tomc.rules import shipped_names, shipped_policy_path

MAX_DEPTH = 4
# A scenario's chains cost a graph node each and are walked by every broadcast: 100 agents
# at depth 4 would be 94 million (and gigabytes before the first event). A policy raises it
# with `limits perspectives N` (E152).
DEFAULT_MAX_PERSPECTIVES = 100_000
MAX_AUTHORITY = 2**53  # FalkorDB integers are 64-bit; keep well inside

# The role sets and single roles each section's rules may name (docs/language.md, "Routing rules").
_SETS = {
    "observe": {"witnesses", "peekers", "distracted"},
    "enter": {"witnesses", "peekers", "distracted"},
    "tell": {"listeners", "believers", "speaker"},
    "announce": {"listeners", "believers", "speaker"},
    "claim": {"listeners", "believers", "speaker"},
}
_ROLES = {
    "observe": set(),
    "enter": set(),
    "tell": {"speaker", "listener"},
    "announce": {"speaker", "listener"},
    "claim": {"speaker", "listener"},
}


def check_policy(policy: ast.Policy, path: str) -> list[Diagnostic]:
    """Every problem in one policy block (E110, E150, E151); empty when it is valid."""
    found: list[Diagnostic] = []
    if policy.limits is not None and policy.limits < 1:
        found.append(Diagnostic("E150", f"limits perspectives {policy.limits} is out of range",
                                policy.limits_span or policy.span, path,
                                hint="a positive number of chains, e.g. `limits perspectives "
                                     f"{DEFAULT_MAX_PERSPECTIVES * 10}`"))
    if policy.depth is not None and not 1 <= policy.depth <= MAX_DEPTH:
        found.append(Diagnostic("E150", f"depth {policy.depth} is out of range",
                                policy.depth_span or policy.span,
                                path, hint=f"use a depth from 1 to {MAX_DEPTH}"))
    for source in policy.sources:
        if abs(source.authority) > MAX_AUTHORITY:
            found.append(Diagnostic("E150", f"authority {source.authority} is out of range",
                                    source.span, path,
                                    hint=f"use a whole number from -{MAX_AUTHORITY} to "
                                    f"{MAX_AUTHORITY}"))
    for label, names in (("source", [s.name for s in policy.sources]),
                         ("predicate", [p.key for p in policy.predicates])):
        seen: set[str] = set()
        for name in names:
            text = name.text
            if text in seen:
                found.append(Diagnostic("E110", f"{label} `{text}` is declared twice", name.span,
                                        path, hint="keep one declaration"))
            seen.add(text)
    found.extend(_check_aliases(policy.aliases, path))
    found.extend(check_procedures(policy.procedures, set(), path))
    seen_sections: set[str] = set()
    for section in policy.sections:
        if section.event_class in seen_sections:
            found.append(Diagnostic("E110", f"section `on {section.event_class}:` appears twice",
                                    section.span, path, hint="merge the two sections"))
        seen_sections.add(section.event_class)
        if section.event_class == "enter" and section.rules:
            found.append(Diagnostic("E151", "`on enter:` takes only `reveal nothing` or "
                                    "`reveal contents`", section.rules[0].span, path,
                                    hint="what entering reveals is routed by the `on observe:` "
                                    "rules"))
        if section.hidden and section.reveal != "contents":
            found.append(Diagnostic("E151", "`except` hides what `reveal contents` shows; "
                                    "`reveal nothing` shows nothing to hide",
                                    section.hidden[0].span, path,
                                    hint="write `reveal contents except ...`, or drop `except`"))
        if section.reveal and section.event_class != "enter":
            found.append(Diagnostic("E151", "`reveal` belongs under `on enter:`", section.span,
                                    path))
        for rule in section.rules:
            found.extend(_check_rule(rule, section.event_class, path))
    return found


def _check_aliases(aliases: list[ast.AliasDecl], path: str) -> list[Diagnostic]:
    """Each alias names one subject, never itself nor a subject that has aliases (E110):
    a name is read as its subject in one step, whatever the order of declarations."""
    found: list[Diagnostic] = []
    named = {a.name.text for a in aliases}
    of: dict[str, str] = {}
    for decl in aliases:
        for alias in decl.aliases:
            text, subject = alias.text, decl.name.text
            if text == subject or text in named:
                found.append(Diagnostic(
                    "E110", f"alias `{text}` names a subject that has aliases of its own",
                    alias.span, path, hint=f"list every other name of `{text}` in one "
                    "`alias` line, after the name they all stand for"))
            elif text in of:
                again = "twice" if of[text] == subject else f"for `{of[text]}` and `{subject}`"
                found.append(Diagnostic("E110", f"alias `{text}` is declared {again}",
                                        alias.span, path, hint="an alias names one subject"))
            of.setdefault(text, subject)
    return found


def check_procedures(procedures: list[ast.Procedure], declared: set[str],
                     path: str) -> list[Diagnostic]:
    """A procedure is named once among `declared` and its neighbours (E110) and has at least
    one step (E171)."""
    found: list[Diagnostic] = []
    seen = set(declared)
    for procedure in procedures:
        name = procedure.name.text
        if name in seen:
            found.append(Diagnostic("E110", f"procedure `{name}` is defined twice",
                                    procedure.name.span, path,
                                    hint="give each procedure its own name (a scenario's "
                                         "procedures share names with its policy's)"))
        seen.add(name)
        if not procedure.requires:
            found.append(Diagnostic("E171", f"procedure `{name}` has no step",
                                    procedure.name.span,
                                    path, hint="add a step such as `requires qa.signoff = "
                                               "signed` or `requires freeze.date`"))
    return found


def procedure_model(procedure: ast.Procedure) -> Procedure:
    """A checked procedure: canonical keys, values as text (None: any known value)."""
    return Procedure(procedure.name.text, tuple(
        Requirement(r.key.text, r.value.text if r.value is not None else None)
        for r in procedure.requires), procedure.span.line if procedure.span else 0)


def _check_rule(rule: ast.Rule, event_class: str, path: str) -> list[Diagnostic]:
    sets, roles = _SETS[event_class], _ROLES[event_class]
    found = []

    def bad(word: str, allowed: set[str], what: str) -> None:
        hint = (f"use one of: {', '.join(sorted(allowed))}" if allowed else
                "this section has no roles: write `every chain over witnesses adopts`")
        found.append(Diagnostic("E151", f"`{word}` is not a {what} of `on {event_class}:` rules",
                                rule.span, path, hint=hint))

    for word in rule.over:
        if word not in sets:
            bad(word, sets, "role set")
    for word in rule.path:
        if word not in roles:
            bad(word, roles, "role")
    if len(set(rule.path)) != len(rule.path):
        found.append(Diagnostic("E151", "a rule's chain names a role twice", rule.span, path,
                                hint="chains are of pairwise distinct agents"))
    for word in rule.excepted:
        if word not in roles:
            bad(word, roles, "role")
    if rule.condition is not None and (rule.condition.truster, rule.condition.trusted) != (
            "listener", "speaker"):
        found.append(Diagnostic("E151", "only `trusts(listener, speaker)` can be tested",
                                rule.condition.span, path,
                                hint="write `if trusts(listener, speaker)`"))
    if rule.condition is not None and "listener" not in rule.path and not rule.over:
        found.append(Diagnostic("E151", "a trust condition needs `listener` in the rule's chain",
                                rule.span, path))
    if rule.condition is not None and rule.over:
        found.append(Diagnostic("E151", "`every chain over` rules take no condition",
                                rule.span, path, hint="use the `believers` set instead"))
    return found


@lru_cache(maxsize=None)
def _default_policy() -> ast.Policy:
    file, _ = parse_file(shipped_policy_path("default"))
    return _only_policy(file)


@lru_cache(maxsize=64)
def _policy_file(target: str, file_path: str,
                 source: str) -> tuple[Optional[ast.Policy], tuple[Diagnostic, ...]]:
    """The policy file `use policy "target"` names, parsed and checked once per content: a
    folder of scenarios that share one parses it once, and an edited file (whatever its
    timestamp) is parsed again. An E104 is about the `use` line, whose span the caller
    fills in."""
    nowhere = ast.Span(line=1, column=1, end_line=1, end_column=1)
    try:
        file = parse(source, file_path)
    except DiagnosticError as err:
        return None, tuple(replace(d, source=source) for d in err.diagnostics)
    policies = [i for i in file.items if isinstance(i, ast.Policy)]
    if len(policies) != 1:
        return None, (Diagnostic("E104", f"`{target}` must define exactly one policy",
                                 nowhere, file_path),)
    problems = tuple(replace(d, source=source) for d in check_policy(policies[0], file_path))
    return (None if problems else policies[0]), problems


@lru_cache(maxsize=None)
def _shipped_policy(name: str) -> ast.Policy:
    file, _ = parse_file(shipped_policy_path(name))
    return _only_policy(file)


def _only_policy(file: ast.File) -> ast.Policy:
    return next(item for item in file.items if isinstance(item, ast.Policy))


def resolve(policy: ast.Policy) -> PolicyModel:
    """Fill what `policy` leaves out from the shipped default policy."""
    default = _default_policy()
    aliases = {a.text: d.name.text for d in policy.aliases for a in d.aliases}
    policy = ast.renamed_subjects(policy, lambda name: aliases.get(name, name))
    sections = {s.event_class: s for s in default.sections}
    sections.update({s.event_class: s for s in policy.sections})
    return PolicyModel(
        name=policy.name.text,
        depth=policy.depth or default.depth,
        trust=policy.trust or default.trust,
        authorities={s.name.text: s.authority for s in policy.sources},
        cardinality={p.key.text: p.cardinality for p in policy.predicates},
        agent_only=frozenset(p.key.text for p in policy.predicates if p.agent_only),
        aliases=aliases,
        sections=sections,
        max_perspectives=policy.limits or DEFAULT_MAX_PERSPECTIVES,
        ties=policy.ties or "contested",
        procedures={p.name.text: procedure_model(p) for p in policy.procedures},
    )


def perspective_count(agents: int, depth: int) -> int:
    """How many chains `agents` agents make at `depth`: sum over k of agents!/(agents-k)!."""
    total, chains = 0, 1
    for k in range(depth):
        chains *= max(agents - k, 0)
        total += chains
    return total


def load_policy(use: Optional[ast.UsePolicy], inline: dict[str, ast.Policy],
                base: Path, path: str) -> tuple[Optional[ast.Policy], list[Diagnostic]]:
    """The policy a file's `use policy` names: inline, shipped, or a path (quoted, .tom).

    Returns (policy, diagnostics); the policy is None when it cannot be loaded (E104), and
    the diagnostics then explain why. Errors inside a policy file are reported against it.
    """
    if use is None:
        if len(inline) == 1:
            return next(iter(inline.values())), []
        return _default_policy(), []
    target = use.target.text
    if target in inline:
        return inline[target], []
    if use.target.quoted and (target.endswith(".tom") or "/" in target):
        file_path = (base / target)
        try:
            source = read_source(file_path)
        except DiagnosticError as err:
            return None, [Diagnostic("E104", f"cannot read policy file `{target}`", use.span,
                                     path, hint=f"{file_path}: {err.diagnostics[0].message}")]
        policy, problems = _policy_file(target, str(file_path), source)
        if problems and problems[0].code == "E104":  # about the `use` line, not the file
            problems = tuple(replace(d, span=use.span, path=path) for d in problems)
        return policy, list(problems)
    if target in shipped_names():
        return _shipped_policy(target), []
    hint = did_you_mean(target, [*shipped_names(), *inline])
    return None, [Diagnostic("E104", f"unknown policy `{target}`", use.target.span, path,
                             hint=hint or 'name a shipped policy or a file: "path/x.tom"')]
