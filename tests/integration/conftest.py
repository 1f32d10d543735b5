"""Fixtures for the integration tests that need a database before any migration."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest

from tests.support.isolation import new_prefix
from tests.support.services import Services


@pytest.fixture
async def unmigrated(services: Services) -> AsyncIterator[str]:
    """A new, empty database (no migration applied); dropped afterwards."""
    name = f"engram_{new_prefix()}"
    admin = await asyncpg.connect(services.database_url)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        yield services.database_url.rpartition("/")[0] + f"/{name}"
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()
