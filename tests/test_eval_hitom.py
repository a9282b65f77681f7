"""`python -m eval.hitom` on the first three Hi-ToM stories, against the session's FalkorDB."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # `eval` is a folder of the repository, not an installed package
    sys.path.insert(0, str(REPO))

import eval.hitom as hitom  # noqa: E402
from eval.hitom import (DEFAULT_DATA, EXIT_BAD_INPUT, EXIT_DISAGREE, EXIT_OK,  # noqa: E402
                        TIMING_HEADING, evaluate, main, render_json, render_markdown)
from eval.hitom_generator import GeneratorReplay  # noqa: E402

SUBSET = 3


@pytest.fixture(scope="module")
def evaluation(db):
    return evaluate(DEFAULT_DATA, db, subset=SUBSET)


def test_engine_agrees_with_reference_on_every_question_of_the_subset(evaluation):
    records = evaluation.records
    assert evaluation.stories == SUBSET and evaluation.total_stories == 120
    assert len(records) == SUBSET * 10  # 5 questions, each a VP and a CoTP record
    assert [r for r in records if r.engine != r.reference] == []
    assert all(r.same_provenance for r in records)
    assert evaluation.disagreements == []


def test_records_join_their_questions_and_labels(evaluation):
    data = json.loads(DEFAULT_DATA.read_text(encoding="utf-8"))["data"]
    for r in evaluation.records:
        released = data[r.record]
        assert (r.question, r.label, r.prompting_type, r.order) == (
            released["question"], released["answer"], released["prompting_type"],
            released["question_order"])
        assert r.engine_rule is not None and r.engine_step is not None
    # Story hitom_000, record 0: "Where is the lettuce really?" is the truth after step 14.
    first = evaluation.records[0]
    assert (first.record, first.engine, first.engine_rule, first.engine_step) == (
        0, "green_drawer", "truth", 14)
    assert first.engine_sentence == "Owen moved the lettuce to the green_drawer."


def test_markdown_is_deterministic_above_timing(db, evaluation):
    again = evaluate(DEFAULT_DATA, db, subset=SUBSET)
    first, second = render_markdown(evaluation), render_markdown(again)
    assert TIMING_HEADING in first
    assert first.split(TIMING_HEADING)[0] == second.split(TIMING_HEADING)[0]
    assert f"Subset: the first {SUBSET} of 120 stories" in first
    assert render_json(evaluation)["records"] == render_json(again)["records"]


def test_disagreeing_labels_name_the_engine_rule(evaluation):
    # hitom_000 order 3: the VP label is the generator's update order, not docs/semantics.md's.
    (record,) = [r for r in evaluation.records
                 if r.story == "hitom_000" and r.order == 3 and r.prompting_type == "VP"]
    assert (record.label, record.engine, record.generator_replay) == (
        "green_drawer", "green_bathtub", "green_drawer")
    assert record.explanation == "generator_order"
    table = render_markdown(evaluation)
    assert ("| hitom_000 | 3 | Owen > Charlotte > Avery : lettuce | green_bathtub "
            "| every chain over witnesses adopts | 3: Avery moved the lettuce to the "
            "green_bathtub. | ✗ green_drawer | green_bathtub | green_drawer |") in table


def test_generator_replay_updates_chains_in_observer_order_only():
    replay = GeneratorReplay([
        "Anne, Bob and Cid entered the kitchen.",
        "The apple is in the box.",
        "Anne moved the apple to the basket.",
    ])
    # The move's observer list is [Bob, Cid, Anne]: Bob > Anne learns, Anne > Bob does not,
    # and keeps what entering showed (the apple placed before the text states it).
    assert replay.belief(("Bob", "Anne"), "apple") == "basket"
    assert replay.belief(("Anne", "Bob"), "apple") == "box"
    assert replay.belief((), "apple") == "basket"


def test_command_writes_results_and_exits_zero(db, tmp_path, capsys):
    out = tmp_path / "results"
    assert main(["--subset", "1", "--db", db.url, "--out", str(out)]) == EXIT_OK
    document = json.loads((out / "hitom.json").read_text(encoding="utf-8"))
    assert len(document["records"]) == 10
    assert (out / "hitom.md").read_text(encoding="utf-8").startswith("# Hi-ToM")
    assert "engine = reference on 10/10" in capsys.readouterr().out


def test_check_writes_nothing_and_bad_data_exits_2(db, tmp_path):
    assert main(["--subset", "1", "--db", db.url, "--out", str(tmp_path), "--check"]) == EXIT_OK
    assert list(tmp_path.iterdir()) == []
    bad = tmp_path / "bad.json"
    bad.write_text('{"data": 3}', encoding="utf-8")
    assert main(["--data", str(bad), "--db", db.url, "--check"]) == EXIT_BAD_INPUT


def test_a_disagreement_with_the_reference_exits_1(db, monkeypatch, capsys):
    real = hitom.run_scenario

    def skewed(scenario, engine="falkordb", database=None):
        run = real(scenario, engine, database)
        if engine == "reference":
            run.answers[0].values = ["elsewhere"]
        return run

    monkeypatch.setattr(hitom, "run_scenario", skewed)
    assert main(["--subset", "1", "--db", db.url, "--check"]) == EXIT_DISAGREE
    captured = capsys.readouterr()
    assert "engine = reference on 8/10" in captured.out
    assert "record 0 (hitom_000, order 0): engine green_drawer, reference elsewhere" in captured.err
