"""`python -m eval.hitom`: every Hi-ToM question on FalkorDB, against the released labels and
against the pure-Python reference interpreter.

The run: import the released data into a temporary folder (`tomc.importers.hitom`), check every
story, run every story on FalkorDB (one connection for all of them), run the reference
interpreter on the same checked scenarios, and join both answers to the records through the
import's index. It writes `hitom.md` (the tables) and `hitom.json` (every record) into `--out`.

Everything in `hitom.md` above its Timing section is deterministic: re-running reproduces it.
The labels are scored as released; a label the engine disagrees with is listed with the rule
and event that produced the engine's answer, and with the answer of a replay of the
generator's own update order (`eval.hitom_generator`), which explains most of them.

Exit codes: 0 the engine and the reference interpreter agree on every question, 1 they
disagree on one, 2 bad input (unreadable data, a story that does not check), 3 FalkorDB
unavailable. `--check` runs everything but writes nothing (for CI).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import platform
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Optional, TextIO

from eval.hitom_generator import GeneratorReplay, places_of
from eval.results_files import DEFAULT_OUT
from tomc.answers import Answer
from tomc.compiler.plan import graph_names
from tomc.dsl.checker import check_file
from tomc.importers.hitom import (BUNDLED_DATA, INDEX_FILE, HitomImportError, StoryRecord,
                                  import_hitom)
from tomc.dsl.program import ScenarioModel
from tomc.runner import ScenarioRun, run_scenario
from tomc.runtime.connection import Database, connect
from tomc.runtime.errors import DatabaseUnavailable

DEFAULT_DATA = BUNDLED_DATA  # the released data, shipped with tomc
MARKDOWN_FILE = "hitom.md"
JSON_FILE = "hitom.json"
TIMING_HEADING = "## Timing"
PROGRESS_EVERY = 10

EXIT_OK, EXIT_DISAGREE, EXIT_BAD_INPUT, EXIT_UNAVAILABLE = 0, 1, 2, 3

# Why a released label differs from the engine's answer (keys of RecordResult.explanation).
EXPLANATIONS = {
    "generator_order": "label = replay of the generator's update order (eval/hitom_generator.py)",
    "never_in_story": "label is a container no sentence ever puts the asked object in",
    "unexplained": "neither",
}


class EvalInputError(Exception):
    """The data cannot be imported, or an imported story does not check."""


@dataclass
class RecordResult:
    """One released record: its question, its label, and what each engine answered.

    `engine_*` describe the belief the FalkorDB answer comes from: the routing rule that
    adopted it, the step, kind and .tom text of the event, and the story's sentence there.
    `generator_replay` is the generator-order replay's answer (None: never told).
    """

    record: int
    prompting_type: str
    story: str
    order: int
    deception: bool
    story_length: int
    question: str
    chain: list[str]
    object: str
    label: str
    engine: str
    reference: str
    engine_rule: Optional[str]
    engine_step: Optional[int]
    engine_kind: Optional[str]
    engine_event: Optional[str]
    engine_sentence: Optional[str]
    reference_rule: Optional[str]
    reference_step: Optional[int]
    generator_replay: Optional[str]
    label_in_story: bool

    @property
    def matches_label(self) -> bool:
        return self.engine == self.label

    @property
    def matches_reference(self) -> bool:
        return self.engine == self.reference

    @property
    def same_provenance(self) -> bool:
        """The engine and the reference name the same rule and step for the answer."""
        return (self.engine_rule, self.engine_step) == (self.reference_rule, self.reference_step)

    @property
    def explanation(self) -> Optional[str]:
        """For a label the engine disagrees with, a key of EXPLANATIONS; else None."""
        if self.matches_label:
            return None
        if self.generator_replay == self.label:
            return "generator_order"
        return "unexplained" if self.label_in_story else "never_in_story"

    def to_json(self) -> dict:
        return {**asdict(self), "engine_matches_label": self.matches_label,
                "engine_matches_reference": self.matches_reference,
                "explanation": self.explanation}


@dataclass
class Timing:
    """Seconds measured in one evaluation; not reproducible, so reported apart."""

    database: str = ""
    import_check_seconds: float = 0.0
    engine_seconds: float = 0.0  # run_scenario on FalkorDB, all stories, answers included
    reference_seconds: float = 0.0  # run_scenario on the reference, same scenarios
    event_seconds: list[float] = field(default_factory=list)
    routing_event_seconds: list[float] = field(default_factory=list)  # events that route beliefs
    statements: int = 0

    def percentile_ms(self, p: float, routing_only: bool = False) -> float:
        """The nearest-rank p-th percentile of the per-event latencies, in milliseconds;
        `routing_only`: of the events that route beliefs (not exits, waits and noise)."""
        ordered = sorted(self.routing_event_seconds if routing_only else self.event_seconds)
        if not ordered:
            return 0.0
        return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)] * 1000

    @property
    def ratio(self) -> float:
        return self.engine_seconds / self.reference_seconds if self.reference_seconds else 0.0

    def to_json(self) -> dict:
        return {"database": self.database,
                "import_check_seconds": round(self.import_check_seconds, 3),
                "engine_seconds": round(self.engine_seconds, 3),
                "reference_seconds": round(self.reference_seconds, 3),
                "engine_over_reference": round(self.ratio, 1),
                "events": len(self.event_seconds), "statements": self.statements,
                "event_p50_ms": round(self.percentile_ms(50), 3),
                "event_p99_ms": round(self.percentile_ms(99), 3),
                "routing_events": len(self.routing_event_seconds),
                "routing_event_p50_ms": round(self.percentile_ms(50, routing_only=True), 3),
                "routing_event_p99_ms": round(self.percentile_ms(99, routing_only=True), 3)}


@dataclass
class Evaluation:
    """The outcome of one run: every record's result, in record order, and the timing."""

    source: str
    sha256: str
    stories: int
    total_stories: int
    records: list[RecordResult]
    timing: Timing

    @property
    def disagreements(self) -> list[RecordResult]:
        """Records where the engine and the reference interpreter answer differently."""
        return [r for r in self.records if not r.matches_reference]

    @property
    def questions(self) -> int:
        return len({(r.story, r.question) for r in self.records})


