"""Key-encryption keys: what wraps every data key at rest.

:class:`KeyEncryptionKey` is the port: an id it is known by, and async wrap/unwrap of a data key
bound to associated data. An adapter for a KMS (Vault Transit, AWS KMS, Google Cloud KMS, a
PKCS#11 module) implements it and passes the contract suite every implementation passes
(``tests/unit/keys/kek_contract.py``; docs/privacy.md, "Writing a KMS adapter").
:class:`LocalKek` is the reference implementation: 32 bytes from the settings (``ENGRAM_KEYS_KEK``)
or from a file only its owner reads (``ENGRAM_KEYS_KEK_FILE``, :mod:`engram.keys.kek_file`),
used with AES-256-GCM. Its id is derived from the key (a SHA-256 fingerprint, which reveals
nothing of a 256-bit random key), so a stored row says which KEK wrapped it and a wrong KEK is
named as such.
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
from engram.keys.cipher import NONCE_BYTES, TAG_BYTES
from engram.keys.errors import (
    KeyEncryptionKeyInvalid,
    KeyEncryptionKeyMissing,
    WrongKeyEncryptionKey,
)
from engram.keys.kek_file import read_kek_file

KEK_BYTES = 32


KEK_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$"
"""What a KEK id may be: it is stored in every ``data_key`` row and named in every message."""


class KeyEncryptionKey(Protocol):
    """The port every key-encryption key implements; async because a KMS is a network call.

    The contract (``tests/unit/keys/kek_contract.py`` holds it as tests): ``key_id`` is stable
    for the life of the key and matches :data:`KEK_ID_PATTERN`; ``wrap`` of the same key twice
    gives different bytes (a fresh nonce, or the KMS's own); ``unwrap`` gives back exactly what
    was wrapped under the same associated data, and raises :class:`WrongKeyEncryptionKey` for
    anything else — other associated data, altered bytes, another KEK's wrapping — never
    returns other bytes and never raises anything else for a wrapping that does not
    authenticate. A KMS that cannot be reached raises its own (retriable) error instead.
    """

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
            if len(wrapped) < NONCE_BYTES + TAG_BYTES:  # too short to hold a nonce and a tag
                raise InvalidTag
            return self._aead.decrypt(wrapped[:NONCE_BYTES], wrapped[NONCE_BYTES:], aad)
        except InvalidTag as error:
            raise WrongKeyEncryptionKey(
                f"a data key does not unwrap under key-encryption key {self._id}"
            ) from error


def new_kek_text() -> str:
    """A fresh key-encryption key in the settings' form (``engram keys new-kek``)."""
    return base64.b64encode(secrets.token_bytes(KEK_BYTES)).decode("ascii")


MISSING = (
    "no key-encryption key is configured: set ENGRAM_KEYS_KEK_FILE to a file holding one "
    "(`engram keys new-kek --file PATH` makes it, readable by its owner only) or ENGRAM_KEYS_KEK "
    "to its text (32 random bytes, base64)"
)


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


def kek_configured(settings: KeysSettings) -> bool:
    """Whether a key-encryption key is configured at all (its value is checked on use): set,
    or in a file that exists (an image may name a secret's path that a deployment without
    encryption does not mount)."""
    return settings.kek is not None or (
        settings.kek_file is not None and settings.kek_file.exists()
    )


def current_kek(settings: KeysSettings) -> LocalKek:
    """The KEK in force: ``ENGRAM_KEYS_KEK`` if set, else the file ``ENGRAM_KEYS_KEK_FILE``
    names; :class:`KeyEncryptionKeyMissing` when neither is set."""
    if settings.kek is not None:
        return parse_kek(settings.kek, "ENGRAM_KEYS_KEK")
    if settings.kek_file is not None:
        return parse_kek(
            read_kek_file(settings.kek_file), f"ENGRAM_KEYS_KEK_FILE {settings.kek_file}"
        )
    raise KeyEncryptionKeyMissing(MISSING)


def keks_from_settings(settings: KeysSettings) -> tuple[LocalKek, LocalKek | None]:
    """The current KEK and, during a rotation, the previous one."""
    current = current_kek(settings)
    previous = (
        None
        if settings.previous_kek is None
        else parse_kek(settings.previous_kek, "ENGRAM_KEYS_PREVIOUS_KEK")
    )
    return current, previous
