"""What changing a policy changes: one scenario run under two policies, compared answer by
answer and belief by belief (what `tomc diff` prints).

A policy is named as `tomc diff --policy` takes it: a shipped name or a .tom file with one
policy (`PolicyRef`). A scenario file is checked under each policy by putting a `use
policy` of that policy in place of its own (`check_under`): the checker then recomputes
what depends on the policy (authorities, cardinalities, depth), with the file's lines.

Beliefs are compared as histories: every version (chain, key, value, since, until) a chain
held, read once each run ends, gives `belief(chain, key, step)` at every step. Differences
of consecutive steps with the same two values are one `BeliefDiff` over a step range, each
side with the version behind it (`Why`: the rule and the event).

Shapes: `ScenarioDiff(name, path, steps, answers: [AnswerDiff], beliefs: [BeliefDiff])`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from tomc.analysis.answer import AnalysisAnswer
from tomc.analysis.view import shown
from tomc.beliefs import Chain, EventInfo, Held
from tomc.dsl import ast
from tomc.dsl.checker import CheckResult, check_parsed
from tomc.dsl.diagnostics import Diagnostic, DiagnosticError
from tomc.dsl.parser import parse, read_source
from tomc.dsl.policies import load_policy, resolve
from tomc.dsl.program import ScenarioModel
from tomc.readiness import ReadyAnswer
from tomc.rules import shipped_names, shipped_policy_path
from tomc.runner import AnyAnswer, run_scenario
from tomc.runtime.connection import Database


@dataclass(frozen=True)
class PolicyRef:
    """A policy named on the command line: `label` as given, the `file` it is written in
    (absolute), whether it is `shipped` (then a `use policy` names it by its label), its
    depth and its parsed `policy`."""

    label: str
    file: Path
    shipped: bool
    depth: int
    policy: ast.Policy

    def use(self) -> ast.UsePolicy:
        """A `use policy` naming this policy from any folder."""
        if self.shipped:
            return ast.UsePolicy(target=ast.Name(text=self.label))
        return ast.UsePolicy(target=ast.Name(text=str(self.file), quoted=True))


def policy_ref(given: str) -> tuple[Optional[PolicyRef], list[Diagnostic]]:
    """`given` as a policy: a shipped name, else a .tom file of one valid policy. Returns
    (ref, []) or (None, diagnostics) exactly as a `use policy` of it would report them.
    A shipped name always means the shipped policy, as in `use policy`, whatever the
    working folder holds: a file of that name is given as a path (`./hitom`)."""
    shipped = given in shipped_names()
    use = ast.UsePolicy(target=ast.Name(text=given, quoted=not shipped))
    policy, problems = load_policy(use, {}, Path.cwd(), f"--policy {given}")
    if policy is None or problems:
        return None, problems or [Diagnostic("E104", f"unknown policy `{given}`", None,
                                             f"--policy {given}")]
    file = shipped_policy_path(given) if shipped else Path(given).resolve()
    return PolicyRef(given, Path(file), shipped, resolve(policy).depth, policy), []


def check_under(path: str, source: Optional[str], policy: PolicyRef) -> CheckResult:
    """Check the file at `path` (its text `source`, read when None) as if it said `use
    policy` of `policy`: its own `use policy` lines are replaced (inline policies stay
    defined, unused)."""
    try:
        source = read_source(path) if source is None else source
        file = parse(source, path)
    except DiagnosticError as err:
        return CheckResult(path, source or "", diagnostics=err.diagnostics)
    items = [policy.use(), *(i for i in file.items if not isinstance(i, ast.UsePolicy))]
    return check_parsed(file.model_copy(update={"items": items}), source, path)


@dataclass(frozen=True)
class Why:
    """What put a value in a chain: the routing `rule`, the event (step, kind, line, text,
    witnesses) and the source it came from (None: observed)."""

    rule: str
    step: int
    kind: str
    line: int
    text: str
    witnesses: tuple[str, ...]
    source: Optional[str]

    def to_json(self) -> dict:
        return {"rule": self.rule, "step": self.step, "kind": self.kind, "line": self.line,
                "text": self.text, "witnesses": list(self.witnesses), "source": self.source}

    def describe(self) -> str:
        """`rule R at step N (line L): TEXT [witnesses: ...]`."""
        source = f"; source {self.source}" if self.source else ""
        return (f"rule `{self.rule}` at step {self.step} (line {self.line}): {self.text}  "
                f"[witnesses: {', '.join(self.witnesses) or 'none'}{source}]")


@dataclass
class Outcome:
    """What one run under one policy gave: its answers (in file order), every version
    every chain held, its events, and its chains (the policy's depth decides them)."""

    scenario: ScenarioModel
    answers: list[AnyAnswer]
    history: list[Held]
    events: list[EventInfo]
    chains: set[Chain]

    def values(self, chain: Chain, key: str, step: int) -> Optional[tuple[str, ...]]:
        """The values `chain` held about `key` after `step` (None: the chain does not exist
        under this policy's depth)."""
        if chain and chain not in self.chains:
            return None
        return tuple(sorted(h.value for h in self._versions(chain, key, step)))

    def why(self, chain: Chain, key: str, step: int) -> list[Why]:
        """The versions behind the values held then, as `Why`s."""
        out = []
        for h in self._versions(chain, key, step):
            event = self.events[h.since - 1] if 0 < h.since <= len(self.events) else None
            out.append(Why(h.rule, h.since, h.kind, event.line if event else 0,
                           event.text if event else "", event.witnesses if event else (),
                           h.source))
        return out

    def _versions(self, chain: Chain, key: str, step: int) -> list[Held]:
        return sorted((h for h in self.history if h.chain == chain and h.key == key
                       and h.since <= step and (h.until is None or h.until > step)),
                      key=lambda h: h.value)


def outcome(scenario: ScenarioModel, engine: str, db: Optional[Database]) -> Outcome:
    """Run `scenario` and read all it held before anything else runs (on FalkorDB, a run of
    the same scenario under the other policy replaces its graphs)."""
    run = run_scenario(scenario, engine, db)
    last = len(scenario.events)
    view = run.view(last)
    chains = [(), *scenario.chains()]
    history = [h for h in [*view.held(chains), *view.superseded(chains)]
               if h.until is None or h.until > h.since]
    return Outcome(scenario, run.answers, history, view.events(), set(scenario.chains()))


@dataclass
class AnswerDiff:
    """An `expect` or `ask` whose answer differs: what each policy answered (`a`, `b`: the
    value shown, pass/fail for an expect) and why (the rule and event behind the value)."""

    line: int
    text: str
    a: str
    b: str
    why_a: list[Why] = field(default_factory=list)
    why_b: list[Why] = field(default_factory=list)
    json_a: dict = field(default_factory=dict)
    json_b: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"line": self.line, "text": self.text, "a": self.a, "b": self.b,
                "why_a": [w.to_json() for w in self.why_a],
                "why_b": [w.to_json() for w in self.why_b],
                "answer_a": self.json_a, "answer_b": self.json_b}


