"""The generation registry: which projections exist, under which policy, and which one is live.

A generation is a formation policy version plus its own projection — a PostgreSQL schema that
holds every per-generation table — plus its own consumer groups and claims topic. The registry
(table ``generation`` in ``public``) has exactly one live row; readers resolve it per
transaction (:mod:`generations.reading`), so promoting is one UPDATE of two rows.

The tables in ``public`` are the first generation, ``public``; it keeps the base Kafka names.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import asyncpg

from engram.infra.errors import EngramFailure

LEGACY_VERSION = "legacy"
PUBLIC = "public"


class GenerationError(EngramFailure, ValueError):
    """A generation operation that cannot be done (unknown id, dropping the live one, ...)."""

    code = "generation_refused"


@dataclass(frozen=True)
class Generation:
    generation_id: str
    schema_name: str
    policy_version: str
    policy_yaml: str | None
    tenant: str | None
    principals: tuple[str, ...]
    build: int
    status: str
    created_at: datetime
    promoted_at: datetime | None

    @property
    def is_public(self) -> bool:
        return self.schema_name == PUBLIC

    @property
    def kafka_suffix(self) -> str:
        """What its consumer groups and topics are named by: built again after a drop, it must
        not resume from the committed offsets of the build that was dropped."""
        gid = self.generation_id
        return gid if self.build == 1 else f"{gid}-b{self.build}"

    @property
    def scoped(self) -> bool:
        return self.tenant is not None or bool(self.principals)

    def serves(self, tenant: str, principal: str) -> bool:
        """A generation built for some principals (or one tenant) forms only theirs."""
        if self.tenant is not None and tenant != self.tenant:
            return False
        return not self.principals or principal in self.principals


def generation_id(
    policy_version: str, principals: Sequence[str] = (), tenant: str | None = None
) -> str:
    """Deterministic: the same policy, tenant and principals name the same generation, so
    running ``engram rederive`` again resumes it instead of starting another."""
    key = "\x1f".join([policy_version, tenant or "", *sorted(set(principals))])
    return "g" + hashlib.sha256(key.encode()).hexdigest()[:8]


def schema_for(generation: str) -> str:
    return PUBLIC if generation == PUBLIC else f"gen_{generation}"


_COLUMNS = (
    "generation_id, schema_name, policy_version, policy_yaml, tenant, principals, build, status, "
    "created_at, promoted_at"
)


def _generation(row: asyncpg.Record) -> Generation:
    values = dict(row)
    values["principals"] = tuple(values["principals"])
    return Generation(**values)


async def live_generation(db: asyncpg.Connection | asyncpg.Pool) -> Generation:
    row = await db.fetchrow(f"SELECT {_COLUMNS} FROM generation WHERE status = 'live'")
    if row is None:
        raise GenerationError("no live generation; run `engram migrate`")
    return _generation(row)


async def find_generation(db: asyncpg.Connection | asyncpg.Pool, generation: str) -> Generation:
    row = await db.fetchrow(
        f"SELECT {_COLUMNS} FROM generation WHERE generation_id = $1", generation
    )
    if row is None:
        raise GenerationError(f"no generation {generation}; `engram generations list` shows them")
    return _generation(row)


async def list_generations(db: asyncpg.Connection | asyncpg.Pool) -> list[Generation]:
    rows = await db.fetch(f"SELECT {_COLUMNS} FROM generation ORDER BY created_at, generation_id")
    return [_generation(row) for row in rows]


async def register_generation(
    db: asyncpg.Connection | asyncpg.Pool,
    *,
    policy_version: str,
    policy_yaml: str,
    principals: Sequence[str] = (),
    tenant: str | None = None,
) -> Generation:
    """The generation for this policy and these principals: created as ``building``, or the
    existing one (resumed). A dropped one is built again from nothing."""
    gid = generation_id(policy_version, principals, tenant)
    await db.execute(
        "INSERT INTO generation (generation_id, schema_name, policy_version, policy_yaml, "
        "principals, status, tenant) VALUES ($1, $2, $3, $4, $5, 'building', $6) "
        "ON CONFLICT (generation_id) DO UPDATE SET status = 'building', build = generation.build + 1 "
        "WHERE generation.status = 'dropped'",
        gid,
        schema_for(gid),
        policy_version,
        policy_yaml,
        sorted(set(principals)),
        tenant,
    )
    return await find_generation(db, gid)


async def set_status(db: asyncpg.Connection | asyncpg.Pool, generation: str, status: str) -> None:
    """Move a non-live generation between building and following (never to or from live)."""
    await db.execute(
        "UPDATE generation SET status = $2 WHERE generation_id = $1 "
        "AND status IN ('building', 'following')",
        generation,
        status,
    )


async def record_policy(
    db: asyncpg.Connection | asyncpg.Pool, generation: str, version: str, policy_yaml: str
) -> None:
    """Stamp the first policy a generation forms under (the legacy ``public`` one)."""
    await db.execute(
        "UPDATE generation SET policy_version = $2, policy_yaml = $3 "
        "WHERE generation_id = $1 AND policy_version = $4",
        generation,
        version,
        policy_yaml,
        LEGACY_VERSION,
    )


class PolicyChanged(GenerationError):
    """A worker's policy is not the one its generation forms under."""

    code = "policy_changed"


