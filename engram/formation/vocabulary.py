"""The closed relation vocabulary (seed 003's 39 relations and ``has_condition``) and the belief
type each maps to.

A relation of a special category (``has_condition``: health, special category data under the
GDPR) carries its sensitivity class and a ``local`` portability ceiling: it forms only under a
policy that enables it (:data:`SPECIAL_CATEGORY_RELATIONS` are left out of the default
``enabled_relations``), every candidate of it is classified sensitive and flagged for review
whatever its words, and as a local belief it is never read outside the project it formed in.

The same rows are seeded into PostgreSQL by ``migrations/0002_vocabulary.sql`` (and
``0023_health_relation.sql`` for ``has_condition``), where a foreign
key from every stored claim makes the set closed in the database, not just in code; a test keeps
the two in step. Order matters: it is the order rendered into the extraction prompt.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from engram.schemas.claims import Portability

VOCABULARY_MIN_SIZE = 30
VOCABULARY_MAX_SIZE = 50


class BeliefType(StrEnum):
    FACT = "fact"
    PREFERENCE = "preference"
    RELATIONSHIP = "relationship"
    USER_MODEL_ATTR = "user_model_attr"
    PROCEDURE_POINTER = "procedure_pointer"


PORTABILITY_CEILING: dict[BeliefType, Portability] = {
    BeliefType.PREFERENCE: Portability.PORTABLE,
    BeliefType.USER_MODEL_ATTR: Portability.PORTABLE,
    BeliefType.PROCEDURE_POINTER: Portability.PORTABLE,
    BeliefType.FACT: Portability.CONTEXTUAL,
    BeliefType.RELATIONSHIP: Portability.CONTEXTUAL,
}
"""Seed 000: an extractor may lower a candidate's portability, never raise it past this."""

_PORTABILITY_RANK = {Portability.LOCAL: 0, Portability.CONTEXTUAL: 1, Portability.PORTABLE: 2}

ObjectKind = Literal["entity", "value"]
Cardinality = Literal["single", "many"]


@dataclass(frozen=True, slots=True)
class Relation:
    name: str
    semantic_type: str
    object_kind: ObjectKind
    cardinality: Cardinality
    is_event: bool
    belief_type: BeliefType
    description: str
    sensitivity: str | None = None
    """The special category a claim of this relation always touches ("health"), or None."""
    ceiling: Portability | None = None
    """A portability ceiling lower than the belief type's, or None for the type's."""

    @property
    def portability_ceiling(self) -> Portability:
        return self.ceiling or PORTABILITY_CEILING[self.belief_type]


def _r(
    name: str,
    semantic_type: str,
    object_kind: ObjectKind,
    belief_type: BeliefType,
    description: str,
    *,
    single: bool = False,
    event: bool = False,
    sensitivity: str | None = None,
) -> Relation:
    return Relation(
        name=name,
        semantic_type=semantic_type,
        object_kind=object_kind,
        cardinality="single" if single else "many",
        is_event=event,
        belief_type=belief_type,
        description=description,
        sensitivity=sensitivity,
        ceiling=Portability.LOCAL if sensitivity else None,
    )


_U, _P, _F, _S, _C = (
    BeliefType.USER_MODEL_ATTR,
    BeliefType.PREFERENCE,
    BeliefType.FACT,
    BeliefType.RELATIONSHIP,
    BeliefType.PROCEDURE_POINTER,
)

