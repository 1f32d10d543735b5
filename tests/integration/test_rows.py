"""Set-based row writes (``projections/rows.py``) against real PostgreSQL: an idempotent insert
copies straight in, and a key already taken leaves that row alone without failing the
transaction it runs in."""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg
import pytest

from engram.projections.rows import columns_of, copy_rows, update_rows

pytestmark = pytest.mark.integration


@dataclass
class Item:
    item_id: int
    label: str


_COLUMNS = columns_of(Item)


async def _table(conn: asyncpg.Connection) -> None:
    await conn.execute("CREATE TEMP TABLE item (item_id int PRIMARY KEY, label text NOT NULL)")


async def _contents(conn: asyncpg.Connection) -> list[tuple[int, str]]:
    return [(r["item_id"], r["label"]) for r in await conn.fetch("SELECT * FROM item ORDER BY 1")]


async def test_rows_with_new_keys_are_all_inserted(pool: asyncpg.Pool) -> None:
    async with pool.acquire() as conn:
        await _table(conn)
        async with conn.transaction():
            await copy_rows(
                conn, "item", [Item(1, "a"), Item(2, "b")], columns=_COLUMNS, skip_existing=True
            )
        assert await _contents(conn) == [(1, "a"), (2, "b")]


async def test_a_taken_key_keeps_its_row_and_the_transaction_goes_on(pool: asyncpg.Pool) -> None:
    async with pool.acquire() as conn:
        await _table(conn)
        await conn.execute("INSERT INTO item VALUES (2, 'kept')")
        async with conn.transaction():
            await copy_rows(
                conn,
                "item",
                [Item(1, "a"), Item(2, "replaced?"), Item(3, "c"), Item(3, "c again")],
                columns=_COLUMNS,
                skip_existing=True,
            )
            # The transaction is still usable after the failed direct copy was rolled back.
            await copy_rows(conn, "item", [Item(4, "d")], columns=_COLUMNS, skip_existing=True)
        assert await _contents(conn) == [(1, "a"), (2, "kept"), (3, "c"), (4, "d")]


async def test_without_skip_existing_a_taken_key_fails_the_write(pool: asyncpg.Pool) -> None:
    async with pool.acquire() as conn:
        await _table(conn)
        await conn.execute("INSERT INTO item VALUES (1, 'there')")
        with pytest.raises(asyncpg.UniqueViolationError):
            async with conn.transaction():
                await copy_rows(conn, "item", [Item(1, "again")], columns=_COLUMNS)
        assert await _contents(conn) == [(1, "there")]


async def test_updates_set_the_named_columns_of_matching_keys(pool: asyncpg.Pool) -> None:
    async with pool.acquire() as conn:
        await _table(conn)
        await conn.execute("INSERT INTO item VALUES (1, 'a'), (2, 'b')")
        async with conn.transaction():
            await update_rows(conn, "item", [Item(2, "B")], key="item_id", columns=("label",))
        assert await _contents(conn) == [(1, "a"), (2, "B")]
