"""Connecting to PostgreSQL: one pool per process, built from settings."""

from __future__ import annotations

import asyncpg

from engram.settings import DatabaseSettings


async def create_pool(settings: DatabaseSettings) -> asyncpg.Pool:
    pool = await asyncpg.create_pool(
        settings.url.get_secret_value(), min_size=1, max_size=settings.pool_max
    )
    if pool is None:  # pragma: no cover - asyncpg only returns None when told not to connect
        raise RuntimeError("could not create a PostgreSQL connection pool")
    return pool


async def connect(settings: DatabaseSettings) -> asyncpg.Connection:
    return await asyncpg.connect(settings.url.get_secret_value())
