"""What each clause-wide rule of the deterministic arm costs per message, on real turns.

``bench/propose_cost.py`` times the whole arm against another checkout; this times each
clause-wide proposer (the families :func:`formation.deterministic.events.propose_events` runs
on every clause) alone over the clauses of every principal message, best of ``--repeat``
passes, so a new rule's cost can be read beside the old ones' in the same run. Prints JSON:
microseconds per message for each proposer, by module, and the whole arm for scale.

    .venv/bin/python -m bench.rule_cost --input ../shared/data/locomo-dev.jsonl   # from the root
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path

from bench.propose_cost import user_messages
from engram.formation.deterministic import (
    activities,
    belongings,
    favourites,
    hosting,
    jobs,
    memberships,
    outings,
    pets,
    plans,
    propose,
    pursuits,
    skills,
)
from engram.formation.deterministic.clauses import split_clauses
from engram.formation.deterministic.findings import Finding

Proposer = Callable[[str, date | None], list[Finding]]
FAMILIES = {
    "pursuits": pursuits.PROPOSERS,
    "plans": plans.PROPOSERS,
    "activities": activities.PROPOSERS,
    "belongings": belongings.PROPOSERS,
    "jobs": jobs.PROPOSERS,
    "memberships": memberships.PROPOSERS,
    "skills": skills.PROPOSERS,
    "favourites": favourites.PROPOSERS,
    "hosting": hosting.PROPOSERS,
    "pets": pets.PROPOSERS,
    "outings": outings.PROPOSERS,
}


def _best(run: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--input", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    messages = user_messages(args.input)
    clauses = [(c.text, day) for content, day in messages for c in split_clauses(content)]
    per_message = 1e6 / len(messages)

    def over_clauses(proposer: Proposer) -> Callable[[], object]:
        return lambda: [proposer(text, day) for text, day in clauses]

    report: dict[str, object] = {"messages": len(messages), "clauses": len(clauses)}
    report["arm_us_per_message"] = round(
        _best(lambda: [propose(c, occurred_on=d) for c, d in messages], args.repeat) * per_message,
        1,
    )
    rules: dict[str, float] = {}
    for family, proposers in FAMILIES.items():
        for proposer in proposers:
            seconds = _best(over_clauses(proposer), args.repeat)
            rules[f"{family}.{proposer.__name__}"] = round(seconds * per_message, 2)
    report["rule_us_per_message"] = rules
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
