"""Corrections in the core: the content key they match by, and the claims batch they become.

A correction names a belief by its content, never by id: the normalised subject, relation,
object, facet and polarity that resolution already compares for duplicates, hashed with SHA-256.
A re-derivation mints new belief ids; the hash of the same content is the same.

A ``changed`` correction carries a replacement value. It becomes a candidate through the same
admission and gates as any statement (quoted from the replacement's own words, spoken by the
principal at owner trust, so at user authority), which is also how the correction service
checks a replacement before it appends anything.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

from engram.formation.core import batch_id, form_episode
from engram.formation.policy import FormationPolicy
from engram.formation.proposals import Proposal, normalise_term
from engram.schemas.claims import Candidate, ClaimEnd, ClaimsBatchFormed, EndKind, SourcePosition
from engram.schemas.common import Role, Trust
from engram.schemas.corrections import BeliefCorrected, ContentKey, Correction, CorrectionKind
from engram.schemas.episodes import MemoryRemembered, Message

CORRECTION_EXTRACTOR = "correction"


def end_key(end: ClaimEnd) -> str:
    """The identity of a claim end within a principal: normalised name, never meaning."""
    return _end_key(end.kind, end.text)


@lru_cache(maxsize=8192)
def _end_key(kind: EndKind, text: str) -> str:
    """Cached on plain values: ends recur across a chunk's candidates, and comparing the
    frozen models themselves costs more than the normalisation."""
    match kind:
        case EndKind.SPEAKER:
            return "speaker"
        case EndKind.PROJECT:
            return f"project:{text}"
        case _:
            return f"{kind.value}:{normalise_term(text)}"


ContentParts = tuple[str, str, str, str, str]
"""(subject key, relation, object key, facet, polarity): a content key as plain strings."""


@lru_cache(maxsize=8192)
def parts_hash(parts: ContentParts) -> str:
    """Cached on the parts (plain strings): a principal's claims repeat — most candidates
    reinforce a belief — and the projector hashes each candidate's content twice a chunk, to
    load its corrections and to resolve it; a cache hit costs a fraction of the SHA-256.
    Bounded like :func:`end_key`'s cache (a few MB at most)."""
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def content_hash(key: ContentKey) -> str:
    return parts_hash((key.subject_key, key.relation, key.object_key, key.facet, key.polarity))


def candidate_parts(candidate: Candidate) -> ContentParts:
    return (
        end_key(candidate.subject),
        candidate.relation,
        end_key(candidate.object),
        candidate.facet or "",
        candidate.polarity.value,
    )


def candidate_hash(candidate: Candidate) -> str:
    return parts_hash(candidate_parts(candidate))


def candidate_content(candidate: Candidate) -> ContentKey:
    subject_key, relation, object_key, facet, polarity = candidate_parts(candidate)
    return ContentKey(
        subject_key=subject_key,
        relation=relation,
        object_key=object_key,
        facet=facet,
        polarity=polarity,
    )


def _written_subject(subject_key: str) -> str:
    """The subject as a statement would write it, from its key: "speaker" is the principal
    ("I"), "project:…" the project ("we"), an entity its normalised name."""
    if subject_key == "speaker":
        return "I"
    if subject_key.startswith("project:"):
        return "we"
    return subject_key.partition(":")[2]


def replacement_proposal(content: ContentKey, replacement: str) -> Proposal:
    return Proposal(
        subject=_written_subject(content.subject_key),
        relation=content.relation,
        object=replacement,
        quote=replacement,
        polarity="assert",
        tense="present",
        extractor=CORRECTION_EXTRACTOR,
        facet=content.facet or None,
    )


def form_correction(
    event: Correction, policy: FormationPolicy, *, source: SourcePosition
) -> ClaimsBatchFormed:
    """The claims batch a correction becomes: the event itself, and for ``changed`` the
    replacement as a candidate (or, when admission or a gate refuses it, its refusal)."""
    replacement = (
        event.replacement
        if isinstance(event, BeliefCorrected) and event.kind is CorrectionKind.CHANGED
        else None
    )
    message = Message(
        ordinal=0, role=Role.USER, trust=Trust.OWNER, content=replacement or "(correction)"
    )
    carrier = MemoryRemembered(
        event_id=event.event_id,
        tenant=event.tenant,
        principal=event.principal,
        project=event.project,
        session=event.session,
        occurred_at=event.occurred_at,
        message=message,
    )
    proposals = (
        [replacement_proposal(event.content, replacement)]
        if isinstance(event, BeliefCorrected) and replacement is not None
        else []
    )
    batch = form_episode(carrier, policy, {0: proposals}, source=source)
    return batch.model_copy(
        update={
            "batch_id": batch_id(
                (event.tenant, event.principal, event.project, event.event_id), policy.version
            ),
            "episode_type": event.type,
            "trigger": "correction",
            "correction": event,
        }
    )
