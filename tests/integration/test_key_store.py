"""Per-principal data keys on the real PostgreSQL (migration 0024): created once on first use
even when two processes race, destroyed for good, a wrong or missing key-encryption key refused
at start, and rotation that an interruption (a failing batch, or kill -9 of `engram keys rotate`)
leaves readable and a rerun completes."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import pytest
from pydantic import SecretStr

from engram.keys.errors import (
    CiphertextRejected,
    KeyDestroyed,
    RotationRefused,
    UnknownDataKey,
    WrongKeyEncryptionKey,
)
from engram.keys.kek import KeyEncryptionKey, LocalKek, new_kek_text, parse_kek
from engram.keys.rotation import RotationProgress, rotate
from engram.keys.store import KeyStore

pytestmark = pytest.mark.integration

T = "tenant-a"
ENGRAM = Path(sys.executable).parent / "engram"
KEK_A_TEXT, KEK_B_TEXT = new_kek_text(), new_kek_text()
KEK_A = parse_kek(SecretStr(KEK_A_TEXT), "A")
KEK_B = parse_kek(SecretStr(KEK_B_TEXT), "B")


class FailingKek:
    """A KEK whose KMS fails on the n-th wrap: a batch that fails half-way through."""

    def __init__(self, inner: LocalKek, fail_on_wrap: int) -> None:
        self.inner, self.fail_on_wrap, self.wraps = inner, fail_on_wrap, 0

    @property
    def key_id(self) -> str:
        return self.inner.key_id

    async def wrap(self, data_key: bytes, aad: bytes) -> bytes:
        self.wraps += 1
        if self.wraps == self.fail_on_wrap:
            raise ConnectionError("the KMS went away")
        return await self.inner.wrap(data_key, aad)

    async def unwrap(self, wrapped: bytes, aad: bytes) -> bytes:
        return await self.inner.unwrap(wrapped, aad)


async def kek_ids(pool: asyncpg.Pool) -> dict[str, int]:
    rows = await pool.fetch("SELECT kek_id, count(*) AS n FROM data_key GROUP BY kek_id")
    return {r["kek_id"]: r["n"] for r in rows}


async def sealed_words(store: KeyStore, count: int) -> dict[str, str]:
    """One encrypted field for each of ``count`` principals: principal → token."""
    return {
        f"p{i:03}": await store.encrypt(T, f"p{i:03}", f"evt-{i}", "content", f"words of {i}")
        for i in range(count)
    }


async def assert_all_readable(store: KeyStore, tokens: dict[str, str]) -> None:
    store.cache.clear()
    for principal, token in tokens.items():
        index = int(principal[1:])
        got = await store.decrypt(T, principal, f"evt-{index}", "content", token)
        assert got == f"words of {index}"


async def test_a_key_is_made_on_first_use_kept_wrapped_and_read_back(pool: asyncpg.Pool) -> None:
    store = await KeyStore.open(pool, KEK_A)
    assert await pool.fetchval("SELECT count(*) FROM data_key") == 0
    token = await store.encrypt(T, "ana", "evt-1", "content", "I moved to Lisbon.")
    key = await store.key_for_writing(T, "ana")
    row = await pool.fetchrow(
        "SELECT * FROM data_key WHERE tenant = $1 AND principal = $2", T, "ana"
    )
    assert row is not None and row["key_id"] == key.key_id and row["kek_id"] == KEK_A.key_id
    assert key.material not in row["wrapped"], "stored only wrapped"
    again = await KeyStore.open(pool, KEK_A)  # another process: nothing cached
    assert await again.decrypt(T, "ana", "evt-1", "content", token) == "I moved to Lisbon."
    assert (await again.key_for_writing(T, "ana")).key_id == key.key_id
    assert (await again.key_for_writing(T, "bo")).key_id != key.key_id
    assert await pool.fetchval("SELECT count(*) FROM data_key") == 2


async def test_two_processes_creating_at_once_get_one_key(pool: asyncpg.Pool) -> None:
    first, second = await KeyStore.open(pool, KEK_A), await KeyStore.open(pool, KEK_A)
    keys = await asyncio.gather(
        *(store.key_for_writing(T, "ana") for _ in range(10) for store in (first, second))
    )
    assert len({k.key_id for k in keys}) == 1 and len({k.material for k in keys}) == 1
    assert await pool.fetchval("SELECT count(*) FROM data_key") == 1


async def test_a_destroyed_key_makes_its_words_unreadable_distinctly(pool: asyncpg.Pool) -> None:
    store = await KeyStore.open(pool, KEK_A)
    token = await store.encrypt(T, "ana", "evt-1", "content", "Ana's secret")
    bo_token = await store.encrypt(T, "bo", "evt-2", "content", "Bo's words")
    destroyed_id = await store.destroy(T, "ana")
    assert destroyed_id is not None and await store.destroy(T, "ana") is None
    for reader in (store, await KeyStore.open(pool, KEK_A)):
        with pytest.raises(KeyDestroyed, match="unreadable for good"):
            await reader.decrypt(T, "ana", "evt-1", "content", token)
        assert await reader.decrypt(T, "bo", "evt-2", "content", bo_token) == "Bo's words"
    assert await pool.fetchval("SELECT count(*) FROM data_key WHERE principal = 'ana'") == 0
    # Words after forgetting get a new key; the old ones stay destroyed.
    fresh = await store.encrypt(T, "ana", "evt-3", "content", "new words")
    assert fresh.split(".")[1] != destroyed_id
    assert await store.decrypt(T, "ana", "evt-3", "content", fresh) == "new words"
    with pytest.raises(KeyDestroyed):
        await store.decrypt(T, "ana", "evt-1", "content", token)
    # Distinct from a key never had, and from a ciphertext moved to another principal. A
    # destroyed key's record names no principal (migration 0043), so its id reads as destroyed
    # whoever is asked about it.
    with pytest.raises(UnknownDataKey, match="no data key"):
        await store.decrypt(T, "cy", "evt-2", "content", bo_token)
    with pytest.raises(KeyDestroyed):
        await store.decrypt(T, "cy", "evt-1", "content", token)
    with pytest.raises(CiphertextRejected):
        await store.decrypt(T, "bo", "evt-1", "content", bo_token)


async def test_a_wrong_kek_is_refused_at_start(pool: asyncpg.Pool) -> None:
    await KeyStore.open(pool, KEK_A)  # only the canary exists yet
    with pytest.raises(WrongKeyEncryptionKey, match=f"{KEK_A.key_id}, which is not configured"):
        await KeyStore.open(pool, KEK_B)
    store = await KeyStore.open(pool, KEK_A)
    await store.key_for_writing(T, "ana")
    await pool.execute("DELETE FROM kek_canary")  # the data key alone still catches it
    with pytest.raises(WrongKeyEncryptionKey, match="not configured"):
        await KeyStore.open(pool, KEK_B)

    class SameIdOtherKey(LocalKek):
        """A KMS key that kept its name but not its material."""

        @property
        def key_id(self) -> str:
            return KEK_A.key_id

    with pytest.raises(WrongKeyEncryptionKey, match="does not unwrap"):
        await KeyStore.open(pool, SameIdOtherKey(os.urandom(32)))
    assert await pool.fetchval("SELECT count(*) FROM data_key") == 1, "nothing written"


async def test_an_interrupted_rotation_leaves_every_key_readable_and_resumes(
    pool: asyncpg.Pool,
) -> None:
    store = await KeyStore.open(pool, KEK_A)
    tokens = await sealed_words(store, 25)
    steps: list[RotationProgress] = []
    failing: KeyEncryptionKey = FailingKek(KEK_B, fail_on_wrap=13)  # canary, 10 keys, then 2
    async with pool.acquire() as conn:
        with pytest.raises(ConnectionError, match="KMS"):
            await rotate(conn, KEK_A, failing, batch_size=5, progress=steps.append)
    assert steps == [RotationProgress(5, 20), RotationProgress(10, 15)]
    assert await kek_ids(pool) == {KEK_A.key_id: 15, KEK_B.key_id: 10}, (
        "the failed batch rolled back"
    )
    await assert_all_readable(await KeyStore.open(pool, KEK_B, KEK_A), tokens)
    async with pool.acquire() as conn:
        assert await rotate(conn, KEK_A, KEK_B, batch_size=5) == RotationProgress(15, 0)
        assert await rotate(conn, KEK_A, KEK_B, batch_size=5) == RotationProgress(0, 0)
    assert await kek_ids(pool) == {KEK_B.key_id: 25}
    assert await pool.fetchval("SELECT array_agg(kek_id) FROM kek_canary") == [KEK_B.key_id]
    await assert_all_readable(await KeyStore.open(pool, KEK_B), tokens)
    with pytest.raises(WrongKeyEncryptionKey):
        await KeyStore.open(pool, KEK_A)
    async with pool.acquire() as conn:
        with pytest.raises(RotationRefused, match="are the same"):
            await rotate(conn, KEK_B, KEK_B, batch_size=5)
        with pytest.raises(WrongKeyEncryptionKey, match="not configured"):
            await rotate(conn, KEK_A, parse_kek(SecretStr(new_kek_text()), "C"), batch_size=5)


def cli_env(database_url: str, **keys: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(ENGRAM_ENV_FILE="/nonexistent", ENGRAM_DATABASE_URL=database_url, **keys)
    return env


async def test_kill_9_during_engram_keys_rotate_then_rerun_completes(
    pool: asyncpg.Pool, fresh_database: str
) -> None:
    store = await KeyStore.open(pool, KEK_A)
    tokens = await sealed_words(store, 60)
    env = cli_env(
        fresh_database,
        ENGRAM_KEYS_KEK=KEK_B_TEXT,
        ENGRAM_KEYS_PREVIOUS_KEK=KEK_A_TEXT,
        ENGRAM_KEYS_ROTATE_BATCH="1",
    )
    child = subprocess.Popen(
        [str(ENGRAM), "keys", "rotate"], env=env, stderr=subprocess.PIPE, text=True
    )
    assert child.stderr is not None
    seen = []
    for line in child.stderr:  # wait on its progress, not on a clock
        seen.append(line)
        if line.startswith("re-wrapped 3 data keys"):
            child.send_signal(signal.SIGKILL)
            break
    child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL, "".join(seen)
    moved = await kek_ids(pool)
    assert moved.get(KEK_B.key_id, 0) >= 3 and moved.get(KEK_A.key_id, 0) >= 1, moved
    await assert_all_readable(await KeyStore.open(pool, KEK_B, KEK_A), tokens)
    rerun = subprocess.run(
        [str(ENGRAM), "keys", "rotate"], env=env, capture_output=True, text=True, timeout=120
    )
    assert rerun.returncode == 0, rerun.stderr
    assert "rotation complete" in rerun.stderr and KEK_A_TEXT not in rerun.stderr + rerun.stdout
    assert await kek_ids(pool) == {KEK_B.key_id: 60}
    await assert_all_readable(await KeyStore.open(pool, KEK_B), tokens)


def test_engram_keys_check_refuses_a_missing_or_wrong_kek(fresh_database: str) -> None:
    def check(**keys: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(ENGRAM), "keys", "check"],
            env=cli_env(fresh_database, **keys),
            capture_output=True,
            text=True,
            timeout=120,
        )

    missing = check()
    assert missing.returncode == 2, missing.stderr
    assert "no key-encryption key is configured" in " ".join(missing.stderr.split())
    first = check(ENGRAM_KEYS_KEK=KEK_A_TEXT)
    assert first.returncode == 0, first.stderr
    said = " ".join(first.stderr.split())
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    assert f"in use since {today} (0 days)" in said, said  # how old the KEK is
    assert "`engram keys rotate`" in said and "Backups that die with their keys" in said
    wrong = check(ENGRAM_KEYS_KEK=KEK_B_TEXT)
    assert wrong.returncode == 2 and "not configured" in wrong.stderr, wrong.stderr
    assert KEK_B_TEXT not in wrong.stderr + wrong.stdout
    no_previous = subprocess.run(
        [str(ENGRAM), "keys", "rotate"],
        env=cli_env(fresh_database, ENGRAM_KEYS_KEK=KEK_A_TEXT),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert no_previous.returncode == 2, no_previous.stderr
    assert "ENGRAM_KEYS_PREVIOUS_KEK is not set" in no_previous.stderr


async def test_engram_keys_who_names_a_pseudonyms_principal_until_they_are_forgotten(
    pool: asyncpg.Pool, fresh_database: str
) -> None:
    """A consumer of the memory-events topic sees pseudonyms; the operator's lookup names the
    principal while the key lives, in that tenant only, and nobody once it is destroyed."""
    store = await KeyStore.open(pool, KEK_A)
    pseudonym = await store.pseudonym(T, "ana@example.org")

    def who(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(ENGRAM), "keys", "who", *args],
            env=cli_env(fresh_database),
            capture_output=True,
            text=True,
            timeout=120,
        )

    named = who("--tenant", T, pseudonym)
    assert named.returncode == 0 and named.stdout == "ana@example.org\n", named.stderr
    elsewhere = who("--tenant", "tenant-b", pseudonym)
    assert elsewhere.returncode == 1 and elsewhere.stdout == "", elsewhere.stderr
    hostile = who("--tenant", T, "psn-\x1b[2J")
    assert hostile.returncode == 2 and "not an identifier" in hostile.stderr, hostile.stderr
    await store.destroy(T, "ana@example.org")
    forgotten = who("--tenant", T, pseudonym)
    assert forgotten.returncode == 1 and forgotten.stdout == "", forgotten.stderr
    assert "names no principal" in " ".join(forgotten.stderr.split())
