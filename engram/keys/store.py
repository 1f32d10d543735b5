"""The key store: one data key per (tenant, principal) in PostgreSQL (migration 0024), wrapped by
the key-encryption key, with a bounded per-process cache of unwrapped keys.

Opening the store (:meth:`KeyStore.open`) is the start-up check: every KEK id that wraps a stored
key or canary must be configured, and one key (or canary) per KEK id must unwrap, so a wrong or
missing KEK stops the process at once with a clear message instead of encrypting under a key
no reader will have, or failing field by field later.

Creation is race-safe without a lock: each process draws a key, ``INSERT … ON CONFLICT DO
NOTHING`` keeps the first, and everyone then reads the row that won. Destroying deletes the row
and records its id (and the principal's hash, never their name), so reading that principal's
fields afterwards raises :class:`KeyDestroyed`.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from collections.abc import Mapping
from datetime import datetime
from secrets import token_bytes, token_hex

import asyncpg

from engram.keys.cipher import (
    DATA_KEY_BYTES,
    DataKey,
    aad,
    decrypt_bytes,
    encrypt_field,
    new_data_key,
)
from engram.keys.cipher import parse as parse_field
from engram.keys.errors import KeyDestroyed, UnknownDataKey, WrongKeyEncryptionKey
from engram.keys.kek import KeyEncryptionKey

CANARY_BYTES = DATA_KEY_BYTES

PSEUDONYM_PREFIX = "psn-"


def new_pseudonym() -> str:
    """A fresh pseudonym: 128 random bits from the OS, minted once with the principal's data key
    and stored beside it (migration 0043), so it links back to the name only through that row.
    Never derived from the name: a derivation anyone who knows the name could repeat."""
    return PSEUDONYM_PREFIX + token_hex(16)


def data_key_aad(tenant: str, principal: str, key_id: str) -> bytes:
    """What a wrapped data key is bound to: a wrapped key moved to another row fails to unwrap."""
    return aad("engram.data-key.v1", tenant, principal, key_id)


def canary_aad(kek_id: str) -> bytes:
    return aad("engram.kek-canary.v1", kek_id)


class NameCache:
    """Principal ↔ pseudonym, both ways, by tenant; bounded like :class:`KeyCache` (a process
    maps the pseudonym of every sealed record it reads back to the principal)."""

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._by_principal: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._by_pseudonym: dict[tuple[str, str], str] = {}

    def pseudonym(self, tenant: str, principal: str) -> str | None:
        found = self._by_principal.get((tenant, principal))
        if found is not None:
            self._by_principal.move_to_end((tenant, principal))
        return found

    def principal(self, tenant: str, pseudonym: str) -> str | None:
        return self._by_pseudonym.get((tenant, pseudonym))

    def put(self, tenant: str, principal: str, pseudonym: str) -> None:
        old = self._by_principal.pop((tenant, principal), None)
        if old is not None:
            self._by_pseudonym.pop((tenant, old), None)
        self._by_principal[(tenant, principal)] = pseudonym
        self._by_pseudonym[(tenant, pseudonym)] = principal
        while len(self._by_principal) > self._capacity:
            (gone_tenant, _), gone = self._by_principal.popitem(last=False)
            self._by_pseudonym.pop((gone_tenant, gone), None)

    def evict(self, tenant: str, principal: str) -> None:
        old = self._by_principal.pop((tenant, principal), None)
        if old is not None:
            self._by_pseudonym.pop((tenant, old), None)


class KeyCache:
    """Unwrapped data keys by (tenant, principal), least recently used first out. Bounded so a
    process serving millions of principals keeps a working set, not every key; ``evict`` is
    what forgetting calls so a destroyed key does not outlive its row in this process."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("a key cache holds at least one key")
        self._capacity = capacity
        self._keys: OrderedDict[tuple[str, str], DataKey] = OrderedDict()

    def __len__(self) -> int:
        return len(self._keys)

    def get(self, tenant: str, principal: str) -> DataKey | None:
        key = self._keys.get((tenant, principal))
        if key is not None:
            self._keys.move_to_end((tenant, principal))
        return key

    def put(self, tenant: str, principal: str, key: DataKey) -> None:
        self._keys[(tenant, principal)] = key
        self._keys.move_to_end((tenant, principal))
        while len(self._keys) > self._capacity:
            self._keys.popitem(last=False)

    def evict(self, tenant: str, principal: str) -> bool:
        return self._keys.pop((tenant, principal), None) is not None

    def clear(self) -> None:
        self._keys.clear()


