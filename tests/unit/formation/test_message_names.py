"""The core's per-message identities are exactly the name-based UUIDs they replace.

``MessageNames`` resumes SHA-1 from the hashed head of a message's names instead of hashing
every part per proposal; a replay is byte-identical only if the identities are the same UUIDv5
values ``name_uuid`` (and so :func:`uuid.uuid5`) gives for the same parts.
"""

from __future__ import annotations

import uuid

from hypothesis import given
from hypothesis import strategies as st

from engram.formation.core import ENGRAM_NAMESPACE, MessageNames, name_uuid
from engram.schemas.common import IDENTIFIER_PATTERN

_PART = st.one_of(st.text(), st.none(), st.integers(), st.uuids())


_NAME = st.from_regex(IDENTIFIER_PATTERN, fullmatch=True)


@given(
    tenant=_NAME,
    principal=_NAME,
    project=_NAME,
    episode=st.uuids(),
    ordinal=st.integers(min_value=0, max_value=10_000),
    rest=st.lists(_PART, min_size=1, max_size=12),
)
def test_message_names_equal_name_uuid(
    tenant: str, principal: str, project: str, episode: uuid.UUID, ordinal: int, rest: list[object]
) -> None:
    names = MessageNames((tenant, principal, project, episode), ordinal)
    head = (tenant, principal, project, episode, ordinal)
    assert names.candidate(*rest) == name_uuid("candidate", *head, *rest)
    assert names.refusal(*rest) == name_uuid("refusal", *head, *rest)


@given(parts=st.lists(_PART, min_size=1, max_size=12))
def test_name_uuid_is_uuid5(parts: list[object]) -> None:
    name = "\x1f".join(map(str, parts))
    expected = uuid.uuid5(ENGRAM_NAMESPACE, name)
    got = name_uuid(*parts)
    assert got == expected
    assert (got.version, got.variant) == (5, uuid.RFC_4122)


def test_a_names_object_is_reused_without_state_leaking() -> None:
    names = MessageNames(("t", "ana", "garden", uuid.UUID(int=7)), 3)
    first = names.candidate("likes", "jazz")
    names.refusal("anything", "else")
    assert names.candidate("likes", "jazz") == first
    assert names.candidate("likes", "rock") != first
