"""The sealer of a process, from its settings: the start-up check of the keys comes first."""

from __future__ import annotations

import asyncpg

from engram.infra.settings import KeysSettings
from engram.keys.errors import KeyEncryptionKeyMissing
from engram.keys.kek import kek_configured, keks_from_settings
from engram.keys.store import KeyStore
from engram.sealing.events import LogSealer, NoKeys, Sealer

PLAINTEXT_OPT_OUT = (
    "to append people's words in clear instead (forgetting a person then cannot reach the "
    "log: docs/privacy.md), set ENGRAM_KEYS_ENCRYPT_LOG=false explicitly"
)


async def open_sealer(keys: KeysSettings, pool: asyncpg.Pool) -> Sealer:
    """A process's sealer: with a key-encryption key, the key store after its start-up check
    (a missing, malformed or wrong KEK fails here, before anything is appended or formed);
    without one, :class:`NoKeys` — only when log encryption was turned off explicitly; with
    encryption on (the default) a process without a KEK refuses to start rather than append
    plaintext."""
    if not keys.encrypt_log and not kek_configured(keys):
        return NoKeys()
    try:
        current, previous = keks_from_settings(keys)
    except KeyEncryptionKeyMissing as missing:
        raise KeyEncryptionKeyMissing(
            f"log encryption is on (ENGRAM_KEYS_ENCRYPT_LOG, the default), and {missing}; "
            + PLAINTEXT_OPT_OUT
        ) from None
    store = await KeyStore.open(pool, current, previous, cache_size=keys.cache_size)
    return LogSealer(store, seal_new=keys.encrypt_log)
