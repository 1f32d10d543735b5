"""Reading one clause: every family's patterns, then the clause's mood on what they found."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date

from engram.formation.deterministic import (
    animals,
    attributes,
    habits,
    lifeevents,
    outcomes,
    passing,
    possession,
    preferences,
    relationships,
    together,
)
from engram.formation.deterministic.clauses import Clause
from engram.formation.deterministic.copula import propose_copula
from engram.formation.deterministic.decisions import propose_decision
from engram.formation.deterministic.dispatch import Gates
from engram.formation.deterministic.events import propose_events
from engram.formation.deterministic.findings import REFUSED_CONFIDENCE, Finding
from engram.formation.deterministic.lifeevents import ended, propose_life_events
from engram.formation.deterministic.mood import (
    CONDITIONAL_PREFIX,
    HEDGE_PREFIX,
    Mood,
    clause_mood,
    polarity,
)
from engram.formation.deterministic.passing import propose_in_passing
from engram.formation.deterministic.predicate import VERBS, Predicate, parse_predicate
from engram.formation.deterministic.reasons import reason_head
from engram.formation.deterministic.relationships import propose_attributes, propose_relatives
from engram.formation.explicit import EXPLICIT_PREFIX
from engram.formation.screening import NeedleIndex, screened
from engram.formation.vocabulary import lookup

Handler = Callable[[Predicate], list[Finding]]

HANDLERS: dict[str, Handler] = {
    **possession.HANDLERS,
    **preferences.HANDLERS,
    **attributes.HANDLERS,
    **outcomes.HANDLERS,
    **relationships.HANDLERS,
}
_CONTINUATION = re.compile(
    r"\s+(?:and|but|&)\s+(?:(?:also|now|currently|still|just|really|even|recently)\s+)?"
    r"(?P<verb>[a-z]+)\b"
)
_CURRENT = frozenset({"present"})
_DROPPED_SUBJECT = re.compile(
    r"^(?:(?:Just|Recently|Finally)\s+)?(?:(?P<verb>Been|started|Started)\b"
    r"|(?P<got>[Gg]ot|[Bb]ought|Joined)\s+(?:myself\s+)?(?=(?:a|an|the)\s))"
)
""""Been busy …", "Just started …", "Just got a new camera", "Joined a travel club": a sentence
that dropped its "I"
(an acquisition only with its article: "Got it" and "Got home late" stay as they are)."""
_LEADING_WHEN = re.compile(
    r"^(?:(?:[Ee]specially|[Rr]ight|[Jj]ust|[Ee]ver)\s+)?(?:[Aa]fter|[Ss]ince|[Oo]nce|[Nn]ow\s+that"
    r"|[Bb]ecause|[Ww]hen)\s+(?=I\s|I'm\s|I've\s)"
)
""""Especially after I failed the exam, …", "Since I moved to Porto, …": what the "I" clause
says is so; the clause is read from the "I" on (the clause's mood still decides: "when" and
"once" open a conditional there, which stays hypothetical)."""
_REASON_FOR = screened(
    r"\b(?:remind(?:s|ed)?\s+me|(?:that|this|it)(?:'s|\s+is|\s+was)|which\s+is)\s+"
    r"(?:(?:again|always)\s+)?(?:why|how\s+much)\s+(?=I\s|I'm\s|I've\s)",
    re.IGNORECASE,
)
_REMINDS_THAT = screened(
    r"\bremind(?:s|ed)?\s+me\s+(?:(?:again|always)\s+)?that\s+(?=I\s|I'm\s|I've\s)", re.IGNORECASE
)
""""Moments like that remind me why I love climbing", "that's why I love gardening", "… reminds
me that I really enjoy cooking" (two patterns, so each is looked for by its own rare words): the reason
or the passion told is the speaker's own statement, read from the "I" on (the mood of the whole
clause still decides: "Maybe that's why …" stays a hedge)."""
_TELLING = screened(
    r"\b(?:let you know|let ya know|tell you|tell ya|guess what[?!,]*|good news[:!,]*"
    r"|big news[:!,]*)\s+(?:that\s+)?"
    r"(?=I\s|I'm\s|I've\s)",
    re.IGNORECASE,
)


_CLAUSE_WIDE = Gates(
    {
        **animals.TRIGGERS,
        **lifeevents.TRIGGERS,
        **relationships.TRIGGERS,
        **preferences.TRIGGERS,
        **habits.TRIGGERS,
        **passing.TRIGGERS,
        **together.TRIGGERS,
    }
)
"""The readers every clause is offered whatever it opens with, each skipped where its trigger
cannot match (:class:`~.dispatch.Gates`): one pass over the clause in place of a search for
each of their patterns."""
_PETS, _LIFE, _RELATIVES, _ATTRIBUTES, _REQUEST, _HABITS, _PASSING, _TOGETHER = (
    _CLAUSE_WIDE.bit(reader)
    for reader in (
        animals.named_pets,
        propose_life_events,
        propose_relatives,
        propose_attributes,
        preferences.propose_request,
        habits.propose_habits,
        propose_in_passing,
        together.propose_decided_with,
    )
)


_CUTS = NeedleIndex.of(
    [EXPLICIT_PREFIX, _TELLING, _REASON_FOR, _REMINDS_THAT, HEDGE_PREFIX, CONDITIONAL_PREFIX]
)
"""The words a clause is cut before it is read (a cue to remember, a telling, a reason, a hedge,
a condition), looked for in one pass over the clause as said: a cut none of whose needles is in
it cannot apply. What the cuts before it leave is a part of the clause, and putting back a
dropped "I" (:func:`_with_subject`) adds no word a later cut looks for, so a needle absent from
the clause is absent from every text a cut reads."""
_EXPLICIT, _TOLD, _REASON, _REMINDS, _HEDGE, _CONDITIONAL = (1 << bit for bit in range(6))


@dataclass(frozen=True, slots=True)
class Reading:
    """A finding with its polarity and tense settled."""

    finding: Finding
    polarity: str
    tense: str
    confidence: float


def read_clause(clause: Clause, *, occurred_on: date | None = None) -> list[Reading]:
    said = clause.text.replace("\u2019", "'")
    cuts = _CUTS.possible(said)
    text = EXPLICIT_PREFIX.sub("", said) if cuts & _EXPLICIT else said
    mood = clause_mood(text, question=clause.question)
    if mood.silent:
        return []
    head = reason_head(text) if cuts & _REASON else None
    text = _with_subject(_after_telling(text, cuts))
    if cuts & _HEDGE:
        text = HEDGE_PREFIX.sub("", text)
    if cuts & _CONDITIONAL:
        text = CONDITIONAL_PREFIX.sub("", text)
    readings = [_settle(f, mood, negated=False, tense="present") for f in propose_status(text)]
    decisions = propose_decision(text, occurred_on)
    readings += [_settle(f, mood, negated=False, tense="present") for f in decisions]
    if not decisions:
        readings += _read_predicate(text, mood, depth=0)
    possible = _CLAUSE_WIDE.possible(text)
    life = propose_life_events(text, occurred_on) if possible & _LIFE else []
    gone = ended(life)
    relatives = propose_relatives(text) if possible & _RELATIVES else []
    clause_wide = (
        *propose_events(text, occurred_on),
        *life,
        *(f for f in relatives if not _ends(f, gone)),
        *(propose_attributes(text) if possible & _ATTRIBUTES else ()),
        *(preferences.propose_request(text) if possible & _REQUEST else ()),
        *(habits.propose_habits(text, occurred_on) if possible & _HABITS else ()),
        *(propose_in_passing(text, occurred_on) if possible & _PASSING else ()),
        *(together.propose_decided_with(text) if possible & _TOGETHER else ()),
    )
    for finding in clause_wide:
        readings.append(_settle(finding, mood, negated=False, tense="present"))
    if head is not None:
        readings += read_clause(replace(clause, text=head), occurred_on=occurred_on)
    named = animals.named_pets(text) if possible & _PETS else []
    return _one_per_routine(_one_per_pet(readings, named, mood))


def _ends(finding: Finding, gone: set[tuple[str, str]]) -> bool:
    """A relative the clause's family event ends (:mod:`.lifeevents`): "my husband Sam passed
    away" does not also assert a living husband Sam."""
    key = (finding.object.lower(), (finding.facet or "").lower())
    return finding.relation == "related_to" and finding.polarity is None and key in gone


