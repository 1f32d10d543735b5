"""Pytest fixtures for the fakes. Register them from ``tests/conftest.py`` with
``pytest_plugins = ["tests.fakes.fixtures"]``."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from tests.fakes.openai_server import FakeOpenAIServer


@pytest_asyncio.fixture
async def openai_server() -> AsyncIterator[FakeOpenAIServer]:
    """A started local OpenAI-compatible server with no script: enqueue replies or set one."""
    async with FakeOpenAIServer() as server:
        yield server