RELATIONS: tuple[Relation, ...] = (
    _r("has_name", "identity", "value", _U, "the name the subject goes by", single=True),
    _r("has_role", "identity", "value", _U, "job title or role the subject holds", single=True),
    _r("works_at", "identity", "entity", _U, "organisation the subject works for"),
    _r("member_of", "identity", "entity", _U, "group, team or community the subject belongs to"),
    _r("lives_in", "identity", "entity", _U, "place the subject lives now", single=True),
    _r("born_in", "identity", "entity", _U, "place the subject was born", single=True, event=True),
    _r("speaks", "identity", "value", _U, "language the subject speaks"),
    _r("has_contact", "identity", "value", _U, "a way to reach the subject"),
    _r("has_timezone", "identity", "value", _U, "time zone the subject keeps", single=True),
    _r("prefers", "preference", "value", _P, "something the subject prefers or likes"),
    _r("dislikes", "preference", "value", _P, "something the subject dislikes or avoids"),
    _r("interested_in", "preference", "value", _P, "topic the subject is interested in"),
    _r("knows_about", "capability", "value", _U, "subject area the subject knows well"),
    _r("uses", "capability", "entity", _U, "tool, product or technology the subject uses"),
    _r("learning", "capability", "value", _U, "skill or subject the subject is learning"),
    _r("intends_to", "intent", "value", _F, "something the subject plans to do"),
    _r("committed_to", "intent", "value", _F, "a decision or commitment the subject made"),
    _r("responsible_for", "intent", "entity", _F, "work the subject is responsible for"),
    _r("blocked_by", "intent", "entity", _F, "what is blocking the subject"),
    _r("knows", "social", "entity", _S, "a person the subject knows"),
    _r("works_with", "social", "entity", _S, "a person the subject works with"),
    _r("manages", "social", "entity", _S, "a person or team the subject manages"),
    _r("related_to", "social", "entity", _S, "family or personal relation; facet names it"),
    _r("owns", "possession", "entity", _F, "something the subject owns or has"),
    _r("has_access_to", "possession", "entity", _F, "system or resource the subject can use"),
    _r("part_of", "structure", "entity", _F, "a whole the subject is part of"),
    _r("instance_of", "structure", "entity", _F, "the kind of thing the subject is", single=True),
    _r("located_in", "structure", "entity", _F, "where a thing is located", single=True),
    _r("depends_on", "structure", "entity", _F, "something the subject depends on"),
    _r("same_as", "structure", "entity", _F, "someone said two names are the same thing"),
    _r("created", "authorship", "entity", _F, "something the subject made", event=True),
    _r("contributed_to", "authorship", "entity", _F, "work the subject contributed to", event=True),
    _r("participated_in", "authorship", "entity", _F, "event the subject took part in", event=True),
    _r("occurred_on", "temporal", "value", _F, "date an event happened", single=True, event=True),
    _r("scheduled_for", "temporal", "value", _F, "date something is scheduled", single=True),
    _r("due_on", "temporal", "value", _F, "date something is due", single=True),
    _r("has_status", "state", "value", _F, "current state or outcome of a task", single=True),
    _r("requires", "constraint", "value", _C, "a rule or step that must be followed"),
    _r("prohibits", "constraint", "value", _C, "a rule against doing something"),
    _r(
        "has_condition",
        "health",
        "value",
        _F,
        "health condition, injury, allergy or diet the subject states of themselves",
        sensitivity="health",
    ),
)

_BY_NAME: dict[str, Relation] = {relation.name: relation for relation in RELATIONS}

SPECIAL_CATEGORY_RELATIONS: frozenset[str] = frozenset(
    relation.name for relation in RELATIONS if relation.sensitivity is not None
)
"""Relations that form only under a policy that enables them by name."""


def lookup(name: str) -> Relation | None:
    """The relation of that exact name, or ``None``: near misses are not forgiven."""
    return _BY_NAME.get(name)


def clamp_portability(relation: Relation, proposed: Portability | None) -> Portability:
    """The proposed portability, lowered to the belief type's ceiling; never raised."""
    ceiling = relation.portability_ceiling
    if proposed is None or _PORTABILITY_RANK[proposed] > _PORTABILITY_RANK[ceiling]:
        return ceiling
    return proposed


def vocabulary_digest(relations: tuple[Relation, ...] = RELATIONS) -> str:
    """A stable digest of the vocabulary, part of the formation policy version."""
    digest = hashlib.sha256()
    for r in relations:
        row = (r.name, r.semantic_type, r.object_kind, r.cardinality, r.is_event, r.belief_type)
        digest.update(repr(row).encode())
        if r.sensitivity is not None:  # the rows before special categories keep their bytes
            digest.update(repr((r.sensitivity, r.portability_ceiling)).encode())
        digest.update(r.description.encode())
    return digest.hexdigest()
