"""Name-based identities: byte-identical to RFC 4122 UUIDv5, so replays keep every id."""

from __future__ import annotations

import uuid

import pytest

from engram.formation.core import ENGRAM_NAMESPACE, name_uuid
from engram.schemas.claims import RefusalReason

EPISODE = uuid.UUID("338301b1-ff35-57a3-b31e-a2aa79a59709")


@pytest.mark.parametrize(
    "parts",
    [
        ("batch", EPISODE, "formation@f6891e2070c49686"),
        ("evidence", EPISODE, EPISODE, 3),
        ("refusal", EPISODE, RefusalReason.PII),
        ("entity", "tenant", "principal", "zoë café"),
        (),
    ],
)
def test_name_uuid_is_uuid5_over_the_parts_joined_by_unit_separators(
    parts: tuple[object, ...],
) -> None:
    expected = uuid.uuid5(ENGRAM_NAMESPACE, "\x1f".join(str(p) for p in parts))
    got = name_uuid(*parts)
    assert got == expected
    assert got.version == 5
    assert got.variant == uuid.RFC_4122


def test_name_uuid_tells_the_joined_parts_apart() -> None:
    assert name_uuid("a", "b") != name_uuid("ab")