@dataclass
class BeliefDiff:
    """`chain` (empty: the truth) holds different values about `key` at steps
    `first`..`last` (each of them) under the two policies."""

    chain: Chain
    key: str
    first: int
    last: int
    a: Optional[tuple[str, ...]]
    b: Optional[tuple[str, ...]]
    many: bool
    why_a: list[Why] = field(default_factory=list)
    why_b: list[Why] = field(default_factory=list)

    def shown(self, side: str) -> str:
        """A side's belief as a reader writes it; `not tracked` beyond a policy's depth."""
        held = self.a if side == "a" else self.b
        return "not tracked (deeper than the policy)" if held is None else shown(held, self.many)

    @property
    def steps(self) -> str:
        """`step N` or `steps N-M`."""
        return f"step {self.first}" if self.first == self.last else \
            f"steps {self.first}-{self.last}"

    def to_json(self) -> dict:
        return {"chain": list(self.chain), "key": self.key, "from_step": self.first,
                "to_step": self.last, "a": None if self.a is None else list(self.a),
                "b": None if self.b is None else list(self.b),
                "why_a": [w.to_json() for w in self.why_a],
                "why_b": [w.to_json() for w in self.why_b]}


@dataclass
class ScenarioDiff:
    """Every difference of one scenario under policies a and b."""

    name: str
    path: str
    steps: int
    answers: list[AnswerDiff]
    beliefs: list[BeliefDiff]

    @property
    def differs(self) -> bool:
        return bool(self.answers or self.beliefs)

    def to_json(self) -> dict:
        return {"scenario": self.name, "path": self.path, "steps": self.steps,
                "answers": [d.to_json() for d in self.answers],
                "beliefs": [d.to_json() for d in self.beliefs]}