# ---------------------------------------------------------------- running


def evaluate(data_path: Path, db: Database, subset: Optional[int] = None,
             progress: Optional[TextIO] = None) -> Evaluation:
    """Import, check and run the stories of `data_path` (the first `subset` if given) on `db`
    and on the reference interpreter; join the answers to the records.

    Raises EvalInputError for bad data, DatabaseUnavailable if FalkorDB goes away.
    """
    timing = Timing(database=_database_kind(db))
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="tomc-hitom-") as folder:
        try:
            stories = import_hitom(data_path, folder)
        except HitomImportError as err:
            raise EvalInputError(str(err)) from None
        index = json.loads((Path(folder) / INDEX_FILE).read_text(encoding="utf-8"))
        chosen = stories if subset is None else stories[:subset]
        scenarios = [_checked(Path(folder) / story.file_name) for story in chosen]
    timing.import_check_seconds = time.perf_counter() - started

    engine_runs = []
    for number, scenario in enumerate(scenarios, 1):
        t0 = time.perf_counter()
        run = run_scenario(scenario, "falkordb", db)
        timing.engine_seconds += time.perf_counter() - t0
        timing.event_seconds.extend(run.stats.event_seconds)
        timing.routing_event_seconds.extend(
            seconds for event, seconds in zip(scenario.events, run.stats.event_seconds)
            if event.event_class is not None)
        timing.statements += run.stats.statements
        engine_runs.append(run)
        _drop_graphs(db, scenario)
        if progress and (number % PROGRESS_EVERY == 0 or number == len(scenarios)):
            print(f"eval.hitom: {number}/{len(scenarios)} stories on FalkorDB "
                  f"({timing.engine_seconds:.1f} s)", file=progress)

    t0 = time.perf_counter()
    reference_runs = [run_scenario(scenario, "reference") for scenario in scenarios]
    timing.reference_seconds = time.perf_counter() - t0

    entries = {entry["scenario"]: entry for entry in index["stories"]}
    records = [result
               for story, engine_run, reference_run in zip(chosen, engine_runs, reference_runs)
               for result in _join(story, entries[story.scenario], engine_run, reference_run)]
    return Evaluation(Path(data_path).name, _sha256(Path(data_path)), len(chosen),
                      len(stories), sorted(records, key=lambda r: r.record), timing)


