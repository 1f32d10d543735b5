"""One paged list, read by keyset: the principal's rows under some filters, ``limit`` at a time
in (event time, id) order, with the cursor of the next page (:mod:`engram.projections.reads.cursor`).
The refusals and the runs are read this way."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import TypeVar

import asyncpg

from engram.projections.reads.cursor import decode_cursor, encode_cursor

V = TypeVar("V")


def scoped(scope: Iterable[str], filters: Iterable[tuple[str, object]], args: list[object]) -> str:
    """The SQL condition: the ``scope`` conditions (on ``$1``, ``$2``, ... already in ``args``),
    then each filter whose value is set, as ``column op $n`` with the value appended to
    ``args``."""
    conditions = list(scope)
    for column, value in filters:
        if value is not None:
            args.append(value)
            conditions.append(f"{column} ${len(args)}")
    return " AND ".join(conditions)


async def keyset_page(
    conn: asyncpg.Connection | asyncpg.Pool,
    *,
    kind: str,
    select: str,
    order: tuple[str, str],
    condition: str,
    args: list[object],
    limit: int,
    cursor: str | None,
    view: Callable[[asyncpg.Record], V],
    key: Callable[[V], tuple[datetime, uuid.UUID]],
) -> tuple[list[V], str | None]:
    """Up to ``limit`` rows of ``select ... WHERE condition`` after ``cursor`` (a cursor of list
    ``kind``), in ``order`` (an event time column, then an id column), as ``view`` shows them;
    and the cursor past the last, made of its ``key``, when more rows follow."""
    time, ident = order
    if cursor is not None:
        args += list(decode_cursor(kind, cursor))
        condition += f" AND ({time}, {ident}) > (${len(args) - 1}, ${len(args)})"
    rows = await conn.fetch(
        f"{select} WHERE {condition} ORDER BY {time}, {ident} LIMIT {int(limit) + 1}",
        *args,
    )
    items = [view(row) for row in rows[:limit]]
    last = items[-1] if len(rows) > limit else None
    return items, None if last is None else encode_cursor(kind, *key(last))
