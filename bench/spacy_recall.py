"""Form a turns file with the patterns, a spaCy candidate path, or both; write labeling sheets.

    PYTHONPATH=<a folder with spacy and an English pipeline> .venv/bin/python \\
        bench/spacy_recall.py MODE OUT_DIR SEED... [--input FILE] [--model NAME]

MODE is ``patterns`` (the deterministic arm as it is), ``spacy`` (only the parse-based
candidates of ``bench/spacy_candidates.py``) or ``both`` (the patterns plus whatever the parse
adds that they did not propose). Every parse-based candidate goes through the arm's precision
gate, mood and quoted-speech checks and then through formation exactly as the patterns' do.
Writes OUT_DIR/census.json (every formed belief) and OUT_DIR/r<SEED>.json (the same recall
sheets as ``engram eval sample --messages 100 --seed SEED``), and prints the parse cost.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import date
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # this checkout's code, not an installed copy's

import spacy  # noqa: E402

import engram.formation.deterministic as deterministic  # noqa: E402
from bench import spacy_candidates  # noqa: E402
from engram.evaluation.sample import draw, form_file  # noqa: E402
from engram.formation.deterministic.ends import Abstain, about_the_project, judge  # noqa: E402
from engram.formation.deterministic.mood import clause_mood  # noqa: E402
from engram.formation.deterministic.speech import speech_regions, touches_speech  # noqa: E402
from engram.formation.policy import DETERMINISTIC_EXTRACTOR  # noqa: E402
from engram.formation.proposals import Proposal  # noqa: E402
from engram.ingest.jsonl import read_episodes  # noqa: E402
from engram.schemas.common import Role  # noqa: E402
from engram.schemas.episodes import episode_messages  # noqa: E402


def _parse(path: Path, model: str) -> tuple[dict[str, Any], float]:
    contents = [
        m.content
        for episode in read_episodes(path)
        for m in episode_messages(episode)
        if m.role is Role.USER
    ]
    nlp = spacy.load(model)
    start = time.perf_counter()
    docs = dict(zip(contents, nlp.pipe(contents, batch_size=64), strict=True))
    return docs, (time.perf_counter() - start) / max(len(contents), 1) * 1e6


def _parsed_proposals(doc: Any, content: str, occurred_on: date | None) -> list[Proposal]:
    regions = speech_regions(content)
    found: list[Proposal] = []
    for finding, sent in spacy_candidates.read_doc(doc, occurred_on):
        text = sent.text.replace("\u2019", "'")
        mood = clause_mood(text, question=text.rstrip().endswith("?"))
        if mood.silent or mood.hedged or mood.conditional:
            continue
        if touches_speech(regions, sent.start_char, sent.end_char):
            continue
        judged = judge(finding)
        if isinstance(judged, Abstain) or not about_the_project(judged):
            continue
        found.append(
            Proposal(
                subject=judged.subject,
                relation=judged.relation,
                object=judged.object,
                quote=sent.text,
                polarity="assert",
                tense=judged.tense or "present",
                extractor=DETERMINISTIC_EXTRACTOR,
                facet=judged.facet,
                confidence=judged.confidence,
            )
        )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["patterns", "spacy", "both"])
    parser.add_argument("out", type=Path)
    parser.add_argument("seeds", type=int, nargs="*")
    parser.add_argument("--input", type=Path, default=REPO.parent / "shared/data/locomo-dev.jsonl")
    parser.add_argument("--model", default="en_core_web_sm")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    docs, parse_us = _parse(args.input, args.model)
    patterns = deterministic.propose

    def propose(
        content: str, *, occurred_on: date | None = None, ceiling: int = 256
    ) -> list[Proposal]:
        base = patterns(content, occurred_on=occurred_on, ceiling=ceiling)
        base = [] if args.mode == "spacy" else base
        if args.mode == "patterns" or content not in docs:
            return base
        seen = {(p.subject.lower(), p.relation, p.object.lower()) for p in base}
        for proposal in _parsed_proposals(docs[content], content, occurred_on):
            key = (proposal.subject.lower(), proposal.relation, proposal.object.lower())
            if key not in seen:
                seen.add(key)
                base.append(proposal)
        return base[:ceiling]

    deterministic.propose = propose  # the formation stage calls the arm through the module
    formed = form_file(args.input)
    census = [b.to_dict() for b in formed.beliefs]
    (args.out / "census.json").write_text(json.dumps(census, indent=1))
    for seed in args.seeds:
        sheet = [m.to_dict() for m in draw(formed.messages, 100, seed)]
        (args.out / f"r{seed}.json").write_text(json.dumps(sheet, indent=1))
    print(json.dumps({"mode": args.mode, "formed": len(census), "parse_us_per_message": parse_us}))


if __name__ == "__main__":
    main()
