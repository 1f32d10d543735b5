"""The inspector's sign-in: a sealed session cookie, and the CSRF token every form carries.

A person signs in by pasting a token once. The token then lives only inside the session cookie,
sealed with AES-GCM under the API's UI key (``ENGRAM_API_UI_SECRET``): the cookie is opaque,
so a log line, a proxy or a screenshot that shows it shows no token, and it is useless on
another deployment. It is ``HttpOnly`` (no script reads it), ``SameSite=Strict`` (no other
site's page sends it) and ``Path=/ui``; it is never put in a URL. The sealed payload carries
when it was issued, and a cookie older than ``ENGRAM_API_UI_SESSION_S`` is refused. Every page
resolves the token again (:func:`engram.service.tokens.grant_for`), so revoking the token ends
the session at once: the cookie is a way to carry the token, never a grant of its own.

CSRF: every form carries a token that is an HMAC, under a second key derived from the same
secret, of the session cookie (or, before sign-in, of a random pre-session cookie) — the
synchronizer-token pattern without server state. A page of another site can neither read the
cookie nor compute the HMAC, and with ``SameSite=Strict`` it cannot send the cookie either.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

SESSION_COOKIE = "engram_session"
FORGETTING_COOKIE = "engram_forgetting"
"""Which forgetting this browser sent: the progress page outlives the session, since
forgetting a person deletes their tokens too."""
PRESESSION_COOKIE = "engram_presession"
COOKIE_PATH = "/ui"
_AAD = b"engram-ui-session-v1"
_NONCE = 12


@dataclass(frozen=True, slots=True)
class Session:
    """What one sign-in holds: the token (secret; only ever inside the sealed cookie) and, for
    an operator's token, the principal the operator chose to look at."""

    token: str
    tenant: str | None
    principal: str | None
    issued_at: int

    def __repr__(self) -> str:  # a session in a traceback or a log shows no token
        return f"Session(tenant={self.tenant!r}, principal={self.principal!r}, token=<hidden>)"


class UiKeys:
    """The two keys of the inspector, derived from one secret: one seals sessions, one signs
    forms. Without a secret, a random one for this process."""

    def __init__(self, secret: str | None) -> None:
        root = secret.encode() if secret else secrets.token_bytes(32)
        self._seal = AESGCM(hashlib.sha256(b"engram-ui-seal\x00" + root).digest())
        self._sign = hashlib.sha256(b"engram-ui-csrf\x00" + root).digest()

    def seal(self, session: Session) -> str:
        return self.seal_json(
            b"session", [session.token, session.tenant, session.principal, session.issued_at]
        )

    def open(
        self, cookie: str | None, *, max_age_s: int, now: float | None = None
    ) -> Session | None:
        """The session a cookie holds; None for no cookie, a forged or altered one, or one
        older than ``max_age_s``."""
        opened = self.open_json(b"session", cookie)
        if not isinstance(opened, list) or len(opened) != 4:
            return None
        token, tenant, principal, issued_at = opened
        if not _fresh(issued_at, max_age_s, now):
            return None
        return Session(token, tenant, principal, int(issued_at))

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
        return _b64(hmac.new(self._sign, b"csrf\x00" + binding.encode(), "sha256").digest())

    def csrf_valid(self, binding: str | None, presented: str | None) -> bool:
        if not binding or not presented:
            return False
        return hmac.compare_digest(self.csrf_token(binding), presented)


def _fresh(issued_at: object, max_age_s: int, now: float | None) -> bool:
    if not isinstance(issued_at, int | float):
        return False
    age = (time.time() if now is None else now) - issued_at
    return 0 <= age <= max_age_s


def new_presession() -> str:
    """A random value that binds the sign-in form's CSRF token before there is a session."""
    return secrets.token_urlsafe(32)


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
