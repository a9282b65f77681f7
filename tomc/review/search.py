"""`tomc diff --search N`: generate scenarios until two policies believe differently, and
shrink the first such scenario to the smallest hypothesis finds.

The scenarios come from the property tests' strategies (tomc/review/strategies.py) over a
fixed `World`: the agents, rooms and keys of the scenarios under review (else a few plain
ones), the keys and sources the two policies declare. They have no queries: a scenario
counts when some chain (or the truth) holds a different value about some key at some step
(tomc/review/diff.py), on the reference interpreter. The counterexample is printed as a
.tom file under policy a, with an `expect` for each belief that differs at its last step
(they hold under a and fail under b), so `tomc run` shows the difference.

Bounded: `max_examples=N`, no deadline, no example database, hypothesis's caches in the
user's cache folder (nothing is written to the working folder), derandomized unless a
seed is given. Derandomized generation is repeatable; the shrink's path is not across
processes (it varies with Python's string hash seed, PYTHONHASHSEED), so the counterexample
reported may differ between runs (docs/review.md).
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from hypothesis import HealthCheck, Phase, find, settings
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.errors import NoSuchExample

from tomc.dsl import ast
from tomc.dsl.checker import check_parsed
from tomc.dsl.formatter import format_file
from tomc.dsl.policies import resolve
from tomc.dsl.program import ScenarioModel
from tomc.review.diff import BeliefDiff, PolicyRef, belief_diffs, outcome
from tomc.review.strategies import World, scenarios

NAME = "counterexample"


@dataclass
class Found:
    """The smallest scenario found: its .tom text (under policy a, with the expects) and
    the belief differences it shows."""

    text: str
    diffs: list[BeliefDiff]
    events: int


def world_for(a: PolicyRef, b: PolicyRef, models: list[ScenarioModel],
              depth: int) -> World:
    """The names generated scenarios use: agents and rooms of the scenarios under review
    (at most four and two), keys they and the two policies name, and the sources both
    policies declare (a claim must come from a declared source or an agent)."""
    agents = list(dict.fromkeys(a for m in models for a in m.agents))[:4] or ["Ann", "Bob", "Cid"]
    rooms = list(dict.fromkeys(r for m in models for r in m.rooms))[:2] or ["room"]
    policies = [resolve(a.policy), resolve(b.policy)]
    key_texts = [k for p in policies for k in p.cardinality]
    key_texts += [e.fact.key for m in models for e in m.events if hasattr(e, "fact")]
    objects, predicates = [], []
    for key in dict.fromkeys(key_texts):
        subject, _, predicate = key.partition(".")
        if '"' in key:  # a quoted part: keep names simple
            continue
        objects.append(subject)
        if predicate and predicate != "location":
            predicates.append(predicate)
    objects = list(dict.fromkeys(objects))[:3] or ["box"]
    predicates = list(dict.fromkeys(predicates))[:2] or ["status"]
    sources = sorted(set(policies[0].authorities) & set(policies[1].authorities) - set(agents))
    named = lambda texts: [ast.Name(text=t) for t in texts]  # noqa: E731
    return World(agents=named(agents), rooms=named(rooms), objects=named(objects),
                 predicates=named(predicates), containers=named(["basket", "box"]),
                 sources=named(sources[:2]), depth=depth)


def search(a: PolicyRef, b: PolicyRef, world: World, examples: int,
           seed: Optional[int] = None, max_events: int = 12) -> Optional[Found]:
    """The smallest generated scenario where a and b believe differently, or None when
    none of `examples` scenarios differs."""
    strategy = scenarios(world, max_events=max_events, max_queries=0).map(
        lambda s: s.model_copy(update={"name": ast.Name(text=NAME)}))

    def differs(scenario: ast.Scenario) -> bool:
        return bool(_diffs(scenario, a, b))

    config = settings(max_examples=examples, deadline=None, database=None,
                      derandomize=seed is None, phases=[Phase.generate, Phase.shrink],
                      suppress_health_check=list(HealthCheck))
    # Hypothesis keeps caches (Unicode tables: ~20 s to rebuild) in ./.hypothesis even
    # without an example database: keep them in the user's cache folder instead, so the
    # working folder stays as it was.
    set_hypothesis_home_dir(cache_folder())
    try:
        smallest = find(strategy, differs, settings=config,
                        random=random.Random(seed) if seed is not None else None)
    except NoSuchExample:
        return None
    finally:
        set_hypothesis_home_dir(None)
    diffs = _diffs(smallest, a, b)
    steps = len(_checked(smallest, a).events)
    return Found(_with_expects(smallest, diffs, world, a, b, steps), diffs, steps)


def cache_folder() -> Path:
    """`$XDG_CACHE_HOME/tomc/hypothesis` (default `~/.cache/tomc/hypothesis`)."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "tomc" / "hypothesis"


def _checked(scenario: ast.Scenario, policy: PolicyRef) -> Optional[ScenarioModel]:
    """The generated scenario checked under `policy`, given inline: no text is parsed (a
    parse costs more than the run), so events have no .tom text."""
    file = ast.File(items=[policy.policy, ast.UsePolicy(target=policy.policy.name), scenario])
    result = check_parsed(file, "", f"{NAME}.tom")
    return result.scenarios[0] if result.ok and result.scenarios else None


def _diffs(scenario: ast.Scenario, a: PolicyRef, b: PolicyRef) -> list[BeliefDiff]:
    """The belief differences of one generated scenario (none when it does not check under
    both policies, e.g. a source only one of them declares)."""
    sa, sb = _checked(scenario, a), _checked(scenario, b)
    if sa is None or sb is None:
        return []
    return belief_diffs(outcome(sa, "reference", None), outcome(sb, "reference", None))


def _with_expects(scenario: ast.Scenario, diffs: list[BeliefDiff], world: World, a: PolicyRef,
                  b: PolicyRef, steps: int) -> str:
    """The file with `policy a`'s belief as an `expect` for each difference at its last
    step (`at step N` when that is not the end), and a header saying how to replay it."""
    keys = _keys(world)
    expects = [_expect(d, keys, steps) for d in diffs if d.a is not None and d.key in keys]
    statements = [*scenario.statements, *(e for e in expects if e is not None)]
    body = format_file(ast.File(items=[a.use(), scenario.model_copy(
        update={"statements": statements})]))
    header = (f"# The smallest scenario found where policies {a.label} and {b.label} believe\n"
              f"# differently. The expects hold under {a.label}; under {b.label} they fail:\n"
              f"#   tomc run FILE\n"
              f"#   tomc diff --policy {a.label} --policy {b.label} FILE\n")
    return header + body


def _keys(world: World) -> dict[str, ast.Key]:
    out = {}
    for subject in world.objects:
        for predicate in [None, *world.predicates]:
            key = ast.Key(subject=subject, predicate=predicate)
            out[key.text] = key
    return out


def _expect(diff: BeliefDiff, keys: dict[str, ast.Key], steps: int) -> Optional[ast.Expect]:
    """`expect CHAIN believes KEY = V | unknown | = {..} [at step N]` as policy a holds it
    at the difference's last step."""
    subject = ast.Subject(chain=[ast.Name(text=n) for n in diff.chain], key=keys[diff.key])
    when = ast.When(step=diff.last) if diff.last != steps else None
    values = [ast.Value(text=v, kind="name") for v in diff.a or ()]
    if not values:
        return ast.Expect(subject=subject, kind="unknown", when=when)
    if diff.many:
        return ast.Expect(subject=subject, kind="set", values=values, when=when)
    return ast.Expect(subject=subject, kind="value", values=values, when=when)
