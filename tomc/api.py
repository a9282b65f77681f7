"""The Python API for live use: open a scenario, apply events one at a time, ask between them.

    from tomc.api import Session

    with Session.open("scenarios/refund_handoff.tom") as session:
        session.apply("Finance sets refund_4411.status = rejected")
        for line in session.false_beliefs(depth=1).lines():
            print(line)

`apply` takes statements written in .tom syntax (events, and `agents`/`rooms` declarations)
and checks them against the scenario so far, with the checks and codes of `tomc check`
(docs/diagnostics.md): bad input raises `TomError` and changes nothing. Then only those
events are compiled and executed on the scenario's live graphs (or, with
engine="reference", applied to the reference interpreter). `ask` takes an `ask` or `expect`
line and answers it from the beliefs as they are now; the typed methods (`false_beliefs`,
`who_knows`, `handoff`, ...) write that line for you and return the analysis itself.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Literal, Optional, Sequence, Union

from tomc.analysis import answer as analyses
from tomc.analysis.announcements import AnnouncementPlan
from tomc.analysis.answer import AnalysisAnswer
from tomc.analysis.common_ground import CommonGround
from tomc.analysis.context import Context
from tomc.analysis.explain import Explanation
from tomc.analysis.false_beliefs import FalseBeliefs
from tomc.analysis.handoff import HandoffReceipt
from tomc.analysis.view import BeliefView
from tomc.analysis.who_knows import WhoKnows
from tomc.answers import Answer
from tomc.compiler.lower import lower, lower_declarations, lower_events
from tomc.compiler.plan import GraphNames, graph_key, graph_names
from tomc.dsl import ast
from tomc.dsl.checker import LiveChecker
from tomc.dsl.diagnostics import Diagnostic, DiagnosticError
from tomc.dsl.formatter import format_file, format_statement
from tomc.dsl.parser import read_source
from tomc.program import EventModel, QueryModel, ScenarioModel
from tomc.reference.interpreter import ReferenceInterpreter
from tomc.reference.view import ReferenceView
from tomc.runtime import queries
from tomc.runtime.connection import Database, connect
from tomc.runtime.executor import Executor
from tomc.runtime.graph_view import GraphView

_DECLARATIONS = (ast.Agents, ast.Rooms)
_QUESTIONS = (ast.Ask, ast.Expect, ast.AskAnalysis, ast.ExpectAnalysis)


class TomError(Exception):
    """Bad input to a session: `diagnostics` (code, message, span within `text`, hint), as
    `tomc check` reports them."""

    def __init__(self, diagnostics: list[Diagnostic], text: str):
        super().__init__("\n".join(d.render(text) for d in diagnostics))
        self.diagnostics = diagnostics
        self.text = text


class Session:
    """A scenario held live: its graphs on FalkorDB (or a reference interpreter), the checker
    that validates each statement against it, and the step it has reached.

    Create it with `Session.open`; use it as a context manager, or call `close()`.
    """

    def __init__(self, checker: LiveChecker, stack: ExitStack, first_line: int,
                 db: Optional[Database] = None, graphs: Optional[GraphNames] = None,
                 interpreter: Optional[ReferenceInterpreter] = None):
        self._checker = checker
        self._stack = stack
        self._line = first_line
        self._db = db
        self._graphs = graphs
        self._interpreter = interpreter

    @classmethod
    def open(cls, path: Union[str, Path, None] = None, *, scenario: Optional[str] = None,
             db: Union[Database, str, None] = None, data_dir: Optional[Path] = None,
             policy: str = "default", name: str = "live",
             engine: Literal["falkordb", "reference"] = "falkordb") -> "Session":
        """Open a session.

        `path`: a .tom file whose scenario (its only one, or the one called `scenario`) is
        run first; None: an empty scenario called `name` under `policy` (a shipped policy,
        or a .tom file defining one), whose agents and rooms you declare with `apply`.
        `db`: a Database, a FalkorDB URL, or None for `$FALKORDB_URL`, else an embedded
        FalkorDB in `data_dir` that `close()` stops. The scenario's graphs
        (`tom:<scenario>:...`) are replaced. `engine="reference"` needs no database.
        Raises TomError (errors in the file or policy), ValueError (no such scenario or
        engine), DatabaseUnavailable.
        """
        if engine not in ("falkordb", "reference"):
            raise ValueError(f"unknown engine {engine!r}: use falkordb or reference")
        if path is None:
            text = format_file(ast.File(items=[
                ast.UsePolicy(target=ast.Name(text=policy)),
                ast.Scenario(name=ast.Name(text=name))]))
            origin = "<session>"
        else:
            origin = str(path)
            try:
                text = read_source(path)
            except DiagnosticError as err:
                raise TomError(err.diagnostics, "") from None
        try:
            checker = LiveChecker(text, origin, scenario)
        except DiagnosticError as err:
            raise TomError(err.diagnostics, text) from None
        model = checker.scenario
        first_line = text.count("\n") + 1
        stack = ExitStack()
        if engine == "reference":
            return cls(checker, stack, first_line,
                       interpreter=ReferenceInterpreter(model).run())
        try:
            if not isinstance(db, Database):
                db = stack.enter_context(connect(db, data_dir))
            plan = lower(model)
            Executor(db).run(plan)
        except BaseException:
            stack.close()
            raise
        return cls(checker, stack, first_line, db=db, graphs=plan.graphs())

    # ---------------------------------------------------------------- state

    @property
    def scenario(self) -> ScenarioModel:
        """The scenario so far: its agents, rooms, policy and events."""
        return self._checker.scenario

    @property
    def step(self) -> int:
        """How many events have happened."""
        return len(self.scenario.events)

    # ---------------------------------------------------------------- events

    def apply(self, text: str) -> list[EventModel]:
        """Check and run the statements of `text` (events, `agents`, `rooms`), in order;
        returns the events, numbered from the next step. Raises TomError on bad input (the
        session is then unchanged), ValueError for a question (use `ask`)."""
        model = self.scenario
        agents, rooms, chains = len(model.agents), len(model.rooms), set(model.chains())
        try:
            events, _ = self._checker.add_text(text, accept=(*ast.EVENT_TYPES, *_DECLARATIONS))
        except DiagnosticError as err:
            raise TomError(err.diagnostics, text) from None
        # Live events get line numbers after the opening source's lines, one per event.
        for i, event in enumerate(events):
            self._line += 1
            events[i] = model.events[event.step - 1] = replace(event, line=self._line)
        self._declare(model.agents[agents:], model.rooms[rooms:],
                      [c for c in model.chains() if c not in chains])
        if self._interpreter is not None:
            for event in events:
                self._interpreter.apply(event)
        else:
            Executor(self._db).apply(self._graphs, lower_events(model, events))
        return events

    def _declare(self, agents: list[str], rooms: list[str],
                 chains: list[tuple[str, ...]]) -> None:
        if not (agents or rooms):
            return
        if self._interpreter is not None:
            self._interpreter.declare()
            return
        _, prefix = graph_names(self.scenario.name)
        self._graphs = GraphNames(self._graphs.world,
                                  {**self._graphs.minds,
                                   **{a: prefix + graph_key(a) for a in agents}})
        origin = (self._line, f"declarations of session {self.scenario.name}")
        Executor(self._db).execute(self._graphs, lower_declarations(
            self.scenario, agents, rooms, chains, origin))

    # ---------------------------------------------------------------- questions

    def ask(self, text: str) -> Union[Answer, AnalysisAnswer]:
        """Answer one `ask` or `expect` line (the leading `ask` may be left out) from the
        beliefs as they are now. Raises TomError on bad input, ValueError for an event."""
        line = text.strip()
        if not line.startswith(("ask ", "expect ")):
            line = "ask " + line
        try:
            _, questions = self._checker.add_text(line, accept=_QUESTIONS)
        except DiagnosticError as err:
            raise TomError(err.diagnostics, line) from None
        if len(questions) != 1:
            raise ValueError("ask takes one question at a time")
        query = questions[0]
        if isinstance(query, QueryModel):
            if self._interpreter is not None:
                return self._interpreter.answer(query)
            return queries.answer(self._db, self._graphs, query)
        return analyses.answer(self.view(), query)

    def view(self) -> BeliefView:
        """The beliefs as they are now, for the analyses in tomc/analysis/."""
        if self._interpreter is not None:
            return ReferenceView(self._interpreter, self.step)
        return GraphView(self._db, self._graphs, self.scenario, self.step)

    def believes(self, chain: Union[str, Sequence[str]], key: str) -> Answer:
        """What `chain` (an agent, or agents outermost first) believes about `key`."""
        return self.ask(format_statement(ast.Ask(subject=ast.Subject(
            chain=_names(chain), key=_key(key)))))

    def truth(self, key: str) -> Answer:
        """What an omniscient observer holds about `key`."""
        return self.ask(format_statement(ast.Ask(subject=ast.Subject(key=_key(key)))))

    def false_beliefs(self, depth: int = 1) -> FalseBeliefs:
        """`ask false_beliefs depth N`."""
        return self._analysis(ast.FalseBeliefs(depth=depth))

    def who_knows(self, key: str) -> WhoKnows:
        """`ask who_knows KEY`."""
        return self._analysis(ast.WhoKnows(key=_key(key)))

    def handoff(self, sender: str, receiver: str) -> HandoffReceipt:
        """`ask handoff SENDER -> RECEIVER`: what would be sent, and the receipt."""
        return self._analysis(ast.Handoff(sender=ast.Name(text=sender),
                                          receiver=ast.Name(text=receiver)))

    def handoff_write(self, sender: str, receiver: str) -> HandoffReceipt:
        """`handoff SENDER -> RECEIVER write`: send it, as an event; returns the receipt of
        what was sent."""
        receipt = self.handoff(sender, receiver)
        self.apply(format_statement(ast.HandoffWrite(sender=ast.Name(text=sender),
                                                     receiver=ast.Name(text=receiver))))
        return receipt

    def common_ground(self, first: str, second: str) -> CommonGround:
        """`ask common_ground A, B`."""
        return self._analysis(ast.CommonGround(first=ast.Name(text=first),
                                               second=ast.Name(text=second)))

    def explain(self, chain: Union[str, Sequence[str]], key: str) -> Explanation:
        """`ask explain CHAIN KEY`."""
        return self._analysis(ast.Explain(chain=_names(chain), key=_key(key)))

    def plan_announcements(self, key: str, speaker: str) -> AnnouncementPlan:
        """`ask plan_announcements KEY by SPEAKER` (simulated on forks of the live graphs)."""
        return self._analysis(ast.PlanAnnouncements(key=_key(key),
                                                    speaker=ast.Name(text=speaker)))

    def context_for(self, agent: str, other: str) -> Context:
        """`ask context_for AGENT talking_to OTHER`; the block is its `.text`."""
        return self._analysis(ast.ContextFor(agent=ast.Name(text=agent),
                                             other=ast.Name(text=other)))

    def _analysis(self, analysis):
        return self.ask(format_statement(ast.AskAnalysis(analysis=analysis))).result

    # ---------------------------------------------------------------- lifetime

    def close(self) -> None:
        """Release the database connection (stopping an embedded FalkorDB this session
        started). The graphs stay stored."""
        self._stack.close()

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _names(chain: Union[str, Sequence[str]]) -> list[ast.Name]:
    agents = [chain] if isinstance(chain, str) else list(chain)
    return [ast.Name(text=a) for a in agents]


def _key(key: str) -> ast.Key:
    """`subject.predicate` split at its first dot; a bare subject means its location."""
    subject, dot, predicate = key.partition(".")
    return ast.Key(subject=ast.Name(text=subject),
                   predicate=ast.Name(text=predicate) if dot else None)
