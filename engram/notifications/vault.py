"""Signing secrets at rest: wrapped by the key-encryption key (``ENGRAM_KEYS_KEK``), never kept
in clear, bound to their endpoint, tenant and version by the wrap's associated data (a wrapped
secret copied to another endpoint's row does not unwrap).

A secret is shown once, when it is made; afterwards only the notifier unwraps it, to sign. A
rotation adds a version and gives the one before it an expiry: until then deliveries carry a
signature under each (:mod:`engram.notifications.signing`), so a receiver can switch secrets
without refusing a delivery.
"""

from __future__ import annotations

import uuid
from datetime import datetime

import asyncpg

from engram.infra.settings import KeysSettings
from engram.keys.cipher import aad
from engram.keys.errors import WrongKeyEncryptionKey
from engram.keys.kek import KeyEncryptionKey, kek_configured, keks_from_settings
from engram.notifications.errors import SecretsUnavailable


def secret_aad(tenant: str, endpoint_id: uuid.UUID, version: int) -> bytes:
    return aad("engram.webhook-secret.v1", tenant, str(endpoint_id), str(version))


class SecretVault:
    """Wraps new secrets under the current KEK; unwraps under whichever configured KEK wrapped
    them (during a KEK rotation, the previous one too)."""

    def __init__(self, current: KeyEncryptionKey, previous: KeyEncryptionKey | None = None):
        self._current = current
        self._keks = {current.key_id: current}
        if previous is not None:
            self._keks.setdefault(previous.key_id, previous)

    @classmethod
    def from_settings(cls, keys: KeysSettings) -> SecretVault:
        if not kek_configured(keys):
            raise SecretsUnavailable(
                "webhooks need a key-encryption key: signing secrets are stored only wrapped "
                "by ENGRAM_KEYS_KEK or the file ENGRAM_KEYS_KEK_FILE names (make one with "
                "`engram keys new-kek`)"
            )
        return cls(*keks_from_settings(keys))

    async def store(
        self,
        conn: asyncpg.Connection,
        *,
        tenant: str,
        endpoint_id: uuid.UUID,
        version: int,
        secret: bytes,
    ) -> None:
        wrapped = await self._current.wrap(secret, secret_aad(tenant, endpoint_id, version))
        await conn.execute(
            "INSERT INTO public.webhook_secret (endpoint_id, version, kek_id, wrapped) "
            "VALUES ($1, $2, $3, $4)",
            endpoint_id,
            version,
            self._current.key_id,
            wrapped,
        )

    async def signing_keys(
        self, db: asyncpg.Pool | asyncpg.Connection, *, tenant: str, endpoint_id: uuid.UUID
    ) -> list[bytes]:
        """The secrets deliveries to the endpoint are signed with now: the current one and any
        rotated away from whose overlap has not ended, newest first."""
        rows = await db.fetch(
            "SELECT s.version, s.kek_id, s.wrapped FROM public.webhook_secret s "
            "JOIN public.webhook_endpoint e USING (endpoint_id) "
            "WHERE e.tenant = $1 AND s.endpoint_id = $2 "
            "AND (s.expires_at IS NULL OR s.expires_at > now()) ORDER BY s.version DESC",
            tenant,
            endpoint_id,
        )
        return [
            await self._unwrap(
                row["kek_id"], row["wrapped"], secret_aad(tenant, endpoint_id, row["version"])
            )
            for row in rows
        ]

    async def _unwrap(self, kek_id: str, wrapped: bytes, bound_to: bytes) -> bytes:
        kek = self._keks.get(kek_id)
        if kek is None:
            raise WrongKeyEncryptionKey(
                f"a webhook signing secret is wrapped by key-encryption key {kek_id}, which is "
                "not configured: set it (as ENGRAM_KEYS_PREVIOUS_KEK during a rotation), or "
                "rotate the endpoint's secret"
            )
        return await kek.unwrap(wrapped, bound_to)


async def expire_current(
    conn: asyncpg.Connection, endpoint_id: uuid.UUID, *, overlap_s: float
) -> tuple[int, datetime | None]:
    """Give the endpoint's current secret an end ``overlap_s`` from now (secrets already ending
    sooner keep their end); the next version's number and the end given."""
    row = await conn.fetchrow(
        "UPDATE public.webhook_secret SET expires_at = now() + make_interval(secs => $2) "
        "WHERE endpoint_id = $1 AND expires_at IS NULL RETURNING expires_at",
        endpoint_id,
        overlap_s,
    )
    version = await conn.fetchval(
        "SELECT coalesce(max(version), 0) + 1 FROM public.webhook_secret WHERE endpoint_id = $1",
        endpoint_id,
    )
    return int(version), row["expires_at"] if row else None
