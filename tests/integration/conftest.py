"""Fixtures for the integration tests that need a database before any migration."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.support.databases import create_database, drop_database
from tests.support.isolation import new_prefix
from tests.support.services import Services


@pytest.fixture
async def unmigrated(services: Services) -> AsyncIterator[str]:
    """A new, empty database (no migration applied); dropped afterwards."""
    name = f"engram_{new_prefix()}"
    yield await create_database(services.database_url, name, migrated=False)
    await drop_database(services.database_url, name)
