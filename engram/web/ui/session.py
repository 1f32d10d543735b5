"""The inspector's cookies and keys: a random session id, the CSRF token every form carries, and
the one secret both keys derive from.

Signing in makes a server-side session (:mod:`engram.service.sessions`): the session cookie
holds its random id and nothing else — no token, no scope — so signing out, revoking the token
or forgetting the person ends it for every copy of the cookie. The cookie is ``HttpOnly`` (no
script reads it), ``Path=/ui``, never in a URL, and ``SameSite=Lax``: a link from mail or chat
(a top-level GET) arrives with it and opens the page it points to, while another site's form
post, image or frame does not carry it.

CSRF: every form carries a token that is an HMAC of the session id (or, before sign-in, of a
random pre-session cookie, ``SameSite=Strict``) under a key derived from the secret — the
synchronizer-token pattern without server state. Another site can neither read the cookie nor
compute the HMAC; its posts arrive without the cookie besides, and with a foreign ``Origin``,
which :mod:`.access` refuses first.

The secret (``ENGRAM_API_UI_SECRET``) must hold at least 32 random bytes (256 bits) by an
honest estimate of the randomness its text can hold (:mod:`.entropy`: repeats, sequences,
keyboard rows and words cost little; characters cost what their classes allow), which
``secrets.token_urlsafe(48)`` always does; anything less stops the API from starting
(:class:`UiSecretTooWeak`). Two keys are derived from it with HKDF-SHA256,
one per purpose: the form key, and an AES-GCM key that seals the forgetting cookie.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from engram.infra.errors import EngramFailure
from engram.web.ui.entropy import estimated_bits

SESSION_COOKIE = "engram_session"
FORGETTING_COOKIE = "engram_forgetting"
"""Which forgetting this browser sent: the progress page outlives the session, since
forgetting a person ends their sessions and deletes their tokens."""
PRESESSION_COOKIE = "engram_presession"
COOKIE_PATH = "/ui"
_AAD = b"engram-ui-session-v1"
_NONCE = 12
_SALT = b"engram-ui-keys-v2"

MIN_SECRET_BITS = 256
"""32 random bytes: what the inspector's keys are derived from must be at least as hard to guess
as the keys themselves."""
MAKE_A_SECRET = "python3 -c 'import secrets; print(secrets.token_urlsafe(48))'"


class UiSecretTooWeak(EngramFailure, ValueError):
    """``ENGRAM_API_UI_SECRET`` is set to something a guess could find."""

    code = "ui_secret_too_weak"


def check_secret(secret: str) -> bytes:
    """The secret's bytes, once its text can hold :data:`MIN_SECRET_BITS` of randomness by
    :func:`~.entropy.estimated_bits`; :class:`UiSecretTooWeak` (saying how to make one)
    otherwise. No estimate proves randomness: this refuses what cannot be random, the rest is
    the operator's to get right."""
    bits = estimated_bits(secret)
    if bits < MIN_SECRET_BITS:
        raise UiSecretTooWeak(
            f"ENGRAM_API_UI_SECRET must hold at least {MIN_SECRET_BITS} bits (32 bytes) of "
            f"randomness; its {len(secret)} characters hold at most {bits:.0f} by Engram's "
            "estimate (a repeated stretch, a run like 1234 or qwerty, and words count for "
            f"little). Make one with: {MAKE_A_SECRET}"
        )
    return secret.encode()


def _derive(root: bytes, purpose: bytes) -> bytes:
    return HKDF(
        algorithm=hashes.SHA256(), length=32, salt=_SALT, info=b"engram-ui " + purpose
    ).derive(root)


class UiKeys:
    """The inspector's two keys, derived from one secret with HKDF: one signs forms, one seals
    the forgetting cookie. Without a secret, a random one for this process (forms of a page
    opened before a restart are then refused; sessions themselves live in PostgreSQL)."""

    def __init__(self, secret: str | None) -> None:
        root = check_secret(secret) if secret is not None else secrets.token_bytes(32)
        self._seal = AESGCM(_derive(root, b"seal"))
        self._sign = _derive(root, b"csrf")

    def __repr__(self) -> str:  # keys in a traceback or a log show nothing of themselves
        return "UiKeys(<hidden>)"

    def seal_json(self, purpose: bytes, value: object) -> str:
        """``value`` as JSON, encrypted and authenticated for ``purpose`` (a cookie sealed for
        one purpose never opens as another)."""
        nonce = secrets.token_bytes(_NONCE)
        sealed = self._seal.encrypt(nonce, json.dumps(value).encode(), _AAD + b"\x00" + purpose)
        return _b64(nonce + sealed)

    def open_json(self, purpose: bytes, cookie: str | None) -> object:
        """What :meth:`seal_json` sealed for ``purpose``; None for anything else."""
        if not cookie:
            return None
        try:
            raw = _unb64(cookie)
            return json.loads(
                self._seal.decrypt(raw[:_NONCE], raw[_NONCE:], _AAD + b"\x00" + purpose)
            )
        except (ValueError, InvalidTag, TypeError):
            return None

    def csrf_token(self, binding: str) -> str:
        """The token a form of this session (or pre-session) carries."""
        return _b64(hmac.new(self._sign, b"csrf\x00" + binding.encode(), hashlib.sha256).digest())

    def csrf_valid(self, binding: str | None, presented: str | None) -> bool:
        if not binding or not presented:
            return False
        return hmac.compare_digest(self.csrf_token(binding), presented)


def new_presession() -> str:
    """A random value that binds the sign-in form's CSRF token before there is a session."""
    return secrets.token_urlsafe(32)


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
