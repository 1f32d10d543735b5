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

import re
from dataclasses import dataclass, field, replace
from datetime import date

from engram.formation.deterministic.animals import pet_kind
from engram.formation.deterministic.clauses import Clause, split_clauses
from engram.formation.deterministic.ends import Abstain, about_the_project, judge
from engram.formation.deterministic.lifeevents import couple, ended
from engram.formation.deterministic.mood import clause_mood
from engram.formation.deterministic.naming import fits, told_name
from engram.formation.deterministic.reading import Reading, read_clause
from engram.formation.deterministic.relationships import KIN_PATTERN, relation_to
from engram.formation.deterministic.speech import speech_regions, touches_speech
from engram.formation.deterministic.together import decided_with
from engram.formation.policy import DEFAULT_SCAN_CEILING, DETERMINISTIC_EXTRACTOR
from engram.formation.proposals import Proposal

__all__ = ["Abstention", "Trace", "propose", "trace"]


@dataclass(frozen=True, slots=True)
class Abstention:
    """A claim shape the patterns found and the arm dropped, with why: a debug trace only."""

    clause: str
    claim: str
    reason: str


@dataclass
class Trace:
    proposals: list[Proposal] = field(default_factory=list)
    abstentions: list[Abstention] = field(default_factory=list)


def propose(
    content: str,
    *,
    occurred_on: date | None = None,
    ceiling: int = DEFAULT_SCAN_CEILING,
) -> list[Proposal]:
    """Every claim the patterns find in ``content``, in clause order, at most ``ceiling``."""
    return trace(content, occurred_on=occurred_on, ceiling=ceiling).proposals


def trace(
    content: str,
    *,
    occurred_on: date | None = None,
    ceiling: int = DEFAULT_SCAN_CEILING,
) -> Trace:
    """What :func:`propose` proposes, and every finding it abstained from, with the reason."""
    found = Trace()
    seen: set[tuple[str, ...]] = set()
    speech = speech_regions(content)
    unnamed_pet: int | None = None
    unnamed_kin: int | None = None
    previous: Clause | None = None
    for clause in split_clauses(content):
        quoted = touches_speech(speech, clause.start, clause.start + len(clause.text))
        readings = read_clause(clause, occurred_on=occurred_on)
        if previous is not None and not quoted:
            readings = _across(found, previous, clause, content, readings)
        previous = clause
        later = _LATER_NAME.match(clause.text)
        if later is not None and unnamed_pet is not None and not quoted:
            pet = found.proposals[unnamed_pet]
            found.proposals[unnamed_pet] = replace(pet, facet=f"name:{later.group('name')}")
            unnamed_pet = None
        elif unnamed_kin is not None and not quoted:
            unnamed_kin = _name_relative(found, unnamed_kin, clause, content)
        for reading in readings:
            quote = _quote(reading, clause, content)
            judged = _gated(reading, quote, quoted=quoted)
            if isinstance(judged, Abstention):
                found.abstentions.append(judged)
                continue
            key = _identity(judged)
            if not judged.object.strip() or not judged.subject.strip():
                continue
            if key in seen:
                _keep_the_surer(found, key, judged)
                continue
            seen.add(key)
            found.proposals.append(judged)
            if _unnamed_pet(judged):
                unnamed_pet = len(found.proposals) - 1
            if _unnamed_relative(judged):
                unnamed_kin = len(found.proposals) - 1
            if len(found.proposals) >= ceiling:
                return found
    return found


def _across(
    found: Trace, previous: Clause, clause: Clause, content: str, readings: list[Reading]
) -> list[Reading]:
    """What the clause says with the one before it: a name set off before a kin word, a couple
    ("Tom and I got married", which ends what the clause before asserted), a decision taken
    with someone ("Ana and I decided to …": one decision, with the person, not also the
    clause's own)."""
    readings = readings + _named_before(previous, clause, content)
    together = _couple_before(previous, clause, content)
    readings = [r for r in readings if not _unnamed_twin(r, together)] + together
    _drop_ended(found, ended([r.finding for r in together]))
    decided = _decided_before(previous, clause, content)
    if decided:
        readings = [r for r in readings if r.finding.relation != "committed_to"] + decided
    return readings


