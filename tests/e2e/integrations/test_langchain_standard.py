"""langchain-core's own standard tests of a retriever (langchain-tests at the locked version),
run against :class:`EngramRetriever` on the real services: ``k`` in the constructor and in
``invoke``, Documents from ``invoke`` and ``ainvoke``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from langchain_core.retrievers import BaseRetriever
from langchain_tests.integration_tests import RetrieversIntegrationTests
from pydantic import SecretStr

from engram.client import AsyncEngram
from engram.integrations.langchain import EngramRetriever
from tests.e2e.integrations.conftest import Stack
from tests.support.episodes import turn

pytestmark = pytest.mark.e2e

GARDEN = (
    "I grow tomatoes in my garden.",
    "My garden has an old lemon tree.",
    "I water the garden every morning before work.",
    "The garden gets full sun in the afternoon.",
)
_PARAMS: dict[str, Any] = {}


@pytest.fixture(scope="module", autouse=True)
async def garden(stack: Stack) -> AsyncIterator[None]:
    """ana's own words about her garden, formed and indexed, so recall has more than three."""
    async with AsyncEngram(stack.url, token=stack.ana) as ana:
        t = stack.isolated.tenant
        turns = [turn(t, "ana", "std", text, seq=i) for i, text in enumerate(GARDEN)]
        positions = await ana.append_turns(turns)
        await ana.wait_formed(positions[-1], timeout_s=90)
        await ana.wait_indexed(positions[-1], timeout_s=90)
    _PARAMS.update(base_url=stack.url, token=SecretStr(stack.ana), project="std")
    yield
    _PARAMS.clear()


class TestEngramRetrieverStandard(RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type[BaseRetriever]:
        return EngramRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return dict(_PARAMS)

    @property
    def retriever_query_example(self) -> str:
        return "What do I do in my garden?"
