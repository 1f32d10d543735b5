"""``engram recall`` as a person uses it: their beliefs, then their own words, other roles on
request and labelled; JSON lines for scripts; refusals say why, with the CLI's exit codes."""

from __future__ import annotations

import json

import asyncpg
import pytest

from engram.infra.settings import KafkaSettings
from tests.e2e.test_api_recall import _seed
from tests.e2e.test_cli import engram
from tests.support.isolation import Isolated

pytestmark = pytest.mark.e2e


async def test_recall_prints_beliefs_then_own_words_and_refuses_what_it_cannot_answer(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    await _seed(isolated, kafka, pool)
    who = ("--tenant", isolated.tenant, "--principal", "ana")
    found = engram(
        isolated, "recall", "Do I live in Lisbon? What did I bring from Japan?", *who, "--json"
    )
    assert found.returncode == 0, found.stderr.decode()
    hits = [json.loads(line) for line in found.stdout.decode().splitlines()]
    assert [h["kind"] for h in hits] == ["belief", "message", "message"]
    assert hits[0]["belief"]["object"] == "Lisbon"
    assert hits[2]["content"] == "I brought a kimono back from Japan." and hits[2]["own_words"]
    assert "reflects p:" in found.stderr.decode()

    others = ("--role", "user", "--role", "assistant")
    labelled = engram(isolated, "recall", "souvenir", *who, *others, "--json")
    [said] = [json.loads(line) for line in labelled.stdout.decode().splitlines()]
    assert (said["content"], said["role"], said["own_words"]) == (
        "What a souvenir from Japan!",
        "assistant",
        False,
    )
    table = engram(isolated, "recall", "souvenir", *who, *others)
    assert table.returncode == 0 and "(assistant)" in table.stdout.decode()
    mine = engram(isolated, "recall", "souvenir", *who, "--json")
    assert mine.returncode == 0 and mine.stdout == b""  # the assistant's words: only on request

    asked = ("--asked-at", "2026-01-02T12:00:00", "--no-semantic", "--json")
    dated = engram(isolated, "recall", "yesterday", *who, *asked)
    assert dated.returncode == 0, dated.stderr.decode()
    said_then = [json.loads(line)["content"] for line in dated.stdout.decode().splitlines()]
    assert said_then == ["I live in Lisbon.", "I brought a kimono back from Japan."]

    nothing = engram(isolated, "recall", "the and of", *who)
    assert nothing.returncode == 2 and "no words to search for" in nothing.stderr.decode()
    control = engram(isolated, "recall", "Japan\x1b[2J", *who)
    assert control.returncode == 2 and "control character U+001B" in control.stderr.decode()
    unbound = engram(isolated, "recall", "Japan", *who, "--wait", "1")
    assert unbound.returncode == 2 and "--wait needs --project" in unbound.stderr.decode()
    behind = engram(isolated, "recall", "Japan", *who, "--project", "nowhere", "--wait", "0.3")
    assert behind.returncode == 1 and "not formed and indexed" in behind.stderr.decode()