_LATER_NAME = re.compile(
    r"^(?:[Hh]er|[Hh]is|[Ii]ts)\s+name(?:['\u2019]s|\s+is)\s+(?P<name>[A-Z][a-z]{1,20})\b"
)
""""I got a puppy two weeks ago! Her name's Coco.": the name told in the next clause is the
pet's, carried as its facet (:mod:`.animals`), when the pet is the last one the message owned
and has no name yet."""


_LONE_NAME = re.compile(
    r"^(?!(?:Thanks|Thank|Hey|Hi|Hello|Oh|Yes|Yeah|Wow|Sorry|Dear|Congrats|Well|So|And|But|Anyway"
    r"|Okay|Ok|Aw|Ah|Haha|Lol|Cheers|Bye|Good|Great|Sure)\b)[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?$"
)
""""Ana" or "Ana Lima", not "Thanks Ana": a clause that is nothing but a name."""
_MY_KIN_SET_OFF = re.compile(r"^[Mm]y\s+(?P<kin>" + KIN_PATTERN + r"),")


@dataclass(frozen=True, slots=True)
class _Spanning(Reading):
    """A reading whose words span two clauses: its quote starts at ``start``."""

    start: int = 0


def _named_before(previous: Clause, clause: Clause, content: str) -> list[Reading]:
    """ "Ana, my sister, lives in Porto": the clause splitter cuts before "my sister", so the
    name is the clause before. Only a lone name, and only a kin word set off by a comma on
    both sides: "Ana, my sister is here" addresses Ana and names nobody."""
    kin = _MY_KIN_SET_OFF.match(clause.text)
    if kin is None or clause.question or not _LONE_NAME.match(previous.text):
        return []
    finding = relation_to(kin.group("kin"), previous.text)
    return [_Spanning(finding, "assert", "present", finding.confidence, start=previous.start)]


_AND_BETWEEN = re.compile(r"^\s*(?:and|&)\s*$")


def _couple_before(previous: Clause, clause: Clause, content: str) -> list[Reading]:
    """ "Tom and I got married", "my husband and I split up": the splitter cuts before "I", so
    the partner is the clause before, joined by "and" (:func:`.lifeevents.couple`)."""
    between = content[previous.start + len(previous.text) : clause.start]
    if clause.question or previous.question or not _AND_BETWEEN.match(between):
        return []
    return [
        _Spanning(
            finding,
            finding.polarity or "assert",
            "present",
            finding.confidence,
            start=previous.start,
        )
        for finding in couple(previous.text, clause.text)
    ]


def _decided_before(previous: Clause, clause: Clause, content: str) -> list[Reading]:
    """ "Ana and I have decided to move in together": the splitter cuts before "I", so the
    person the decision was taken with is the clause before (:func:`.together.decided_with`);
    a clause that asks, hedges or wishes decides nothing."""
    between = content[previous.start + len(previous.text) : clause.start]
    if not _AND_BETWEEN.match(between) or previous.question:
        return []
    said = clause.text.replace("\u2019", "'")
    decided = decided_with(previous.text, said)
    if not decided:
        return []  # the cheap question first: most clauses after "and" decide nothing
    mood = clause_mood(said, question=clause.question)
    if mood.silent or mood.hedged or mood.conditional or mood.no_longer:
        return []
    return [
        _Spanning(finding, "assert", "present", finding.confidence, start=previous.start)
        for finding in decided
    ]


def _unnamed_twin(reading: Reading, together: list[Reading]) -> bool:
    """ "Lena and I got divorced": the clause alone reads an unnamed spouse; the couple names
    the partner, and one belief is told."""
    finding = reading.finding
    unnamed = finding.object.lower() == (finding.facet or "").lower()
    return (
        finding.relation == "related_to"
        and unnamed
        and any(t.polarity == reading.polarity for t in together)
    )


