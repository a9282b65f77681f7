"""Answering `ask ANALYSIS` and `expect ANALYSIS ...` over a belief view (either engine).

An expectation holds when the items of the part it names (docs/language.md, "Asking
memory") are the same set as the items written: `{Maya: refund_4411.status}`, `{Maya}`,
`announce`, `4`, ...
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union

from tomc.analysis.announcements import AnnouncementPlan, plan_announcements
from tomc.analysis.common_ground import CommonGround, common_ground
from tomc.analysis.context import Context, context_for
from tomc.analysis.explain import Explanation, explain
from tomc.analysis.false_beliefs import FalseBeliefs, false_beliefs
from tomc.analysis.handoff import HandoffReceipt, handoff
from tomc.analysis.about import About, about
from tomc.analysis.follow import Evidence, follow
from tomc.analysis.best import Ranking, who_knows_best
from tomc.analysis.tasks import OpenTasks, open_tasks
from tomc.analysis.search import SearchResult, search
from tomc.analysis.view import BeliefView
from tomc.analysis.who_knows import WhoKnows, who_knows
from tomc.dsl.program import AnalysisQuery

Result = Union[FalseBeliefs, WhoKnows, HandoffReceipt, CommonGround, Explanation,
               AnnouncementPlan, Context, SearchResult, Ranking, OpenTasks, About, Evidence]


def analyse(view: BeliefView, query: AnalysisQuery) -> Result:
    """Compute the analysis `query` names, with its arguments, on `view`."""
    match query.analysis:
        case "false_beliefs":
            return false_beliefs(view, query.depth)
        case "who_knows":
            return who_knows(view, query.key)
        case "handoff":
            return handoff(view, *query.agents)
        case "common_ground":
            return common_ground(view, *query.agents)
        case "explain":
            return explain(view, query.chain, query.key)
        case "plan_announcements":
            return plan_announcements(view, query.key, query.agents[0])
        case "context_for":
            return context_for(view, *query.agents)
        case "explain_follow":
            return follow(view, query.chain, query.key, query.depth)
        case "about":
            return about(view, query.search, query.chain, query.depth)
        case "open_tasks":
            return open_tasks(view, query.chain)
        case "who_knows_best":
            return who_knows_best(view, query.search)
        case "search":  # every mind, the truth and the events (an agent: Session.ask)
            return search(view, query.search, view.scenario.agents, truth=True, events=True)
    raise ValueError(f"unknown analysis {query.analysis!r}")


@dataclass
class AnalysisAnswer:
    """The answer to one analysis query: its result and, for an expect, whether it holds.

    `actual` are the result's items of the part the expect names (empty for an ask).
    """

    query: AnalysisQuery
    result: Result
    actual: list[str] = field(default_factory=list)
    passed: Optional[bool] = None

    @property
    def shown(self) -> str:
        """The items of the part checked, as an expectation writes them."""
        return "{" + ", ".join(self.actual) + "}"

    def lines(self) -> list[str]:
        """The report lines of the result."""
        return self.result.lines()

    def to_json(self) -> dict:
        """The machine form used by `--json`."""
        q = self.query
        return {"kind": q.kind, "line": q.line, "text": q.text, "analysis": q.analysis,
                "step": q.step, "part": q.part,
                "expected": list(q.expected) if q.kind == "expect" else None,
                "actual": self.actual if q.kind == "expect" else None,
                "passed": self.passed, "answer": self.result.to_json()}


def same_analysis(query: AnalysisQuery) -> tuple:
    """What identifies an analysis's result: queries with the same one share it (several
    expectations about one handoff, one plan) and it is computed once."""
    return (query.analysis, query.step, query.depth, query.key, query.chain, query.agents,
            query.search)


def answer(view: BeliefView, query: AnalysisQuery,
           result: Optional[Result] = None) -> AnalysisAnswer:
    """Evaluate one analysis query on `view` (whose step must be the query's); `result`,
    when given, is that of an earlier query with the same `same_analysis`."""
    result = result or analyse(view, query)
    if query.kind != "expect":
        return AnalysisAnswer(query, result)
    if isinstance(result, AnnouncementPlan):
        actual = result.items(query.part, query.plan, query.plan_depth)
    else:
        actual = result.items(query.part)
    actual = sorted(set(actual))
    return AnalysisAnswer(query, result, actual, sorted(set(query.expected)) == actual)
