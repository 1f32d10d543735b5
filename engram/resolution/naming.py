"""Name-based identities for the rows resolution writes, spelt without repeated work.

Every id resolution makes (a belief, its evidence, a memory event) is
:func:`formation.core.name_uuid` over a few parts: UUIDv5, the SHA-1 of the namespace and the
parts joined by ``\\x1f``. The projector makes about eight of these a batch, so they are worth
making cheaply: :class:`Names` hashes the parts every name of a batch shares (the kind of row,
the run) once and copies that state for each name, and :func:`uuid5` builds the UUID from the
digest's integer instead of through ``uuid.UUID``'s general constructor. A name made here is
equal to ``name_uuid`` over the same parts (a unit test holds them to it).
"""

from __future__ import annotations

import hashlib
import uuid

from engram.formation.core import ENGRAM_NAMESPACE

_VERSION_MASK = ~((0xF000 << 64) | (0xC000 << 48))
_VERSION_5 = (5 << 76) | (0x8000 << 48)
"""RFC 4122 §4.3: version 5 in bits 76-79, the variant 0b10 in bits 62-63."""
_SAFE = uuid.SafeUUID.unknown


def uuid5(sha1_digest: bytes) -> uuid.UUID:
    """``uuid.UUID(bytes=sha1_digest[:16], version=5)``, set directly: the constructor's checks
    and keyword handling cost more than the hash itself."""
    value = (int.from_bytes(sha1_digest[:16], "big") & _VERSION_MASK) | _VERSION_5
    made = object.__new__(uuid.UUID)
    object.__setattr__(made, "int", value)
    object.__setattr__(made, "is_safe", _SAFE)
    return made


class Names:
    """Names that start with the same parts: ``Names(*first).name(*rest)`` equals
    ``name_uuid(*first, *rest)`` for any non-empty ``rest``."""

    __slots__ = ("_prefix",)

    def __init__(self, *first: object) -> None:
        prefix = ENGRAM_NAMESPACE.bytes + "\x1f".join(map(str, first)).encode() + b"\x1f"
        self._prefix = hashlib.sha1(prefix)

    def name(self, *rest: object) -> uuid.UUID:
        state = self._prefix.copy()
        state.update("\x1f".join(map(str, rest)).encode())
        return uuid5(state.digest())
