"""The deterministic arm's cost per message, this checkout against another, interleaved.

``bench/propose_cost.py`` times this checkout in-process and then the baseline in a
subprocess; on a loaded machine the two halves see different load and the ratio swings
(0.8 to 1.8 in three runs one morning). Here both sides run as subprocesses, alternating for
``--rounds`` rounds (the order flips every round), each the best of ``--repeat`` passes over
every principal message. Prints JSON: each side's microseconds per message by round, the ratio
of the two minima and the median of the per-round ratios.

    .venv/bin/python bench/propose_interleaved.py --input ../shared/data/locomo-dev.jsonl \
        --baseline-root ../main
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
_TIMER = """
import json, sys, time
from datetime import date
sys.path.insert(0, sys.argv[1])
from engram.formation.deterministic import propose
messages = []
with open(sys.argv[2], encoding="utf-8") as lines:
    for line in lines:
        event = json.loads(line)
        day = date.fromisoformat(event["occurred_at"][:10])
        messages += [(m["content"], day) for m in event["messages"] if m["role"] == "user"]
best = float("inf")
for _ in range(int(sys.argv[3])):
    start = time.perf_counter()
    for content, day in messages:
        propose(content, occurred_on=day)
    best = min(best, time.perf_counter() - start)
print(best * 1e6 / len(messages))
"""


def _time(root: Path, source: Path, repeat: int) -> float:
    args = [sys.executable, "-c", _TIMER, str(root), str(source), str(repeat)]
    return float(subprocess.run(args, capture_output=True, text=True, check=True).stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--input", type=Path, required=True)
    parser.add_argument("--baseline-root", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    sides = {"patterns": REPO, "baseline": args.baseline_root.resolve()}
    times: dict[str, list[float]] = {name: [] for name in sides}
    for round_ in range(args.rounds):
        order = list(sides) if round_ % 2 == 0 else list(reversed(sides))
        for name in order:
            times[name].append(_time(sides[name], args.input.resolve(), args.repeat))
    pairs = [p / b for p, b in zip(times["patterns"], times["baseline"], strict=True)]
    report = {
        "baseline_root": str(sides["baseline"]),
        "us_per_message": {name: [round(t, 1) for t in ts] for name, ts in times.items()},
        "min_over_min": round(min(times["patterns"]) / min(times["baseline"]), 3),
        "median_round_ratio": round(statistics.median(pairs), 3),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
