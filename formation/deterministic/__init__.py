"""The deterministic extractor: patterns that need no model, over clauses of one message.

``propose(content)`` reads the message clause by clause and proposes every claim shape it
recognises \u2014 ownership, preferences with topic facets, user attributes, relationships, project
decisions, task outcomes and retractions \u2014 as separate, independently addressable proposals.
Each quote is the clause it came from, an exact substring of the content. Hedges, denials,
hypotheticals and past states are proposed with the polarity or tense that makes admission
refuse them with words; questions, reported speech and wishes propose nothing, and neither
does a clause inside quoted speech (:mod:`.speech`). Every finding must pass the precision gate
(:mod:`.ends`) first: when an end is not a well-formed noun phrase or name, the arm abstains.

The bound on work is the policy's ``scan_ceiling``; the episode's date, when given, grounds
relative dates of past events ("last Saturday"). Both are arguments: the arm reads no clock.
"""

from __future__ import annotations

from datetime import date

from formation.deterministic.clauses import split_clauses
from formation.deterministic.ends import about_the_project, clean_object
from formation.deterministic.reading import Reading, read_clause
from formation.deterministic.speech import speech_regions, touches_speech
from formation.policy import DETERMINISTIC_EXTRACTOR_VERSION, FormationPolicy
from formation.proposals import Proposal

__all__ = ["propose"]


def propose(
    content: str,
    *,
    occurred_on: date | None = None,
    ceiling: int = FormationPolicy.scan_ceiling,
) -> list[Proposal]:
    """Every claim the patterns find in ``content``, in clause order, at most ``ceiling``."""
    proposals: list[Proposal] = []
    seen: set[tuple[str, ...]] = set()
    speech = speech_regions(content)
    for clause in split_clauses(content):
        if touches_speech(speech, clause.start, clause.start + len(clause.text)):
            continue
        for reading in read_clause(clause, occurred_on=occurred_on):
            proposal = _gated(reading, clause.text)
            if proposal is None:
                continue
            key = _identity(proposal)
            if key in seen or not proposal.object.strip() or not proposal.subject.strip():
                continue
            seen.add(key)
            proposals.append(proposal)
            if len(proposals) >= ceiling:
                return proposals
    return proposals


def _gated(reading: Reading, quote: str) -> Proposal | None:
    """The reading as a proposal, unless its ends are malformed or "we" is not the project."""
    finding = clean_object(reading.finding)
    if finding is None or not about_the_project(finding):
        return None
    return _proposal(Reading(finding, reading.polarity, reading.tense, reading.confidence), quote)


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
