"""How well a model turns prose into events: `tomc extract` scored against Hi-ToM's gold events.

    python -m eval.extract --provider openai --model llama3.1 --base-url http://127.0.0.1:8080/v1
    python -m eval.extract --provider anthropic --model claude-sonnet-4-5 --stories 20
    python -m eval.extract --provider oracle --stories 5      # the harness itself: must be 100%

The Hi-ToM importer (tomc/importers/hitom.py) turns each story's sentences into events: those
are the gold. Each sentence becomes one message of prose; the story's agents and rooms are
declared in the memory first (the model is scored on events, not on naming the cast). The
model's ok candidates are compared with the gold statements per event kind (precision and
recall over the statements in canonical form, times left out), then applied to the story and
its questions asked of both: the share answered as the gold story answers them.

`--provider oracle` answers with the gold statements themselves (a check of the harness);
`--replay DIR` scores answers saved by an earlier run's `--save DIR`, without a model. Writes
`extract.md` and `extract.json` (naming the model) into `--out`, default eval/out/; commit
them under eval/results/ when they come from a real model.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from eval.hitom import DEFAULT_DATA
from eval.results_files import DEFAULT_OUT, write_results
from tomc.api import Session
from tomc.dsl import ast
from tomc.dsl.formatter import format_statement
from tomc.extract.candidates import ExtractError
from tomc.extract.messages import Message
from tomc.extract.pipeline import judged, prompt_for
from tomc.extract.providers import (NotConfigured, ProviderError, ProviderSettings,
                                    configured)
from tomc.importers.hitom import StoryRecord, read_stories, story_to_ast



@dataclass
class Score:
    """Gold, predicted and matched statements of one event kind (or of all)."""

    gold: int = 0
    predicted: int = 0
    matched: int = 0

    def add(self, other: "Score") -> None:
        self.gold += other.gold
        self.predicted += other.predicted
        self.matched += other.matched

    def to_json(self) -> dict:
        return {"gold": self.gold, "predicted": self.predicted, "matched": self.matched,
                "precision": _ratio(self.matched, self.predicted),
                "recall": _ratio(self.matched, self.gold)}


@dataclass
class StoryResult:
    scenario: str
    kinds: dict[str, Score]
    refused: int
    flagged: int
    questions: int
    answered_as_gold: int
    error: Optional[str] = None


@dataclass
class Evaluation:
    model: str
    stories: list[StoryResult] = field(default_factory=list)
    seconds: float = 0.0

    def kinds(self) -> dict[str, Score]:
        total: dict[str, Score] = {}
        for story in self.stories:
            for kind, score in story.kinds.items():
                total.setdefault(kind, Score()).add(score)
        return dict(sorted(total.items()))

    def to_json(self) -> dict:
        kinds = self.kinds()
        overall = Score()
        for score in kinds.values():
            overall.add(score)
        questions = sum(s.questions for s in self.stories)
        right = sum(s.answered_as_gold for s in self.stories)
        return {"model": self.model, "stories": len(self.stories), "seconds": round(self.seconds, 1),
                "overall": overall.to_json(), "kinds": {k: v.to_json() for k, v in kinds.items()},
                "answers": {"questions": questions, "as_gold": right,
                            "share": _ratio(right, questions)},
                "refused": sum(s.refused for s in self.stories),
                "flagged": sum(s.flagged for s in self.stories),
                "errors": {s.scenario: s.error for s in self.stories if s.error}}


def gold_of(story: StoryRecord) -> tuple[list[ast.Node], list[ast.Node], list[ast.Node]]:
    """(declarations, events, questions) of the story as the importer writes it."""
    scenario = next(i for i in story_to_ast(story).items if isinstance(i, ast.Scenario))
    declarations = [s for s in scenario.statements if isinstance(s, (ast.Agents, ast.Rooms))]
    questions = [s for s in scenario.statements if isinstance(s, ast.Ask)]
    events = [s for s in scenario.statements if s not in declarations and s not in questions]
    return declarations, events, questions


def canonical(node: ast.Node) -> str:
    """A statement as scored: canonical text, without its time or position."""
    return format_statement(node.model_copy(update={"span": None, "at": None}
                                            if isinstance(node, ast.Timed) else {"span": None}))


def oracle_answer(story: StoryRecord, events: list[ast.Node]) -> str:
    """The gold events as a model's answer: each from its sentence, quoting all of it."""
    return json.dumps({"statements": [
        {"statement": canonical(e), "message": n, "quote": sentence}
        for n, (e, sentence) in enumerate(zip(events, story.sentences), 1)]})


