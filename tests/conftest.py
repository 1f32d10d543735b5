"""Shared fixtures. Integration fixtures find real services and isolate each test."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest

from engram.infra.settings import KafkaSettings
from tests.support.databases import create_database, drop_database
from tests.support.isolation import Isolated, delete_topics, new_prefix
from tests.support.services import Services, find_services

pytest_plugins = ["tests.fakes.fixtures"]


@pytest.fixture(scope="session")
def services() -> Services:
    try:
        return find_services()
    except RuntimeError as error:
        pytest.fail(str(error), pytrace=False)


@pytest.fixture
async def fresh_database(services: Services) -> AsyncIterator[str]:
    """A new, migrated database for one test; dropped afterwards."""
    name = f"engram_{new_prefix()}"
    yield await create_database(services.database_url, name)
    await drop_database(services.database_url, name)


@pytest.fixture
async def isolated(services: Services, fresh_database: str) -> AsyncIterator[Isolated]:
    """One test's names; its topics are deleted afterwards so the dev broker does not grow."""
    names = Isolated(new_prefix(), services.bootstrap, fresh_database)
    yield names
    await delete_topics(services.bootstrap, names.prefix)


@pytest.fixture
async def kafka(isolated: Isolated) -> KafkaSettings:
    """This test's Kafka settings, one partition per topic, with the topics created."""
    from engram.ingest.topics import ensure_topics

    settings = isolated.kafka(partitions=1)
    await ensure_topics(settings)
    return settings


@pytest.fixture
async def pool(fresh_database: str) -> AsyncIterator[asyncpg.Pool]:
    created = await asyncpg.create_pool(fresh_database, min_size=1, max_size=4)
    assert created is not None
    yield created
    await created.close()
