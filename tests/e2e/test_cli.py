"""The command line as an operator uses it, against the real services."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import asyncpg
import pytest

from engram.infra.settings import KafkaSettings
from engram.projections.beliefs.digest import projection_digest
from tests.support.episodes import turn
from tests.support.isolation import REPO, Isolated, running_worker
from tests.support.projecting import batch_of, claim, project_all, seed_two_principals

pytestmark = pytest.mark.e2e


def engram(
    isolated: Isolated, *args: str, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "engram", *args],
        cwd=REPO,
        env=isolated.env(),
        input=stdin,
        capture_output=True,
        timeout=180,
        check=False,
    )


def _episode(tenant: str, seq: int, content: str) -> dict[str, object]:
    return {
        "schema_version": 1,
        "type": "turn.appended",
        "event_id": f"00000000-0000-4000-8000-{seq:012d}",
        "tenant": tenant,
        "principal": "ana",
        "project": "cli",
        "session": "s1",
        "occurred_at": f"2026-11-0{seq + 1}T10:00:00Z",
        "messages": [{"ordinal": 0, "role": "user", "content": content}],
    }


def test_ingest_wait_then_beliefs_freshness_and_dead_letters(
    isolated: Isolated, tmp_path: Path
) -> None:
    t = isolated.tenant
    turns = tmp_path / "turns.jsonl"
    turns.write_text(
        "\n".join(
            json.dumps(_episode(t, i, text))
            for i, text in enumerate(["I live in Lisbon.", "I moved to Porto."])
        )
        + "\n"
    )
    with running_worker(isolated, log_path=tmp_path / "worker.log"):
        ingested = engram(isolated, "ingest", str(turns), "--wait", "--timeout", "90")
        assert ingested.returncode == 0, ingested.stderr.decode()
    listed = engram(isolated, "beliefs", "list", "--tenant", t, "--principal", "ana", "--json")
    beliefs = [json.loads(line) for line in listed.stdout.decode().splitlines()]
    assert [b["object"] for b in beliefs] == ["Porto"]
    everything = engram(
        isolated, "beliefs", "list", "--tenant", t, "--principal", "ana", "--all", "--json"
    )
    statuses = sorted(
        json.loads(line)["status"] for line in everything.stdout.decode().splitlines()
    )
    assert statuses == ["active", "superseded"]
    as_of = engram(
        isolated,
        "beliefs",
        "list",
        "--tenant",
        t,
        "--principal",
        "ana",
        "--as-of",
        "2026-11-01T12:00:00+00:00",
        "--json",
    )
    assert [json.loads(line)["object"] for line in as_of.stdout.decode().splitlines()] == ["Lisbon"]
    for floor, expected in (("0.3", ["Porto"]), ("0.9", [])):
        confident = engram(
            isolated, "beliefs", "list", "--tenant", t, "--principal", "ana",
            "--min-confidence", floor, "--json",
        )  # fmt: skip
        lines = confident.stdout.decode().splitlines()
        assert [json.loads(line)["object"] for line in lines] == expected

    fresh = engram(isolated, "freshness", "--tenant", t, "--project", "cli", "--json")
    report = json.loads(fresh.stdout)
    assert report["formed_offset"] == report["log_offset"] and report["parked"] == 0
    assert report["policy_version"].startswith("formation@")
    parked = engram(isolated, "formation", "parked", "--tenant", t, "--project", "cli", "--json")
    assert parked.returncode == 0 and parked.stdout == b""
    dlq = engram(isolated, "dlq", "list", "--json")
    assert dlq.returncode == 0 and dlq.stdout == b""


def test_a_malformed_file_is_refused_whole_naming_the_line(
    isolated: Isolated, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(_episode(isolated.tenant, 0, "ok")) + '\n{"type": "turn.appended"}\n')
    result = engram(isolated, "ingest", str(bad))
    assert result.returncode == 2
    assert "bad.jsonl:2" in result.stderr.decode()


def test_extract_needs_no_services(isolated: Isolated) -> None:
    line = json.dumps(
        _episode("acme", 0, "My name is Zoë and I live in Zürich. Maybe I'll learn Go.")
    )
    result = engram(isolated, "extract", stdin=line.encode() + b"\n")
    assert result.returncode == 0
    records = [json.loads(x) for x in result.stdout.decode().splitlines()]
    candidates = [r for r in records if r["kind"] == "candidate"]
    assert {(c["relation"], c["object"]["text"]) for c in candidates} == {
        ("has_name", "Zoë"),
        ("lives_in", "Zürich"),
    }
    content = "My name is Zoë and I live in Zürich. Maybe I'll learn Go.".encode()
    for c in candidates:
        assert content[c["span_start"] : c["span_end"]].decode() == c["quote"]


async def test_digest_prints_the_projection_digest_the_determinism_tests_compare(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    t = isolated.tenant
    episode = turn(t, "ana", "p", "I live in Lisbon.", seq=0)
    await project_all(
        kafka, pool, [batch_of(episode, claim("I", "lives_in", "Lisbon", "I live in Lisbon"))]
    )
    printed = engram(isolated, "digest", "--tenant", t, "--json")
    assert printed.returncode == 0, printed.stderr.decode()
    assert json.loads(printed.stdout) == {
        "tenant": t,
        "generation": None,
        "digest": await projection_digest(pool, tenant=t),
    }
    unknown = engram(isolated, "digest", "--generation", "nope")
    assert unknown.returncode == 2 and b"no generation nope" in unknown.stderr


async def test_a_correction_that_cannot_apply_names_the_cli_flag(
    isolated: Isolated, kafka: KafkaSettings, pool: asyncpg.Pool
) -> None:
    t = isolated.tenant
    await seed_two_principals(kafka, pool, t)
    belief = await pool.fetchval(
        "SELECT belief_id FROM belief WHERE tenant = $1 AND principal = 'ana'", t
    )
    common = ("beliefs", "reject", str(belief), "--principal", "ana", "--tenant", t)
    refused = engram(isolated, *common, "--kind", "changed")
    assert refused.returncode == 2, refused.stderr.decode()
    said = " ".join(refused.stderr.decode().split())
    assert "needs the new value in --replacement" in said and "`replacement`" not in said


def test_the_demo_conversation_lists_statements_a_person_reads(
    isolated: Isolated, tmp_path: Path
) -> None:
    """`make demo`'s lists: the principal by name and relations in words, never "speaker has
    name Ana Lima" or a refusal "I lives_in Moscow"."""
    t = isolated.tenant
    demo = (REPO / "examples" / "conversation.jsonl").read_text().splitlines()
    turns = tmp_path / "turns.jsonl"
    turns.write_text(
        "".join(json.dumps({**json.loads(line), "tenant": t}) + "\n" for line in demo if line)
    )
    with running_worker(isolated, log_path=tmp_path / "worker.log"):
        ingested = engram(isolated, "ingest", str(turns), "--wait", "--timeout", "90")
        assert ingested.returncode == 0, ingested.stderr.decode()
    wide = {**isolated.env(), "COLUMNS": "400"}
    listed = subprocess.run(
        [sys.executable, "-m", "engram", "beliefs", "list", "--tenant", t, "--principal", "ana"],
        cwd=REPO, env=wide, capture_output=True, timeout=180, check=True,
    ).stdout.decode()  # fmt: skip
    refused = subprocess.run(
        [sys.executable, "-m", "engram", "refusals", "list", "--tenant", t, "--principal", "ana"],
        cwd=REPO, env=wide, capture_output=True, timeout=180, check=True,
    ).stdout.decode()  # fmt: skip
    assert "ana's name is Ana Lima" in listed
    assert "ana lives in Porto" in listed
    assert "ana lives in Moscow" in refused
    for raw in ("speaker", "has_name", "lives_in", "works_at"):
        assert raw not in listed + refused
