"""Merging the two extractor arms' proposals for one message.

When both arms run, the same claim often comes from each. The merge keeps the first proposal of
every claim, deterministic arm first, and otherwise preserves order, so the result (and with it
every identity formed downstream) depends only on the two lists. Two proposals are the same
claim when relation, normalised subject, normalised object, facet and polarity agree (ends
normalised as admission resolves them: case and spacing ignored, first-person terms all the
speaker); quotes, tense and confidence do not make a claim different. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable

from engram.formation.event_dates import fold_event_dates
from engram.formation.proposals import (
    Proposal,
    is_project_term,
    is_speaker_term,
    normalise_term,
)

ProposalKey = tuple[str, str, str, str, str]


def proposal_key(proposal: Proposal) -> ProposalKey:
    """What makes two proposals the same claim, whichever arm made them."""
    return (
        proposal.relation,
        _end(proposal.subject),
        _end(proposal.object),
        normalise_term(proposal.facet or ""),
        proposal.polarity or "",
    )


def _end(text: str) -> str:
    """An end as admission will resolve it: "I" and "me" are both the speaker."""
    if is_speaker_term(text):
        return "\x00speaker"
    if is_project_term(text):
        return "\x00project"
    return normalise_term(text)


def merge_proposals(deterministic: Iterable[Proposal], model: Iterable[Proposal]) -> list[Proposal]:
    """Deterministic proposals, then the model's, each claim once, in a stable order. The
    model's event dates are first folded into their events (:mod:`.event_dates`), as the
    deterministic arm names a dated event."""
    seen: set[ProposalKey] = set()
    merged: list[Proposal] = []
    for proposal in (*deterministic, *fold_event_dates(list(model))):
        key = proposal_key(proposal)
        if key not in seen:
            seen.add(key)
            merged.append(proposal)
    return merged
