"""Shared field types of the event contract."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Literal, TypeVar
from uuid import UUID

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    StringConstraints,
    TypeAdapter,
    ValidationError,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import PydanticCustomError, core_schema

T = TypeVar("T")

IDENTIFIER_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@-]*$"
Identifier = Annotated[
    str,
    StringConstraints(min_length=1, max_length=200, pattern=IDENTIFIER_PATTERN),
]
"""Tenant, principal, project and session names: printable, no slash (the key separator)."""

STORABLE_TEXT_PATTERN = "^[^\\u0000\\ud800-\\udfff]*$"
"""The text contract as a JSON Schema pattern (ECMA-262 with the ``u`` flag, as JSON Schema
2020-12 reads it): no U+0000, and no lone surrogate — a paired one is a single code point there,
so an emoji written as a surrogate pair in JSON passes."""

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def unstorable_at(text: str) -> int | None:
    """The index of the first code point Engram cannot store, or ``None``.

    Engram stores words in PostgreSQL ``text`` (UTF-8), sends them through Kafka as UTF-8 JSON
    and hashes them: a NUL is refused by PostgreSQL (``invalid byte sequence for encoding
    "UTF8": 0x00``) and a lone surrogate (U+D800-U+DFFF, which a JSON ``\\ud800`` escape
    decodes to) has no UTF-8 encoding at all. Every other Unicode scalar value — control
    characters, bidirectional overrides, private use — is stored as it is and left to formation
    to judge."""
    if text.isascii():
        return None if "\x00" not in text else text.index("\x00")
    found = _UNSTORABLE.search(text)
    return None if found is None else found.start()


def check_storable(text: object) -> object:
    """``text`` unchanged, or a validation error naming the first code point and where it is.

    Run before the ``str`` schema (which judges anything that is not a string), so a lone
    surrogate from a Python caller gets this message rather than pydantic's generic one."""
    if not isinstance(text, str):
        return text
    at = unstorable_at(text)
    if at is None:
        return text
    code = ord(text[at])
    what = "NUL" if code == 0 else "a lone surrogate"
    raise PydanticCustomError(
        "unstorable_text",
        f"text must be Unicode scalar values without NUL: U+{code:04X} ({what}) at character "
        f"{at} cannot be stored; remove or replace it before sending",
    )


class _Storable:
    """Marks a ``str`` as words Engram stores: validated by :func:`check_storable`, and
    described by :data:`STORABLE_TEXT_PATTERN` in the exported JSON Schemas and OpenAPI."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_before_validator_function(check_storable, handler(source))

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        described = handler(schema)
        described["pattern"] = STORABLE_TEXT_PATTERN
        return described


StoredText = Annotated[str, _Storable()]
"""Text that carries a person's words (a message, an author, a correction's statement and
replacement, a search query): any Unicode scalar value but U+0000. Defined once here, so every
door — HTTP, ``engram ingest``, the client, MCP, corrections — and the worker's own decoding of
the log refuse the same text, with an error that names the field."""


def validate_json_naming_text(adapter: TypeAdapter[T], raw: bytes | str) -> T:
    """``adapter.validate_json(raw)``, except that JSON refused only for a lone surrogate
    escape in a string (``"\\ud800"`` is valid JSON text, yet pydantic's parser stops at it with
    "unexpected end of hex escape", naming no field) is refused naming the field that holds it.

    Python's ``json`` reads such an escape; validating what it read runs the text contract
    (:func:`check_storable`), whose error names the field and the character. Whatever that
    validation makes of the value, the JSON is still refused: this only chooses the message."""
    try:
        return adapter.validate_json(raw)
    except ValidationError as error:
        if error.errors()[0]["type"] != "json_invalid":
            raise
        try:
            read = json.loads(raw)
        except (ValueError, RecursionError):
            raise error from None
        adapter.validate_python(read)  # raises, naming the field, for a lone surrogate
        raise


EARLIEST_EVENT_TIME = datetime(1900, 1, 1, tzinfo=UTC)
LATEST_EVENT_TIME = datetime(2200, 1, 1, tzinfo=UTC)


def _within_event_times(value: datetime) -> datetime:
    try:
        within = EARLIEST_EVENT_TIME <= value < LATEST_EVENT_TIME
    except OverflowError:  # year 1 east of UTC is before datetime.min in UTC: no comparison
        within = False
    if not within:
        raise PydanticCustomError(
            "event_time_out_of_range",
            f"an event time must be from {EARLIEST_EVENT_TIME:%Y-%m-%dT%H:%M:%SZ} up to "
            f"{LATEST_EVENT_TIME:%Y-%m-%dT%H:%M:%SZ}; a time outside that is a clock fault: "
            "send when the turn happened",
        )
    return value


_RFC3339 = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:[Zz]|[+-][0-9]{2}:[0-9]{2})"
)
_UUID = re.compile(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")


def _what(value: object) -> str:
    """What a value is, in the contract's words (never the value itself: it may be words)."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if value is None:
        return "null"
    if isinstance(value, str):
        return "a string in another format"
    return "an object or an array"


@dataclass(frozen=True)
class _StringFormat:
    """A JSON Schema string ``format`` held at the door, before pydantic's own parsing: the
    Python type a Python caller passes, or a string matching ``pattern``; anything else is the
    error ``kind`` saying what was expected and what came."""

    python_type: type
    pattern: re.Pattern[str]
    kind: str
    expected: str

    def __call__(self, value: object) -> object:
        if isinstance(value, self.python_type) or (
            isinstance(value, str) and self.pattern.fullmatch(value)
        ):
            return value
        raise PydanticCustomError(self.kind, f"must be {self.expected}; got {_what(value)}")


