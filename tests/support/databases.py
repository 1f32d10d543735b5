"""Databases of one test or one run, made next to the shared service's and dropped after."""

from __future__ import annotations

import asyncpg

from engram.projections.migrate import migrate


async def create_database(admin_url: str, name: str, *, migrated: bool = True) -> str:
    """A new database next to the one ``admin_url`` names (migrated unless told not to); its
    URL."""
    conn = await asyncpg.connect(admin_url)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    url = f"{admin_url.rpartition('/')[0]}/{name}"
    if migrated:
        conn = await asyncpg.connect(url)
        try:
            await migrate(conn)
        finally:
            await conn.close()
    return url


async def drop_database(admin_url: str, name: str) -> None:
    conn = await asyncpg.connect(admin_url)
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()
