"""One Engram for a module of adapter tests: its own database and topics, the API and a worker
as real ``engram`` subprocesses, and a token each for ana and bo (tests keep to their own
projects, so they share it safely)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import asyncpg
import pytest

from engram.service.tokens import create_token
from tests.support.databases import create_database, drop_database
from tests.support.http import first_ok, free_port
from tests.support.isolation import (
    Isolated,
    delete_topics,
    new_prefix,
    running_engram,
    running_worker,
)
from tests.support.services import Services


@dataclass(frozen=True)
class Stack:
    url: str
    ana: str
    """ana's token"""
    bo: str
    """bo's token"""
    isolated: Isolated


@pytest.fixture(scope="module")
async def stack(
    services: Services, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Stack]:
    name = f"engram_{new_prefix()}"
    database = await create_database(services.database_url, name)
    isolated = Isolated(new_prefix(), services.bootstrap, database)
    pool = await asyncpg.create_pool(database, min_size=1, max_size=2)
    assert pool is not None
    try:
        _, ana = await create_token(pool, tenant=isolated.tenant, principal="ana")
        _, bo = await create_token(pool, tenant=isolated.tenant, principal="bo")
        port = free_port()
        logs = tmp_path_factory.mktemp("stack")
        env = {**isolated.env(), "ENGRAM_API_PORT": str(port)}
        with (
            running_engram(isolated, "api", log_path=logs / "api.log", env=env),
            running_worker(isolated, log_path=logs / "worker.log"),
        ):
            url = f"http://127.0.0.1:{port}"
            await first_ok(f"{url}/healthz")
            yield Stack(url=url, ana=ana, bo=bo, isolated=isolated)
    finally:
        await pool.close()
        await drop_database(services.database_url, name)
        await delete_topics(services.bootstrap, isolated.prefix)
