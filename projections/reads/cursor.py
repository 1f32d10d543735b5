"""Opaque, stable cursors for paged reads: the sort key of the last row served.

A page is read by keyset (``WHERE (sort key, id) > (cursor) ORDER BY sort key, id LIMIT n``), so
a page costs the same deep in a list as at its start, and rows written while a reader pages
through never shift what it has not read yet. The cursor is that key as URL-safe base64 of a
JSON array tagged with the list it belongs to; clients pass it back unchanged and never parse it.
Lists sort by an event time then an id; search sorts by a score then an id — one format for both,
so a cursor handed out by one list is refused by every other.
"""

from __future__ import annotations

import base64
import binascii
import uuid
from datetime import datetime
from typing import TypeAlias, TypeVar

import orjson
from pydantic import AwareDatetime, StrictFloat, TypeAdapter, ValidationError

from engram.infra.errors import EngramFailure

Key: TypeAlias = tuple[AwareDatetime, uuid.UUID]
"""Every paged list here sorts by an event time, then an id."""

ScoreKey: TypeAlias = tuple[StrictFloat, uuid.UUID]
"""Ranked results sort by score, then an id."""

PositionKey: TypeAlias = tuple[AwareDatetime, int, int, int]
"""A conversation's messages sort by event time, then log position (partition, offset), then
ordinal in the turn."""

K = TypeVar("K")

# pydantic 2.14 types TypeAdapter's argument as a PEP 747 TypeForm, which mypy does not yet
# accept for an Annotated alias (as schemas/episodes.py's and schemas/log.py's adapters).
_KEY: TypeAdapter[Key] = TypeAdapter(Key)  # type: ignore[arg-type, unused-ignore]
_SCORE_KEY: TypeAdapter[ScoreKey] = TypeAdapter(ScoreKey)  # type: ignore[arg-type, unused-ignore]
_POSITION_KEY: TypeAdapter[PositionKey] = TypeAdapter(PositionKey)  # type: ignore[arg-type, unused-ignore]


class InvalidCursor(EngramFailure, ValueError):
    """A cursor this API did not hand out for this list."""

    code = "invalid_cursor"


def encode_cursor(kind: str, at: datetime | float, key: uuid.UUID) -> str:
    first = at.isoformat() if isinstance(at, datetime) else at
    raw = orjson.dumps([kind, first, str(key)])
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(kind: str, cursor: str) -> Key:
    """The key a cursor of list ``kind`` names; :class:`InvalidCursor` for anything else."""
    return _decode(kind, cursor, _KEY)


def decode_score_cursor(kind: str, cursor: str) -> ScoreKey:
    """The (score, id) a cursor of ranked list ``kind`` names; :class:`InvalidCursor` otherwise."""
    return _decode(kind, cursor, _SCORE_KEY)


def encode_position_cursor(kind: str, key: PositionKey) -> str:
    at, partition, offset, ordinal = key
    raw = orjson.dumps([kind, at.isoformat(), partition, offset, ordinal])
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_position_cursor(kind: str, cursor: str) -> PositionKey:
    """The (time, partition, offset, ordinal) a cursor of list ``kind`` names."""
    return _decode(kind, cursor, _POSITION_KEY)


def _decode(kind: str, cursor: str, shape: TypeAdapter[K]) -> K:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        tag, *key = orjson.loads(raw)
        if tag != kind:
            raise InvalidCursor(f"this cursor belongs to another list ({tag!r}, not {kind!r})")
        return shape.validate_python(tuple(key))
    except InvalidCursor:
        raise
    except (binascii.Error, orjson.JSONDecodeError, ValueError, TypeError, ValidationError):
        raise InvalidCursor(
            "not a cursor this list handed out; pass next_cursor back unchanged"
        ) from None
