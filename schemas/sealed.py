"""Sealed events: a log event whose words are encrypted under its principal's data key.

With log encryption on (``ENGRAM_KEYS_ENCRYPT_LOG``), every event of ``engram.episodes`` that
carries a person's words — a turn (message content, author), a remembered memory, a correction
(its statement, replacement and content key) — is appended as a :class:`SealedEvent`: the
routing fields stay in clear (type of what is sealed, event id, tenant, principal, project,
session, time), and the whole original event, as its contract's JSON, is one ``v1`` field token
(docs/privacy.md, "The encrypted field format") in ``words``, encrypted under the principal's
data key with the tenant, principal, event id and the field name ``event`` as associated data.

One token for the whole event rather than one per field: a reader opens it and gets the
original event back to validate by its own contract — lengths, the text contract, ordinals —
so the contract of what a turn *is* stays written once, and a producer in another language
seals by serialising the event it already builds. The marker is the type ``sealed``, never a
guess from a field's shape: a person's message may well look like a token. Deletions and
forgettings carry no words and stay in clear.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    TypeAdapter,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import PydanticCustomError, core_schema

from engram.schemas.claims import ClaimsBatchFormed, ClaimsBatchHeader, FormationCounts
from engram.schemas.common import SchemaVersionNamed
from engram.schemas.episodes import EpisodeBase

SEALED_FIELD = "event"
"""The field name in a sealed event's associated data."""

SEALED_TOKEN_PATTERN = r"^v1\.[A-Za-z0-9_-]{1,64}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$"
"""An encrypted field's shape, ``v1.<key id>.<nonce>.<ciphertext>`` (docs/privacy.md)."""

_TOKEN_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_."


def check_sealed_token(words: str) -> str:
    """``words`` unchanged if it has :data:`SEALED_TOKEN_PATTERN`'s shape, else a validation
    error. The same test as the pattern, made of C string operations: a token is as long as the
    words it seals (a claims batch's, kilobytes), every reader checks every sealed record, and
    pydantic's regex took ~3 ns a character — the larger part of decoding a sealed claims
    batch (bench/sealing_cost.py). The cipher's parsing checks the parts again, exactly."""
    key_end = words.find(".", 3)
    nonce_end = words.find(".", key_end + 1)
    if (
        not words.startswith("v1.")
        or not 4 <= key_end <= 67  # a key id of 1 to 64 characters after "v1."
        or nonce_end <= key_end + 1  # a nonce of at least one character
        or nonce_end >= len(words) - 1  # a ciphertext of at least one character
        or words.count(".") != 3
        or not words.isascii()
        or words.encode("ascii").translate(None, _TOKEN_ALPHABET)  # what is left is foreign
    ):
        raise PydanticCustomError(
            "sealed_token", f"an encrypted field must match {SEALED_TOKEN_PATTERN}"
        )
    return words


class _SealedToken:
    """Marks a ``str`` as an encrypted field: validated by :func:`check_sealed_token`, and
    described by :data:`SEALED_TOKEN_PATTERN` in the exported JSON Schemas."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(check_sealed_token, handler(source))

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        described = handler(schema)
        described["pattern"] = SEALED_TOKEN_PATTERN
        return described


SealedToken = Annotated[str, _SealedToken()]

SealableType = Literal["turn.appended", "memory.remember", "belief.corrected"]


class SealedEvent(EpisodeBase):
    """An event whose words are encrypted; open it with the principal's data key."""

    schema_version: SchemaVersionNamed = Field(  # type: ignore[assignment]  # 2: pseudonymous
        default=1,
        description="1: `principal` names the principal; 2: it is their pseudonym, and the "
        'principal is named only inside `words` (docs/privacy.md, "Who a record is about").',
    )
    type: Literal["sealed"] = "sealed"
    sealed_type: SealableType = Field(description="The type of the event sealed inside.")
    words: SealedToken = Field(
        max_length=12 * 1024 * 1024,
        description="The original event's JSON, encrypted: `v1.<key id>.<nonce>.<ciphertext>` "
        "(AES-256-GCM; associated data: engram.field.v1, key id, tenant, principal, event id, "
        "`event`, each length-prefixed; docs/privacy.md).",
    )


SEALED_CLAIMS_FIELD = "claims"
"""The field name in a sealed claims batch's associated data (its event id is the batch id)."""

SEALED_CLAIMS_CLEAR = frozenset(
    {
        "schema_version",
        "batch_id",
        "tenant",
        "principal",
        "project",
        "session",
        "episode_id",
        "episode_type",
        "trigger",
        "source",
        "occurred_at",
        "policy_version",
        "counts",
        "activation_corroborations",
    }
)
"""What a sealed claims batch keeps in clear beside the sealed whole: everything but the
candidates, refusals and correction, which quote or restate a person's words."""


class SealedClaimsBatch(ClaimsBatchHeader):
    """A claims batch of ``engram.claims`` sealed whole under the principal's data key, with
    a clear copy of everything but its candidates, refusals and correction — ids, source
    position, counts, policy — so a batch whose key was destroyed still projects (as one that
    formed nothing) and the watermarks still pass it."""

    type: Literal["claims.sealed"] = "claims.sealed"
    counts: FormationCounts
    activation_corroborations: int = Field(default=1, ge=1)
    words: SealedToken = Field(
        description="The whole `claims.formed` batch as JSON, encrypted as in a sealed event "
        "(associated data: the batch id as event id, field name `claims`).",
    )


ClaimsRecordValue = Annotated[ClaimsBatchFormed | SealedClaimsBatch, Field(discriminator="type")]
claims_record_adapter: TypeAdapter[ClaimsBatchFormed | SealedClaimsBatch] = TypeAdapter(
    ClaimsRecordValue  # type: ignore[arg-type, unused-ignore]
)


def decode_claims_record(raw: bytes | str) -> ClaimsBatchFormed | SealedClaimsBatch:
    """A record of ``engram.claims``: a batch in clear or sealed; ``ValidationError`` if neither."""
    return claims_record_adapter.validate_json(raw)


def is_sealed_claims(raw: bytes) -> bool:
    """Whether a claims record says it is sealed (its type); the contract still decides."""
    return b'"claims.sealed"' in raw
