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

With ``--core ROUNDS`` it also times the whole formation core (``FormationStage.form``: the
arm, admission, gates, candidates and refusals; no Kafka), CPU microseconds a turn, on the
input's turns formed twice (as written and with ``user``/``assistant`` swapped, so both speakers
are the principal) and on ``bench/throughput.py``'s synthetic turns (``--bench-turns``). Each
round runs this checkout and the baseline in child processes, one after the other, so both meet
the same machine; a child warms up with one pass and keeps its best of ``--repeat``.
With ``--after-extractor`` the rounds time ``form_episode`` alone (admission, gates,
candidates, refusals, the batch), each turn's proposals computed before the clock starts.

    .venv/bin/python bench/propose_cost.py --input ../shared/data/locomo-dev.jsonl \
        --baseline-root ../main [--spacy-model en_core_web_sm] [--core 5]
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def user_messages(path: Path) -> list[tuple[str, date]]:
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
    deterministic = _module("formation.deterministic")
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
        "import sys, json, time; from datetime import date; sys.path.insert(0, sys.argv[1])\n"
        "try: from engram.formation.deterministic import propose\n"
        "except ModuleNotFoundError: from formation.deterministic import propose\n"
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


def _core_child(
    root: Path, corpus: str, path: Path, turns: int, repeat: int, *, after_extractor: bool = False
) -> float:
    """CPU microseconds a turn of the core with ``root``'s code, timed in a child process."""
    child = [sys.executable, __file__, "--core-child", corpus, "--code-root", str(root.resolve())]
    options = ["--input", str(path), "--bench-turns", str(turns), "--repeat", str(repeat)]
    options += ["--after-extractor"] if after_extractor else []
    out = subprocess.run(
        [*child, *options],
        check=True,
        capture_output=True,
        text=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


def _core_episodes(corpus: str, path: Path, turns: int) -> list[Any]:
    """The episodes one corpus forms: the real turns both ways round, or the bench's turns."""
    if corpus == "bench":
        return list(importlib.import_module("bench.throughput").synthetic_turns(turns, "bench"))
    episodes = list(_module("ingest.jsonl").read_episodes(path))
    swap = {"user": "assistant", "assistant": "user"}
    message = _module("schemas.episodes").Message
    swapped = [
        e.model_copy(
            update={
                "messages": [
                    message(ordinal=m.ordinal, role=swap.get(m.role, m.role), content=m.content)
                    for m in e.messages
                ]
            }
        )
        for e in episodes
    ]
    return episodes + swapped


def _time_core(corpus: str, path: Path, turns: int, repeat: int) -> float:
    """Best CPU microseconds a turn of ``repeat`` passes of the core, after one warm-up pass."""
    stage_type = _module("streams.formation_stage").FormationStage
    policy_type = _policy_type()
    position = _module("schemas.claims").SourcePosition
    episodes = _core_episodes(corpus, path, turns)
    stage = stage_type(policy_type())
    sources = [position(topic="cost", partition=0, offset=i) for i in range(len(episodes))]
    best = float("inf")
    for attempt in range(repeat + 1):
        started = time.process_time()
        for episode, source in zip(episodes, sources, strict=True):
            _drive(stage.form(episode, source))
        if attempt:  # the first pass warms up
            best = min(best, time.process_time() - started)
    return best / len(episodes) * 1e6


def _module(name: str) -> Any:
    """``name`` from the checkout under test: ``engram.<name>`` since the code ships one import
    name, plain ``<name>`` in the checkouts before it (which a baseline may be)."""
    try:
        return importlib.import_module(f"engram.{name}")
    except ModuleNotFoundError:
        return importlib.import_module(name)


def _policy_type() -> Any:
    """The checkout's ``FormationPolicy``: in ``formation.policy`` since the layering issue, in
    ``engram.streams.formation.policy`` before it (the code throughput issue 13 was filed against,
    1bd4b0f, which ``--corpora bench --core-only`` can take as its baseline)."""
    try:
        return _module("formation.policy").FormationPolicy
    except ModuleNotFoundError:
        return _module("streams.formation.policy").FormationPolicy


def _time_after_extractor(corpus: str, path: Path, turns: int, repeat: int) -> float:
    """Best CPU microseconds a turn of ``form_episode`` alone (admission, gates, candidates,
    refusals, the batch), the extractor's proposals computed beforehand as the stage does."""
    propose = _module("formation.deterministic").propose
    form_episode = _module("formation.core").form_episode
    messages_of = _module("schemas.episodes").episode_messages
    policy = _module("formation.policy").FormationPolicy()
    position = _module("schemas.claims").SourcePosition
    episodes = _core_episodes(corpus, path, turns)
    sources = [position(topic="cost", partition=0, offset=i) for i in range(len(episodes))]
    proposals = [
        {
            m.ordinal: propose(
                m.content, occurred_on=e.occurred_at.date(), ceiling=policy.scan_ceiling
            )
            for m in messages_of(e)
        }
        for e in episodes
    ]
    best = float("inf")
    for attempt in range(repeat + 1):
        started = time.process_time()
        for episode, proposed, source in zip(episodes, proposals, sources, strict=True):
            form_episode(episode, policy, proposed, source=source)
        if attempt:  # the first pass warms up
            best = min(best, time.process_time() - started)
    return best / len(episodes) * 1e6


def _drive(coroutine: Any) -> Any:
    """Run a coroutine that never suspends (the deterministic arm) without an event loop."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    raise RuntimeError("the core suspended: it is not the deterministic arm alone")


def _compare_core(args: argparse.Namespace) -> dict[str, object]:
    """Rounds of this checkout and the baseline, alternating, on each corpus."""
    report: dict[str, object] = {}
    after = bool(args.after_extractor)
    for corpus in args.corpora.split(","):
        mine: list[float] = []
        theirs: list[float] = []
        for _ in range(args.core):
            mine.append(
                _core_child(
                    REPO, corpus, args.input, args.bench_turns, args.repeat, after_extractor=after
                )
            )
            if args.baseline_root is not None:
                theirs.append(
                    _core_child(
                        args.baseline_root,
                        corpus,
                        args.input,
                        args.bench_turns,
                        args.repeat,
                        after_extractor=after,
                    )
                )
        entry: dict[str, object] = {"core_us_per_turn": [round(v, 1) for v in mine]}
        if theirs:
            entry["baseline_core_us_per_turn"] = [round(v, 1) for v in theirs]
            entry["baseline_over_core_median"] = round(
                statistics.median(theirs) / statistics.median(mine), 3
            )
            # Under contention the least a round took is the closest to what the code costs.
            entry["baseline_over_core_best"] = round(min(theirs) / min(mine), 3)
        report[corpus] = entry
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline-root", type=Path)
    parser.add_argument("--spacy-model")
    parser.add_argument("--core", type=int, default=0, metavar="ROUNDS")
    parser.add_argument("--bench-turns", type=int, default=1500)
    parser.add_argument(
        "--after-extractor",
        action="store_true",
        help="with --core: time form_episode alone, the proposals computed beforehand",
    )
    parser.add_argument(
        "--corpora",
        default="real,bench",
        help="with --core: which corpora the rounds form (real, bench or both, comma-separated)",
    )
    parser.add_argument(
        "--core-only",
        action="store_true",
        help="with --core: skip timing propose alone (a baseline before the layering issue has "
        "no formation.deterministic to call)",
    )
    parser.add_argument("--core-child", choices=("real", "bench"), help=argparse.SUPPRESS)
    parser.add_argument("--code-root", type=Path, default=REPO, help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.path.insert(0, str(args.code_root))  # this checkout's code, not an installed copy's
    if args.core_child:
        timed = _time_after_extractor if args.after_extractor else _time_core
        print(timed(args.core_child, args.input, args.bench_turns, args.repeat))
        return
    report: dict[str, object] = {}
    if args.core_only:
        report["core"] = _compare_core(args)
        print(json.dumps(report, indent=2))
        return
    messages = user_messages(args.input)
    n = len(messages)
    report["messages"] = n
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
    if args.core:
        report["core"] = _compare_core(args)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
