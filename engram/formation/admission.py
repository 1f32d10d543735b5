"""Admission checks: the six ordered checks of seed 003 that turn proposals into claims.

Each proposal is checked in order and stops at the first failure, so every refusal is filed
under the most specific reason. Missing or unknown polarity and tense are refused, never
defaulted: a model forgetting a field is routine, and treating absence as "asserted" would write
facts nobody vouched for.
"""

from __future__ import annotations

from dataclasses import dataclass

from engram.formation.proposals import (
    PROJECT_TERMS,
    SPEAKER_TERMS,
    TENSES,
    Proposal,
    normalise_term,
)
from engram.formation.spans import Span, locate
from engram.formation.vocabulary import Relation, lookup
from engram.schemas.claims import ClaimEnd, EndKind, RefusalReason

ADMITTED_POLARITIES = frozenset({"assert", "retract"})


@dataclass(frozen=True, slots=True)
class Admitted:
    proposal: Proposal
    relation: Relation
    subject: ClaimEnd
    object: ClaimEnd
    facet: str | None
    span: Span
    tense: str = "present"
    """The tense the claim is kept in (:func:`kept_tense`): ``present`` or ``past``."""

    @property
    def past_state(self) -> bool:
        """A state that held and has ended: kept as history, with an end."""
        return self.tense == "past" and not self.relation.is_event


@dataclass(frozen=True, slots=True)
class Refused:
    proposal: Proposal
    reason: RefusalReason
    detail: str


Verdict = Admitted | Refused


_SPEAKER = ClaimEnd(kind=EndKind.SPEAKER, text="speaker")
"""The principal's end, built once: a ``ClaimEnd`` is frozen, so every claim can share it."""
_SPEAKER_TERM = normalise_term(_SPEAKER.text)


def resolve_end(text: str, *, project: str, default_kind: EndKind) -> ClaimEnd:
    """The end a written term names: the principal, the project, or itself."""
    return _resolved(
        text, normalise_term(text), ClaimEnd(kind=EndKind.PROJECT, text=project), default_kind
    )


def _resolved(text: str, term: str, project: ClaimEnd, default_kind: EndKind) -> ClaimEnd:
    """:func:`resolve_end` with the term already normalised and the project's end built: a
    message's admission normalises each written end once and builds its project end once."""
    if term in SPEAKER_TERMS:
        return _SPEAKER
    if term in PROJECT_TERMS:
        return project
    return ClaimEnd(kind=default_kind, text=" ".join(text.split()))


def claim_key(
    relation: str, subject: ClaimEnd, obj: ClaimEnd, facet: str | None
) -> tuple[str, ...]:
    """What makes two claims the same claim: relation and normalised ends (and facet)."""
    return (
        relation,
        subject.kind,
        normalise_term(subject.text),
        obj.kind,
        normalise_term(obj.text),
        normalise_term(facet or ""),
    )