def _one_per_routine(readings: list[Reading]) -> list[Reading]:
    """A pastime the clause tells with how often or since when (:mod:`.habits`) is one belief:
    the same participation without that facet, found by another family, is dropped."""
    timed = {
        (r.finding.subject, r.finding.object)
        for r in readings
        if r.finding.relation == "participated_in" and r.finding.facet is not None
    }
    if not timed:
        return readings
    return [
        r
        for r in readings
        if not (
            r.finding.relation == "participated_in"
            and r.finding.facet is None
            and (r.finding.subject, r.finding.object) in timed
        )
    ]


def _one_per_pet(
    readings: list[Reading], named: list[tuple[str, str]], mood: Mood
) -> list[Reading]:
    """Every owned pet told by one word, and a pet the clause names (``named``, from
    :func:`.animals.named_pets`) as one belief carrying its name (:mod:`.animals`): "my pups" is
    "my puppy", "my dog Rex" one dog named Rex."""
    settled: list[Reading] = []
    for reading in readings:
        settled += [
            Reading(finding, reading.polarity, reading.tense, reading.confidence)
            for finding in animals.settle(reading.finding, named)
        ]
    for finding in animals.unmet(named, [r.finding for r in settled]):
        settled.append(_settle(finding, mood, negated=False, tense="present"))
    return settled


