"""The field cipher: one field of a person's words encrypted under the principal's data key.

Pure: bytes and strings in and out, no database and no settings, so a producer in another
language can implement the same thing from docs/privacy.md ("The encrypted field format"):

``v1.<key id>.<nonce>.<ciphertext>``: ASCII, JSON-safe, no padding. ``key id`` is the data key's
id (1-64 of ``A-Z a-z 0-9 _ -``); ``nonce`` is 12 random bytes and ``ciphertext`` AES-256-GCM's
output with its 16-byte tag appended, both base64url without ``=``. The associated data is the
length-prefixed concatenation (``aad``) of ``engram.field.v1``, the key id, the tenant, the
principal, the event id and the field name, so a ciphertext copied to another principal, event
or field fails to authenticate instead of being read as theirs.

The nonce is random per field (a 96-bit nonce under one key is safe for far more fields than
one principal will ever say: NIST SP 800-38D's 2^32 bound).
"""

from __future__ import annotations

import binascii
import re
import secrets
from dataclasses import dataclass, field
from functools import lru_cache

import pybase64
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from engram.keys.errors import CiphertextRejected, FieldTooLarge, MalformedCiphertext

VERSION = "v1"
DATA_KEY_BYTES = 32
NONCE_BYTES = 12
TAG_BYTES = 16
MAX_FIELD_BYTES = 8 * 1024 * 1024
"""The largest plaintext field (UTF-8 bytes): the API's default body limit; far below
AES-GCM's own bound, and above any Kafka record Engram writes."""

_KEY_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_URLSAFE = b"-_"


@dataclass(frozen=True, slots=True)
class DataKey:
    """One principal's unwrapped data key. The material never appears in a repr or a log."""

    key_id: str
    material: bytes = field(repr=False)
    aead: AESGCM = field(init=False, repr=False, compare=False)
    """The cipher keyed with ``material``, made once: a cached key seals and opens every field
    of its principal, and building it is an AES key schedule each time."""

    def __post_init__(self) -> None:
        check_key_id(self.key_id)
        if len(self.material) != DATA_KEY_BYTES:
            raise ValueError(f"a data key is {DATA_KEY_BYTES} bytes, not {len(self.material)}")
        object.__setattr__(self, "aead", AESGCM(self.material))  # frozen: set once, here


def check_key_id(key_id: str) -> str:
    """A key id is what the format can carry between dots: 1-64 base64url characters."""
    if _KEY_ID.fullmatch(key_id) is None:
        raise MalformedCiphertext(f"a key id is 1-64 of A-Z a-z 0-9 _ -, not {key_id[:80]!r}")
    return key_id


def new_data_key() -> DataKey:
    """A fresh random data key with a random id (a destroyed key's id is never reused)."""
    return DataKey(secrets.token_urlsafe(12), secrets.token_bytes(DATA_KEY_BYTES))


def aad(*parts: str) -> bytes:
    """The associated data: each part as a 4-byte big-endian length and its UTF-8 bytes, so no
    two different tuples of parts give the same bytes (``("a.b", "c")`` is not ``("a", "b.c")``)."""
    out = bytearray()
    for part in parts:
        data = part.encode("utf-8")
        out += len(data).to_bytes(4, "big")
        out += data
    return bytes(out)


def field_aad(key_id: str, tenant: str, principal: str, event_id: str, field_name: str) -> bytes:
    """What binds one field's ciphertext to its key, owner, event and place."""
    return _owner_aad(key_id, tenant, principal) + aad(event_id, field_name)


@lru_cache(maxsize=4096)
def _owner_aad(key_id: str, tenant: str, principal: str) -> bytes:
    """The first parts of a field's associated data, the same for all of a principal's fields
    (ids, no secret): made once per principal in the working set, not once per field."""
    return aad("engram.field.v1", key_id, tenant, principal)


def _b64(data: bytes) -> str:
    return pybase64.b64encode(data, altchars=_URLSAFE).rstrip(b"=").decode("ascii")


def _unb64(text: str, what: str) -> bytes:
    """base64url without padding, decoded strictly. A field's ciphertext is the size of the
    words it holds, and this runs over every sealed record each reader reads: pybase64's SIMD
    decoder with ``validate`` refuses anything outside the alphabet at memory speed, where a
    Python regex over the text and the stdlib's decoder were most of what opening a sealed
    claims batch cost (bench/sealing_cost.py). It decodes ``+ /`` as well as ``- _`` (the two
    alphabets at once), so those and ``=`` are refused first: this format has none of them."""
    if "+" in text or "/" in text or "=" in text:
        raise MalformedCiphertext(f"the {what} of an encrypted field is not base64url")
    try:
        return pybase64.b64decode(text + "=" * (-len(text) % 4), altchars=_URLSAFE, validate=True)
    except (binascii.Error, ValueError) as error:
        raise MalformedCiphertext(f"the {what} of an encrypted field is not base64url") from error


