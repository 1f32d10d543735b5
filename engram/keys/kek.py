"""Key-encryption keys: what wraps every data key at rest.

:class:`KeyEncryptionKey` is the interface a real KMS implements later (AWS KMS, Vault transit,
a PKCS#11 module): an id it is known by, and wrap/unwrap of a data key with associated data.
:class:`LocalKek` is the one built in: 32 bytes from the settings (``ENGRAM_KEYS_KEK``), used with
AES-256-GCM. Its id is derived from the key (a SHA-256 fingerprint, which reveals nothing of a
256-bit random key), so a stored row says which KEK wrapped it and a wrong KEK is named as such.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import secrets
from typing import Protocol

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from pydantic import SecretStr

from engram.infra.settings import KeysSettings
from engram.keys.cipher import NONCE_BYTES
from engram.keys.errors import (
    KeyEncryptionKeyInvalid,
    KeyEncryptionKeyMissing,
    WrongKeyEncryptionKey,
)

KEK_BYTES = 32


class KeyEncryptionKey(Protocol):
    """Wraps and unwraps data keys; async because a KMS is a network call."""

    @property
    def key_id(self) -> str:
        """A stable name for this KEK, stored beside every key it wraps."""
        ...

    async def wrap(self, data_key: bytes, aad: bytes) -> bytes:
        """Encrypt ``data_key`` bound to ``aad``."""
        ...

    async def unwrap(self, wrapped: bytes, aad: bytes) -> bytes:
        """Decrypt a wrapped key; raise :class:`WrongKeyEncryptionKey` if it does not
        authenticate (another KEK's, altered, or bound to other associated data)."""
        ...


class LocalKek:
    """A KEK held in the process (from the settings): AES-256-GCM, a random nonce per wrap,
    stored as nonce ‖ ciphertext ‖ tag."""

    def __init__(self, secret: bytes) -> None:
        if len(secret) != KEK_BYTES:
            raise KeyEncryptionKeyInvalid(f"a key-encryption key is {KEK_BYTES} bytes")
        self._aead = AESGCM(secret)
        self._id = "local-" + hashlib.sha256(b"engram.kek-id.v1" + secret).hexdigest()[:16]

    def __repr__(self) -> str:
        return f"LocalKek({self._id})"

    @property
    def key_id(self) -> str:
        return self._id

    async def wrap(self, data_key: bytes, aad: bytes) -> bytes:
        nonce = secrets.token_bytes(NONCE_BYTES)
        return nonce + self._aead.encrypt(nonce, data_key, aad)

    async def unwrap(self, wrapped: bytes, aad: bytes) -> bytes:
        try:
            return self._aead.decrypt(wrapped[:NONCE_BYTES], wrapped[NONCE_BYTES:], aad)
        except InvalidTag as error:
            raise WrongKeyEncryptionKey(
                f"a data key does not unwrap under key-encryption key {self._id}"
            ) from error


def new_kek_text() -> str:
    """A fresh key-encryption key in the settings' form (``engram keys new-kek``)."""
    return base64.b64encode(secrets.token_bytes(KEK_BYTES)).decode("ascii")


def parse_kek(secret: SecretStr | None, setting: str) -> LocalKek:
    """The KEK a setting holds; a missing or malformed one is refused by the setting's name,
    never echoing its value."""
    if secret is None or not secret.get_secret_value().strip():
        raise KeyEncryptionKeyMissing(
            f"{setting} is not set: the key-encryption key (32 random bytes, base64; "
            "`engram keys new-kek` makes one) is needed to read or create any data key"
        )
    try:
        raw = base64.b64decode(secret.get_secret_value().strip(), validate=True)
    except (binascii.Error, ValueError) as error:
        raise KeyEncryptionKeyInvalid(f"{setting} is not base64") from error
    if len(raw) != KEK_BYTES:
        raise KeyEncryptionKeyInvalid(
            f"{setting} decodes to {len(raw)} bytes; a key-encryption key is {KEK_BYTES}"
        )
    return LocalKek(raw)


def keks_from_settings(settings: KeysSettings) -> tuple[LocalKek, LocalKek | None]:
    """The current KEK and, during a rotation, the previous one."""
    current = parse_kek(settings.kek, "ENGRAM_KEYS_KEK")
    previous = (
        None
        if settings.previous_kek is None
        else parse_kek(settings.previous_kek, "ENGRAM_KEYS_PREVIOUS_KEK")
    )
    return current, previous
