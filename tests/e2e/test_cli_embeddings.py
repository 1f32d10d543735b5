"""``engram embeddings``: an operator lists the embedding generations, activates a built one
(the previous one goes back to built), is refused a generation still building, and drops one
that is not active — against the real PostgreSQL."""

from __future__ import annotations

import json
import subprocess
import sys

import asyncpg
import pytest

from engram.projections.messages.embeddings import store
from engram.projections.messages.embeddings.generation import EmbeddingGeneration
from tests.support.isolation import REPO, Isolated

pytestmark = pytest.mark.e2e

OLD = EmbeddingGeneration("toy", 3, "plain-v1")
NEW = EmbeddingGeneration("toy", 4, "plain-v1")
BUILDING = EmbeddingGeneration("toy", 5, "plain-v1")


def engram(isolated: Isolated, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engram", "embeddings", *args],
        cwd=REPO,
        env=isolated.env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


async def test_list_activate_and_drop_switch_generations_atomically(
    isolated: Isolated, pool: asyncpg.Pool
) -> None:
    async with pool.acquire() as conn:
        for generation in (OLD, NEW, BUILDING):
            await store.register(conn, generation)
        for built in (OLD, NEW):
            await store.mark_built(conn, built.name)
        await store.activate(conn, OLD.name)

    done = engram(isolated, "activate", NEW.name)
    assert done.returncode == 0, done.stderr
    listed = engram(isolated, "list", "--json")
    status = {row["name"]: row["status"] for row in map(json.loads, listed.stdout.splitlines())}
    assert status == {OLD.name: "built", NEW.name: "active", BUILDING.name: "building"}

    refused = engram(isolated, "activate", BUILDING.name)
    assert refused.returncode != 0 and "still being built" in refused.stderr
    refused = engram(isolated, "drop", NEW.name)
    assert refused.returncode != 0 and "is active" in refused.stderr
    dropped = engram(isolated, "drop", OLD.name)
    assert dropped.returncode == 0, dropped.stderr
    async with pool.acquire() as conn:
        assert [g.name for g in await store.list_generations(conn)] == [NEW.name, BUILDING.name]
