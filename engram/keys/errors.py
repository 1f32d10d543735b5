"""The failures of the key store and the field cipher, each distinct so a caller can tell a key
that was destroyed on purpose (forgetting) from a ciphertext that was tampered with or moved,
and both from a key-encryption key that is missing or wrong (an operator's mistake)."""

from __future__ import annotations

from engram.infra.errors import EngramFailure


class KeyEncryptionKeyMissing(EngramFailure, LookupError):
    """No key-encryption key is configured: nothing can be encrypted or read."""

    code = "kek_missing"


class KeyEncryptionKeyInvalid(EngramFailure, ValueError):
    """The configured key-encryption key is not 32 bytes of base64 (its value is never shown)."""

    code = "kek_invalid"


class WrongKeyEncryptionKey(EngramFailure, ValueError):
    """Stored keys do not unwrap under the configured key-encryption key(s): the wrong KEK, or
    keys wrapped by one that is no longer configured. Raised at start, before anything forms."""

    code = "kek_wrong"


class KeyDestroyed(EngramFailure, LookupError):
    """The data key these words were encrypted with was destroyed (the principal was forgotten):
    they are unreadable for good. Not a fault: a reader records it and moves on."""

    code = "key_destroyed"


class UnknownDataKey(EngramFailure, LookupError):
    """A ciphertext names a data key this store never had for that principal."""

    code = "data_key_unknown"


class MalformedCiphertext(EngramFailure, ValueError):
    """A field that should be an encrypted token is not one (wrong version, shape or encoding)."""

    code = "ciphertext_malformed"


class CiphertextRejected(EngramFailure, ValueError):
    """A well-formed ciphertext does not authenticate: it was altered, or moved from another
    tenant, principal, event or field, or encrypted under another key with the same id."""

    code = "ciphertext_rejected"


class FieldTooLarge(EngramFailure, ValueError):
    """A field is larger than the cipher accepts (``cipher.MAX_FIELD_BYTES``)."""

    code = "field_too_large"


class RotationRefused(EngramFailure, ValueError):
    """``engram keys rotate`` cannot start as configured (no previous KEK, or the same KEK)."""

    code = "rotation_refused"