def _checked(path: Path) -> ScenarioModel:
    result = check_file(path)
    if not result.ok:
        rendered = "\n".join(d.render(result.source) for d in result.diagnostics)
        raise EvalInputError(f"{path.name} does not check:\n{rendered}")
    (scenario,) = result.scenarios
    return scenario


def _drop_graphs(db: Database, scenario: ScenarioModel) -> None:
    """Delete a story's graphs once its answers are read: 120 stories would otherwise leave
    720 graphs (about 115 MB) on the server."""
    graphs = graph_names(scenario.name, scenario.agents)
    db.redis.delete(graphs.world, *graphs.minds.values())


def _database_kind(db: Database) -> str:
    return "embedded FalkorDB" if db.url.startswith("unix://") else "FalkorDB server"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _join(story: StoryRecord, entry: dict, engine_run: ScenarioRun,
          reference_run: ScenarioRun) -> list[RecordResult]:
    """One RecordResult per record of the story, through the index's ask_index."""
    replay = GeneratorReplay(story.sentences)
    results = []
    for question in entry["questions"]:
        engine = engine_run.answers[question["ask_index"]]
        reference = reference_run.answers[question["ask_index"]]
        rule, step, kind, event = _origin(engine)
        reference_rule, reference_step, _, _ = _origin(reference)
        places = places_of(story.sentences, question["object"])
        for record in question["records"]:
            results.append(RecordResult(
                record=record["index"], prompting_type=record["prompting_type"],
                story=entry["scenario"], order=question["order"], deception=entry["deception"],
                story_length=entry["story_length"], question=question["text"],
                chain=list(question["chain"]), object=question["object"],
                label=record["answer"], engine=engine.shown, reference=reference.shown,
                engine_rule=rule, engine_step=step, engine_kind=kind, engine_event=event,
                engine_sentence=story.sentences[step - 1] if step else None,
                reference_rule=reference_rule, reference_step=reference_step,
                generator_replay=replay.belief(question["chain"], question["object"]),
                label_in_story=record["answer"] in places))
    return results


def _origin(answer: Answer) -> tuple[Optional[str], Optional[int], Optional[str], Optional[str]]:
    """(rule, step, event kind, event text) of the belief an answer reads; Nones for
    `unknown`."""
    if not answer.provenance:
        return None, None, None, None
    origin = answer.provenance[0]
    return origin.rule, origin.step, origin.kind, origin.text


# ---------------------------------------------------------------- reporting


def _ratio(hits: int, total: int) -> str:
    return f"{hits}/{total} ({100 * hits / total:.1f}%)" if total else "-"


def _count(records: list[RecordResult], test: Callable[[RecordResult], bool]) -> str:
    return _ratio(sum(1 for r in records if test(r)), len(records))


def _slices(records: list[RecordResult]) -> list[tuple[str, list[RecordResult]]]:
    slices = [("all", records)]
    for order in sorted({r.order for r in records}):
        slices.append((f"order {order}", [r for r in records if r.order == order]))
    for deception in (False, True):
        chosen = [r for r in records if r.deception == deception]
        if chosen:
            slices.append((f"deception {str(deception).lower()}", chosen))
    for length in sorted({r.story_length for r in records}):
        chosen = [r for r in records if r.story_length == length]
        slices.append((f"story length {length}", chosen))
    return slices


def _by_type(records: list[RecordResult], kind: str) -> list[RecordResult]:
    return [r for r in records if r.prompting_type == kind]


def _cell(text: Optional[str]) -> str:
    return "-" if text is None else str(text).replace("|", "\\|")