check_date_time = _StringFormat(
    datetime,
    _RFC3339,
    "date_time_format",
    "an RFC 3339 date-time string with an offset, such as 2026-05-01T09:30:00Z",
)
"""``format: date-time``. Pydantic alone would read a number (or a string of digits) as a Unix
time and take a space or ``+0000`` for the ``T`` and the offset: a producer whose clock field is
the wrong type learns it, instead of its events landing in another decade."""

check_uuid = _StringFormat(
    UUID,
    _UUID,
    "uuid_format",
    "a UUID string in its hyphenated form, such as 5b7f2f1e-8d4a-4c53-9a51-3c4a1f0b8e21",
)
"""``format: uuid``. Pydantic alone would take 32 bare hex digits, braces, a URN or 16 bytes."""


def check_integer(value: object) -> object:
    """``value`` unchanged when it is an integer (never a boolean, a float or a string of
    digits, which pydantic's lax mode would take for one); for fields whose type cannot be
    marked ``strict`` (a ``Literal``)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise PydanticCustomError("int_type", f"must be an integer; got {_what(value)}")


SchemaVersion1 = Annotated[Literal[1], BeforeValidator(check_integer)]
"""``schema_version`` of a version-1 event: the integer 1 (``"1"``, ``1.0`` and ``true`` are
not)."""

PSEUDONYMOUS = 2
"""The ``schema_version`` of a record whose clear ``principal`` is the principal's pseudonym, not
their identifier (docs/privacy.md, "Who a record is about"): a random id kept beside their data
key, mapped back by a reader holding the keys and unlinkable once the key is destroyed. The
identifier itself travels only inside the sealed part. Version 1 records name the principal."""

SchemaVersionNamed = Annotated[Literal[1, 2], BeforeValidator(check_integer)]
"""``schema_version`` of a record that may name its principal by pseudonym: 1 names the
principal, 2 (:data:`PSEUDONYMOUS`) the pseudonym; both stay readable (a replay reads both)."""

EventId = Annotated[UUID, BeforeValidator(check_uuid)]
"""An event's id at the door: exactly a UUID string, as the published schema says."""

EventTime = Annotated[
    AwareDatetime,
    BeforeValidator(check_date_time),
    AfterValidator(_within_event_times),
    Field(
        description="When it happened (RFC 3339 with an offset), from 1900-01-01T00:00:00Z up "
        "to 2200-01-01T00:00:00Z: formation decides from it, and Python's date arithmetic "
        "(decay, validity, ordering) overflows at the ends of its year 1-9999 range."
    ),
]
"""An episode's event time. PostgreSQL would store year 1 or 9999, but formation and
resolution compute with it (a day later, a zone converted, an age) and Python's ``datetime``
ends there; a turn dated outside a few centuries of now is a producer's clock fault."""


class Role(StrEnum):
    """Who wrote a message. Only ``user`` can speak for the principal."""

    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    SYSTEM = "system"


class Trust(StrEnum):
    """Origin trust of a message: the authority a belief derived from it may carry."""

    OWNER = "owner"
    AFFIRMED = "affirmed"
    UNTRUSTED = "untrusted"


class Polarity(StrEnum):
    ASSERT = "assert"
    RETRACT = "retract"


class ContractModel(BaseModel):
    """Base of every wire model: unknown fields are an error, values are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def episode_key(tenant: str, project: str) -> bytes:
    """Kafka key of ``engram.episodes``: one project's episodes stay in one partition, in order."""
    return f"{tenant}/{project}".encode()


def principal_key(tenant: str, principal: str) -> bytes:
    """Kafka key of ``engram.claims``: one principal is resolved by one projector at a time."""
    return f"{tenant}/{principal}".encode()


def principal_hash(tenant: str, principal: str) -> str:
    """A principal named without their name: the key of a forgotten principal's tombstone and of
    the backlog's rows (SHA-256 of ``tenant/principal``). Here, beside the topics' keys, because
    every layer keys by it — the doors, formation, the resolution core, the projections."""
    return hashlib.sha256(f"{tenant}/{principal}".encode()).hexdigest()


def day_of(moment: datetime) -> datetime:
    """Midnight UTC of ``moment``'s day: how a forgotten principal's rows beside their hash are
    dated (the tombstone, the receipt's request, the notice), since the exact time would pick
    out the forgetting's record on the log, which names their pseudonym."""
    return moment.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def forgetting_receipt_id(event_id: UUID, salt: UUID | None) -> UUID:
    """The id a forgetting's receipt is kept and asked for by: not the forgetting's record's id
    on the log, which names the principal's pseudonym, but a hash of it with the random salt kept
    beside their data key (``data_key.receipt_salt``), which the forgetting deletes with the key.
    The door that appends the forgetting and the projector that applies it both read the salt
    while the key lives; afterwards nobody, not even whoever knows the name and holds every key,
    can tell which record of the log the receipt (keyed beside the name's hash) is about. A
    principal with no data key has no pseudonym (the log names them in clear): the record's id."""
    if salt is None:
        return event_id
    digest = hashlib.sha256(b"engram-forgetting-receipt/" + salt.bytes + event_id.bytes).digest()
    return UUID(bytes=digest[:16], version=4)


NonNegative = Annotated[int, Field(ge=0)]
