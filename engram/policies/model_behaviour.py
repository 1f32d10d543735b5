"""What the core does with a model's proposals, pinned into the behaviour digest.

The digest's corpus is formed by the deterministic arm (:mod:`.behaviour`), so what the core
does only with a model's proposals (:mod:`engram.formation.model_claims`: one normal form per
object, the principal's relation to someone else's fact, vague referents, one-off events) would
change without the digest moving; so would what the arm does with a model's tenses (an
intention told in the future is held now, a past state is kept as history), its facets (a
category holds many values) and its event dates (folded into the event by
:func:`engram.formation.merge.merge_proposals`, which the worker calls and so does this file).
These turns and the claims a model could answer for them,
written for this file (no sentence of evaluation data), are formed through the same core after
the corpus, so a change to that handling changes the digest and with it the policy version.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

from engram.formation.core import form_episode
from engram.formation.merge import merge_proposals
from engram.formation.policy import FormationPolicy
from engram.formation.proposals import Proposal
from engram.schemas.claims import ClaimsBatchFormed, SourcePosition
from engram.schemas.common import Role
from engram.schemas.episodes import Message, TurnAppended

__all__ = ["MODEL_TURNS", "model_batches"]

_EXTRACTOR = "model:behaviour"
_AT = datetime(2026, 2, 2, 10, 0, tzinfo=UTC)

Claim = tuple[str, str, str, str, str] | tuple[str, str, str, str, str, str]
"""(subject, relation, object, tense, quote[, facet]) as a model writes them; polarity
``assert``."""

MODEL_TURNS: tuple[tuple[str, tuple[Claim, ...]], ...] = (
    (
        "I finally opened my own pottery studio, and the studio already has regulars!",
        (
            ("I", "owns", "my own studio", "present", "I finally opened my own pottery studio"),
            ("I", "owns", "my own pottery studio", "present", "my own pottery studio"),
            ("the studio", "has_status", "busy", "present", "the studio already has regulars"),
        ),
    ),
    (
        "Reading mystery novels is my favourite way to unwind; I prefer mystery novels to TV.",
        (
            ("I", "prefers", "reading mystery novels", "present", "Reading mystery novels"),
            ("I", "prefers", "mystery novels", "present", "I prefer mystery novels to TV"),
        ),
    ),
    (
        "My van broke down again and my brother lives in Leeds, which is near the coast.",
        (
            ("my van", "has_status", "broken down", "present", "My van broke down again"),
            ("my brother", "lives_in", "Leeds", "present", "my brother lives in Leeds"),
            ("Leeds", "located_in", "the coast", "present", "Leeds, which is near the coast"),
        ),
    ),
    (
        "We went sailing on Sunday, and that event was lovely; we love seafood too.",
        (
            ("we", "participated_in", "sailing", "past", "We went sailing on Sunday"),
            ("I", "participated_in", "that event", "past", "that event was lovely"),
            ("we", "prefers", "seafood", "present", "we love seafood too"),
        ),
    ),
    (
        "Last week I handed out soup at the night shelter and went to a jazz concert.",
        (
            ("I", "participated_in", "handing out soup at the night shelter", "past", "I handed"),
            ("I", "participated_in", "jazz concert", "past", "went to a jazz concert"),
        ),
    ),
    (
        "I plan to learn the cello next year, and I used to work as a night porter.",
        (
            ("I", "intends_to", "learn the cello", "future", "I plan to learn the cello"),
            ("I", "has_role", "night porter", "past", "I used to work as a night porter"),
        ),
    ),
    (
        "For fun I knit, climb and bake bread; I gave a talk at the guild on Friday.",
        (
            ("I", "prefers", "knitting", "present", "For fun I knit", "hobby"),
            ("I", "prefers", "climbing", "present", "climb", "hobby"),
            ("I", "prefers", "baking bread", "present", "bake bread", "hobby"),
            ("I", "participated_in", "talk at the guild", "past", "I gave a talk at the guild"),
            ("talk at the guild", "occurred_on", "2026-01-30", "past", "on Friday"),
        ),
    ),
)


def _proposal(claim: Claim) -> Proposal:
    subject, relation, obj, tense, quote = claim[:5]
    return Proposal(
        subject=subject,
        relation=relation,
        object=obj,
        quote=quote,
        polarity="assert",
        tense=tense,
        extractor=_EXTRACTOR,
        facet=claim[5] if len(claim) > 5 else None,
    )


def model_batches(policy: FormationPolicy, first_offset: int) -> Iterator[ClaimsBatchFormed]:
    """The claims batch of each of :data:`MODEL_TURNS`, formed from its model claims."""
    for index, (content, claims) in enumerate(MODEL_TURNS):
        turn = TurnAppended(
            event_id=uuid.UUID(int=0x40DE1 + index),
            tenant="behaviour-model",
            principal="model-principal",
            project="model-project",
            session="model",
            occurred_at=_AT,
            messages=[Message(ordinal=0, role=Role.USER, content=content)],
        )
        source = SourcePosition(topic="behaviour", partition=0, offset=first_offset + index)
        proposals = merge_proposals([], [_proposal(claim) for claim in claims])
        yield form_episode(turn, policy, {0: proposals}, source=source)