def render_markdown(evaluation: Evaluation) -> str:
    """hitom.md: the deterministic tables, then the Timing section."""
    records = evaluation.records
    vp, cotp = _by_type(records, "VP"), _by_type(records, "CoTP")
    wrong = [r for r in records if not r.matches_label]
    subset = ("" if evaluation.stories == evaluation.total_stories else
              f" **Subset: the first {evaluation.stories} of {evaluation.total_stories} "
              f"stories.**")
    lines = [
        "# Hi-ToM: tomc against the released labels and the reference interpreter", "",
        f"Generated by `python -m eval.hitom` from `{evaluation.source}` (sha256 "
        f"`{evaluation.sha256[:16]}`): {evaluation.stories} stories, {evaluation.questions} "
        f"questions, {len(records)} records (a VP and a CoTP record ask each question, each "
        f"with its own released label).{subset} Every story runs on FalkorDB (compiled "
        "Cypher) and on the pure-Python reference interpreter, under `policy hitom` "
        "(`tomc/rules/hitom.tom`, docs/semantics.md section 3). `hitom.json` holds every record. "
        "Everything above the Timing section is deterministic.", "",
        "## Headline", "",
        "| comparison | records | questions |", "|---|---|---|",
        f"| engine = reference interpreter | {_count(records, lambda r: r.matches_reference)} "
        f"| {_question_agreement(records)} |",
        f"| engine = released label, all records | "
        f"{_count(records, lambda r: r.matches_label)} | |",
        f"| engine = released label, VP records | {_count(vp, lambda r: r.matches_label)} | |",
        f"| engine = released label, CoTP records | "
        f"{_count(cotp, lambda r: r.matches_label)} | |", "",
        "The engine and the reference interpreter also name the same rule and step for "
        f"{_count(records, lambda r: r.same_provenance)} answers.", "",
        "## Accuracy by slice", "",
        "Engine answer = released label, over all records and per prompting type; last "
        "column: engine answer = reference-interpreter answer.", "",
        "| slice | records | = label | = label (VP) | = label (CoTP) | = reference |",
        "|---|---|---|---|---|---|",
    ]
    for name, chosen in _slices(records):
        lines.append(
            f"| {name} | {len(chosen)} | {_count(chosen, lambda r: r.matches_label)} "
            f"| {_count(_by_type(chosen, 'VP'), lambda r: r.matches_label)} "
            f"| {_count(_by_type(chosen, 'CoTP'), lambda r: r.matches_label)} "
            f"| {_count(chosen, lambda r: r.matches_reference)} |")
    lines += ["", *_label_section(records, wrong), "", *_timing_section(evaluation)]
    return "\n".join(lines) + "\n"


def _question_agreement(records: list[RecordResult]) -> str:
    questions: dict[tuple[str, str], bool] = {}
    for r in records:
        questions[(r.story, r.question)] = questions.get((r.story, r.question), True) \
            and r.matches_reference
    return _ratio(sum(questions.values()), len(questions))


