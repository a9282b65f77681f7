"""Hi-ToM records -> .tom scenarios: a file per story, an event per sentence, an `expect` or
an `ask` per question.

The released data (`{"data": [record, ...]}`, 1,200 records; shipped with tomc as
`BUNDLED_DATA`, shape and attribution in tomc/importers/data/hitom/README.md) holds 120
stories, each asked 5 questions (orders 0-4) under two prompting types, VP and CoTP. The
prompting type only changes what an LLM is shown: VP texts begin with an unnumbered
instruction line and a few CoTP texts end with a stray `***`. A story is therefore identified
by its numbered sentences alone.

Sentence n of a story becomes the scenario's n-th event, so event step n is sentence n, and the
sentence is kept as a trailing comment. A question becomes an `expect` of its released label
(order 0 `expect truth X is in C`, order k `expect A1 > ... > Ak believes X is in C`) when its
records agree on one label and the Hi-ToM rules (`policy hitom`, run by the reference
interpreter) give that label too; otherwise an `ask` (`ask A1 > ... > Ak believes X`) whose
comment names the released labels. So `tomc test` on the output checks every question the
rules and the labels agree on (458 of 600 on the released data); eval/hitom.py scores the rest
against the labels. The index written beside the files joins each question back to its
records and their released labels; each record keeps its own label because VP and CoTP
records of the same question do not always agree.

Every problem (unreadable file, malformed record, misnumbered or unknown sentence) raises
`HitomImportError`, whose message names the record (its index in `data`) and the line.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Optional, Union

from tomc.dsl import ast
from tomc.dsl.formatter import format_file

POLICY = "hitom"
INDEX_FILE = "index.json"
# The released Hi-ToM data (Apache-2.0, He et al., Findings of EMNLP 2023), installed with
# tomc as package data: what `tomc import hitom` and `eval.hitom` read when given no file.
BUNDLED_DATA = Path(__file__).parent / "data" / "hitom" / "Hi-ToM_data.json"

# Where the generator's agents gather between chapters; the story's current room never
# becomes it, so "The X is in the C." is always observed in a real room.
WAITING_ROOM = "waiting_room"

# Record fields the importer reads, with their JSON types.
_FIELDS = {"story": str, "question": str, "question_order": int, "answer": str,
           "deception": bool, "story_length": int, "prompting_type": str}

_NUMBERED = re.compile(r"(\d+) (.+)")
# Unnumbered lines that belong to the prompt, not the story: VP's instruction line and the
# `***` that ends a few CoTP texts. Any other unnumbered line is an error.
_PROMPT_LINE = re.compile(r"|\*\*\*|Read the following story\b.*")

_SENTENCES = {
    "enter": re.compile(r"(?P<agents>\w+(?:, \w+)*(?: and \w+)?) entered the (?P<room>\w+)\."),
    "state": re.compile(r"The (?P<object>\w+) is in the (?P<container>\w+)\."),
    "move": re.compile(r"(?P<agent>\w+) moved the (?P<object>\w+) to the (?P<container>\w+)\."),
    "wait": re.compile(
        r"(?P<agent>\w+) made no movements and stayed in the (?P<room>\w+) for 1 minute\."),
    "exit": re.compile(r"(?P<agent>\w+) exited the (?P<room>\w+)\."),
    # Claims and tells occur with and without "the" before the object and a closing "now".
    "announce": re.compile(r"(?P<agent>\w+) publicly claimed that (?:the )?(?P<object>\w+)"
                           r" is in the (?P<container>\w+)(?: now)?\."),
    "tell": re.compile(r"(?P<agent>\w+) privately told (?P<listener>\w+) that (?:the )?"
                       r"(?P<object>\w+) is in the (?P<container>\w+)(?: now)?\."),
    # The generator's distractors, inserted at random; they change no belief.
    "noise": re.compile(
        r"(?P<agent>\w+) (?:saw an? \w+|lost his \w+|likes the \w+|dislikes the \w+)\."),
}

_TRUTH_QUESTION = re.compile(r"Where is the (?P<object>\w+) really\?")
# Order 1 reads "Where does A really think the X is?"; order k > 1 reads
# "Where does A think B thinks ... the X is?".
_BELIEF_QUESTION = re.compile(r"Where does (?P<first>\w+) (?:really )?think "
                              r"(?P<rest>(?:\w+ thinks )*)the (?P<object>\w+) is\?")

class HitomImportError(Exception):
    """Hi-ToM data that cannot be imported; the message names the record and the line."""


@dataclass(frozen=True)
class RecordRef:
    """One released record asking a question: its index in `data`, prompting type and label."""

    index: int
    prompting_type: str
    answer: str


@dataclass(frozen=True)
class QuestionRecord:
    """One distinct question of a story and the `ask` it became.

    `ask_index` is the 0-based position of its `expect` or `ask` among the scenario's
    questions (in order 0-4). `chain` is empty for order 0 and otherwise lists the question's
    agents in the order the question names them. `records` are every VP and CoTP record
    asking it. `expected` is the label written as an `expect` (None: written as an `ask`).
    """

    ask_index: int
    order: int
    text: str
    chain: tuple[str, ...]
    object: str
    records: tuple[RecordRef, ...]
    expected: Optional[str] = None

    @property
    def label(self) -> Optional[str]:
        """The released label when every record of the question gives the same one."""
        labels = {ref.answer for ref in self.records}
        return labels.pop() if len(labels) == 1 else None


@dataclass(frozen=True)
class StoryRecord:
    """One distinct story: its scenario name, sentences (sentence n is `sentences[n - 1]`),
    the story-level labels of its records, and its questions."""

    scenario: str
    deception: bool
    story_length: int
    sentences: tuple[str, ...]
    questions: tuple[QuestionRecord, ...]

    @property
    def file_name(self) -> str:
        return f"{self.scenario}.tom"

    @property
    def record_indices(self) -> list[int]:
        """The indices in `data` of every record telling this story, ascending."""
        return sorted(ref.index for question in self.questions for ref in question.records)

    @property
    def first_record(self) -> int:
        """The record that names this story in error messages."""
        return self.record_indices[0]

    def index_entry(self) -> dict:
        """This story in index.json: all but the sentences, which are in the .tom file."""
        entry = asdict(self)
        del entry["sentences"]
        return {"file": self.file_name, "events": len(self.sentences), **entry}


def import_hitom(data_path: Union[str, Path], out_dir: Union[str, Path],
                 expect: bool = True) -> list[StoryRecord]:
    """Write `hitom_NNN.tom` for each story of `data_path` and `index.json` into `out_dir`.
    With `expect` (the default), a question whose label the Hi-ToM rules give is written as
    an `expect` of it (`with_expectations`); without, every question is an `ask`.

    Stories are numbered from 000 in order of first appearance in the data. index.json is
    `{"source": file name, "policy": "hitom", "stories": [StoryRecord.index_entry(), ...]}`.
    Every story is converted before anything is written, so bad data writes nothing.
    Raises `HitomImportError` for unreadable or malformed data and for unwritable `out_dir`.
    """
    stories = read_stories(data_path)
    if expect:
        stories = [with_expectations(story) for story in stories]
    texts = [story_to_tom(story) for story in stories]
    out = Path(out_dir)
    index = {"source": Path(data_path).name, "policy": POLICY,
             "stories": [story.index_entry() for story in stories]}
    try:
        out.mkdir(parents=True, exist_ok=True)
        for story, text in zip(stories, texts):
            (out / story.file_name).write_text(text, encoding="utf-8")
        (out / INDEX_FILE).write_text(json.dumps(index, indent=2) + "\n", encoding="utf-8")
    except OSError as err:
        raise HitomImportError(f"cannot write to {out}: {err.strerror}") from None
    return stories


def read_stories(data_path: Union[str, Path]) -> list[StoryRecord]:
    """The distinct stories of a Hi-ToM data file, with their de-duplicated questions.

    Raises `HitomImportError` if the file is unreadable, is not `{"data": [record, ...]}`,
    a record lacks a field, a story's sentences are not numbered 1..n, records of one story
    disagree on `deception` or `story_length`, or a question matches no question template.
    """
    records = _load_records(Path(data_path))
    stories: dict[tuple[str, ...], list[int]] = {}
    for index, record in enumerate(records):
        stories.setdefault(_story_sentences(index, record["story"]), []).append(index)
    return [_story(f"hitom_{number:03d}", sentences, [(i, records[i]) for i in indices])
            for number, (sentences, indices) in enumerate(stories.items())]


def with_expectations(story: StoryRecord) -> StoryRecord:
    """`story` with `expected` set on each question whose records agree on one label that
    the Hi-ToM rules give too: the story (all asks) is checked and run on the reference
    interpreter, whose answers are compared with the labels. A label the rules do not give
    stays a label (an `ask`), so the files hold no failing expectation."""
    from tomc.dsl.checker import check_text  # the checker and the interpreter only here
    from tomc.runner import run_scenario

    plain = replace(story, questions=tuple(replace(q, expected=None) for q in story.questions))
    result = check_text(story_to_tom(plain), f"<{story.scenario}>")
    if not result.ok:  # pragma: no cover - the importer writes checked text
        raise HitomImportError(f"record {story.first_record}: the story does not check: "
                               f"{result.diagnostics[0].message}")
    answers = run_scenario(result.scenarios[0], "reference").answers
    questions = tuple(replace(q, expected=q.label if q.label == answer.shown else None)
                      for q, answer in zip(plain.questions, answers, strict=True))
    return replace(plain, questions=questions)


def story_to_tom(story: StoryRecord) -> str:
    """The .tom text of one story: `use policy hitom` and `scenario NAME { ... }` holding the
    agent and room declarations, one event per sentence (its sentence as a trailing comment),
    and one `expect` (a question with `expected`) or `ask` per question in `story.questions`
    order. Built as an AST (tomc/dsl/ast.py)
    and printed by the formatter, so the text is canonical `tomc fmt` output.

    Raises `HitomImportError` for a sentence that matches no template, or a `The X is in the C.`
    before anyone entered a room (the state needs a room).
    """
    return format_file(story_to_ast(story))


def story_to_ast(story: StoryRecord) -> ast.File:
    """The story as an `ast.File`. Statements carry spans only for their line: the line the
    formatter prints them on, which anchors each statement's trailing comment."""
    cast = _Cast()
    events: list[tuple[ast.Node, str]] = []
    room = None  # the room of the current chapter, where "The X is in the C." is observed
    for number, sentence in enumerate(story.sentences, 1):
        kind, match = _classify(story, number, sentence)
        if kind == "enter" and match["room"] != WAITING_ROOM:
            room = match["room"]
        if kind == "state" and room is None:
            raise HitomImportError(f"record {story.first_record}, sentence {number}: "
                                   f"{sentence!r} comes before anyone entered a room")
        events.append((_event(kind, match, cast, room, sentence), f"{number}: {sentence}"))
    asks = [(_question_statement(question), _question_comment(question))
            for question in story.questions]
    records = ", ".join(map(str, story.record_indices))
    # Lines as printed: 1 the header comment, 2 `use policy`, 4 `scenario {`, 5-6 agents
    # and rooms, then the events after a blank line, then the questions after another.
    first_event, first_ask = 8, 8 + len(events) + 1
    comments = [ast.Comment(text=f"# Generated by `tomc import hitom` from the Hi-ToM records "
                                 f"{records}.", line=1)]
    statements: list[ast.Node] = [ast.Agents(names=list(cast.agents.values()), span=_at(5)),
                                  ast.Rooms(names=list(cast.rooms.values()), span=_at(6))]
    for first, part in ((first_event, events), (first_ask, asks)):
        for line, (statement, comment) in enumerate(part, first):
            statements.append(statement.model_copy(update={"span": _at(line)}))
            comments.append(ast.Comment(text=f"# {comment}", line=line, trailing=True))
    scenario = ast.Scenario(name=ast.Name(text=story.scenario), statements=statements,
                            span=_at(4, first_ask + len(asks)))
    use = ast.UsePolicy(target=ast.Name(text=POLICY), span=_at(2))
    return ast.File(items=[use, scenario], comments=comments)