@dataclass(frozen=True, slots=True)
class Sealed:
    """A parsed encrypted field: which key, the nonce, and the ciphertext with its tag."""

    key_id: str
    nonce: bytes
    ciphertext: bytes

    def encode(self) -> str:
        return f"{VERSION}.{self.key_id}.{_b64(self.nonce)}.{_b64(self.ciphertext)}"


def parse(token: str) -> Sealed:
    """Parse an encrypted field, saying exactly what is wrong with one that is not."""
    if not isinstance(token, str):
        raise MalformedCiphertext(f"an encrypted field is a string, not {type(token).__name__}")
    parts = token.split(".")
    if len(parts) != 4:
        raise MalformedCiphertext(
            f"an encrypted field is 'v1.<key id>.<nonce>.<ciphertext>': 4 parts, not {len(parts)}"
        )
    version, key_id, nonce_text, body_text = parts
    if version != VERSION:
        raise MalformedCiphertext(
            f"encrypted field version {version[:16]!r} is not supported (this reads {VERSION!r})"
        )
    check_key_id(key_id)
    nonce = _unb64(nonce_text, "nonce")
    if len(nonce) != NONCE_BYTES:
        raise MalformedCiphertext(f"the nonce is {NONCE_BYTES} bytes, not {len(nonce)}")
    body = _unb64(body_text, "ciphertext")
    if len(body) < TAG_BYTES:
        raise MalformedCiphertext(f"the ciphertext is shorter than its {TAG_BYTES}-byte tag")
    return Sealed(key_id, nonce, body)


def encrypt_field(
    key: DataKey,
    tenant: str,
    principal: str,
    event_id: str,
    field_name: str,
    plaintext: str | bytes,
) -> str:
    """Encrypt one field under ``key``, bound to tenant, principal, event id and field name.
    ``plaintext`` as bytes is taken as UTF-8 already (a serialiser's output: no copy to a
    string and back)."""
    # a lone surrogate is refused here, as str.encode does
    data = plaintext.encode("utf-8") if isinstance(plaintext, str) else plaintext
    if len(data) > MAX_FIELD_BYTES:
        raise FieldTooLarge(
            f"field {field_name!r} is {len(data)} bytes; the cipher takes at most {MAX_FIELD_BYTES}"
        )
    nonce = secrets.token_bytes(NONCE_BYTES)
    body = key.aead.encrypt(
        nonce, data, field_aad(key.key_id, tenant, principal, event_id, field_name)
    )
    return Sealed(key.key_id, nonce, body).encode()


def decrypt_bytes(
    key: DataKey,
    tenant: str,
    principal: str,
    event_id: str,
    field_name: str,
    token: str | Sealed,
) -> bytes:
    """Decrypt one field to its UTF-8 bytes (for a reader that decodes JSON from them); a
    ciphertext that does not authenticate for exactly this key, tenant, principal, event and
    field raises :class:`CiphertextRejected`, never returns garbage. ``token`` may be one the
    caller already parsed (to find its key)."""
    sealed = token if isinstance(token, Sealed) else parse(token)
    if sealed.key_id != key.key_id:
        raise CiphertextRejected(
            f"field {field_name!r} was encrypted under data key {sealed.key_id!r}, "
            f"not {key.key_id!r}"
        )
    try:
        return key.aead.decrypt(
            sealed.nonce,
            sealed.ciphertext,
            field_aad(key.key_id, tenant, principal, event_id, field_name),
        )
    except InvalidTag as error:
        raise CiphertextRejected(
            f"field {field_name!r} of event {event_id!r} does not authenticate for this tenant "
            "and principal: altered, or moved from another principal, event or field"
        ) from error


def decrypt_field(
    key: DataKey,
    tenant: str,
    principal: str,
    event_id: str,
    field_name: str,
    token: str | Sealed,
) -> str:
    """Decrypt one field to its text (:func:`decrypt_bytes`, decoded)."""
    return decrypt_bytes(key, tenant, principal, event_id, field_name, token).decode("utf-8")