def compare(a: Outcome, b: Outcome) -> ScenarioDiff:
    """Every answer and every (chain, key, step) belief that differs between two runs of
    one scenario."""
    answers = [d for d in (_answer_diff(x, y, a, b) for x, y in zip(a.answers, b.answers)) if d]
    return ScenarioDiff(a.scenario.name, a.scenario.path, len(a.scenario.events), answers,
                        belief_diffs(a, b))


def belief_diffs(a: Outcome, b: Outcome) -> list[BeliefDiff]:
    """The belief differences, by chain (truth first, shallow first), key, then step."""
    pairs = {(h.chain, h.key) for h in [*a.history, *b.history]}
    many = {h.key for h in [*a.history, *b.history] if _is_many(a, b, h.key)}
    out: list[BeliefDiff] = []
    for chain, key in sorted(pairs, key=lambda p: (len(p[0]), p[0], p[1])):
        open_diff: Optional[BeliefDiff] = None
        for step in range(len(a.events) + 1):
            va, vb = a.values(chain, key, step), b.values(chain, key, step)
            if va == vb:
                open_diff = None
                continue
            if open_diff and (open_diff.a, open_diff.b) == (va, vb):
                open_diff.last = step
                continue
            open_diff = BeliefDiff(chain, key, step, step, va, vb, key in many,
                                   a.why(chain, key, step), b.why(chain, key, step))
            out.append(open_diff)
    return out


def _is_many(a: Outcome, b: Outcome, key: str) -> bool:
    return a.scenario.policy.is_many(key) or b.scenario.policy.is_many(key)


def _answer_diff(x: AnyAnswer, y: AnyAnswer, a: Outcome, b: Outcome) -> Optional[AnswerDiff]:
    jx, jy = x.to_json(), y.to_json()
    if isinstance(x, AnalysisAnswer):
        # An expect answers with the part it names; an ask with the whole result.
        same = ((x.actual, x.passed) == (y.actual, y.passed) if x.query.kind == "expect"
                else jx["answer"] == jy["answer"])
        if same:
            return None
        return AnswerDiff(x.query.line, x.query.text, _analysis_shown(x, y),
                          _analysis_shown(y, x), json_a=jx, json_b=jy)
    if isinstance(x, ReadyAnswer):
        if (jx["steps"], x.verdict, x.passed) == (jy["steps"], y.verdict, y.passed):
            return None
        return AnswerDiff(x.query.line, x.query.text, _belief_shown(x), _belief_shown(y),
                          json_a=jx, json_b=jy)
    if (x.values, x.contested, x.support, x.passed) == (y.values, y.contested, y.support,
                                                          y.passed):
        return None
    return AnswerDiff(x.query.line, x.query.text, _belief_shown(x), _belief_shown(y),
                      _provenance_why(x), _provenance_why(y), jx, jy)


def _belief_shown(answer) -> str:
    """PASS/FAIL and the answer; a belief with its contested rivals (a readiness answer
    shows its caveats in its steps)."""
    verdict = {True: "PASS ", False: "FAIL "}.get(answer.passed, "")
    contested = getattr(answer, "contested", None)
    extra = f" (contested by {', '.join(contested)})" if contested else ""
    return f"{verdict}{answer.shown}{extra}"


def _analysis_shown(answer: AnalysisAnswer, other: AnalysisAnswer) -> str:
    """An expect: PASS/FAIL and the items; an ask: its report lines the other lacks."""
    if answer.query.kind == "expect":
        verdict = "PASS" if answer.passed else "FAIL"
        return f"{verdict} {answer.shown}"
    theirs = set(other.lines())
    return "; ".join(line.strip() for line in answer.lines() if line not in theirs) or "(same lines)"


def _provenance_why(answer) -> list[Why]:
    return [Why(p.rule or "", p.step, p.kind, p.line, p.text, tuple(p.witnesses), p.source)
            for p in answer.provenance]
