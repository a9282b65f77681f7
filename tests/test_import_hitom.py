"""`tomc import hitom` on the released Hi-ToM data: stories, steps, asks, index, errors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tomc.cli.main import app
from tomc.dsl import ast
from tomc.dsl.formatter import format_file
from tomc.dsl.parser import parse
from tomc.importers.hitom import (BUNDLED_DATA, HitomImportError, import_hitom, read_stories,
                                  story_to_ast, story_to_tom)

DATA = BUNDLED_DATA


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    out = tmp_path_factory.mktemp("hitom")
    return out, import_hitom(DATA, out)


def _records() -> list[dict]:
    return json.loads(DATA.read_text(encoding="utf-8"))["data"]


def _write_records(tmp_path: Path, records: list[dict]) -> Path:
    path = tmp_path / "data.json"
    path.write_text(json.dumps({"data": records}), encoding="utf-8")
    return path


def _scenario(text: str) -> ast.Scenario:
    (scenario,) = [item for item in parse(text).items if isinstance(item, ast.Scenario)]
    return scenario


def test_120_stories_600_questions_cover_all_1200_records(imported):
    out, stories = imported
    assert len(stories) == 120
    questions = [q for story in stories for q in story.questions]
    assert len(questions) == 600
    indices = [ref.index for q in questions for ref in q.records]
    assert sorted(indices) == list(range(1200))
    for story in stories:
        assert [q.order for q in story.questions] == [0, 1, 2, 3, 4]
        for q in story.questions:
            assert sorted(ref.prompting_type for ref in q.records) == ["CoTP", "VP"]


def test_every_file_parses_with_events_at_sentence_steps(imported):
    out, stories = imported
    for story in stories:
        text = (out / story.file_name).read_text(encoding="utf-8")
        scenario = _scenario(text)
        assert scenario.name.text == story.scenario
        lines = text.splitlines()
        events = [s for s in scenario.statements if isinstance(s, ast.EVENT_TYPES)]
        assert len(events) == len(story.sentences)
        for step, (event, sentence) in enumerate(zip(events, story.sentences), 1):
            assert lines[event.span.line - 1].endswith(f"# {step}: {sentence}")


def test_sentence_numbers_in_the_data_are_the_steps(imported):
    _, stories = imported
    by_sentences = {story.sentences: story for story in stories}
    for record in _records():
        numbered = re.findall(r"^(\d+) (.+)$", record["story"], re.MULTILINE)
        story = by_sentences[tuple(text for _, text in numbered)]
        assert [int(n) for n, _ in numbered] == list(range(1, len(story.sentences) + 1))


def test_questions_follow_records_and_index_joins_them(imported):
    out, stories = imported
    index = json.loads((out / "index.json").read_text(encoding="utf-8"))
    assert [entry["file"] for entry in index["stories"]] == [s.file_name for s in stories]
    story = stories[-1]
    asks = [s for s in _scenario(story_to_tom(story)).statements
            if isinstance(s, (ast.Ask, ast.Expect))]
    for ask, question in zip(asks, story.questions, strict=True):
        assert [n.text for n in ask.subject.chain] == list(question.chain)
        assert ask.subject.key.subject.text == question.object
    entry = index["stories"][-1]
    assert entry["questions"][4]["chain"] == ["Isla", "Carter", "Mila", "Owen"]
    assert entry["questions"][4]["ask_index"] == 4
    assert {"deception", "story_length", "events"} <= entry.keys()


def test_vp_and_cotp_records_keep_their_own_labels(imported):
    _, stories = imported
    question = next(q for q in stories[2].questions if q.order == 2)
    labels = {ref.prompting_type: ref.answer for ref in question.records}
    assert labels == {"CoTP": "blue_cupboard", "VP": "green_bathtub"}  # records 42 and 342


def test_templates_become_events():
    story = next(s for s in read_stories(DATA) if s.deception and s.story_length == 1)
    text = story_to_tom(story)
    assert "use policy hitom" in text
    assert 'noop "Noah saw a monkey."' in text
    assert "in hall: carrot is in red_basket" in text
    assert "William waits" in text
    assert "Charlotte announces carrot is in green_envelope" in text
    assert "Hannah tells Charlotte carrot is in blue_container" in text
    assert "agents William, Jack, Charlotte, Noah, Hannah" in text
    assert "rooms hall, waiting_room" in text


def test_a_noise_sentence_becomes_a_noop(tmp_path):
    records = _records()[:1]
    records[0]["story"] = records[0]["story"].replace("Elizabeth dislikes the tangerine.",
                                                      "Elizabeth saw an owl.")
    (story,) = read_stories(_write_records(tmp_path, records))
    statements = _scenario(story_to_tom(story)).statements
    fourth = [s for s in statements if isinstance(s, ast.EVENT_TYPES)][3]
    assert isinstance(fourth, ast.Noop) and fourth.text == "Elizabeth saw an owl."


def test_an_unknown_sentence_names_record_and_line(tmp_path):
    records = _records()[:2]
    records[1]["story"] = records[0]["story"].replace("Owen likes the", "Owen juggled the")
    with pytest.raises(HitomImportError, match=r"record 1, sentence 7: 'Owen juggled the"):
        import_hitom(_write_records(tmp_path, records), tmp_path / "out")
    assert not (tmp_path / "out").exists()  # nothing is written from bad data


def test_misnumbered_sentences_name_record_and_line(tmp_path):
    records = _records()[:2]
    records[1]["story"] = records[1]["story"].replace("\n5 ", "\n6 ", 1)
    with pytest.raises(HitomImportError, match=r"record 1: line '6 .*' should be numbered 5"):
        read_stories(_write_records(tmp_path, records))


def test_prompt_lines_are_not_story(tmp_path):
    record = _records()[0]
    vp = dict(record, story="Read the following story and answer.\n" + record["story"])
    cotp = dict(record, story=record["story"] + "\n***", prompting_type="VP")
    (story,) = read_stories(_write_records(tmp_path, [record, vp, cotp]))
    assert len(story.questions[0].records) == 3


def _tomc(*args) -> subprocess.CompletedProcess:
    """Run the real `tomc` entry point in a child process, so stdout and stderr stay apart."""
    return subprocess.run([sys.executable, "-c", "from tomc.cli.main import main; main()",
                           *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})


def test_cli_summary_and_json(tmp_path):
    result = CliRunner().invoke(app, ["import", "hitom", str(DATA), "-o", str(tmp_path)])
    assert result.exit_code == 0
    assert result.stdout == (f"120 stories, 600 questions (1200 records, 458 expected labels) "
                             f"written to {tmp_path}\n")
    result = CliRunner().invoke(app, ["import", "hitom", str(DATA), "-o", str(tmp_path), "--json"])
    summary = json.loads(result.stdout)
    assert summary["stories"] == 120 and summary["questions"] == 600


def test_cli_reads_the_shipped_data_when_given_no_file(tmp_path):
    result = CliRunner().invoke(app, ["import", "hitom", "-o", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["records"] == 1200
    assert json.loads((tmp_path / "index.json").read_text(encoding="utf-8"))["source"] == \
        "Hi-ToM_data.json"


@pytest.mark.parametrize("content", [None, "{not json", '{"data": 3}', '{"data": [{}]}'])
def test_cli_bad_data_is_one_error_line_and_exit_2(tmp_path, content):
    data = tmp_path / "data.json"
    if content is not None:
        data.write_text(content, encoding="utf-8")
    result = _tomc("import", "hitom", data, "-o", tmp_path / "out")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("tomc: ") and result.stderr.count("\n") == 1


def test_a_label_the_rules_give_is_expected_and_tomc_test_checks_it(imported, tmp_path):
    """Regression: the import wrote only asks, so `tomc test` on it said nothing was tested
    (exit 5). A question whose records agree on a label the Hi-ToM rules give is an
    `expect`; the others stay asks naming their labels."""
    out, stories = imported
    questions = [q for story in stories for q in story.questions]
    expected = [q for q in questions if q.expected is not None]
    assert len(expected) == 458
    assert all(q.expected == q.label for q in expected)
    text = (out / stories[2].file_name).read_text(encoding="utf-8")
    assert "  expect Noah believes eggplant is in green_envelope  " in text
    assert ("ask Hannah > Noah believes eggplant                 # order 2: Where does Hannah "
            "think Noah thinks the eggplant is? (labels: CoTP blue_cupboard, VP green_bathtub)"
            in text)
    few = tmp_path / "few"
    few.mkdir()
    for story in stories[:3]:
        (few / story.file_name).write_text((out / story.file_name).read_text())
    result = _tomc("test", few, "--engine", "reference")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.endswith(f"{sum(q.expected is not None for s in stories[:3] for q in s.questions)} passed, 0 failed\n")
    only_asks = tmp_path / "asks"
    _tomc("import", "hitom", DATA, "-o", only_asks, "--ask-only")
    assert "expect" not in (only_asks / stories[0].file_name).read_text(encoding="utf-8")


def test_files_are_built_as_ast_and_printed_by_the_formatter(imported):
    """No .tom text is assembled by hand: each file is the formatter's print of the AST the
    importer builds, so it is in canonical form and parses back to the same program."""
    _, stories = imported
    for story in stories[:20]:
        tree = story_to_ast(story)
        text = story_to_tom(story)
        assert text == format_file(tree)
        assert format_file(parse(text)) == text
        assert parse(text).canonical()["items"] == tree.canonical()["items"]
