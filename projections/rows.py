"""Writing rows of dataclasses with one statement per table, named by the dataclass's fields.

``COPY`` moves a whole chunk's rows for a table in one round trip (about twice as fast as
``executemany`` here), and naming columns from the dataclass means nobody counts dollar signs:
a new column is a new field. Updates go through a temporary staging table, filled the same way,
then one ``UPDATE … FROM``; the staging table lives for the session and is emptied after each
use (a second write to one table in a transaction must not see the first one's rows).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from operator import attrgetter
from typing import Any

import asyncpg


def columns_of(row_type: type[Any]) -> tuple[str, ...]:
    return tuple(f.name for f in fields(row_type))


def _records(rows: Sequence[Any], columns: Sequence[str]) -> list[tuple[Any, ...]]:
    if len(columns) == 1:
        get = attrgetter(columns[0])
        return [(get(row),) for row in rows]
    getter = attrgetter(*columns)
    return [getter(row) for row in rows]


async def copy_rows(
    conn: asyncpg.Connection,
    table: str,
    rows: Sequence[Any],
    *,
    columns: Sequence[str],
    skip_existing: bool = False,
) -> None:
    """Insert ``rows`` (dataclass instances) into ``table``, one column per named field.

    With ``skip_existing`` a row whose key is already there is left alone: for rows that are
    idempotent by identity, where a duplicate must not stop the projector. The rows are copied
    straight into ``table`` inside a savepoint; only if a key is taken (rare: resolution leaves
    out what it loaded) is that copy rolled back and the rows inserted through a staging table
    with ``ON CONFLICT DO NOTHING``. The staging path cost a second COPY, an ``INSERT …
    SELECT`` and a ``DELETE`` on every chunk for a duplicate that almost never comes."""
    if not rows:
        return
    records = _records(rows, columns)
    if not skip_existing:
        await conn.copy_records_to_table(table, records=records, columns=list(columns))
        return
    try:
        # Almost always nothing is there yet: copy straight in, and only when a key is taken
        # undo that copy (a savepoint) and go through the staging table.
        async with conn.transaction():
            await conn.copy_records_to_table(table, records=records, columns=list(columns))
        return
    except asyncpg.UniqueViolationError:
        pass
    stage = await _stage(conn, table, columns, suffix="insert")
    await conn.copy_records_to_table(stage, records=records, columns=list(columns))
    names = ", ".join(columns)
    await conn.execute(
        f"INSERT INTO {table} ({names}) SELECT {names} FROM {stage} ON CONFLICT DO NOTHING"
    )
    await conn.execute(f"DELETE FROM {stage}")


async def _stage(
    conn: asyncpg.Connection, table: str, columns: Sequence[str], *, suffix: str
) -> str:
    """A session-local staging table with ``columns`` typed as in ``table``, empty at commit."""
    stage = f"{table}_{suffix}_stage"
    await conn.execute(
        f"CREATE TEMP TABLE IF NOT EXISTS {stage} ON COMMIT DELETE ROWS AS "
        f"SELECT {', '.join(columns)} FROM {table} WITH NO DATA"
    )
    return stage


async def update_rows(
    conn: asyncpg.Connection,
    table: str,
    rows: Sequence[Any],
    *,
    key: str,
    columns: Sequence[str],
) -> None:
    """Set ``columns`` of the rows of ``table`` whose ``key`` matches, from ``rows``' fields.

    The staging table copies the target's column types (``LIKE`` on a column list), so the
    values are typed exactly as the target stores them.
    """
    if not rows:
        return
    stage = await _stage(conn, table, (key, *columns), suffix="update")
    await conn.copy_records_to_table(
        stage, records=_records(rows, (key, *columns)), columns=[key, *columns]
    )
    assignments = ", ".join(f"{column} = s.{column}" for column in columns)
    await conn.execute(f"UPDATE {table} t SET {assignments} FROM {stage} s WHERE t.{key} = s.{key}")
    await conn.execute(f"DELETE FROM {stage}")
