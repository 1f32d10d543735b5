"""Pseudonyms: random, never derived from the name, and the cache that maps them both ways
forgets both directions at once (a forgotten principal's pseudonym must not map back here)."""

from __future__ import annotations

import re

from engram.keys.store import NameCache, new_pseudonym
from engram.schemas.common import IDENTIFIER_PATTERN


def test_a_pseudonym_is_random_and_an_identifier() -> None:
    minted = {new_pseudonym() for _ in range(1000)}
    assert len(minted) == 1000
    assert all(re.fullmatch(r"psn-[0-9a-f]{32}", p) for p in minted)
    assert all(re.match(IDENTIFIER_PATTERN, p) for p in minted)


def test_the_name_cache_maps_both_ways_and_evicts_both() -> None:
    names = NameCache(2)
    names.put("t", "ana", "psn-a")
    names.put("t", "bo", "psn-b")
    assert (names.pseudonym("t", "ana"), names.principal("t", "psn-b")) == ("psn-a", "bo")
    assert names.principal("u", "psn-a") is None  # per tenant
    names.evict("t", "ana")
    assert names.pseudonym("t", "ana") is None and names.principal("t", "psn-a") is None
    names.put("t", "cy", "psn-c")
    names.put("t", "di", "psn-d")  # over capacity: the least recently used goes, both ways
    assert names.principal("t", "psn-b") is None and names.pseudonym("t", "bo") is None
    names.put("t", "cy", "psn-c2")  # a new key, a new pseudonym: the old one maps to nobody
    assert names.principal("t", "psn-c") is None and names.principal("t", "psn-c2") == "cy"
