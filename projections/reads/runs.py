"""Formation runs, as the projection recorded them: one consolidation per episode, with its
policy, its source position, its counts, and what became of its episode in the backlog.

Every read is scoped by tenant and principal; a run of another principal is not found.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

import asyncpg
import orjson

from engram.formation.wording import Person, readable_refusal
from engram.projections.reads.freshness import freshness
from engram.projections.reads.keyset import keyset_page, scoped
from engram.schemas.api import (
    BeliefBrief,
    EpisodeProgress,
    RefusalView,
    RunCounts,
    RunDetail,
    RunPage,
    RunView,
)

CURSOR_KIND = "runs"
_COUNTS = tuple(RunCounts.model_fields)
PROGRESS_COLUMNS = (
    "bl.state, bl.attempts, bl.failure_kind, bl.appended_at, bl.formed_at, bl.parked_at"
)
"""A backlog row as :func:`progress_of` reads it (``bl``); metadata only."""
REFUSAL_COLUMNS = (
    "refusal_id, principal, episode_id, message_ordinal, role, relation, statement, quote, "
    "reason, detail, extractor, policy_version, occurred_at"
)


def refusal_view(row: asyncpg.Record) -> RefusalView:
    """A refusal row (:data:`REFUSAL_COLUMNS`) as the API shows it, with its words as the
    principal's reader would say them (:func:`formation.wording.readable_refusal`)."""
    fields = dict(row)
    principal = fields.pop("principal")
    readable = readable_refusal(fields["statement"], fields["relation"], Person(principal))
    return RefusalView.model_validate({**fields, "readable": readable})


def run_view(row: asyncpg.Record) -> RunView:
    return RunView(
        run_id=row["run_id"],
        project=row["project"],
        session=row["session"],
        episode_id=row["episode_id"],
        trigger=row["trigger"],
        scope=row["scope"],
        policy_version=row["policy_version"],
        source_topic=row["source_topic"],
        source_partition=row["source_partition"],
        source_offset=row["source_offset"],
        occurred_at=row["occurred_at"],
        counts=run_counts(row),
        refusal_reasons=orjson.loads(row["refusal_reasons"]),
    )


def run_counts(row: asyncpg.Record) -> RunCounts:
    return RunCounts(**{name: row[name] for name in _COUNTS})


def progress_of(row: asyncpg.Record) -> EpisodeProgress | None:
    """The backlog columns of a joined row, or None where the episode has no backlog entry
    (projected from claims alone, or in a generation that skipped it)."""
    if row["state"] is None:
        return None
    return EpisodeProgress(
        state=row["state"],
        attempts=row["attempts"],
        failure_kind=row["failure_kind"],
        appended_at=row["appended_at"],
        formed_at=row["formed_at"],
        parked_at=row["parked_at"],
    )


@dataclass(frozen=True)
class RunFilter:
    project: str | None = None
    session: str | None = None
    trigger: str | None = None
    since: datetime | None = None


def _run_condition(chosen: RunFilter, args: list[object]) -> str:
    filters = (
        ("r.project =", chosen.project),
        ("r.session =", chosen.session),
        ("r.trigger =", chosen.trigger),
        ("r.occurred_at >=", chosen.since),
    )
    return scoped(("r.tenant = $1", "r.principal = $2"), filters, args)


async def page_runs(
    conn: asyncpg.Connection | asyncpg.Pool,
    *,
    tenant: str,
    principal: str,
    chosen: RunFilter,
    limit: int,
    cursor: str | None = None,
) -> RunPage:
    """The principal's runs in event-time order, ``limit`` at a time."""
    args: list[object] = [tenant, principal]
    items, next_cursor = await keyset_page(
        conn,
        kind=CURSOR_KIND,
        select="SELECT r.* FROM consolidation_run r",
        order=("r.occurred_at", "r.run_id"),
        condition=_run_condition(chosen, args),
        args=args,
        limit=limit,
        cursor=cursor,
        view=run_view,
        key=lambda run: (run.occurred_at, run.run_id),
    )
    return RunPage(items=items, next_cursor=next_cursor)


async def get_run(
    conn: asyncpg.Connection | asyncpg.Pool, *, tenant: str, principal: str, run_id: uuid.UUID
) -> RunView | None:
    row = await conn.fetchrow(
        "SELECT * FROM consolidation_run WHERE run_id = $1 AND tenant = $2 AND principal = $3",
        run_id,
        tenant,
        principal,
    )
    return None if row is None else run_view(row)


async def run_detail(
    conn: asyncpg.Connection | asyncpg.Pool, *, tenant: str, principal: str, run_id: uuid.UUID
) -> RunDetail | None:
    """A run with its beliefs, refusals, its episode's progress and its project's watermark;
    None when the principal has no such run."""
    row = await conn.fetchrow(
        f"SELECT r.*, {PROGRESS_COLUMNS} FROM consolidation_run r "
        'LEFT JOIN formation_backlog bl ON (bl.topic, bl.partition, bl."offset") '
        "= (r.source_topic, r.source_partition, r.source_offset) "
        "WHERE r.run_id = $1 AND r.tenant = $2 AND r.principal = $3",
        run_id,
        tenant,
        principal,
    )
    if row is None:
        return None
    cited = await conn.fetch(
        "SELECT DISTINCT b.belief_id, b.statement, b.relation, b.status, b.confidence, "
        "b.formation_run = $1 AS formed FROM evidence e JOIN belief b USING (belief_id) "
        "WHERE e.episode_id = $2 AND e.run_id = $1 AND b.tenant = $3 AND b.principal = $4 "
        "ORDER BY b.belief_id",
        run_id,
        row["episode_id"],
        tenant,
        principal,
    )
    refusals = await conn.fetch(
        f"SELECT {REFUSAL_COLUMNS} FROM refusal WHERE run_id = $1 AND tenant = $2 "
        "AND principal = $3 ORDER BY message_ordinal, refusal_id",
        run_id,
        tenant,
        principal,
    )
    briefs = [(r["formed"], _brief(r)) for r in cited]
    return RunDetail(
        run=run_view(row),
        progress=progress_of(row),
        formed=[b for formed, b in briefs if formed],
        reinforced=[b for formed, b in briefs if not formed],
        refusals=[refusal_view(r) for r in refusals],
        freshness=await freshness(conn, tenant=tenant, project=row["project"]),
    )


def _brief(row: asyncpg.Record) -> BeliefBrief:
    return BeliefBrief(
        belief_id=row["belief_id"],
        statement=row["statement"],
        relation=row["relation"],
        status=row["status"],
        confidence=round(float(row["confidence"]), 4),
    )
