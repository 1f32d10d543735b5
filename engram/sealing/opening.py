"""The sealer of a process, from its settings: the start-up check of the keys comes first."""

from __future__ import annotations

import asyncpg

from engram.infra.settings import KeysSettings
from engram.keys.kek import keks_from_settings
from engram.keys.store import KeyStore
from engram.sealing.events import LogSealer, NoKeys, Sealer


async def open_sealer(keys: KeysSettings, pool: asyncpg.Pool) -> Sealer:
    """A process's sealer: with a key-encryption key, the key store after its start-up check
    (a missing, malformed or wrong KEK fails here, before anything is appended or formed);
    without one, :class:`NoKeys` — unless log encryption is on, which then refuses to start
    (``ENGRAM_KEYS_KEK`` missing) rather than append plaintext."""
    if keys.kek is None and not keys.encrypt_log:
        return NoKeys()
    current, previous = keks_from_settings(keys)
    store = await KeyStore.open(pool, current, previous, cache_size=keys.cache_size)
    return LogSealer(store, seal_new=keys.encrypt_log)
