"""Where a projection keeps how far it has read: its tracking rows in ``projector_offset``.

A row (projector, topic, partition, next_offset) says "every record of the partition below
``next_offset`` is in the projection". It is written in the same transaction as the rows those
records produced (migration 0001), so a projection killed at any point has both or neither —
eventsourcing's tracking record, kept per partition. ``next_offset`` only ever moves forward.

The belief projector and the message index keep theirs in the generation's schema (the pool's
``search_path``); the vectors, shared by every generation, in ``public``.
"""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg


@dataclass(frozen=True)
class Tracking:
    """A projection's tracking rows: ``projector`` names it in ``table``."""

    projector: str
    table: str = "projector_offset"

    async def stored_offsets(
        self, db: asyncpg.Pool | asyncpg.Connection, topic: str
    ) -> dict[int, int]:
        """The stored offset of each partition of ``topic`` that has one."""
        rows = await db.fetch(
            f"SELECT partition, next_offset FROM {self.table} WHERE projector = $1 AND topic = $2",
            self.projector,
            topic,
        )
        return {row["partition"]: row["next_offset"] for row in rows}

    async def stored(
        self, conn: asyncpg.Connection, topic: str, partition: int, *, lock: bool = False
    ) -> int | None:
        """One partition's stored offset (None: nothing stored); with ``lock``, its row is
        locked to the end of the transaction (a row not there yet is not)."""
        return await conn.fetchval(  # type: ignore[no-any-return]
            f"SELECT next_offset FROM {self.table} "
            f"WHERE projector = $1 AND topic = $2 AND partition = $3{' FOR UPDATE' if lock else ''}",
            self.projector,
            topic,
            partition,
        )

    async def claim(self, conn: asyncpg.Connection, topic: str, partition: int) -> int | None:
        """Lock one partition's row for this transaction, creating it if need be, and return
        what it stored (None: nothing yet). A second writer of the same partition (a follower
        a rebalance has not yet stopped, a rival process) waits here until this one commits,
        and then reads the offset it stored: so it skips what this one wrote."""
        stored: int = await conn.fetchval(
            f"INSERT INTO {self.table} AS o (projector, topic, partition, next_offset) "
            "VALUES ($1, $2, $3, 0) ON CONFLICT (projector, topic, partition) "
            "DO UPDATE SET next_offset = o.next_offset RETURNING o.next_offset",
            self.projector,
            topic,
            partition,
        )
        return stored or None

    async def advance(
        self, conn: asyncpg.Connection, topic: str, partition: int, next_offset: int
    ) -> None:
        """Move one partition's stored offset forward to ``next_offset`` (never back)."""
        await conn.execute(
            f"INSERT INTO {self.table} AS o (projector, topic, partition, next_offset) "
            "VALUES ($1, $2, $3, $4) ON CONFLICT (projector, topic, partition) "
            "DO UPDATE SET next_offset = GREATEST(o.next_offset, EXCLUDED.next_offset)",
            self.projector,
            topic,
            partition,
            next_offset,
        )
