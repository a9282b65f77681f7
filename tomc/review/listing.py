"""What a policy says, entry by entry, for a review: each depth, trust mode, reveal mode,
source authority, key cardinality and routing rule as written (file and line), the Cypher
it becomes and the chains it can touch (what `tomc compile POLICY.tom` prints).

A policy is not compiled on its own: the compiler evaluates its rules per event
(tomc/compiler/routing.py) and the templates read what the rules decided as parameters.
So each entry shows the template lines that read its decision, and the parameter it sets:
a routing rule becomes a `Write(chain, rule, force)` the compiler resolves for each chain it
names, an authority the `authority` of the facts tomc/compiler/resolve.py compares, a
cardinality their `many`. Chains are shown as role shapes (`L > S`: a listener's model of the
speaker); given scenarios, also as the concrete chains each rule named in their events.
Sections a policy leaves out come from the shipped default policy and are marked so.

Shape: `PolicyListing(name, file, entries: [Entry(kind, text, file, line, inherited,
section, templates, cypher, parameter, chains, touched)])`; `.to_json()`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from itertools import product
from pathlib import Path
from typing import Optional

from tomc.compiler.routing import communication_routes, observation_routes
from tomc.compiler.templates import render
from tomc.dsl import ast
from tomc.dsl.parser import parse_file
from tomc.dsl.policies import resolve
from tomc.dsl.program import Communication, Handoff, Observation, Presence, ScenarioModel
from tomc.rules import shipped_names, shipped_policy_path

# The role letters of chain shapes: S the speaker, L any listener, B a listener who trusts
# the speaker (a believer), N a listener who does not, W a witness.
LEGEND = {"S": "the speaker", "L": "a listener", "B": "a listener who trusts the speaker",
          "N": "a listener who does not trust the speaker", "W": "a witness",
          "W > W": "two distinct agents of the same role"}


@dataclass
class Entry:
    """One thing a policy decides. `kind`: depth, limits, trust, ties, reveal, authority,
    cardinality, alias, procedure or routing; `text` as written; `file`/`line` where (the
    shipped default's file when `inherited`); `section` the event class of a routing rule;
    `templates` and `cypher` the template lines that read its decision; `parameter` what it
    sets; `chains` the role shapes it can touch; `touched` the concrete chains it named in
    the given scenarios."""

    kind: str
    text: str
    file: str
    line: int
    inherited: bool = False
    section: Optional[str] = None
    templates: list[str] = field(default_factory=list)
    cypher: str = ""
    parameter: str = ""
    chains: list[str] = field(default_factory=list)
    touched: Optional[list[str]] = None


@dataclass
class PolicyListing:
    """Every entry of one policy, in the order a reviewer reads them."""

    name: str
    file: str
    entries: list[Entry]

    def to_json(self) -> dict:
        """{name, file, legend, entries: [...]}."""
        return {"name": self.name, "file": self.file, "legend": LEGEND,
                "entries": [asdict(e) for e in self.entries]}


def policy_file(use: Optional[ast.UsePolicy], inline: dict[str, ast.Policy], base: Path,
                path: str) -> str:
    """The file a file's policy is written in (mirrors tomc.dsl.policies.load_policy, which
    has resolved it already without errors): this file, a path, or a shipped policy."""
    default = str(shipped_policy_path("default"))
    if use is None:
        return path if len(inline) == 1 else default
    target = use.target.text
    if target in inline:
        return path
    if use.target.quoted and (target.endswith(".tom") or "/" in target):
        return str(base / target)
    return str(shipped_policy_path(target)) if target in shipped_names() else default


def list_policy(policy: ast.Policy, file: str,
                scenarios: Optional[list[ScenarioModel]] = None) -> PolicyListing:
    """The entries of `policy` (written in `file`), with what the default fills in; with
    `scenarios`, the chains each routing rule named in their events."""
    model = resolve(policy)
    default_file = str(shipped_policy_path("default"))
    default, _ = parse_file(default_file)
    default_policy = next(i for i in default.items if isinstance(i, ast.Policy))
    lines = _Lines()
    own = policy is not default_policy and Path(file) != Path(default_file)

    def where(node_span, fallback_span, inherited: bool) -> tuple[str, int, str]:
        src = _shown_path(default_file if inherited else file)
        span = node_span or fallback_span
        return src, span.line if span else 0, lines.text(src, span)

    entries: list[Entry] = []
    inherited = policy.depth is None and own
    src, line, text = where(default_policy.depth_span if inherited else policy.depth_span,
                            None, inherited)
    entries.append(Entry("depth", text or f"depth {model.depth}", src, line, inherited,
                         templates=["setup_mind.cypher"],
                         cypher=_excerpt("setup_mind.cypher", ("UNWIND $chains", "MERGE (p:P")),
                         parameter=f"chains: every chain of 1..{model.depth} distinct agents",
                         chains=[f"chains of length 1..{model.depth}"]))
    if policy.limits is not None:
        src, line, text = where(policy.limits_span, None, False)
        entries.append(Entry("limits", text or f"limits perspectives {policy.limits}", src,
                             line, parameter=f"no Cypher: the checker refuses a scenario whose "
                                             f"agents make more than {policy.limits} chains "
                                             "(E152)"))
    inherited = policy.trust is None and own
    src, line, text = where(default_policy.trust_span if inherited else policy.trust_span,
                            None, inherited)
    entries.append(_trust_entry(model.trust, text or f"trust {model.trust}", src, line,
                                inherited))
    if policy.ties is not None:
        src, line, text = where(policy.ties_span, None, False)
        entries.append(Entry("ties", text or f"ties {policy.ties}", src, line,
                             templates=[RESOLVER],
                             cypher=_code(RESOLVER, ("a tie: same authority", "self.ties")),
                             parameter=f"ties = {policy.ties!r}: a claim of the same "
                                       "authority and instant as the held value",
                             chains=["every chain the event routes to"]))
    enter = model.sections["enter"]
    inherited = own and not any(s.event_class == "enter" for s in policy.sections)
    src, line, text = where(enter.reveal_span, enter.span, inherited)
    entries.append(_reveal_entry(model.reveal, text or f"reveal {model.reveal}", src, line,
                                 inherited))
    for source in policy.sources:
        src, line, text = where(source.span, None, False)
        entries.append(Entry(
            "authority", text, src, line, templates=[RESOLVER],
            cypher=_code(RESOLVER, ('if fact["authority"]',)),
            parameter=f"$facts[].authority = {source.authority} where source = "
                      f"{source.name.text!r} (claims from it, and its speech)",
            chains=["every chain the event routes to"]))
    for predicate in policy.predicates:
        src, line, text = where(predicate.span, None, False)
        entries.append(Entry(
            "cardinality", text, src, line, templates=[RESOLVER],
            cypher=_code(RESOLVER, ('not fact["many"]',)),
            parameter=f"$facts[].many = {str(predicate.cardinality == 'many').lower()} "
                      f"where key = {predicate.key.text!r}",
            chains=["every chain the event routes to"]))
    for alias in policy.aliases:
        src, line, text = where(alias.span, None, False)
        entries.append(Entry(
            "alias", text, src, line, templates=["tomc/dsl/checker.py"],
            cypher=_code("tomc/dsl/checker.py", ("renamed_subjects",)),
            parameter=f"every key about {', '.join(repr(a.text) for a in alias.aliases)} "
                      f"is a key of {alias.name.text!r}, before anything is compiled",
            chains=["every chain (a key's name, not a route)"]))
    for procedure in policy.procedures:
        src, line, text = where(procedure.span, None, False)
        steps = "; ".join(r.text for r in model.procedures[procedure.name.text].requires)
        entries.append(Entry(
            "procedure", text, src, line, templates=["ready_steps.cypher"],
            cypher=_excerpt("read_ready.cypher", ("THEN 'unknown'", "$requires[i].value IS",
                                                  "THEN 'satisfied'", "ELSE 'blocked'",
                                                  "s.status = ", "ELSE 'ready'")),
            parameter=f"$requires for `ready {procedure.name.text}`: {steps}",
            chains=["the truth, or the chain asked about (read only)"]))
    written = {s.event_class for s in policy.sections}
    touched = _touched(scenarios) if scenarios is not None else None
    for event_class in ("observe", "tell", "announce", "claim"):
        section = model.sections.get(event_class)
        inherited = own and event_class not in written
        for rule in section.rules if section else []:
            src, line, text = where(rule.span, None, inherited)
            entries.append(Entry(
                "routing", text or rule.text, src, line, inherited, section=event_class,
                templates=[LOWERING, RESOLVER, "write.cypher"],
                cypher=_code(LOWERING, ("writes = plans[agent].writes",
                                        "resolution.resolve(w.chain")),
                parameter=f"Write(chain, rule={rule.text!r}, force="
                          f"{_force_text(model.trust, event_class)})",
                chains=_shapes(rule, event_class, model.depth),
                touched=(sorted(touched.get((event_class, rule.text), set()),
                                key=lambda c: (c.count(">"), c))
                         if touched is not None else None)))
    return PolicyListing(model.name, file, entries)


# Where the engine decides resolution (docs/semantics.md section 4) and routes it.
RESOLVER = "tomc/compiler/resolve.py"
LOWERING = "tomc/compiler/lower.py"
# Where it keeps the standings of `trust learned`.
STANDING = "tomc/compiler/standing.py"


def _trust_entry(trust: str, text: str, file: str, line: int, inherited: bool) -> Entry:
    if trust == "exit_order":
        return Entry("trust", text, file, line, inherited, templates=["read_believers.cypher"],
                     cypher=render("read_believers.cypher"),
                     parameter="believers: read before each communication, then `if "
                               "trusts(listener, speaker)` keeps them",
                     chains=["B: listeners whose last exit from the key's room is earlier "
                             "than the speaker's"])
    if trust == "learned":
        return Entry("trust", text, file, line, inherited, templates=[RESOLVER, STANDING],
                     cypher=_code(STANDING, ("if disputed and", "self._learn(")),
                     parameter="as `trust authority`, with each source's authority its "
                               "standing: declared authority +1/-1 per settled dispute, "
                               "from the next step (computed in Python before each event)",
                     chains=["B = L: every listener trusts the speaker"])
    if trust == "authority":
        return Entry("trust", text, file, line, inherited, templates=[RESOLVER],
                     cypher=_code(RESOLVER, ("if force else self._judge",
                                             'if fact["authority"]')),
                     parameter="force = false except for chains ending with the speaker: a "
                               "value supersedes only by authority, then publication time",
                     chains=["B = L: every listener trusts the speaker"])
    return Entry("trust", text, file, line, inherited, templates=[RESOLVER],
                 cypher=_code(RESOLVER, ("if force else self._judge",)),
                 parameter="force = true: every routed chain adopts the newest value",
                 chains=["B = L: every listener trusts the speaker"])


def _reveal_entry(reveal: str, text: str, file: str, line: int, inherited: bool) -> Entry:
    if reveal == "contents":
        return Entry("reveal", text, file, line, inherited, section="enter",
                     templates=["read_revealed.cypher", "write.cypher"],
                     cypher=render("read_revealed.cypher"),
                     parameter="revealed: the room's true located values, routed by the "
                               "`on observe:` rules over those present",
                     chains=["as `on observe:` routes, over the room's occupants"])
    return Entry("reveal", text, file, line, inherited, section="enter",
                 templates=["presence.cypher"], cypher="",
                 parameter="no read: entering changes presence only", chains=[])


def _force_text(trust: str, event_class: str) -> str:
    if trust in ("authority", "learned") and event_class != "observe":  # observations always adopt
        return "true only when the chain ends with the speaker"
    return "true"


def _excerpt(template: str, markers: tuple[str, ...]) -> str:
    """The lines of a rendered template that contain one of `markers`, in order."""
    return "\n".join(line for line in render(template).splitlines()
                     if any(m in line for m in markers) and not line.lstrip().startswith("//"))


def _code(module: str, markers: tuple[str, ...]) -> str:
    """The lines of one of tomc's own modules (`module`: its path in the package) that
    contain one of `markers`, in order: where the engine decides resolution in Python."""
    text = (Path(__file__).resolve().parents[2] / module).read_text(encoding="utf-8")
    return "\n".join(dict.fromkeys(line.strip() for line in text.splitlines()
                                   if any(m in line for m in markers)))


def _shapes(rule: ast.Rule, event_class: str, depth: int) -> list[str]:
    """The role shapes of the chains `rule` can name, up to `depth` (see LEGEND); the
    speaker's own belief (`S` alone) never changes because it spoke."""
    if event_class == "observe":
        return [" > ".join("W" for _ in range(n)) for n in range(1, depth + 1)]
    if rule.path:
        if len(rule.path) > depth:
            return []
        letter = "L"
        if rule.condition is not None:
            letter = "N" if rule.condition.negated else "B"
        shape = tuple(letter if role == "listener" else "S" for role in rule.path)
        return [] if shape == ("S",) or (shape == ("S",) * len(shape)) else [" > ".join(shape)]
    letters: list[str] = []
    if "listeners" in rule.over:
        letters.append("L")
    elif "believers" in rule.over:
        letters.append("B")
    if "speaker" in rule.over:
        letters.append("S")
    out = []
    for n in range(1, depth + 1):
        for shape in product(letters, repeat=n):
            if shape.count("S") > 1 or shape == ("S",):
                continue
            if n == 1 and "listener" in rule.excepted and shape[0] != "S":
                continue
            out.append(" > ".join(shape))
    return out