async def pin_policy(
    db: asyncpg.Connection | asyncpg.Pool, version: str, policy_yaml: str
) -> Generation:
    """The live generation, once it is known to form under ``version``.

    Within a generation every episode forms under exactly one policy (seed 003's extraction
    pins): a worker with another policy would mix old and new beliefs in one projection and
    never remove stale ones. The legacy ``public`` generation takes the first version it sees.
    """
    live = await live_generation(db)
    if live.policy_version == LEGACY_VERSION:
        await record_policy(db, live.generation_id, version, policy_yaml)
        return await live_generation(db)
    if live.policy_version != version:
        raise PolicyChanged(
            f"this worker forms under policy {version}, but the live generation "
            f"{live.generation_id} forms under {live.policy_version}; to form under the new "
            "policy run `engram rederive --policy FILE`, check `engram generations diff`, then "
            "`engram generations promote`"
        )
    return live


async def promote(conn: asyncpg.Connection, generation: str) -> Generation:
    """Make ``generation`` the live one in one transaction: the old live row becomes
    ``following`` (kept until dropped) and the new one ``live``. Readers resolve the live row
    inside their own transaction, so each sees the one before or the one after.

    A generation built for some principals (or one tenant) is promoted for them only: it becomes
    ``serving``, their readers read it, and everyone else keeps the live one (seed 000:
    re-derivation is opt-in per person). Its ``engram rederive`` keeps it following the log."""
    async with conn.transaction():
        target = await find_generation(conn, generation)
        if target.status == "dropped":
            raise GenerationError(f"generation {generation} was dropped")
        if target.status in ("live", "serving"):
            return target
        if target.scoped:
            await conn.execute(
                "UPDATE generation SET status = 'serving', promoted_at = now() "
                "WHERE generation_id = $1",
                generation,
            )
            return await find_generation(conn, generation)
        await conn.execute(
            "UPDATE generation SET status = 'following' WHERE status = 'live' "
            "AND generation_id <> $1",
            generation,
        )
        await conn.execute(
            "UPDATE generation SET status = 'live', promoted_at = now() WHERE generation_id = $1",
            generation,
        )
    return await find_generation(conn, generation)


async def drop(conn: asyncpg.Connection, generation: str) -> Generation:
    """Drop a generation's schema and mark it dropped; never the live one, never ``public``."""
    async with conn.transaction():
        target = await find_generation(conn, generation)
        if target.status == "live":
            raise GenerationError(f"generation {generation} is live; promote another first")
        if target.is_public:
            raise GenerationError("the public generation's tables are never dropped")
        await conn.execute(f'DROP SCHEMA IF EXISTS "{target.schema_name}" CASCADE')
        await conn.execute(
            "UPDATE generation SET status = 'dropped' WHERE generation_id = $1", generation
        )
    return await find_generation(conn, generation)