class MessageAdmission:
    """Admission state for one message: remembers admitted keys for ``duplicate_claim``.

    ``enabled_relations`` is the policy's; None enables the whole vocabulary. A relation the
    policy disables is as unmapped as one outside the vocabulary: nothing of it forms.
    """

    def __init__(
        self,
        content: str,
        *,
        project: str,
        unresolvable_terms: frozenset[str],
        max_name_bytes: int = 4096,
        enabled_relations: frozenset[str] | None = None,
    ):
        self._content = content
        self._ascii = content.isascii()
        self._enabled = enabled_relations
        self._project = ClaimEnd(kind=EndKind.PROJECT, text=project)
        self._project_term = normalise_term(project)
        self._unresolvable = unresolvable_terms
        self._max_name_bytes = min(max_name_bytes, MAX_NAME_BYTES)
        self._seen: set[tuple[str, ...]] = set()

    def check(self, proposal: Proposal) -> Verdict:
        relation = lookup(proposal.relation)
        if relation is None:
            return Refused(proposal, RefusalReason.UNMAPPED_RELATION, "not in the vocabulary")
        if self._enabled is not None and relation.name not in self._enabled:
            return Refused(proposal, RefusalReason.UNMAPPED_RELATION, "disabled by the policy")
        subject_term = normalise_term(proposal.subject)
        if not subject_term or subject_term in self._unresolvable:
            detail = f"subject {proposal.subject!r} names nothing on its own"
            return Refused(proposal, RefusalReason.UNRESOLVABLE_SUBJECT, detail)
        span = locate(proposal.quote, self._content, ascii=self._ascii)
        if span is None:
            return Refused(proposal, RefusalReason.UNLOCATABLE_QUOTE, "quote not in the message")
        if proposal.polarity not in ADMITTED_POLARITIES:
            detail = f"polarity {proposal.polarity!r} is not an assertion"
            return Refused(proposal, RefusalReason.NOT_ASSERTED, detail)
        tense = kept_tense(proposal.tense, proposal.polarity, relation)
        if tense is None:
            detail = f"tense {proposal.tense!r} on {'an event' if relation.is_event else 'a state'}"
            return Refused(proposal, RefusalReason.NOT_CURRENT, detail)
        return self._admit_unless_duplicate(proposal, relation, span, subject_term, tense)

    def _admit_unless_duplicate(
        self, proposal: Proposal, relation: Relation, span: Span, subject_term: str, tense: str
    ) -> Verdict:
        object_term = normalise_term(proposal.object)
        bounded = _unbounded_end(proposal, object_term, self._max_name_bytes)
        if bounded is not None:
            return bounded
        subject = _resolved(proposal.subject, subject_term, self._project, EndKind.ENTITY)
        object_kind = EndKind.ENTITY if relation.object_kind == "entity" else EndKind.VALUE
        obj = _resolved(proposal.object, object_term, self._project, object_kind)
        facet = " ".join(proposal.facet.split()).lower() if proposal.facet else None
        key = (
            relation.name,
            subject.kind,
            self._key_term(subject),
            obj.kind,
            self._key_term(obj),
            normalise_term(facet or ""),
            proposal.polarity or "",
        )  # claim_key's, with the shared ends' terms normalised once
        if key in self._seen:
            return Refused(
                proposal, RefusalReason.DUPLICATE_CLAIM, "already claimed in this message"
            )
        self._seen.add(key)
        return Admitted(proposal, relation, subject, obj, facet, span, tense)

    def _key_term(self, end: ClaimEnd) -> str:
        """``normalise_term(end.text)``, looked up for the two ends this admission shares (the
        speaker's and the project's, built once) instead of normalised per proposal."""
        if end is _SPEAKER:
            return _SPEAKER_TERM
        if end is self._project:
            return self._project_term
        return normalise_term(end.text)


MAX_NAME_BYTES = 4096
"""The longest name an end can carry at all (seed 003's bound, and the wire contract's); a
policy may set a lower one. Longer is ``entity_name_limit``."""


def _unbounded_end(proposal: Proposal, object_term: str, max_bytes: int) -> Refused | None:
    """Refuse an end that names nothing or is too long to be a name, instead of failing."""
    if not object_term:
        return Refused(proposal, RefusalReason.UNRESOLVABLE_SUBJECT, "the object names nothing")
    for end in (proposal.subject, proposal.object):
        if len(end.encode()) > max_bytes:
            detail = f"an end is {len(end.encode())} bytes, over {max_bytes}"
            return Refused(proposal, RefusalReason.ENTITY_NAME_LIMIT, detail)
    return None


HELD_NOW_ABOUT_LATER = frozenset({"intends_to", "committed_to", "scheduled_for", "due_on"})
"""Relations whose object is a later act or date: an intention, a decision, a plan's date or a
deadline. Told in the future tense ("I'm going to learn the cello") they are held now, so they
are current: every model marks them ``future``, and refusing them refused every plan."""


_TRANSIENT_STATES = frozenset({"has_status"})
"""States not kept as history: a task's or a thing's status ("the audition went alright", "my
laptop crashed") is transient while it holds (the policy's ``transient_days``) and worth nothing
once it has passed."""


def kept_tense(tense: str | None, polarity: str | None, relation: Relation) -> str | None:
    """The tense a claim is kept in, or None when it cannot be kept (``not_current``).

    * ``present``: current;
    * ``past`` on an event: something that happened ("I went to Oslo"), kept as it is;
    * ``past`` on a state, asserted: a state that held and has ended ("I used to be a
      librarian"): kept as history, a belief with an end (``valid_to``) that supersedes
      nothing and that nothing current replaces — except a past status (``has_status``),
      transient while it held and nothing once over;
    * ``past`` on a state, retracted ("I lost my job as a banker"): the state has ended, which
      is a retraction now ("no longer a banker"), ``present``;
    * ``future`` on a plan (:data:`HELD_NOW_ABOUT_LATER`): an intention held now, ``present``;
    * anything else (a future state, a hypothetical, an unknown tense) is not a fact now.
    """
    if tense not in TENSES:
        return None
    if tense == "present":
        return "present"
    if tense == "past":
        if relation.is_event or (polarity == "assert" and relation.name not in _TRANSIENT_STATES):
            return "past"
        return "present" if polarity == "retract" else None
    if tense == "future" and relation.name in HELD_NOW_ABOUT_LATER:
        return "present"
    return None