def _at(line: int, end_line: Optional[int] = None) -> ast.Span:
    """A span that gives only a line (what the formatter anchors comments to)."""
    return ast.Span(line=line, column=1, end_line=end_line or line, end_column=1)


# ---------------------------------------------------------------- reading the data


def _load_records(path: Path) -> list[dict]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise HitomImportError(f"cannot read {path}: {err.strerror}") from None
    except ValueError as err:  # invalid UTF-8 or invalid JSON
        raise HitomImportError(f"{path} is not a JSON file: {err}") from None
    records = document.get("data") if isinstance(document, dict) else None
    if not isinstance(records, list):
        raise HitomImportError(f'{path}: expected {{"data": [record, ...]}}')
    for index, record in enumerate(records):
        if not isinstance(record, dict):
            raise HitomImportError(f"record {index}: expected an object, got {record!r:.60}")
        for field, kind in _FIELDS.items():
            if not isinstance(record.get(field), kind):
                raise HitomImportError(f"record {index}: field {field!r} is missing or "
                                       f"not a {kind.__name__}")
    return records


def _story_sentences(index: int, text: str) -> tuple[str, ...]:
    """A record's story as its numbered sentences, numbers removed; checks they are 1..n."""
    sentences: list[str] = []
    for line in (line.strip() for line in text.splitlines()):
        numbered = _NUMBERED.fullmatch(line)
        if numbered is None:
            if _PROMPT_LINE.fullmatch(line):
                continue
            raise HitomImportError(f"record {index}: unnumbered line {line!r} in the story")
        if int(numbered[1]) != len(sentences) + 1:
            raise HitomImportError(f"record {index}: line {line!r} should be numbered "
                                   f"{len(sentences) + 1}; sentences must be numbered 1..n")
        sentences.append(numbered[2])
    if not sentences:
        raise HitomImportError(f"record {index}: the story has no numbered sentences")
    return tuple(sentences)


