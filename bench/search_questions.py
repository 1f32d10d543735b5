"""Search asked real questions: how many return anything, and how often the top ten hold a
belief cited by an evidence message of the answer — mode ``all`` (web-search syntax, every word
must match: the behaviour before issue 28) next to mode ``any`` (questions), in one run.

The beliefs are the deterministic arm's, formed in process from real conversations exactly as
``engram eval coverage`` forms them (:func:`policies.behaviour.form`, the policy in force) and
written by the projector's own store (:func:`engram.projections.beliefs.store.project_records`) into a
fresh, migrated database on the real PostgreSQL; every question is then asked through
:func:`engram.projections.reads.search.search_beliefs` inside :func:`generations.reading.reading`, the code
``GET /v1/search`` runs. The database is dropped at the end.

``ceiling`` counts the questions where some current belief of the principal cites an evidence
message at all: no search can do better than that with these beliefs. Recall is reported over
all questions and over that ceiling.

    .venv/bin/python -m bench.search_questions \\
        --turns /work/shared/data/locomo-dev.jsonl --qa /work/shared/data/locomo-dev-qa.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg
import orjson

from engram.evaluation.recall import scratch_database
from engram.generations.reading import reading
from engram.infra.settings import load_settings
from engram.ingest.jsonl import read_episodes
from engram.policies.behaviour import form
from engram.policies.in_force import default_policy
from engram.projections.beliefs.store import ClaimsRecord, project_records
from engram.projections.reads.search import UnsearchableQuery, search_beliefs
from engram.schemas.api import SearchMode

TOPIC = "bench.claims"
CHUNK = 200
TOP = 10


@dataclass(frozen=True, slots=True)
class Question:
    tenant: str
    principal: str
    text: str
    category: int
    evidence: frozenset[str]


@dataclass(slots=True)
class Tally:
    asked: int = 0
    answered: int = 0
    """Questions that returned at least one hit."""
    recalled: int = 0
    """Questions with a hit in the top ten cited by an evidence message."""
    unsearchable: int = 0
    recalled_in_ceiling: int = 0

    def to_dict(self, ceiling: int) -> dict[str, object]:
        def share(part: int, whole: int) -> float:
            return round(part / whole, 4) if whole else 0.0

        return {
            "asked": self.asked,
            "answered": self.answered,
            "answered_share": share(self.answered, self.asked),
            "unsearchable": self.unsearchable,
            f"recall_at_{TOP}": share(self.recalled, self.asked),
            f"recall_at_{TOP}_in_ceiling": share(self.recalled_in_ceiling, ceiling),
            "recalled": self.recalled,
        }


@dataclass(slots=True)
class Report:
    questions: int = 0
    ceiling: int = 0
    beliefs: int = 0
    modes: dict[str, Tally] = field(default_factory=dict)


def load_questions(path: Path) -> list[Question]:
    questions = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = orjson.loads(line)
            questions.append(
                Question(
                    tenant=str(row["tenant"]),
                    principal=str(row["principal"]),
                    text=str(row["question"]),
                    category=int(row["category"]),
                    evidence=frozenset(str(e) for e in row["evidence_event_ids"]),
                )
            )
    return questions


async def project_turns(conn: asyncpg.Connection, turns: Path) -> int:
    """Every episode formed with the deterministic arm and projected in offset order; how many
    batches."""
    policy = default_policy()
    records = [
        ClaimsRecord(form(episode, policy, offset), offset)
        for offset, episode in enumerate(read_episodes(turns))
    ]
    for start in range(0, len(records), CHUNK):
        chunk = records[start : start + CHUNK]
        await project_records(conn, chunk, topic=TOPIC, partition=0, read_through=chunk[-1].offset)
    return len(records)


async def cited_events(pool: asyncpg.Pool) -> dict[tuple[str, str], set[str]]:
    """Per principal, the episodes cited by evidence of a current belief."""
    rows = await pool.fetch(
        "SELECT DISTINCT b.tenant, b.principal, e.episode_id::text AS episode "
        "FROM belief b JOIN evidence e ON e.belief_id = b.belief_id "
        "WHERE b.status IN ('active', 'provisional')"
    )
    cited: dict[tuple[str, str], set[str]] = {}
    for row in rows:
        cited.setdefault((row["tenant"], row["principal"]), set()).add(row["episode"])
    return cited


async def ask(pool: asyncpg.Pool, question: Question, mode: SearchMode) -> list[set[str]] | None:
    """The top hits' cited episodes, or None when the query has nothing to search for."""
    who = (question.tenant, question.principal)
    async with reading(pool, principal=who) as conn:
        try:
            found = await search_beliefs(
                conn,
                tenant=question.tenant,
                principal=question.principal,
                query=question.text,
                mode=mode,
                limit=TOP,
            )
        except UnsearchableQuery:
            return None
    return [{str(e.episode_id) for e in hit.belief.evidence} for hit in found.hits]


async def measure(pool: asyncpg.Pool, questions: Iterable[Question]) -> Report:
    cited = await cited_events(pool)
    report = Report(modes={mode.value: Tally() for mode in SearchMode})
    report.beliefs = await pool.fetchval(
        "SELECT count(*) FROM belief WHERE status IN ('active', 'provisional')"
    )
    for question in questions:
        report.questions += 1
        reachable = bool(
            question.evidence & cited.get((question.tenant, question.principal), set())
        )
        report.ceiling += reachable
        for mode in SearchMode:
            tally = report.modes[mode.value]
            tally.asked += 1
            hits = await ask(pool, question, mode)
            if hits is None:
                tally.unsearchable += 1
                continue
            tally.answered += bool(hits)
            if any(episodes & question.evidence for episodes in hits):
                tally.recalled += 1
                tally.recalled_in_ceiling += reachable
    return report


async def main(turns: Path, qa: Path) -> dict[str, object]:
    admin = load_settings().database.url.get_secret_value()
    async with scratch_database(admin, "searchq_") as url:
        conn = await asyncpg.connect(url)
        try:
            batches = await project_turns(conn, turns)
            await conn.execute("ANALYZE")
        finally:
            await conn.close()
        pool = await asyncpg.create_pool(url, min_size=1, max_size=2)
        try:
            report = await measure(pool, load_questions(qa))
        finally:
            await pool.close()
    return {
        "turns": str(turns),
        "batches": batches,
        "current_beliefs": report.beliefs,
        "questions": report.questions,
        "ceiling": report.ceiling,
        "modes": {mode: tally.to_dict(report.ceiling) for mode, tally in report.modes.items()},
    }


if __name__ == "__main__":
    from engram.infra.logs import configure_logging

    configure_logging("warning")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=Path, required=True)
    parser.add_argument("--qa", type=Path, required=True)
    args = parser.parse_args()
    result = asyncio.run(main(args.turns, args.qa))
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