_KEK_IDS = """
WITH RECURSIVE ids AS (
    (SELECT kek_id FROM data_key ORDER BY kek_id LIMIT 1)
    UNION ALL
    SELECT (SELECT d.kek_id FROM data_key d WHERE d.kek_id > ids.kek_id
            ORDER BY d.kek_id LIMIT 1)
    FROM ids WHERE ids.kek_id IS NOT NULL
)
SELECT kek_id FROM ids WHERE kek_id IS NOT NULL
"""


async def verify_keks(
    conn: asyncpg.Connection, keks: Mapping[str, KeyEncryptionKey], *, configured: str
) -> None:
    """Check that every KEK id in use is one of ``keks`` and that one stored data key and the
    canary of each unwrap under it; raise :class:`WrongKeyEncryptionKey` naming what is wrong."""
    in_use = [r["kek_id"] for r in await conn.fetch(_KEK_IDS)]
    canaries = {r["kek_id"]: r["wrapped"] for r in await conn.fetch("SELECT * FROM kek_canary")}
    for kek_id in sorted(set(in_use) | set(canaries)):
        kek = keks.get(kek_id)
        if kek is None:
            raise WrongKeyEncryptionKey(
                f"stored keys are wrapped by key-encryption key {kek_id}, which is not "
                f"configured ({configured}): set the KEK they were made with "
                "(during a rotation, as ENGRAM_KEYS_PREVIOUS_KEK)"
            )
        if kek_id in canaries:
            await kek.unwrap(canaries[kek_id], canary_aad(kek_id))
        sample = await conn.fetchrow(
            "SELECT tenant, principal, key_id, wrapped FROM data_key WHERE kek_id = $1 LIMIT 1",
            kek_id,
        )
        if sample is not None:
            await kek.unwrap(
                sample["wrapped"],
                data_key_aad(sample["tenant"], sample["principal"], sample["key_id"]),
            )


async def ensure_canary(conn: asyncpg.Connection, kek: KeyEncryptionKey) -> None:
    """Store a canary wrapped by ``kek`` (if none is), so a wrong KEK is caught at the next start
    even while no data key exists."""
    wrapped = await kek.wrap(token_bytes(CANARY_BYTES), canary_aad(kek.key_id))
    await conn.execute(
        "INSERT INTO kek_canary (kek_id, wrapped) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        kek.key_id,
        wrapped,
    )


async def kek_first_seen(conn: asyncpg.Connection, kek_id: str) -> tuple[datetime, bool] | None:
    """When a KEK's canary was first stored (the KEK first used), and whether it was in use
    before Engram recorded that (then it is at least that old); None for a KEK with no canary."""
    row = await conn.fetchrow(
        "SELECT first_seen_at, seen_before_recorded FROM kek_canary WHERE kek_id = $1", kek_id
    )
    return None if row is None else (row["first_seen_at"], row["seen_before_recorded"])


