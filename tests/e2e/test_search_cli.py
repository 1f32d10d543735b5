"""``engram beliefs search`` as a person uses it: their own beliefs, best first, with the words
behind each; JSON lines for scripts; a query with nothing to search for says so."""

from __future__ import annotations

import json

import asyncpg
import pytest

from engram.infra.settings import KafkaSettings
from tests.e2e.test_cli import engram
from tests.support.isolation import Isolated
from tests.support.projecting import seed_two_principals

pytestmark = pytest.mark.e2e


async def test_search_prints_the_principals_hits_with_quotes_and_refuses_an_empty_query(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    t = isolated.tenant
    await seed_two_principals(kafka, pool, t)
    who = ("--tenant", t, "--principal", "ana")
    found = engram(isolated, "beliefs", "search", "where do I live? Lisbon", *who, "--json")
    assert found.returncode == 0, found.stderr.decode()
    [hit] = [json.loads(line) for line in found.stdout.decode().splitlines()]
    assert hit["belief"]["object"] == "Lisbon" and hit["score"] > 0
    assert [e["quote"] for e in hit["belief"]["evidence"]] == ["I live in Lisbon"]

    table = engram(isolated, "beliefs", "search", "Lisbon", *who)
    assert table.returncode == 0 and "I live in Lisbon" in table.stdout.decode()
    theirs = engram(isolated, "beliefs", "search", "Cork", *who, "--json")
    assert theirs.returncode == 0 and theirs.stdout == b""

    nothing = engram(isolated, "beliefs", "search", "the and of", *who)
    assert nothing.returncode == 2 and "no words to search for" in nothing.stderr.decode()
