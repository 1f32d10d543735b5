"""What a model proposes, held to the principal and to one name per thing (issue 42, item 5).

A model reads a message as a whole and writes down what it says, whoever or whatever it is
about, in whatever words come: "owns my dance studio" in one message, "my own studio" and "my
own dance studio" in the next; "prefers fantasy books" beside "prefers reading fantasy books";
"Edinburgh is located in Scotland"; "my car's status is broken down"; "participated in that
event". The pattern arm's readers only ever propose the speaker's own facts, about named
things; this module holds the model's proposals to the same, before admission, one outcome per
proposal (so ``proposed == admitted + refused + overflow`` still holds):

* **one name per thing** — an object is written in a deterministic normal form
  (:func:`normal_object`): no leading article, possessive or "own" ("my own dance studio" is
  "dance studio"), no reading, watching or listening before a work that is read, watched or
  heard ("reading fantasy books" is "fantasy books"). Two proposals of a message with the same
  relation whose objects are one thing, one named more fully ("studio", "dance studio": the
  shorter is the last words of the longer), are one claim: the fuller stays, the other is
  refused ``duplicate_claim``. This merges by words alone, never by meaning; across messages,
  the same normal form makes the same belief;
* **the principal's facts only** — a proposal whose subject is not the speaker (nor the
  project) is a fact of someone or something else: about a thing of the speaker's ("my car's
  status is broken down") it is kept as the principal's relation to it, (speaker, owns, car);
  about a relative ("my sister lives in Oslo") as (speaker, related_to, sister); about a work of
  theirs ("my screenplay is a love story") as (speaker, responsible_for, screenplay); a relation
  whose object is the principal ("Priya manages me") is theirs already; anything else
  ("Edinburgh is located in Scotland", a film star's tastes, a friend's job) is refused
  ``not_spoken_by_principal`` with a detail that says so. The state, schedule and rules of a
  piece of work (:data:`_WORK_STATE`: "the release is blocked by QA") stay as they are: the
  project's kind of fact, which words alone do not tell from a personal work's state;
* "we" is the project only for the project's kinds of claim (a decision, a rule, a tool, a
  status), as in the pattern arm; otherwise the principal is one of "we": "we went camping",
  "we love old films at Christmas" and "we're putting on a show" are the speaker's own
  outing, taste and undertaking (the pattern arm forms only the outing), and any other
  relation of "we" is refused with why;
* **no vague referent** — an object that points instead of naming ("that event", "these
  shoes", "it", "an event", "the thing") is refused ``unresolvable_subject``, as admission
  refuses a subject that names nothing; a pointing word before a name ("that community
  meeting") is dropped from the normal form;
* **one-off events provisional** — a past event of more than one word that is neither a known
  kind of event nor an activity (the pattern arm forms only those) is kept at a confidence
  under the salience threshold, so it forms provisional until another message tells it again.

Pure and deterministic: words in, words out; only proposals of a model extractor are touched
(the pattern arm's own gate, :mod:`.deterministic.ends`, does this for its proposals).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from engram.formation.admission import Refused
from engram.formation.deterministic.ends import PROJECT_RELATIONS
from engram.formation.deterministic.habits import pastime
from engram.formation.deterministic.lexicon import RELATIVE_FACETS
from engram.formation.deterministic.nouns import CREATIONS, EVENT_HEADS, OWNABLE_HEADS
from engram.formation.proposals import (
    PROJECT_TERMS,
    SPEAKER_TERMS,
    UNRESOLVABLE_TERMS,
    Proposal,
    normalise_term,
)
from engram.schemas.claims import RefusalReason

__all__ = ["MODEL_EXTRACTOR_PREFIX", "normal_object", "shape_model_proposals"]

MODEL_EXTRACTOR_PREFIX = "model:"
"""The model arm stamps ``model:<model name>`` on its proposals (:mod:`engram.streams.model.reply`)."""

_LEADING = re.compile(
    r"^(?:(?:a|an|the|my|our|mine|his|her|their|your|its|some)\s+)*(?:(?:very\s+)?own\s+)?",
    re.IGNORECASE,
)
_CONSUMING = re.compile(
    r"^(?:reading|watching|listening\s+to|hearing|viewing|collecting)\s+(?=\S+(?:\s+\S+)*\s*$)",
    re.IGNORECASE,
)
_WORKS = frozenset(
    {
        "book", "books", "novel", "novels", "comic", "comics", "manga", "poetry", "poems",
        "magazine", "magazines", "movie", "movies", "film", "films", "show", "shows", "series",
        "documentary", "documentaries", "anime", "music", "songs", "podcast", "podcasts",
        "albums", "album", "stories", "fiction", "thrillers", "romance", "mysteries", "sitcoms",
        "dramas", "romcoms", "biographies", "memoirs", "articles", "blogs", "records",
    }
)  # fmt: skip
"""What is read, watched or heard: "reading fantasy books" prefers the books."""
_VAGUE_HEADS = frozenset(
    {
        "event", "events", "thing", "things", "stuff", "activity", "activities", "something",
        "it", "that", "this", "one", "place", "experience", "experiences", "moment", "moments",
        "situation", "time", "times", "item", "items",
    }
)  # fmt: skip
"""Heads that name no particular thing when nothing more is told of them."""
_TAKEN_PART = frozenset(
    {"participated_in", "prefers", "dislikes", "interested_in", "responsible_for"}
)
"""What "we" did, loved or took on, the speaker did too: the principal is one of "we" ("we
went camping", "we love old films at Christmas", "we're putting on a talent show")."""
_WORK_STATE = frozenset(
    {
        "has_status", "blocked_by", "due_on", "scheduled_for", "occurred_on", "depends_on",
        "requires", "prohibits", "part_of",
    }
)  # fmt: skip
"""The state, schedule and rules of a piece of work ("the migration is done", "the release is
blocked by QA", "the report is due Friday"): the project's kind of fact, whose subject is the
work, kept as it is. Dates of an event the speaker told are here too: where they go is the date
folding's to decide (issue 42, item 4). A thing or person of the speaker's ("my car is broken
down") is the speaker's relation to it instead."""
_POINTING = re.compile(r"^(?:that|this|these|those|such|said|the\s+same)\b", re.IGNORECASE)
_MY = re.compile(r"^(?:my|mine|our)\s+(?:(?:very\s+)?own\s+)?(?P<thing>.+?)(?:'s|\u2019s)?$", re.I)


def normal_object(text: str) -> str:
    """The object written one way whatever the paraphrase: "my own dance studio" → "dance
    studio", "reading fantasy books" → "fantasy books"; otherwise as written (spacing
    collapsed, case kept: "Tesla" stays a name)."""
    said = " ".join(text.split()).strip(" .,!;:")
    said = _POINTING.sub("", said).strip() or said
    plain = _LEADING.sub("", said).strip() or said
    consumed = _CONSUMING.sub("", plain)
    if consumed != plain and consumed.lower().split()[-1] in _WORKS:
        plain = consumed
    return plain


def _vague(text: str) -> bool:
    """A pointing word with at most one word after it ("that event", "these shoes", "this
    pic": what is pointed at is in a picture or an earlier message), or a general head alone
    ("an event", "the thing", "it"). "That community meeting" names one: the pointing goes
    (:func:`normal_object`), as the pattern arm drops it (:mod:`.deterministic.ends`)."""
    said = " ".join(text.split()).strip(" .,!;:")
    if not said or normalise_term(said) in UNRESOLVABLE_TERMS:
        return True
    pointed = _POINTING.match(said)
    if pointed is not None:
        return len(said[pointed.end() :].split()) < 2
    plain = _LEADING.sub("", said).lower().split()
    return not plain or (len(plain) == 1 and plain[0] in _VAGUE_HEADS)


_PREPOSITIONS = frozenset(
    {"at", "in", "on", "near", "with", "for", "of", "about", "from", "by", "to", "during"}
)


def _head(words: list[str]) -> str:
    """The head of a noun phrase: its last word before a preposition ("experience" of
    "meaningful experience at a memorial")."""
    for index, word in enumerate(words):
        if index and word in _PREPOSITIONS:
            return words[index - 1]
    return words[-1]


ONE_OFF_CONFIDENCE = 0.4
"""Below the default policy's salience threshold (0.45): a one-off event forms provisional."""


def _one_off(proposal: Proposal) -> bool:
    """An event that is neither a known kind of event nor a pastime ("giving out food at the
    shelter", "a first call-out"): the pattern arm forms only those two (:mod:`.deterministic
    .events`), so a model's other events are kept, but provisional until told again."""
    if proposal.relation != "participated_in" or proposal.tense != "past":
        return False  # a present participation is an activity kept up ("I do judo")
    found = _LEADING.sub("", " ".join(proposal.object.split())).lower().split()
    if len(found) < 2:
        return False  # one word names an activity or a kind of event ("yoga", "a concert")
    head = _head(found)
    if head.endswith("ing") or pastime(found[0]) is not None:
        return False  # an activity: "kickboxing", "horseback riding with my dad"
    return head not in EVENT_HEADS and head.removesuffix("s") not in EVENT_HEADS


def _of_the_principal(proposal: Proposal) -> Proposal | Refused:
    """A proposal about someone or something else, as the principal's relation to it, or its
    refusal with why."""
    subject = normalise_term(proposal.subject)
    if subject in SPEAKER_TERMS or normalise_term(proposal.object) in SPEAKER_TERMS:
        return proposal  # the principal's own, or someone's relation to the principal
    if subject in PROJECT_TERMS:
        return _ours(proposal)
    mine = _MY.match(" ".join(proposal.subject.split()))
    thing = mine.group("thing").strip() if mine is not None else ""
    if thing and RELATIVE_FACETS.get(thing.lower()) is not None:
        return _relation_to(proposal, "related_to", thing, RELATIVE_FACETS[thing.lower()])
    head = thing.lower().split()[-1] if thing else ""
    if proposal.relation in _WORK_STATE and (head in CREATIONS or not _owned(head)):
        return proposal  # the state or date of a piece of work or an event: kept as it is
    if head in CREATIONS:
        return _relation_to(proposal, "responsible_for", thing, None)
    if _owned(head):
        return _relation_to(proposal, "owns", thing, None)
    detail = (
        f"a fact of {proposal.subject!r}, not of the principal: kept only as the principal's"
        " relation to it (a relative, a thing owned, a work of theirs)"
    )
    return Refused(proposal, RefusalReason.NOT_SPOKEN_BY_PRINCIPAL, detail)


def _owned(head: str) -> bool:
    """A head noun of a thing a person owns (a closed list: "car", "laptop", "kayak"); a name
    or a number does not make "my 18th birthday" a possession."""
    return head in OWNABLE_HEADS or head.removesuffix("s") in OWNABLE_HEADS


def _ours(proposal: Proposal) -> Proposal | Refused:
    """ "We …": the project's decision, rule, tool or status; else the principal is one of
    us (an outing, a taste, an undertaking); else refused with why."""
    if proposal.relation in PROJECT_RELATIONS or proposal.relation in _WORK_STATE:
        return proposal
    if proposal.relation in _TAKEN_PART:
        return replace(proposal, subject="I", statement=None)
    detail = (
        f"'we' {proposal.relation.replace('_', ' ')} is a household's, not the project's"
        " nor the principal's own"
    )
    return Refused(proposal, RefusalReason.NOT_SPOKEN_BY_PRINCIPAL, detail)


def _relation_to(proposal: Proposal, relation: str, thing: str, facet: str | None) -> Proposal:
    """The principal's relation to a thing or person of theirs, in place of a fact of it:
    "my car has status broken down" is (speaker, owns, car)."""
    return replace(
        proposal,
        subject="I",
        relation=relation,
        object=thing,
        facet=facet,
        polarity="assert",
        tense="present",
        statement=None,
    )


def _one_claim(a: Proposal, b: Proposal) -> bool:
    """Whether ``b``'s object names the same thing as ``a``'s, less fully ("studio" of "dance
    studio"): same subject, relation, polarity and facet, and ``b``'s words end ``a``'s."""
    if (normalise_term(a.subject), a.relation, a.polarity, a.facet) != (
        normalise_term(b.subject),
        b.relation,
        b.polarity,
        b.facet,
    ):
        return False
    longer, shorter = _phrase(a.object.lower().split()), b.object.lower().split()
    return len(shorter) <= len(longer) and longer[len(longer) - len(shorter) :] == shorter


def _phrase(words: list[str]) -> list[str]:
    """The words of a noun phrase up to its head, before any preposition: a "speech at my
    cousin's wedding" is a speech, and names no wedding more fully."""
    for index, word in enumerate(words):
        if index and word in _PREPOSITIONS:
            return words[:index]
    return words


def shape_model_proposals(proposals: Sequence[Proposal]) -> list[Proposal | Refused]:
    """Each proposal, a model's held to the principal and written in its normal form, or its
    refusal; a proposal of any other extractor as it is. One outcome per proposal, in order."""
    shaped: list[Proposal | Refused] = []
    for proposal in proposals:
        if not proposal.extractor.startswith(MODEL_EXTRACTOR_PREFIX):
            shaped.append(proposal)
            continue
        if _vague(proposal.object):
            detail = f"the object {proposal.object!r} points at something instead of naming it"
            shaped.append(Refused(proposal, RefusalReason.UNRESOLVABLE_SUBJECT, detail))
            continue
        held = _of_the_principal(proposal)
        if isinstance(held, Proposal):
            held = replace(held, object=normal_object(held.object))
            if _one_off(held):
                confidence = min(held.confidence or ONE_OFF_CONFIDENCE, ONE_OFF_CONFIDENCE)
                held = replace(held, confidence=confidence)
        shaped.append(held)
    return _fullest_names(shaped)


def _fullest_names(shaped: list[Proposal | Refused]) -> list[Proposal | Refused]:
    """Of a message's proposals that name one thing more or less fully, the fullest."""
    kept = [
        (index, item)
        for index, item in enumerate(shaped)
        if isinstance(item, Proposal) and item.extractor.startswith(MODEL_EXTRACTOR_PREFIX)
    ]
    for index, item in kept:
        fuller = next(
            (
                other
                for at, other in kept
                if at != index and len(other.object) > len(item.object) and _one_claim(other, item)
            ),
            None,
        )
        if fuller is not None:
            detail = f"the same thing as {fuller.object!r}, named more fully in this message"
            shaped[index] = Refused(item, RefusalReason.DUPLICATE_CLAIM, detail)
    return shaped