def _story(scenario: str, sentences: tuple[str, ...],
           records: list[tuple[int, dict]]) -> StoryRecord:
    first_index, first = records[0]
    for index, record in records:
        for field in ("deception", "story_length"):
            if record[field] != first[field]:
                raise HitomImportError(
                    f"record {index}: {field} {record[field]!r} differs from "
                    f"{first[field]!r} in record {first_index}, which tells the same story")
    asked: dict[str, list[tuple[int, dict]]] = {}
    for index, record in records:
        asked.setdefault(record["question"], []).append((index, record))
    ordered = sorted(asked.items(), key=lambda item: (item[1][0][1]["question_order"], item[0]))
    questions = tuple(_question(ask_index, text, askers)
                      for ask_index, (text, askers) in enumerate(ordered))
    return StoryRecord(scenario, first["deception"], first["story_length"], sentences, questions)


def _question(ask_index: int, text: str, askers: list[tuple[int, dict]]) -> QuestionRecord:
    first_index = askers[0][0]
    if truth := _TRUTH_QUESTION.fullmatch(text):
        chain, obj = (), truth["object"]
    elif belief := _BELIEF_QUESTION.fullmatch(text):
        # rest is "B thinks C thinks " (or empty): each agent is followed by " thinks ".
        chain = (belief["first"], *belief["rest"].split(" thinks ")[:-1])
        obj = belief["object"]
    else:
        raise HitomImportError(
            f"record {first_index}: question {text!r} matches no question template")
    for index, record in askers:
        if record["question_order"] != len(chain):
            raise HitomImportError(f"record {index}: question_order {record['question_order']} "
                                   f"but {text!r} nests {len(chain)} agents")
    refs = tuple(RecordRef(index, record["prompting_type"], record["answer"])
                 for index, record in askers)
    return QuestionRecord(ask_index, len(chain), text, chain, obj, refs)


