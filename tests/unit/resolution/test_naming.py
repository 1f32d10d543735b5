"""Names made from a shared prefix are exactly ``name_uuid``'s: resolution's ids (beliefs,
evidence, memory events) must not change with how they are computed."""

from __future__ import annotations

import copy
import hashlib
import pickle
import uuid

import pytest

from engram.formation.core import name_uuid
from engram.resolution.naming import Names, uuid5

PARTS: list[tuple[object, ...]] = [
    ("evidence", uuid.UUID(int=7), "9ca73c59-7bcc-592a-bb9e-676048d9774e", 0),
    ("memory-event", uuid.UUID(int=2**127 + 5), "memory.reinforced", uuid.UUID(int=3)),
    ("belief", "tenant", "ana", uuid.uuid5(uuid.NAMESPACE_URL, "candidate")),
    ("entity", "t", "ana", "café ünïcode", ""),
]


@pytest.mark.parametrize("parts", PARTS)
@pytest.mark.parametrize("split", [1, 2, 3])
def test_a_name_from_a_prefix_equals_name_uuid_over_all_its_parts(
    parts: tuple[object, ...], split: int
) -> None:
    names = Names(*parts[:split])
    assert names.name(*parts[split:]) == name_uuid(*parts)
    assert names.name(*parts[split:]) == names.name(*parts[split:])  # the prefix is not consumed


@pytest.mark.parametrize("seed", range(64))
def test_uuid5_from_a_digest_equals_the_standard_constructor(seed: int) -> None:
    digest = hashlib.sha1(str(seed).encode()).digest()
    made, standard = uuid5(digest), uuid.UUID(bytes=digest[:16], version=5)
    assert made == standard and hash(made) == hash(standard)
    assert (str(made), made.version, made.variant) == (str(standard), 5, uuid.RFC_4122)
    assert pickle.loads(pickle.dumps(made)) == standard and copy.copy(made) == standard
