"""Cost per message of the deterministic arm's ``propose`` on real turns, with same-run baselines.

Reads every principal message of a ``turn.appended`` JSONL file (for example the five dev
conversations in ``../shared/data/locomo-dev.jsonl``) and times, best of ``--repeat`` passes:

  (patterns)  — this checkout's ``formation.deterministic.propose`` over every message;
  (baseline)  — the same call with ``--baseline-root``'s code (another checkout, e.g. main),
                run in a subprocess in the same invocation, so the ratio compares like with like;
  (spacy)     — when ``--spacy-model`` names an installed spaCy pipeline package: its parse of
                the same messages, batched with ``nlp.pipe`` — what a dependency-parse candidate
                path would add per message before any rule runs.

Prints JSON: microseconds per message for each, and the ratios patterns/baseline and
spacy/patterns. Machines are noisy: read the ratios.

    .venv/bin/python bench/propose_cost.py --input ../shared/data/locomo-dev.jsonl \
        --baseline-root ../main [--spacy-model en_core_web_sm]
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _messages(path: Path) -> list[tuple[str, date]]:
    """Every user message of the file, with its episode's date."""
    found: list[tuple[str, date]] = []
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            event = json.loads(line)
            day = date.fromisoformat(event["occurred_at"][:10])
            found += [(m["content"], day) for m in event.get("messages", []) if m["role"] == "user"]
    return found


def _time_patterns(messages: list[tuple[str, date]], repeat: int) -> float:
    """Best seconds of ``repeat`` passes of ``propose`` over ``messages``."""
    deterministic = importlib.import_module("formation.deterministic")
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for content, day in messages:
            deterministic.propose(content, occurred_on=day)
        best = min(best, time.perf_counter() - start)
    return best


def _time_spacy(model: str, messages: list[tuple[str, date]], repeat: int) -> float:
    spacy = importlib.import_module("spacy")
    nlp = spacy.load(model)
    texts = [content for content, _ in messages]
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _doc in nlp.pipe(texts, batch_size=64):
            pass
        best = min(best, time.perf_counter() - start)
    return best


def _baseline(root: Path, path: Path, repeat: int) -> float:
    """``propose`` from another checkout, timed in a child process with that code first."""
    code = (
        "import sys, json, time; from datetime import date; sys.path.insert(0, sys.argv[1]);"
        "from formation.deterministic import propose;"
        "events = [json.loads(line) for line in open(sys.argv[2], encoding='utf-8')];"
        "msgs = [(m['content'], date.fromisoformat(e['occurred_at'][:10])) for e in events"
        " for m in e.get('messages', []) if m['role'] == 'user'];"
        "best = float('inf')\n"
        "for _ in range(int(sys.argv[3])):\n"
        "    start = time.perf_counter()\n"
        "    for content, day in msgs: propose(content, occurred_on=day)\n"
        "    best = min(best, time.perf_counter() - start)\n"
        "print(best)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(root.resolve()), str(path), str(repeat)],
        check=True,
        capture_output=True,
        text=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline-root", type=Path)
    parser.add_argument("--spacy-model")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))  # this checkout's code, not an installed copy's
    messages = _messages(args.input)
    n = len(messages)
    report: dict[str, object] = {"messages": n}
    patterns = _time_patterns(messages, args.repeat) / n * 1e6
    report["patterns_us_per_message"] = patterns
    if args.baseline_root is not None:
        baseline = _baseline(args.baseline_root, args.input, args.repeat) / n * 1e6
        report["baseline_root"] = str(args.baseline_root)
        report["baseline_us_per_message"] = baseline
        report["patterns_over_baseline"] = patterns / baseline
    if args.spacy_model:
        parse = _time_spacy(args.spacy_model, messages, args.repeat) / n * 1e6
        report["spacy_model"] = args.spacy_model
        report["spacy_parse_us_per_message"] = parse
        report["spacy_over_patterns"] = parse / patterns
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
