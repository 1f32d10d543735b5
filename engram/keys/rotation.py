"""``engram keys rotate``: re-wrap every data key from the previous key-encryption key to the
current one, without touching the log (the data keys, and so every ciphertext, stay the same).

Batches of ``batch_size`` rows, each in one transaction: a batch is either wholly re-wrapped or
not at all, so a kill at any moment leaves every key wrapped by the old KEK or the new one, both
of which the workers hold during a rotation (``ENGRAM_KEYS_KEK`` new, ``ENGRAM_KEYS_PREVIOUS_KEK``
old). A rerun picks up the rows still under the old KEK: rotation is resumable and idempotent.
The old KEK's canary is deleted only when no key is wrapped by it any more, after which the
previous KEK may be removed from the settings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import asyncpg

from engram.keys.errors import RotationRefused
from engram.keys.kek import KeyEncryptionKey
from engram.keys.store import data_key_aad, ensure_canary, verify_keks


@dataclass(frozen=True, slots=True)
class RotationProgress:
    """After one committed batch: how many keys this run re-wrapped, how many remain."""

    rewrapped: int
    remaining: int


async def remaining(conn: asyncpg.Connection, old: KeyEncryptionKey) -> int:
    count: int = await conn.fetchval("SELECT count(*) FROM data_key WHERE kek_id = $1", old.key_id)
    return count


async def rotate(
    conn: asyncpg.Connection,
    old: KeyEncryptionKey,
    new: KeyEncryptionKey,
    *,
    batch_size: int,
    progress: Callable[[RotationProgress], None] = lambda _: None,
) -> RotationProgress:
    """Re-wrap every data key under ``old`` with ``new``; returns how many this run re-wrapped
    and how many are still under ``old`` (0 unless keys were made under ``old`` meanwhile, by a
    process that does not hold ``new`` yet: rerun then). Both KEKs are checked first (the
    start-up check), so a wrong one refuses before any write."""
    if old.key_id == new.key_id:
        raise RotationRefused(
            f"the previous and the current key-encryption key are the same ({new.key_id}): "
            "set ENGRAM_KEYS_KEK to the new KEK and ENGRAM_KEYS_PREVIOUS_KEK to the old one"
        )
    if batch_size < 1:
        raise RotationRefused("a rotation batch holds at least one key")
    keks = {old.key_id: old, new.key_id: new}
    await verify_keks(conn, keks, configured=f"old {old.key_id}, new {new.key_id}")
    await ensure_canary(conn, new)
    total = await remaining(conn, old)  # counted once: each batch would rescan the index
    done = 0
    while True:
        async with conn.transaction():
            rows = await conn.fetch(
                "SELECT tenant, principal, key_id, wrapped FROM data_key WHERE kek_id = $1 "
                "ORDER BY tenant, principal LIMIT $2 FOR UPDATE",
                old.key_id,
                batch_size,
            )
            if not rows:
                break
            tenants, principals, rewrapped = [], [], []
            for row in rows:
                bound = data_key_aad(row["tenant"], row["principal"], row["key_id"])
                material = await old.unwrap(row["wrapped"], bound)
                tenants.append(row["tenant"])
                principals.append(row["principal"])
                rewrapped.append(await new.wrap(material, bound))
            await conn.execute(
                "UPDATE data_key d SET wrapped = u.wrapped, kek_id = $4, rewrapped_at = now() "
                "FROM unnest($1::text[], $2::text[], $3::bytea[]) AS u(tenant, principal, wrapped) "
                "WHERE d.tenant = u.tenant AND d.principal = u.principal AND d.kek_id = $5",
                tenants,
                principals,
                rewrapped,
                new.key_id,
                old.key_id,
            )
        done += len(rows)
        progress(RotationProgress(done, max(total - done, 0)))
    left = await remaining(conn, old)
    if left == 0:
        await conn.execute("DELETE FROM kek_canary WHERE kek_id = $1", old.key_id)
    return RotationProgress(done, left)