def _after_telling(text: str, cuts: int) -> str:
    """ "…wanted to let you know I joined a club": the claim starts after the telling; "…
    reminds me why I love X": after the reason. ``cuts``: which of the cuts may apply
    (:data:`_CUTS`)."""
    match = (
        (_TELLING.search(text) if cuts & _TOLD else None)
        or (_REASON_FOR.search(text) if cuts & _REASON else None)
        or (_REMINDS_THAT.search(text) if cuts & _REMINDS else None)
        or _LEADING_WHEN.match(text)
    )
    return text[match.end() :] if match else text


_TASTE_SAID_OTHERWISE = re.compile(
    r"^(?:(?P<dropped>(?:Really\s+|Totally\s+|Just\s+)?(?:[Ll]ove|[Ll]oving))\s+(?=[a-z]+ing\b)"
    r"|I(?:'m|\s+am)\s+(?:all|totally|really|big\s+time)\s+about\s+(?=[a-z])"
    r"|I(?:'ll|\s+will)\s+always\s+(?P<always>love|like|enjoy)\s+)"
)
""""Love experimenting with spices" (the dropped "I"), "I'm all about thrillers and sitcoms",
"I will always love reading": a taste of now, told as "I love …" is."""


def _taste(text: str) -> str:
    match = _TASTE_SAID_OTHERWISE.match(text)
    if match is None:
        return text
    verb = (match.group("always") or "love").lower()
    return f"I {verb} {text[match.end() :]}"


def _with_subject(text: str) -> str:
    """ "Been busy volunteering …", "Just started doing yoga", "Got myself a new laptop": the
    dropped "I" put back."""
    text = _taste(text)
    match = _DROPPED_SUBJECT.match(text)
    if match is None:
        return text
    if match.group("got"):
        return f"I {match.group('got').lower()} {text[match.end() :]}"
    verb = "I've been" if match.group("verb") == "Been" else "I started"
    return f"{verb}{text[match.end() :]}"


def propose_status(text: str) -> list[Finding]:
    return outcomes.propose_status(text)


def _read_predicate(text: str, mood: Mood, *, depth: int) -> list[Reading]:
    predicate = parse_predicate(text)
    if predicate is None:
        return []
    rest, following = _split_continuation(predicate.rest)
    predicate = Predicate(
        predicate.subject, predicate.modifiers, predicate.lemma, predicate.form, rest
    )
    handler = HANDLERS.get(predicate.lemma or "", propose_copula)
    readings = [
        _settle(f, mood, negated=predicate.negated, tense=predicate.tense())
        for f in handler(predicate)
    ]
    if following and depth < 4:
        readings += _read_predicate(f"{predicate.subject} {following}", mood, depth=depth + 1)
    return readings


def _split_continuation(rest: str) -> tuple[str, str | None]:
    """ "in Berlin and work at Acme" → ("in Berlin", "work at Acme")."""
    for match in _CONTINUATION.finditer(rest):
        lemma_form = VERBS.get(match.group("verb"))
        if lemma_form is not None and lemma_form[1] != "gerund":
            return rest[: match.start()], rest[match.start("verb") :]
    return rest, None


def _settle(finding: Finding, mood: Mood, *, negated: bool, tense: str) -> Reading:
    if mood.hedged:
        settled_polarity = "hedge"
    elif finding.polarity is not None:
        settled_polarity = finding.polarity
    else:
        settled_polarity = polarity(mood, negated=negated)
    settled_tense = "hypothetical" if mood.conditional else (finding.tense or tense)
    relation = lookup(finding.relation)
    is_event = relation is not None and relation.is_event
    admitted = settled_polarity in {"assert", "retract"} and (
        settled_tense in _CURRENT or (settled_tense == "past" and is_event)
    )
    confidence = finding.confidence if admitted else REFUSED_CONFIDENCE
    return Reading(finding, settled_polarity, settled_tense, confidence)
