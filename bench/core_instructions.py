"""Instructions a turn of the formation core, counted by cachegrind: steadier than time on
shared cores.

Runs the core (``FormationStage.form``, the deterministic arm) over N turns once and three times,
each under ``valgrind --tool=cachegrind --cache-sim=no`` with ``PYTHONHASHSEED=0``, and prints
the difference of the two instruction counts divided by 2N: the steady cost of a turn, without
the interpreter's start and the imports. ``--code-root`` counts another checkout's core (its own
``bench/throughput.py`` makes the bench corpus). Two runs of one tree differ by up to 3%.

    .venv/bin/python bench/core_instructions.py --corpus bench --turns 200 [--code-root /tmp/main]
    .venv/bin/python bench/core_instructions.py --corpus real --turns 300 \\
        --input ../shared/data/locomo-dev.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

_CHILD = """
import asyncio, importlib.util, sys
root, corpus, turns, passes, path = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
sys.path.insert(0, root)
spec = importlib.util.spec_from_file_location("rooted_throughput", root + "/bench/throughput.py")
rooted = importlib.util.module_from_spec(spec)
sys.modules["rooted_throughput"] = rooted
spec.loader.exec_module(rooted)
if corpus == "bench":
    episodes = rooted.synthetic_turns(turns, "bench")
else:
    from pathlib import Path
    from engram.ingest.jsonl import read_episodes
    episodes = list(read_episodes(Path(path)))[:: max(1, 2760 // turns)][:turns]
for _ in range(passes):
    asyncio.run(rooted.measure_core(episodes))
"""
_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def _instructions(root: Path, corpus: str, turns: int, passes: int, path: str) -> int:
    command = [
        "valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
        sys.executable, "-c", _CHILD, str(root), corpus, str(turns), str(passes), path,
    ]  # fmt: skip
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(command, check=True, capture_output=True, text=True, env=env)
    found = _REFS.search(done.stderr)
    if found is None:
        raise SystemExit("cachegrind printed no instruction count")
    return int(found.group(1).replace(",", ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", choices=("bench", "real"), default="bench")
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--input", default="", help="a turn.appended JSONL file, for --corpus real")
    parser.add_argument("--code-root", type=Path, default=REPO)
    args = parser.parse_args()
    root = args.code_root.resolve()
    once = _instructions(root, args.corpus, args.turns, 1, args.input)
    thrice = _instructions(root, args.corpus, args.turns, 3, args.input)
    per_turn = (thrice - once) / (2 * args.turns)
    report = {"code_root": str(root), "corpus": args.corpus, "turns": args.turns}
    print(json.dumps({**report, "instructions_per_turn": round(per_turn)}))


if __name__ == "__main__":
    main()
