"""The sender's own HMAC is the Standard Webhooks scheme: the published library verifies it."""

from __future__ import annotations

import time

import pytest
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from engram.notifications.signing import (
    new_secret,
    secret_bytes,
    secret_text,
    signature,
    signed_headers,
)

BODY = b'{"type":"memory.formed","timestamp":"2026-01-01T00:00:00Z","data":{}}'


def test_a_signed_request_verifies_with_the_standardwebhooks_library() -> None:
    secret = new_secret()
    headers = signed_headers(
        [secret], "3f1c2b9e-0000-4000-8000-000000000001", int(time.time()), BODY
    )
    assert Webhook(secret_text(secret)).verify(BODY, headers) == {
        "type": "memory.formed",
        "timestamp": "2026-01-01T00:00:00Z",
        "data": {},
    }


def test_the_signature_matches_the_librarys_own_for_the_same_id_time_and_body() -> None:
    secret = new_secret()
    from datetime import UTC, datetime

    at = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert signature(secret, "msg", int(at.timestamp()), BODY) == Webhook(secret_text(secret)).sign(
        "msg", at, BODY
    )


def test_during_a_rotation_either_secret_verifies() -> None:
    old, new = new_secret(), new_secret()
    headers = signed_headers([new, old], "id-1", int(time.time()), BODY)
    assert headers["webhook-signature"].count("v1,") == 2
    for secret in (old, new):
        Webhook(secret_text(secret)).verify(BODY, headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(secret_text(new_secret())).verify(BODY, headers)


def test_a_changed_body_or_id_does_not_verify() -> None:
    secret = new_secret()
    headers = signed_headers([secret], "id-1", int(time.time()), BODY)
    with pytest.raises(WebhookVerificationError):
        Webhook(secret_text(secret)).verify(BODY + b" ", headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(secret_text(secret)).verify(BODY, {**headers, "webhook-id": "id-2"})


def test_a_secret_is_whsec_and_base64_and_reads_back() -> None:
    secret = new_secret()
    text = secret_text(secret)
    assert text.startswith("whsec_") and secret_bytes(text) == secret
    with pytest.raises(ValueError, match="whsec_"):
        secret_bytes(text.removeprefix("whsec_"))


def test_nothing_is_signed_without_a_secret() -> None:
    with pytest.raises(ValueError, match="at least one secret"):
        signed_headers([], "id", 0, BODY)