def _touched(scenarios: list[ScenarioModel]) -> dict[tuple[str, str], set[str]]:
    """(event class, rule text) -> the chains it named in the scenarios' events, read from
    the routing functions the compiler uses. Under exit-order trust, a conditioned rule is
    evaluated with every listener trusting and with none, so both outcomes show."""
    out: dict[tuple[str, str], set[str]] = {}
    for scenario in scenarios:
        chains = scenario.chains()
        policy = scenario.policy
        for event in scenario.events:
            if isinstance(event, Observation) or (
                    isinstance(event, Presence) and event.kind == "enter"
                    and policy.reveal == "contents"):
                routes = observation_routes(policy, chains, event.witnesses, event.peekers,
                                            event.distracted)
            elif isinstance(event, (Communication, Handoff)):
                trusting = [list(event.listeners)]
                if policy.trust == "exit_order":
                    trusting.append([])
                routes = [r for believers in trusting for r in communication_routes(
                    policy, chains, event, believers)]
            else:
                continue
            for route in routes:
                out.setdefault((event.event_class if not isinstance(event, Presence)
                                else "observe", route.rule), set()).add(" > ".join(route.chain))
    return out


def _shown_path(file: str) -> str:
    """A path relative to the working folder when it is below it (the shipped policies
    are shown where the package is installed)."""
    path = Path(file).resolve()
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path) if Path(file).is_absolute() else file


class _Lines:
    """Source lines of the files entries come from, read once each."""

    def __init__(self):
        self.files: dict[str, list[str]] = {}

    def text(self, file: str, span: Optional[ast.Span]) -> str:
        """What the span covers on its first line, without a trailing comment."""
        if span is None:
            return ""
        if file not in self.files:
            _, source = parse_file(file)
            self.files[file] = source.split("\n")
        lines = self.files[file]
        if span.line > len(lines):
            return ""
        line = lines[span.line - 1]
        end = span.end_column - 1 if span.end_line == span.line else len(line)
        return line[span.column - 1:end].split("  #")[0].strip()