class KeyStore:
    """Data keys for encrypting and reading a principal's fields. Build it with :meth:`open`."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        current: KeyEncryptionKey,
        previous: KeyEncryptionKey | None = None,
        *,
        cache_size: int = 10_000,
    ) -> None:
        self._pool = pool
        self._current = current
        self._keks: dict[str, KeyEncryptionKey] = {current.key_id: current}
        if previous is not None:
            self._keks.setdefault(previous.key_id, previous)
        self.cache = KeyCache(cache_size)
        self.names = NameCache(cache_size)

    @classmethod
    async def open(
        cls,
        pool: asyncpg.Pool,
        current: KeyEncryptionKey,
        previous: KeyEncryptionKey | None = None,
        *,
        cache_size: int = 10_000,
    ) -> KeyStore:
        """The store, after the start-up check (:func:`verify_keks`) has passed."""
        store = cls(pool, current, previous, cache_size=cache_size)
        configured = ", ".join(sorted(store._keks))
        async with pool.acquire() as conn:
            await verify_keks(conn, store._keks, configured=f"configured: {configured}")
            await ensure_canary(conn, current)
        return store

    async def _unwrap(self, row: asyncpg.Record) -> DataKey:
        kek = self._keks.get(row["kek_id"])
        if kek is None:
            raise WrongKeyEncryptionKey(
                f"the data key of {row['tenant']}/{row['principal']} is wrapped by "
                f"key-encryption key {row['kek_id']}, which is not configured"
            )
        material = await kek.unwrap(
            row["wrapped"], data_key_aad(row["tenant"], row["principal"], row["key_id"])
        )
        return DataKey(row["key_id"], material)

    async def _row(self, tenant: str, principal: str) -> asyncpg.Record | None:
        return await self._pool.fetchrow(
            "SELECT tenant, principal, key_id, kek_id, wrapped, pseudonym FROM data_key "
            "WHERE tenant = $1 AND principal = $2",
            tenant,
            principal,
        )

    async def key_for_writing(self, tenant: str, principal: str) -> DataKey:
        """The principal's data key, created on first use (race-safe: the first insert wins and
        every caller gets that one).

        The row is read every time — only the unwrapping is cached — so a key that another
        process destroyed (the principal was forgotten) is never used to encrypt new words:
        those would be unreadable the moment this process's cache let go of it."""
        row = await self._row(tenant, principal)
        cached = self.cache.get(tenant, principal)
        if row is not None:
            self.names.put(tenant, principal, row["pseudonym"])
        if row is not None and cached is not None and cached.key_id == row["key_id"]:
            return cached
        if row is None:
            fresh = new_data_key()
            wrapped = await self._current.wrap(
                fresh.material, data_key_aad(tenant, principal, fresh.key_id)
            )
            await self._pool.execute(
                "INSERT INTO data_key (tenant, principal, key_id, kek_id, wrapped, pseudonym) "
                "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (tenant, principal) DO NOTHING",
                tenant,
                principal,
                fresh.key_id,
                self._current.key_id,
                wrapped,
                new_pseudonym(),
            )
            row = await self._row(tenant, principal)
            if row is None:  # destroyed between our insert and our read: a race with forget
                raise KeyDestroyed(f"the data key of {tenant}/{principal} was just destroyed")
            self.names.put(tenant, principal, row["pseudonym"])
        key = await self._unwrap(row)
        self.cache.put(tenant, principal, key)
        return key

    async def key_for_reading(self, tenant: str, principal: str, key_id: str) -> DataKey:
        """The data key ``key_id`` of this principal; :class:`KeyDestroyed` if it was destroyed,
        :class:`UnknownDataKey` if the principal never had it."""
        cached = self.cache.get(tenant, principal)
        if cached is not None and cached.key_id == key_id:
            return cached
        row = await self._row(tenant, principal)
        if row is not None and row["key_id"] == key_id:
            key = await self._unwrap(row)
            self.cache.put(tenant, principal, key)
            return key
        destroyed = await self._pool.fetchval(
            "SELECT destroyed_at FROM destroyed_data_key WHERE tenant = $1 AND key_id = $2",
            tenant,
            key_id,
        )
        if destroyed is not None:
            raise KeyDestroyed(
                f"the data key {key_id} of {tenant}/{principal} was destroyed at "
                f"{destroyed.isoformat()}: what it encrypted is unreadable for good"
            )
        raise UnknownDataKey(f"{tenant}/{principal} has no data key {key_id!r}")

    async def pseudonym(self, tenant: str, principal: str, *, verified: bool = True) -> str:
        """The pseudonym the log names this principal by in clear, minted with their data key
        on first use (:meth:`key_for_writing`). ``verified`` re-reads the key's row, as a door
        must: after a forgetting the principal gets a new key and a new pseudonym."""
        if not verified:
            known = self.names.pseudonym(tenant, principal)
            if known is not None:
                return known
        await self.key_for_writing(tenant, principal)
        known = self.names.pseudonym(tenant, principal)
        assert known is not None, "key_for_writing records the pseudonym of the row it read"
        return known

    async def principal_of(self, tenant: str, pseudonym: str) -> str | None:
        """The principal a pseudonym stands for, while their data key lives; None once it is
        destroyed (the principal forgotten) or for a pseudonym this store never minted."""
        known = self.names.principal(tenant, pseudonym)
        if known is not None:
            return known
        async with self._pool.acquire() as conn:
            principal = await principal_named(conn, tenant, pseudonym)
        if principal is not None:
            self.names.put(tenant, principal, pseudonym)
        return principal

    async def encrypt(
        self,
        tenant: str,
        principal: str,
        event_id: str,
        field_name: str,
        plaintext: str | bytes,
        *,
        verified: bool = True,
    ) -> str:
        """One field, encrypted under the principal's data key (keys.cipher's format).

        ``verified`` (the doors) reads the key's row first, so words said after a forgetting
        never go under the destroyed key; formation re-encrypting what it read from the log
        (``verified=False``) may use its cached key: those words exist only under that key."""
        key = (
            await self.key_for_writing(tenant, principal)
            if verified
            else self.cache.get(tenant, principal) or await self.key_for_writing(tenant, principal)
        )
        return encrypt_field(key, tenant, principal, event_id, field_name, plaintext)

    async def decrypt(
        self, tenant: str, principal: str, event_id: str, field_name: str, token: str
    ) -> str:
        """One field, read back; raises :class:`KeyDestroyed` once the principal's key is gone."""
        return (await self.decrypt_bytes(tenant, principal, event_id, field_name, token)).decode()

    async def decrypt_bytes(
        self, tenant: str, principal: str, event_id: str, field_name: str, token: str
    ) -> bytes:
        """One field, read back as UTF-8 bytes (what a reader decoding JSON wants). The token is
        parsed once: for its key id, then opened with that key."""
        sealed = parse_field(token)
        key = await self.key_for_reading(tenant, principal, sealed.key_id)
        return decrypt_bytes(key, tenant, principal, event_id, field_name, sealed)

    async def destroy(self, tenant: str, principal: str) -> str | None:
        """Delete the principal's data key (what forgetting is to call) and record its id;
        returns the id, or None if there was none. Evicts it from this process's cache; other
        processes must evict too (not wired yet: docs/privacy.md)."""
        self.cache.evict(tenant, principal)
        self.names.evict(tenant, principal)
        async with self._pool.acquire() as conn, conn.transaction():
            return await destroy_data_key(conn, tenant, principal)