def score_story(story: StoryRecord, ask_model, model: str) -> StoryResult:
    """One story: ask for candidates, score them against the gold, answer the questions."""
    declarations, events, questions = gold_of(story)
    messages = [Message(n, None, None, None, s) for n, s in enumerate(story.sentences, 1)]
    with Session.open(policy="hitom", name=story.scenario, engine="reference") as session:
        session.apply(declarations)
        # Hi-ToM's sentences are a narrator's account, with no speaker: trusted as such.
        prompt = prompt_for(messages, session, narration=True)
        try:
            extraction = judged(messages, prompt, ask_model(story, events, prompt), session,
                                model, narration=True)
        except (ExtractError, ProviderError) as err:
            empty = {k: Score(gold=n) for k, n in Counter(type(e).__name__
                                                         for e in events).items()}
            return StoryResult(story.scenario, empty, 0, 0, len(questions), 0, str(err))
        ok = [c.node for c in extraction.candidates if c.status == "ok"]
        kinds = _kinds(events, [n for n in ok if not isinstance(n, (ast.Agents, ast.Rooms))])
        if ok:
            session.apply(ok)
        found = [tuple(session.ask(q).values) for q in questions]
    with Session.open(policy="hitom", name=story.scenario, engine="reference") as gold:
        gold.apply(declarations + events)
        expected = [tuple(gold.ask(q).values) for q in questions]
    return StoryResult(story.scenario, kinds,
                       sum(c.status == "refused" for c in extraction.candidates),
                       sum(c.status == "flagged" for c in extraction.candidates),
                       len(questions), sum(a == b for a, b in zip(found, expected)))


def _kinds(gold: list[ast.Node], predicted: list[ast.Node]) -> dict[str, Score]:
    scores: dict[str, Score] = {}
    left = Counter(canonical(g) for g in gold)
    for node in gold:
        scores.setdefault(type(node).__name__, Score()).gold += 1
    for node in predicted:
        score = scores.setdefault(type(node).__name__, Score())
        score.predicted += 1
        text = canonical(node)
        if left[text] > 0:
            left[text] -= 1
            score.matched += 1
    return scores


def render_markdown(evaluation: Evaluation) -> str:
    data = evaluation.to_json()
    lines = [f"# Extraction: {data['model']}", "",
             f"`python -m eval.extract` over {data['stories']} Hi-ToM stories "
             f"({data['seconds']} s). Gold: the events `tomc import hitom` writes for each "
             "sentence; each sentence is one message.", "",
             "| event kind | gold | predicted | matched | precision | recall |",
             "|---|---|---|---|---|---|"]
    for kind, s in [*data["kinds"].items(), ("all", data["overall"])]:
        lines.append(f"| {kind} | {s['gold']} | {s['predicted']} | {s['matched']} | "
                     f"{_pct(s['precision'])} | {_pct(s['recall'])} |")
    answers = data["answers"]
    lines += ["", f"Questions answered as on the gold story: {answers['as_gold']}/"
                  f"{answers['questions']} ({_pct(answers['share'])}). Candidates refused: "
                  f"{data['refused']}; flagged: {data['flagged']}; stories whose answer was "
                  f"unusable: {len(data['errors'])}.", ""]
    return "\n".join(lines)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.extract", description=__doc__.split(
        "\n\n")[0])
    parser.add_argument("--provider", required=True,
                        help="anthropic, openai (any OpenAI-compatible server), oracle, or "
                             "replay (with --replay DIR)")
    parser.add_argument("--model")
    parser.add_argument("--base-url")
    parser.add_argument("--stories", type=int, default=10, help="how many stories (default 10)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--save", type=Path, help="keep each raw answer here, one per story")
    parser.add_argument("--replay", type=Path, help="score the answers saved here instead")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    stories = read_stories(args.data)[:args.stories]
    if args.provider == "oracle":
        model = "oracle (the gold events)"

        def ask_model(story, events, prompt):
            return oracle_answer(story, events)
    elif args.replay is not None:
        model = f"answers replayed from {args.replay}"

        def ask_model(story, events, prompt):
            return (args.replay / f"{story.scenario}.json").read_text(encoding="utf-8")
    else:
        try:
            provider = configured(ProviderSettings.load(provider=args.provider,
                                                        model=args.model,
                                                        base_url=args.base_url))
        except NotConfigured as err:
            print(f"eval.extract: {err}", file=sys.stderr)
            return 2
        model = provider.label

        def ask_model(story, events, prompt):
            answer = provider.complete(prompt)
            if args.save is not None:
                args.save.mkdir(parents=True, exist_ok=True)
                (args.save / f"{story.scenario}.json").write_text(answer, encoding="utf-8")
            return answer
    evaluation = Evaluation(model)
    started = time.monotonic()
    for n, story in enumerate(stories, 1):
        evaluation.stories.append(score_story(story, ask_model, model))
        print(f"eval.extract: {n}/{len(stories)} stories", file=sys.stderr)
    evaluation.seconds = time.monotonic() - started
    write_results(args.out, "extract", evaluation.to_json(), render_markdown(evaluation))
    print(render_markdown(evaluation))
    return 0


def _ratio(part: int, whole: int) -> Optional[float]:
    return round(part / whole, 4) if whole else None


def _pct(value: Optional[float]) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


if __name__ == "__main__":
    sys.exit(main())
