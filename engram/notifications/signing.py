"""Signing a notification the Standard Webhooks way (https://www.standardwebhooks.com/).

Pure: bytes in, header values out. Each request carries ``webhook-id`` (the delivery's id, the
same on every attempt, so a receiver deduplicates on it), ``webhook-timestamp`` (whole seconds
since the epoch, fresh on every attempt, so a receiver can refuse a replayed request) and
``webhook-signature``: ``v1,<base64 HMAC-SHA256>`` over ``{id}.{timestamp}.{body}`` with the
secret's raw bytes, one per secret in force, separated by spaces (two during a rotation's
overlap; a receiver accepts the request if any matches). The published ``standardwebhooks``
libraries verify it; ``tests/unit/notifications/test_signing.py`` holds that.

A secret is shown as ``whsec_`` followed by the base64 of its bytes, the form those libraries
take.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from collections.abc import Sequence

SECRET_PREFIX = "whsec_"
SECRET_BYTES = 32


def new_secret() -> bytes:
    """A fresh signing secret: 32 random bytes."""
    return secrets.token_bytes(SECRET_BYTES)


def secret_text(secret: bytes) -> str:
    """The secret as a receiver configures it: ``whsec_<base64>``."""
    return SECRET_PREFIX + base64.b64encode(secret).decode("ascii")


def secret_bytes(text: str) -> bytes:
    """The bytes of a ``whsec_`` secret (for tests and receivers written in Python)."""
    if not text.startswith(SECRET_PREFIX):
        raise ValueError(f"a signing secret starts with {SECRET_PREFIX!r}")
    try:
        return base64.b64decode(text[len(SECRET_PREFIX) :], validate=True)
    except binascii.Error as error:
        raise ValueError("a signing secret is whsec_ and base64") from error


def signature(secret: bytes, message_id: str, timestamp: int, body: bytes) -> str:
    """``v1,<base64>``: HMAC-SHA256 of ``{message_id}.{timestamp}.{body}`` under ``secret``."""
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(secret, signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def signed_headers(
    keys: Sequence[bytes], message_id: str, timestamp: int, body: bytes
) -> dict[str, str]:
    """The three Standard Webhooks headers for one attempt, signed with every key in force."""
    if not keys:
        raise ValueError("a notification is signed with at least one secret")
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(signature(k, message_id, timestamp, body) for k in keys),
    }
