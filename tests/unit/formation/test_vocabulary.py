"""The closed relation vocabulary: seed 003's 39 relations and ``has_condition``, typed and
bounded."""

from __future__ import annotations

from engram.formation.vocabulary import (
    RELATIONS,
    SPECIAL_CATEGORY_RELATIONS,
    VOCABULARY_MAX_SIZE,
    VOCABULARY_MIN_SIZE,
    BeliefType,
    clamp_portability,
    lookup,
    vocabulary_digest,
)
from engram.schemas.claims import Portability


def test_the_vocabulary_has_the_39_relations_of_seed_003_and_the_health_relation() -> None:
    assert len(RELATIONS) == 40
    assert len({r.name for r in RELATIONS}) == 40
    assert RELATIONS[-1].name == "has_condition"


def test_health_is_the_one_special_category_local_and_classified() -> None:
    assert {"has_condition"} == SPECIAL_CATEGORY_RELATIONS
    health = lookup("has_condition")
    assert health is not None
    assert health.sensitivity == "health"
    assert health.portability_ceiling is Portability.LOCAL
    assert clamp_portability(health, Portability.PORTABLE) is Portability.LOCAL
    assert all(r.sensitivity is None for r in RELATIONS if r.name != "has_condition")


def test_the_vocabulary_size_stays_within_its_bounds() -> None:
    assert VOCABULARY_MIN_SIZE <= len(RELATIONS) <= VOCABULARY_MAX_SIZE


def test_eleven_relations_are_single_valued() -> None:
    single = {r.name for r in RELATIONS if r.cardinality == "single"}
    assert len(single) == 11
    assert {"has_name", "lives_in", "has_timezone", "has_status"} <= single


def test_lookup_forgives_no_near_miss() -> None:
    assert lookup("lives_in") is not None
    assert lookup("Lives_In") is None
    assert lookup("lives in") is None


def test_portability_is_clamped_to_the_belief_type_ceiling_and_never_raised() -> None:
    fact = lookup("owns")
    preference = lookup("prefers")
    assert fact is not None and preference is not None
    assert fact.belief_type is BeliefType.FACT
    assert clamp_portability(fact, Portability.PORTABLE) is Portability.CONTEXTUAL
    assert clamp_portability(fact, Portability.LOCAL) is Portability.LOCAL
    assert clamp_portability(fact, None) is Portability.CONTEXTUAL
    assert clamp_portability(preference, None) is Portability.PORTABLE


def test_the_digest_is_stable_and_changes_with_the_vocabulary() -> None:
    assert vocabulary_digest() == vocabulary_digest()
    assert vocabulary_digest(RELATIONS[:-1]) != vocabulary_digest()