def _drop_ended(found: Trace, gone: set[tuple[str, str]]) -> None:
    """A partner the clause before asserted ("my husband" of "my husband and I split up") is
    what this clause ends: the assertion goes, the retraction stays."""
    if gone:
        found.proposals = [
            p
            for p in found.proposals
            if not (
                p.relation == "related_to"
                and p.polarity == "assert"
                and (p.object.lower(), (p.facet or "").lower()) in gone
            )
        ]


def _quote(reading: Reading, clause: Clause, content: str) -> str:
    """The clause, or from an earlier clause's start when the reading spans two."""
    if isinstance(reading, _Spanning):
        return content[reading.start : clause.start + len(clause.text)]
    return clause.text


def _unnamed_pet(proposal: Proposal) -> bool:
    return (
        proposal.relation == "owns"
        and proposal.facet is None
        and proposal.polarity == "assert"
        and pet_kind(proposal.object) is not None
    )


def _keep_the_surer(found: Trace, key: tuple[str, ...], again: Proposal) -> None:
    """One claim read twice in a message (by two readers, or in two clauses) is one proposal,
    the first, with the surer of the two readings' confidence: a weak reading of one shape
    must not make a claim another reader states firmly provisional. (Looked up by identity:
    an index could have moved when a family event dropped a proposal.)"""
    for index, first in enumerate(found.proposals):
        if _identity(first) == key:
            if (again.confidence or 0) > (first.confidence or 0):
                found.proposals[index] = replace(first, confidence=again.confidence)
            return


def _unnamed_relative(proposal: Proposal) -> bool:
    """ "my son" (I, related_to, son, facet son): a relative told without a name yet."""
    return (
        proposal.relation == "related_to"
        and proposal.polarity == "assert"
        and proposal.facet is not None
        and proposal.object.lower() == proposal.facet.lower()
    )


def _name_relative(found: Trace, index: int, clause: Clause, content: str) -> int | None:
    """ "My son just turned one. His name is Kyle.": a clause that opens by telling a name
    names the unnamed relative the clause before formed (:mod:`.naming`), and the quote spans
    both, so it holds the name; the relative waits for a name only across that one clause."""
    told = told_name(clause.text)
    if index >= len(found.proposals) or not _unnamed_relative(found.proposals[index]):
        return None  # the relative was dropped since ("my wife and I separated")
    relative = found.proposals[index]
    start = content.rfind(relative.quote, 0, clause.start)
    if (
        told is not None
        and told.start() == 0
        and start >= 0
        and fits(relative.facet or "", told, "")
    ):
        quote = content[start : clause.start + told.end()]
        found.proposals[index] = replace(relative, object=told.group("name"), quote=quote)
    return None


def _gated(reading: Reading, quote: str, *, quoted: bool) -> Proposal | Abstention:
    """The reading as a proposal, unless it lies in quoted speech, an end is malformed, or
    "we" is not the project."""
    original = reading.finding
    claim = f"{original.subject} {original.relation} {original.object}"
    if quoted:
        return Abstention(quote, claim, "inside quoted or reported speech")
    judged = judge(original)
    if isinstance(judged, Abstain):
        return Abstention(quote, claim, judged.reason)
    if not about_the_project(judged):
        return Abstention(quote, claim, '"we" here is not the project\'s work')
    return _proposal(Reading(judged, reading.polarity, reading.tense, reading.confidence), quote)


def _proposal(reading: Reading, quote: str) -> Proposal:
    finding = reading.finding
    return Proposal(
        subject=finding.subject,
        relation=finding.relation,
        object=finding.object,
        quote=quote,
        polarity=reading.polarity,
        tense=reading.tense,
        extractor=DETERMINISTIC_EXTRACTOR,
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