async def principal_named(conn: asyncpg.Connection, tenant: str, pseudonym: str) -> str | None:
    """The principal ``pseudonym`` stands for in ``tenant`` while their data key lives; None once
    it is destroyed (forgotten) or for a pseudonym never minted. Needs no KEK: the pseudonym is
    kept in clear beside the wrapped key, and dies with it."""
    principal: str | None = await conn.fetchval(
        "SELECT principal FROM data_key WHERE tenant = $1 AND pseudonym = $2", tenant, pseudonym
    )
    return principal


async def receipt_salt(
    conn: asyncpg.Connection | asyncpg.Pool, tenant: str, principal: str
) -> uuid.UUID | None:
    """The salt a forgetting's receipt id is made with, kept in the principal's data key row
    and deleted with it (:func:`engram.schemas.common.forgetting_receipt_id`); None without a
    key. The door reads it before it appends the forgetting, the projector while it measures
    it: both before the key is destroyed, so they make the same id."""
    salt: uuid.UUID | None = await conn.fetchval(
        "SELECT receipt_salt FROM public.data_key WHERE tenant = $1 AND principal = $2",
        tenant,
        principal,
    )
    return salt


async def destroy_data_key(conn: asyncpg.Connection, tenant: str, principal: str) -> str | None:
    """Delete the principal's data key and pseudonym and record both ids, in the caller's
    transaction (the projector's, so the key goes in the same commit as the rows a forgetting
    scrubs); returns the key id, or None when there was none (already destroyed, or the words
    were never sealed). The record names no principal, not even by hash: the key id is in
    every sealed token and the pseudonym on every clear record of theirs, so a hash beside
    them would let whoever knows the name find those records (migration 0043)."""
    row = await conn.fetchrow(
        "DELETE FROM public.data_key WHERE tenant = $1 AND principal = $2 "
        "RETURNING key_id, pseudonym",
        tenant,
        principal,
    )
    if row is None:
        return None
    await conn.execute(
        "INSERT INTO public.destroyed_data_key (tenant, key_id, pseudonym) "
        "VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
        tenant,
        row["key_id"],
        row["pseudonym"],
    )
    key_id: str = row["key_id"]
    return key_id
