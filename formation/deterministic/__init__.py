"""The deterministic extractor: patterns that need no model, over clauses of one message.

``propose(content)`` reads the message clause by clause and proposes every claim shape it
recognises \u2014 ownership, preferences with topic facets, user attributes, relationships, project
decisions, task outcomes and retractions \u2014 as separate, independently addressable proposals.
Each quote is the clause it came from, an exact substring of the content. Hedges, denials,
hypotheticals and past states are proposed with the polarity or tense that makes admission
refuse them with words; questions, reported speech and wishes propose nothing.
"""

from __future__ import annotations

from formation.deterministic.clauses import split_clauses
from formation.deterministic.reading import Reading, read_clause
from formation.policy import DETERMINISTIC_EXTRACTOR_VERSION
from formation.proposals import Proposal

SCAN_CEILING = 256
"""At most this many proposals for one message: a bound on work, not on what is admitted."""

__all__ = ["SCAN_CEILING", "propose"]


def propose(content: str) -> list[Proposal]:
    """Every claim the patterns find in ``content``, in clause order, at most ``SCAN_CEILING``."""
    proposals: list[Proposal] = []
    seen: set[tuple[str, ...]] = set()
    for clause in split_clauses(content):
        for reading in read_clause(clause):
            proposal = _proposal(reading, clause.text)
            key = _identity(proposal)
            if key in seen or not proposal.object.strip() or not proposal.subject.strip():
                continue
            seen.add(key)
            proposals.append(proposal)
            if len(proposals) >= SCAN_CEILING:
                return proposals
    return proposals


def _proposal(reading: Reading, quote: str) -> Proposal:
    finding = reading.finding
    return Proposal(
        subject=finding.subject,
        relation=finding.relation,
        object=finding.object,
        quote=quote,
        polarity=reading.polarity,
        tense=reading.tense,
        extractor=DETERMINISTIC_EXTRACTOR_VERSION,
        facet=finding.facet,
        confidence=reading.confidence,
    )


def _identity(proposal: Proposal) -> tuple[str, ...]:
    return (
        proposal.subject.lower(),
        proposal.relation,
        proposal.object.lower(),
        (proposal.facet or "").lower(),
        proposal.polarity or "",
    )