def _label_section(records: list[RecordResult], wrong: list[RecordResult]) -> list[str]:
    by_question: dict[tuple[str, int], dict[str, RecordResult]] = {}
    for r in records:
        by_question.setdefault((r.story, r.order), {})[r.prompting_type] = r
    split = sum(1 for pair in by_question.values()
                if len({r.label for r in pair.values()}) > 1)
    wrong_questions = sorted({(r.story, r.order) for r in wrong})
    replay_vp = sum(1 for r in _by_type(records, "VP") if r.generator_replay == r.label)
    replay_cotp = sum(1 for r in _by_type(records, "CoTP") if r.generator_replay == r.label)
    n_vp, n_cotp = len(_by_type(records, "VP")), len(_by_type(records, "CoTP"))
    wrong_cotp = _by_type(wrong, "CoTP")
    vp_agrees = sum(1 for r in wrong_cotp
                    if (vp := by_question[(r.story, r.order)].get("VP")) and vp.matches_label)
    lines = [
        "## Where the engine and the released labels disagree", "",
        f"{len(wrong)} records ({len(wrong_questions)} questions) have a label the engine "
        f"does not give: {len(_by_type(wrong, 'VP'))} VP and {len(_by_type(wrong, 'CoTP'))} "
        f"CoTP. The two labels of one question differ for {split} of {len(by_question)} "
        "questions. A replay of the generator's own update order "
        "(`eval/hitom_generator.py`: a statement or move updates only the chains in observer "
        "order, `itertools.combinations`; entering shows objects placed before the text "
        f"states them) reproduces {_ratio(replay_vp, n_vp)} VP labels and "
        f"{_ratio(replay_cotp, n_cotp)} CoTP labels; docs/semantics.md updates every chain over "
        f"the witnesses. Of the {len(wrong_cotp)} CoTP labels the engine does not give, "
        f"{vp_agrees} belong to a question whose VP label is the engine's answer.", "",
        "By question order:", "",
        "| order | VP records | CoTP records | all records | questions |", "|---|---|---|---|---|",
    ]
    for order in sorted({r.order for r in records}):
        at = [r for r in wrong if r.order == order]
        lines.append(f"| {order} | {len(_by_type(at, 'VP'))} | {len(_by_type(at, 'CoTP'))} "
                     f"| {len(at)} | {len({r.story for r in at})} |")
    lines += ["", "By the rule that produced the engine's answer, and the kind of event it "
              "routed (`enter`: what entering a room reveals):", "",
              "| rule | event | VP records | CoTP records | all records |",
              "|---|---|---|---|---|"]
    origins = Counter((str(r.engine_rule), str(r.engine_kind)) for r in wrong)
    for origin in sorted(origins, key=lambda o: (-origins[o], o)):
        at = [r for r in wrong if (str(r.engine_rule), str(r.engine_kind)) == origin]
        lines.append(f"| {_cell(origin[0])} | {_cell(origin[1])} | {len(_by_type(at, 'VP'))} "
                     f"| {len(_by_type(at, 'CoTP'))} | {len(at)} |")
    lines += ["", "By explanation of the label:", "",
              "| explanation | VP records | CoTP records |", "|---|---|---|"]
    for key, text in EXPLANATIONS.items():
        at = [r for r in wrong if r.explanation == key]
        lines.append(f"| {text} | {len(_by_type(at, 'VP'))} | {len(_by_type(at, 'CoTP'))} |")
    lines += [
        "", "Every question with a disagreeing label (✗ marks a label the engine does not "
        "give; the engine's answer is the same for both records):", "",
        "| story | order | question | engine answer | rule | from step: sentence "
        "| VP label | CoTP label | generator replay |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for story, order in wrong_questions:
        pair = by_question[(story, order)]
        first = next(iter(pair.values()))
        labels = [_label_cell(pair.get(kind)) for kind in ("VP", "CoTP")]
        lines.append(
            f"| {story} | {order} | {' > '.join(first.chain)} : {first.object} "
            f"| {first.engine} | {_cell(first.engine_rule)} "
            f"| {first.engine_step}: {_cell(first.engine_sentence)} | {labels[0]} "
            f"| {labels[1]} | {_cell(first.generator_replay)} |")
    return lines


def _label_cell(record: Optional[RecordResult]) -> str:
    if record is None:
        return "-"
    return record.label if record.matches_label else f"✗ {record.label}"


def _timing_section(evaluation: Evaluation) -> list[str]:
    t = evaluation.timing
    return [
        TIMING_HEADING, "",
        "Measured by the run that wrote this file; varies between runs and machines. "
        f"{t.database}, Python {platform.python_version()}, {platform.system()} "
        f"{platform.machine()}.", "",
        "| measure | value |", "|---|---|",
        f"| stories / events / Cypher statements | {evaluation.stories} / "
        f"{len(t.event_seconds)} / {t.statements} |",
        f"| FalkorDB: wall time for all stories (run and read answers) | "
        f"{t.engine_seconds:.2f} s |",
        f"| FalkorDB: per-event latency p50 / p99 | {t.percentile_ms(50):.2f} ms / "
        f"{t.percentile_ms(99):.2f} ms |",
        f"| FalkorDB: the same over the {len(t.routing_event_seconds)} events that route "
        f"beliefs (enter, state, move, tell, claim) | {t.percentile_ms(50, True):.2f} ms / "
        f"{t.percentile_ms(99, True):.2f} ms |",
        f"| reference interpreter alone, same scenarios | {t.reference_seconds:.2f} s |",
        f"| ratio FalkorDB / reference interpreter | {t.ratio:.0f}x |",
        f"| import and check (not in the above) | {t.import_check_seconds:.2f} s |",
    ]


def render_json(evaluation: Evaluation) -> dict:
    """hitom.json: the run's identity, its timing, and every record."""
    return {"source": evaluation.source, "sha256": evaluation.sha256, "policy": "hitom",
            "stories": evaluation.stories, "questions": evaluation.questions,
            "explanations": EXPLANATIONS, "timing": evaluation.timing.to_json(),
            "records": [r.to_json() for r in evaluation.records]}


def dump_json(document: dict) -> str:
    """JSON text with one record per line, so that a changed answer is a one-line diff."""
    head = json.dumps({k: v for k, v in document.items() if k != "records"}, indent=1,
                      ensure_ascii=False)  # ends with "\n}"
    records = ",\n".join("  " + json.dumps(r, ensure_ascii=False) for r in document["records"])
    return head[:-2] + ',\n "records": [\n' + records + "\n ]\n}\n"


def summary(evaluation: Evaluation) -> str:
    """The one-line result printed at the end of every run."""
    records = evaluation.records
    return (f"eval.hitom: engine = reference on "
            f"{_count(records, lambda r: r.matches_reference)} records; engine = label on "
            f"{_count(records, lambda r: r.matches_label)} (VP "
            f"{_count(_by_type(records, 'VP'), lambda r: r.matches_label)}, CoTP "
            f"{_count(_by_type(records, 'CoTP'), lambda r: r.matches_label)}); FalkorDB "
            f"{evaluation.timing.engine_seconds:.1f} s, reference "
            f"{evaluation.timing.reference_seconds:.2f} s")


# ---------------------------------------------------------------- command line


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m eval.hitom",
        description="Run every Hi-ToM question on FalkorDB and on the reference interpreter; "
                    "write hitom.md and hitom.json. Exit 1 if they disagree on any question.")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help="the released Hi-ToM_data.json (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help="folder for hitom.md and hitom.json (default: %(default)s)")
    parser.add_argument("--db", default=None,
                        help="FalkorDB URL (else $FALKORDB_URL, else an embedded FalkorDB "
                             "in a temporary folder)")
    parser.add_argument("--subset", type=int, default=None, metavar="N",
                        help="only the first N stories (of 120)")
    parser.add_argument("--check", action="store_true",
                        help="verify agreement only; write no files")
    args = parser.parse_args(argv)
    if args.subset is not None and args.subset < 1:
        parser.error("--subset must be at least 1")
    return args


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    try:
        with tempfile.TemporaryDirectory(prefix="tomc-db-") as data_dir, \
                connect(args.db, Path(data_dir)) as db:
            evaluation = evaluate(args.data, db, args.subset, progress=sys.stderr)
    except EvalInputError as err:
        print(f"eval.hitom: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except DatabaseUnavailable as err:
        print(f"eval.hitom: {err}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    if not args.check:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / MARKDOWN_FILE).write_text(render_markdown(evaluation), encoding="utf-8")
        (args.out / JSON_FILE).write_text(dump_json(render_json(evaluation)), encoding="utf-8")
        print(f"eval.hitom: wrote {args.out / MARKDOWN_FILE} and {args.out / JSON_FILE}",
              file=sys.stderr)
    print(summary(evaluation))
    for r in evaluation.disagreements:
        print(f"eval.hitom: record {r.record} ({r.story}, order {r.order}): engine "
              f"{r.engine}, reference {r.reference}", file=sys.stderr)
    return EXIT_DISAGREE if evaluation.disagreements else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
