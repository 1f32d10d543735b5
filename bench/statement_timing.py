"""Where PostgreSQL's time goes: wall time, round trips and rows of each statement a run sends.

Wraps asyncpg's ``Connection`` methods for the length of a ``with`` block (instrumentation of
the real driver, nothing faked): every ``execute``/``fetch``/``fetchval``/``fetchrow``/
``copy_records_to_table`` (``BEGIN`` and ``COMMIT`` included: asyncpg sends them through
``execute``) is timed from the caller's side, so
the figure includes the round trip and the client's encoding and decoding. Statements are
grouped by a label (the table of a ``COPY``, else the statement's first words), which is what a
"where PostgreSQL's time goes" table reads.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from asyncpg.connection import Connection

_METHODS = ("execute", "fetch", "fetchval", "fetchrow", "copy_records_to_table")


@dataclass
class Tally:
    calls: int = 0
    seconds: float = 0.0
    rows: int = 0


def label_of(method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """A short name for a statement: ``COPY <table>``, or its SQL's first distinctive words."""
    if method == "copy_records_to_table":
        return f"COPY {args[0] if args else kwargs.get('table_name')}"
    sql = " ".join(str(args[0] if args else kwargs.get("query", "")).split())
    sql = re.sub(r"^WITH k AS \(.*?\) ", "WITH k … ", sql)
    sql = re.sub(r"__asyncpg_savepoint_\w+__", "…", sql)  # one label, not one per savepoint
    for pattern in (
        r"^(INSERT INTO \w+)",
        r"^(UPDATE \w+)",
        r"^(DELETE FROM \w+)",
        r"^(CREATE TEMP TABLE IF NOT EXISTS \w+)",
        r"^(SELECT .{0,40}?FROM \w+)",
    ):
        found = re.match(pattern, sql)
        if found:
            return found.group(1)
    return sql[:60]


def _rows_of(method: str, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> int:
    if method == "copy_records_to_table":
        records = kwargs.get("records")
        return len(records) if isinstance(records, list) else 0
    if method == "fetch":
        return len(result)
    if method == "execute" and isinstance(result, str):
        tail = result.rsplit(" ", 1)[-1]
        return int(tail) if tail.isdigit() else 0
    return 1 if result is not None else 0


@contextmanager
def timed_statements() -> Iterator[dict[str, Tally]]:
    """Tally every statement sent while the block runs; the dict fills as it goes."""
    tallies: dict[str, Tally] = {}
    originals = {name: getattr(Connection, name) for name in _METHODS}

    def wrap(method: str) -> Any:
        original = originals[method]

        async def timed(self: Connection, *args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            result = await original(self, *args, **kwargs)
            tally = tallies.setdefault(label_of(method, args, kwargs), Tally())
            tally.calls += 1
            tally.seconds += time.perf_counter() - started
            tally.rows += _rows_of(method, args, kwargs, result)
            return result

        return timed

    for name in _METHODS:
        setattr(Connection, name, wrap(name))
    try:
        yield tallies
    finally:
        for name, original in originals.items():
            setattr(Connection, name, original)


def report(tallies: dict[str, Tally], chunks: int) -> list[dict[str, object]]:
    """Each label's totals and per-chunk figures, the costliest first."""
    per = max(chunks, 1)
    return [
        {
            "statement": label,
            "calls_per_chunk": round(t.calls / per, 2),
            "rows_per_chunk": round(t.rows / per, 1),
            "ms_per_chunk": round(t.seconds * 1000 / per, 2),
            "total_s": round(t.seconds, 3),
        }
        for label, t in sorted(tallies.items(), key=lambda kv: -kv[1].seconds)
    ]
