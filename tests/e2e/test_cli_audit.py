"""The audit reads from the command line, against a real projection: pages with a cursor,
runs, refusal counts, a session's diagnosis and the user model, each as JSON."""

from __future__ import annotations

import json
from typing import Any

import asyncpg
import pytest

from engram.infra.settings import KafkaSettings
from tests.e2e.test_cli import engram
from tests.support.isolation import Isolated
from tests.support.projecting import PARKED_EPISODE, seed_audit_story

pytestmark = pytest.mark.e2e


def _lines(isolated: Isolated, *args: str) -> tuple[list[Any], str]:
    done = engram(isolated, *args, "--json")
    assert done.returncode == 0, done.stderr.decode()
    return [json.loads(line) for line in done.stdout.decode().splitlines()], done.stderr.decode()


async def test_a_person_pages_audits_and_diagnoses_from_the_cli_alone(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    t = isolated.tenant
    await seed_audit_story(kafka, pool, t)
    who = ("--tenant", t, "--principal", "ana")
    first, more = _lines(isolated, "beliefs", "list", *who, "--all", "--limit", "4")
    assert len(first) == 4 and more.startswith("more: --cursor ")
    cursor = more.split()[-1]
    rest, done = _lines(isolated, "beliefs", "list", *who, "--all", "--cursor", cursor)
    assert len(rest) == 3 and done == ""
    assert len({b["belief_id"] for b in first + rest}) == 7
    uses, _ = _lines(isolated, "beliefs", "list", *who, "--relation", "uses")
    assert sorted(b["object"] for b in uses) == ["Git", "Make", "Vim"]

    runs, _ = _lines(isolated, "runs", "list", *who)
    assert [r["source_offset"] for r in runs] == [0, 1, 2]
    [detail], _ = _lines(isolated, "runs", "show", runs[0]["run_id"], *who)
    assert [r["reason"] for r in detail["refusals"]] == ["unmapped_relation"]
    assert (
        engram(
            isolated, "runs", "show", runs[0]["run_id"], "--tenant", t, "--principal", "bo"
        ).returncode
        == 1
    )

    [summary], _ = _lines(isolated, "refusals", "summary", *who)
    assert summary["by_unmapped_relation"] == [{"key": "dreams_of", "count": 1}]
    [diagnosis], _ = _lines(isolated, "sessions", "diagnose", "s3", *who)
    assert diagnosis["parked"] == 1
    assert diagnosis["episodes"][0]["episode_id"] == str(PARKED_EPISODE)
    table = engram(isolated, "sessions", "diagnose", "s1", *who)
    assert table.returncode == 0 and "I live in Lisbon" in table.stdout.decode()
    assert "Mars" not in table.stdout.decode()
    model, _ = _lines(isolated, "user-model", *who)
    assert [(e["relation"], e["value"]) for e in model] == [("prefers", "concise answers")]