# ---------------------------------------------------------------- writing .tom


class _Cast:
    """The agents and rooms a story names, in order of first appearance, as AST names."""

    def __init__(self):
        self.agents: dict[str, ast.Name] = {}
        self.rooms: dict[str, ast.Name] = {}

    def agent(self, name: str) -> ast.Name:
        return self.agents.setdefault(name, ast.Name(text=name))

    def room(self, name: str) -> ast.Name:
        return self.rooms.setdefault(name, ast.Name(text=name))


def _classify(story: StoryRecord, number: int, sentence: str) -> tuple[str, re.Match]:
    for kind, pattern in _SENTENCES.items():
        if match := pattern.fullmatch(sentence):
            return kind, match
    raise HitomImportError(f"record {story.first_record}, sentence {number}: "
                           f"{sentence!r} matches no Hi-ToM sentence template")


def _event(kind: str, match: re.Match, cast: _Cast, room: Optional[str],
           sentence: str) -> ast.Node:
    """The .tom event for one classified sentence; registers the agents and rooms it names."""
    if kind == "enter":
        agents = [cast.agent(a) for a in re.split(r", | and ", match["agents"])]
        return ast.Enter(agents=agents, room=cast.room(match["room"]))
    if kind == "state":
        return ast.State(room=cast.room(room), fact=_located(match))
    actor = cast.agent(match["agent"])  # every other sentence starts with an agent
    if kind == "noise":
        return ast.Noop(text=sentence)
    if kind == "wait":
        cast.room(match["room"])
        return ast.Wait(agent=actor)
    if kind == "exit":
        return ast.Exit(agents=[actor], room=cast.room(match["room"]))
    if kind == "move":
        return ast.Move(actor=actor, subject=ast.Name(text=match["object"]),
                        container=ast.Name(text=match["container"]))
    if kind == "announce":
        return ast.Announce(speaker=actor, fact=_located(match))
    return ast.Tell(speaker=actor, listener=cast.agent(match["listener"]), fact=_located(match))


def _located(match: re.Match) -> ast.Fact:
    """`OBJECT is in CONTAINER`."""
    subject = ast.Name(text=match["object"])
    return ast.Fact(key=ast.Key(subject=subject), value=ast.Value(text=match["container"]),
                    form="located")


def _question_statement(question: QuestionRecord) -> Union[ast.Expect, ast.Ask]:
    """`expect CHAIN believes X is in LABEL` for a question with `expected`, else `ask`."""
    key = ast.Key(subject=ast.Name(text=question.object))
    subject = ast.Subject(chain=[ast.Name(text=a) for a in question.chain], key=key)
    if question.expected is None:
        return ast.Ask(subject=subject)
    return ast.Expect(subject=subject, kind="value", form="located",
                      values=[ast.Value(text=question.expected)])


def _question_comment(question: QuestionRecord) -> str:
    """The question's text; for an `ask`, the released labels too (they are not expected:
    the records disagree, or the Hi-ToM rules give another answer)."""
    comment = f"order {question.order}: {question.text}"
    if question.expected is not None:
        return comment
    labels = ", ".join(f"{ref.prompting_type} {ref.answer}"
                       for ref in sorted(question.records, key=lambda r: r.prompting_type))
    return f"{comment} (labels: {labels})"
