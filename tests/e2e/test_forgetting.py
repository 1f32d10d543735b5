"""Forgetting as a new user meets it, with nothing set but what the README says: a key file (what
`dev/services.sh` names in `.dev/services.env`), encryption by default. Turns come in through
`engram ingest` and through the inbox from a plain producer; a belief is deleted through the
API, which answers with its receipt; the person is forgotten with `engram principals forget
--wait`, which prints its receipt. Then no topic, no file of the broker and no `pg_dump` holds a
word they said, and no table names them."""

from __future__ import annotations

import asyncio
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from aiokafka import AIOKafkaProducer
from fastapi.testclient import TestClient

from engram.api import create_api
from engram.infra.settings import DatabaseSettings, KeysSettings, Settings
from engram.projections.reads.queries import list_beliefs
from engram.service.tokens import create_token
from tests.support.broker_files import (
    INBOX_DISK_BOUND_S,
    files_holding,
    local_log_dirs,
    topic_files,
)
from tests.support.conditions import wait_until
from tests.support.episodes import turn
from tests.support.isolation import REPO, Isolated, running_worker
from tests.support.leftovers import every_record, pg_dump_text

pytestmark = pytest.mark.e2e

WAIT_S = 120


def _engram(env: dict[str, str], *argv: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "engram", *argv],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT_S + 60,
    )
    assert done.returncode == 0, (argv, done.stdout, done.stderr)
    return done.stdout + done.stderr


def _readme_env(isolated: Isolated, kek_file: Path) -> dict[str, str]:
    """The test's services and topics, and of the keys only the file: encryption is the
    default, as it is for `make demo`."""
    env = isolated.env(partitions=1)
    env = {name: value for name, value in env.items() if not name.startswith("ENGRAM_KEYS_")}
    return env | {"ENGRAM_KEYS_KEK_FILE": str(kek_file), "COLUMNS": "200"}


async def _to_inbox(bootstrap: str, topic: str, value: bytes) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await producer.start()
    try:
        await producer.send_and_wait(topic, value)
    finally:
        await producer.stop()


def _delete_through_the_api(
    isolated: Isolated, kek_file: Path, token: str, belief_id: str
) -> tuple[int, Any]:
    settings = Settings(
        kafka=isolated.kafka(partitions=1),
        database=DatabaseSettings(url=isolated.database_url),
        keys=KeysSettings(kek=None, kek_file=kek_file),
    )
    with TestClient(create_api(settings)) as client:
        answer = client.delete(
            f"/v1/beliefs/{belief_id}?wait_s=60", headers={"Authorization": f"Bearer {token}"}
        )
        again = client.get(
            f"/v1/erasures/{answer.json()['event_id']}",
            headers={"Authorization": f"Bearer {token}"},
        )
        assert again.status_code == 200 and again.json() == answer.json()
    return answer.status_code, answer.json()


async def test_with_the_readme_settings_forgetting_leaves_no_word_anywhere_and_says_so(
    isolated: Isolated, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    t, who = isolated.tenant, f"p{secrets.token_hex(4)}"
    words = {name: f"zq{secrets.token_hex(5)}" for name in ("city", "org", "inbox", "tool")}
    kek_file = tmp_path / "state" / "kek"
    env = _readme_env(isolated, kek_file)
    assert "wrote a new key-encryption key" in _engram(
        env, "keys", "new-kek", "--file", str(kek_file)
    )
    _engram(env, "topics")
    turns = tmp_path / "turns.jsonl"
    said = [
        turn(t, who, "garden", f"I live in {words['city'].title()}.", seq=0),
        turn(t, who, "garden", f"I work at {words['org'].title()}.", seq=1),
        turn(t, who, "garden", f"I use {words['tool'].title()}.", seq=2),
        turn(t, "bo", "garden", "I live in Cork.", seq=3),
    ]
    turns.write_text("".join(e.model_dump_json() + "\n" for e in said), encoding="utf-8")
    kafka = isolated.kafka(partitions=1)

    with running_worker(isolated, "--inbox", log_path=tmp_path / "worker.log", env=env):
        _engram(env, "ingest", str(turns), "--wait", "--timeout", str(WAIT_S))
        from_outside = turn(t, who, "garden", f"I prefer {words['inbox'].title()}.", seq=4)
        await _to_inbox(kafka.bootstrap, kafka.inbox_topic, from_outside.model_dump_json().encode())

        async def inbox_formed() -> bool:
            beliefs = await list_beliefs(pool, tenant=t, principal=who)
            return any(words["inbox"] in b.object.lower() for b in beliefs)

        await wait_until(inbox_formed, timeout_s=WAIT_S, what="the inbox's turn formed")
        [tool] = [
            b
            for b in await list_beliefs(pool, tenant=t, principal=who)
            if words["tool"] in b.object.lower()
        ]
        _, token = await create_token(pool, tenant=t, principal=who)
        status, deleted = await asyncio.to_thread(
            _delete_through_the_api, isolated, kek_file, token, str(tool.belief_id)
        )
        assert status == 200 and deleted["kind"] == "belief.deleted", deleted
        assert deleted["log"]["state"] == "sealed" and not deleted["data_key"]["destroyed"]
        assert "until the principal is forgotten" in deleted["log"]["says"]

        said_back = _engram(
            env,
            "principals",
            "forget",
            "--tenant",
            t,
            "--principal",
            who,
            "--confirm",
            "--wait",
            "--timeout",
            str(WAIT_S),
        )
        # The broker's own files, the inbox's too: its moved records leave the disk once the
        # intake (this worker's, still running) has closed their segment and it is deleted.
        dirs = await local_log_dirs(kafka.bootstrap)
        if dirs:
            await wait_until(
                lambda: not files_holding(topic_files(dirs, isolated.prefix), words.values()),
                timeout_s=INBOX_DISK_BOUND_S,
                what="no file of the broker holding the words",
            )

    assert "Forgotten:" in said_back and f"about {who} deleted" in said_back, said_back
    assert "log (sealed):" in said_back and "unreadable from now on" in said_back, said_back
    assert "destroyed" in said_back and "remains" not in said_back, said_back
    assert [b.object for b in await list_beliefs(pool, tenant=t, principal="bo")] == ["Cork"]

    every = b"".join(
        r
        for records in (await every_record(kafka.bootstrap, isolated.prefix)).values()
        for r in records
    ).lower()
    assert [w for w in words.values() if w.encode() in every] == []
    dump = pg_dump_text(isolated.database_url)
    assert [w for w in words.values() if w in dump] == []
    assert who not in dump, "a forgotten person is named by a hash only"
