"""Forming one episode: proposals in, one claims batch out (admitted, refused, overflow).

Pure: everything decided here comes from the episode's content, its event time, its log
position and the policy. Identities are name-based UUIDs over those, so a replay under the same
policy yields byte-identical batches. Every identity derived from an episode names its scope —
tenant, principal and project — before its ``event_id`` (:func:`episode_scope`): an event id is
unique within its tenant, not across tenants, so two tenants (or two principals) whose producers
use the same event id form two batches, while the same episode appended twice forms one.

Each proposal ends in exactly one of three outcomes, checked in this order:

* **refused** — by admission (:mod:`.admission`), then the speaker rule (a first-person end
  binds to the principal only in a ``user`` message), then the untrusted-source ban, the entity
  name bound, the authorised scope, and the eligibility gates (:mod:`.gates`: secret, pii,
  transient, system_restatement, instruction_shaped);
* **overflow** — it passed every check but the consolidation already committed
  ``max_committed_per_consolidation`` candidates, or it lay past the ``scan_ceiling``;
* **admitted** — a candidate, with authority from the message's trust, confidence capped at
  ``inferred_confidence_cap`` unless it is an explicit user-authored memory, provisional when
  below the salience threshold (explicit memories skip that threshold, never the gates),
  portability clamped to its belief type's ceiling, sensitivity classified and flagged.

So ``proposed == admitted + refused + overflow`` always holds. A refusal keeps its words, but
never a secret or a policy PII value: its statement and quote pass through
:func:`.gates.redact`, whatever the reason, and its identity is computed from the redacted words.
"""

from __future__ import annotations

import hashlib
import math
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from engram.formation.admission import Admitted, MessageAdmission, Refused
from engram.formation.cardinality import single_valued
from engram.formation.explicit import remembered_ranges, within
from engram.formation.gates import Cited, classify_sensitivity, eligibility_refusal, redact_cited
from engram.formation.injection import in_private_reasoning, sentences_around
from engram.formation.model_claims import shape_model_proposals
from engram.formation.policy import FormationPolicy
from engram.formation.proposals import Proposal
from engram.formation.spans import Span
from engram.formation.vocabulary import clamp_portability, lookup
from engram.schemas.claims import (
    Authority,
    Candidate,
    ClaimEnd,
    ClaimsBatchFormed,
    EndKind,
    FormationCounts,
    Portability,
    Refusal,
    RefusalReason,
    SourcePosition,
    Tense,
)
from engram.schemas.common import Polarity, Role, Trust
from engram.schemas.episodes import MemoryRemembered, Message, TurnAppended, episode_messages

ENGRAM_NAMESPACE = uuid.UUID("6f1c8a52-3d0e-4e57-9a1b-2b8f6c0e9d41")
_NAMESPACE_BYTES = ENGRAM_NAMESPACE.bytes

Episode = TurnAppended | MemoryRemembered


def name_uuid(*parts: object) -> uuid.UUID:
    """A deterministic identity: UUIDv5 over the parts, joined unambiguously.

    Exactly :func:`uuid.uuid5` (RFC 4122 §4.3: SHA-1 of namespace and name), with the
    namespace's bytes computed once: the projector names ~10 rows a batch this way."""
    name = "\x1f".join(map(str, parts)).encode()
    return _uuid5(hashlib.sha1(_NAMESPACE_BYTES + name).digest())


_VERSION_CLEAR = ~((0xC000 << 48) | (0xF000 << 64))
_VERSION_SET = (0x8000 << 48) | (5 << 76)


def _uuid5(digest: bytes) -> uuid.UUID:
    """A SHA-1 digest as a version-5 UUID: the variant and version bits set as
    ``uuid.UUID(bytes=..., version=5)`` sets them, without its argument checks (a third of its
    cost, and the core names a row per proposal)."""
    return uuid.UUID(int=(int.from_bytes(digest[:16]) & _VERSION_CLEAR) | _VERSION_SET)


EpisodeScope = tuple[str, str, str, uuid.UUID]
"""(tenant, principal, project, event id): what names an episode. A producer chooses the event
id, so it is unique only within its tenant; every identity derived from an episode names all
four, so another tenant's (or principal's) episode under the same event id is another episode."""


def episode_scope(episode: Episode) -> EpisodeScope:
    return episode.tenant, episode.principal, episode.project, episode.event_id


def batch_id(scope: EpisodeScope, policy_version: str) -> uuid.UUID:
    """The claims batch (and run) of one episode under one policy: ``name_uuid("batch",
    tenant, principal, project, event id, policy version)``. The same episode appended twice
    (a producer's retry) has one batch id, which the projector applies once."""
    return name_uuid("batch", *scope, policy_version)


def candidate_refusal_id(candidate_id: uuid.UUID, reason: RefusalReason) -> uuid.UUID:
    """The refusal of an admitted candidate that resolution rejects (tombstoned, rejected by
    the user): ``name_uuid("refusal", candidate id, reason)``. The candidate id names the
    episode's scope (:class:`MessageNames`), so this does too: resolution and a redaction
    (:mod:`resolution.ordering`) spell the same row with it."""
    return name_uuid("refusal", candidate_id, reason)


class MessageNames:
    """The identities of one message's candidates and refusals, their common head hashed once.

    ``candidate(*rest)`` is ``name_uuid("candidate", tenant, principal, project, episode_id,
    ordinal, *rest)`` and ``refusal(*rest)`` the same with ``"refusal"``, byte for byte: the
    name is the parts joined by a separator, so the head's bytes and the separator after them
    are the same for every row of the message, and SHA-1 can resume from a copy of their state
    instead of rendering and hashing them again per proposal."""

    __slots__ = ("_candidate", "_refusal")

    def __init__(self, scope: EpisodeScope, ordinal: int):
        tenant, principal, project, episode_id = scope
        head = f"\x1f{tenant}\x1f{principal}\x1f{project}\x1f{episode_id}\x1f{ordinal}\x1f".encode()
        self._candidate = hashlib.sha1(_NAMESPACE_BYTES + b"candidate" + head)
        self._refusal = hashlib.sha1(_NAMESPACE_BYTES + b"refusal" + head)

    def candidate(self, *rest: object) -> uuid.UUID:
        return self._named(self._candidate, rest)

    def refusal(self, *rest: object) -> uuid.UUID:
        return self._named(self._refusal, rest)

    @staticmethod
    def _named(head: hashlib._Hash, rest: tuple[object, ...]) -> uuid.UUID:
        state = head.copy()
        state.update("\x1f".join(map(str, rest)).encode())
        return _uuid5(state.digest())


def authorised_scope(episode: Episode) -> str:
    return f"project:{episode.project}"


def render_statement(
    subject: ClaimEnd,
    relation: str,
    obj: ClaimEnd,
    facet: str | None,
    polarity: str,
    *,
    ended: bool = False,
) -> str:
    """The canonical statement, rendered locally: a model never authors belief prose. A state
    that has ended (``ended``) reads "used to"."""
    verb = relation.replace("_", " ")
    if polarity == Polarity.RETRACT:
        verb = f"no longer {verb}"
    elif ended:
        verb = f"used to {verb}"
    about = f" ({facet})" if facet else ""
    return f"{subject.text} {verb} {obj.text}{about}"


@dataclass(frozen=True, slots=True)
class _MessageForming:
    """What every proposal of one message shares, worked out once per message instead of once
    per proposal: the episode and policy, the row identities' hashed head, the authority and
    trust the message confers, the authorised scope, whether the content is ASCII (byte and
    character offsets agree) and the ranges the user asked to be remembered."""

    episode: Episode
    message: Message
    policy: FormationPolicy
    names: MessageNames
    authority: Authority
    untrusted: bool
    scope: str
    ascii: bool
    remembered: list[tuple[int, int]]

    @classmethod
    def of(cls, episode: Episode, message: Message, policy: FormationPolicy) -> _MessageForming:
        return cls(
            episode=episode,
            message=message,
            policy=policy,
            names=MessageNames(episode_scope(episode), message.ordinal),
            authority=_authority(message),
            untrusted=message.effective_trust is Trust.UNTRUSTED,
            scope=authorised_scope(episode),
            ascii=message.content.isascii(),
            remembered=explicit_ranges(episode, message),
        )


@dataclass
class _Outcome:
    candidates: list[Candidate] = field(default_factory=list)
    refusals: list[Refusal] = field(default_factory=list)
    proposed: int = 0
    overflow: int = 0


def _refusal(
    forming: _MessageForming,
    position: int,
    proposal: Proposal,
    refused: tuple[RefusalReason, str],
) -> Refusal:
    """A refusal row that keeps the proposal's words, with secrets and policy PII redacted.

    A special-category relation the policy does not enable (``has_condition``) keeps none of
    its words: the statement and quote become ``[redacted:health]``, so a policy that refuses
    health data does not store it in its refusals either; the reason and relation remain.

    Redaction replaces each secret-shaped or policy-PII substring of the relation, statement,
    quote and detail with ``[redacted:<kind>]`` whatever the reason (and every secret value the message
    holds, wherever it recurs: :func:`.gates.redact_cited`), so a credential that was
    refused for an earlier reason (an untrusted tool message, say) is not stored either. Two
    proposals whose words differ only inside a redaction would share an identity, so a
    redacted refusal's identity also names the proposal's ``position`` in its message.
    """
    reason, detail = refused
    message, policy = forming.message, forming.policy
    proposed = proposal.statement or f"{proposal.subject} {proposal.relation} {proposal.object}"
    words = [proposal.relation, proposed, proposal.quote, detail]
    relation, statement, quote, detail = (
        redact_cited(w, source=message.content, pii_kinds=policy.pii_kinds) for w in words
    )
    special = lookup(proposal.relation)
    if special is not None and special.sensitivity and special.name not in policy.enabled_relations:
        statement = quote = f"[redacted:{special.sensitivity}]"  # never enabled, never kept
    redacted = [relation, statement, quote, detail] != words
    return Refusal(
        refusal_id=forming.names.refusal(
            relation,
            statement,
            quote,
            reason,
            proposal.extractor,
            policy.version,
            *((f"position:{position}",) if redacted else ()),
        ),
        message_ordinal=message.ordinal,
        role=message.role,
        relation=relation,
        statement=statement,
        quote=quote,
        reason=reason,
        detail=detail,
        extractor=proposal.extractor,
    )


def _authority(message: Message) -> Authority:
    match message.effective_trust:
        case Trust.OWNER:
            return Authority.USER
        case Trust.AFFIRMED:
            return Authority.AFFIRMED
        case Trust.UNTRUSTED:
            return Authority.INFERRED


def _trust_refusal(
    admitted: Admitted, forming: _MessageForming
) -> tuple[RefusalReason, str] | None:
    """The speaker rule, then the untrusted-source ban."""
    message = forming.message
    speaks_for_principal = EndKind.SPEAKER in (admitted.subject.kind, admitted.object.kind)
    if speaks_for_principal and message.role is not Role.USER:
        return (
            RefusalReason.NOT_SPOKEN_BY_PRINCIPAL,
            f"first-person claim in a {message.role} message",
        )
    if forming.untrusted:
        return (
            RefusalReason.UNTRUSTED_SOURCE,
            f"derived solely from untrusted {message.role} content",
        )
    return None


def explicit_ranges(episode: Episode, message: Message) -> list[tuple[int, int]]:
    """The character ranges of ``message`` that are explicit memory (skips salience, no gate).

    A ``memory.remember`` episode is explicit whoever wrote it: the whole message. In a turn,
    only the principal's own words can ask to be remembered — a ``user`` message at owner
    trust — and only what the request covers: "I like jazz. Remember that I live in Porto."
    raises the second sentence, not the first. The same words in tool, web or assistant
    content change nothing.
    """
    if isinstance(episode, MemoryRemembered):
        return [(0, len(message.content))]
    if message.role is not Role.USER or message.effective_trust is not Trust.OWNER:
        return []
    return remembered_ranges(message.content)


def _char_range(content: str, span: Span, ascii: bool) -> tuple[int, int]:
    """The span's character offsets (it counts bytes). ASCII content (``ascii``, known per
    message) has one byte a character, so its offsets are the span's own: no need to encode the
    message for every candidate."""
    if ascii:
        start = min(span.start, len(content))
        return start, start + len(span.quote)
    encoded = content.encode("utf-8")
    start = len(encoded[: span.start].decode("utf-8", errors="ignore"))
    return start, start + len(span.quote)


def _cited(
    admitted: Admitted, forming: _MessageForming, statement: str, chars: tuple[int, int]
) -> Cited:
    start, end = chars
    message = forming.message
    proposed = admitted.proposal.statement
    return Cited(
        statements=(statement,) if not proposed else (statement, proposed),
        context=sentences_around(message.content, start, end),
        source=message.content,
        role=message.role,
        in_private_reasoning=in_private_reasoning(message.content, start, end),
        quote=admitted.span.quote,
    )


def _gate(
    admitted: Admitted, forming: _MessageForming, statement: str, chars: tuple[int, int]
) -> tuple[RefusalReason, str] | None:
    trust = _trust_refusal(admitted, forming)
    if trust is not None:
        return trust
    scope = admitted.proposal.scope
    if scope is not None and scope != forming.scope:
        return RefusalReason.SCOPE_MISMATCH, f"proposed scope {scope!r} is not authorised"
    cited = _cited(admitted, forming, statement, chars)
    return eligibility_refusal(cited, pii_kinds=forming.policy.pii_kinds)


def _confidence(admitted: Admitted, forming: _MessageForming, explicit: bool) -> float:
    """Confidence from the strength of the evidence (seed 000). An explicit memory the owner
    wrote keeps its own path. Otherwise every automatic belief stays within
    ``inferred_confidence_cap``: a plain first-person statement by the principal reaches
    ``first_person_confidence``; a hedged reading keeps the lower value its extractor gave; what
    the principal only affirmed, or what came from others' words, stays within
    ``second_hand_confidence_cap``. Corroboration raises it later, in resolution."""
    policy = forming.policy
    reported = admitted.proposal.confidence
    if reported is None or not math.isfinite(reported):
        value = policy.default_confidence
    else:
        value = min(max(reported, 0.0), 1.0)
    if explicit and forming.authority is Authority.USER:  # owner trust: the only USER authority
        return round(max(value, policy.explicit_confidence), 4)
    cap = policy.inferred_confidence_cap
    if forming.authority is not Authority.USER:
        cap = min(cap, policy.second_hand_confidence_cap)
    elif _first_person(admitted) and value >= policy.default_confidence:
        value = max(value, policy.first_person_confidence)
    return round(min(value, cap), 4)


def _first_person(admitted: Admitted) -> bool:
    """The principal stating something of themselves, now: "I live in Porto"."""
    proposal = admitted.proposal
    return (
        admitted.subject.kind is EndKind.SPEAKER
        and admitted.tense == Tense.PRESENT.value
        and proposal.polarity != Polarity.RETRACT.value
    )


_POLARITIES: dict[str | None, Polarity] = {p.value: p for p in Polarity}
_TENSES: dict[str | None, Tense] = {t.value: t for t in Tense}
"""Admitted words to their members by lookup: admission lets through only ``assert`` and
``retract``, ``present`` and ``past``, so an enum call (and its failure path) is not needed."""


def _candidate(
    admitted: Admitted,
    forming: _MessageForming,
    statement: str,
    *,
    explicit: bool,
) -> Candidate:
    proposal, relation, policy = admitted.proposal, admitted.relation, forming.policy
    confidence = _confidence(admitted, forming, explicit)
    sensitivity = classify_sensitivity(f"{statement} {admitted.span.quote}")
    if relation.sensitivity is not None and relation.sensitivity not in sensitivity:
        sensitivity = [relation.sensitivity, *sensitivity]  # "I'm vegan" names no health term
    single = single_valued(relation, admitted.facet, past_state=admitted.past_state)
    subject, obj, span = admitted.subject, admitted.object, admitted.span
    return Candidate(
        candidate_id=forming.names.candidate(
            relation.name,
            subject.kind,
            subject.text.lower(),
            obj.kind,
            obj.text.lower(),
            admitted.facet,
            proposal.polarity,
            policy.version,
        ),
        message_ordinal=forming.message.ordinal,
        role=forming.message.role,
        subject=subject,
        relation=relation.name,
        object=obj,
        facet=admitted.facet,
        polarity=_POLARITIES[proposal.polarity],
        tense=_TENSES[admitted.tense],
        statement=statement,
        quote=span.quote,
        span_start=span.start,
        span_end=span.end,
        belief_type=relation.belief_type.value,
        cardinality="single" if single else "many",
        is_event=relation.is_event,
        authority=forming.authority,
        confidence=confidence,
        provisional=not explicit and confidence < policy.salience_threshold,
        portability=_portability(admitted),
        sensitivity=sensitivity,
        flagged_for_review=bool(sensitivity),
        scope=forming.scope,
        extractor=proposal.extractor,
    )


_PORTABILITIES: dict[str | None, Portability] = {p.value: p for p in Portability}


def _portability(admitted: Admitted) -> Portability:
    return clamp_portability(admitted.relation, _PORTABILITIES.get(admitted.proposal.portability))


def _form_message(
    forming: _MessageForming,
    admission: MessageAdmission,
    proposals: Sequence[Proposal],
    outcome: _Outcome,
) -> None:
    content, policy = forming.message.content, forming.policy
    for position, shaped in enumerate(shape_model_proposals(proposals)):
        proposal = shaped.proposal if isinstance(shaped, Refused) else shaped
        verdict = shaped if isinstance(shaped, Refused) else admission.check(shaped)
        if isinstance(verdict, Refused):
            refused_at_admission = (verdict.reason, verdict.detail)
            outcome.refusals.append(_refusal(forming, position, proposal, refused_at_admission))
            continue
        statement = render_statement(
            verdict.subject,
            verdict.relation.name,
            verdict.object,
            verdict.facet,
            proposal.polarity or "",
            ended=verdict.past_state,
        )
        chars = _char_range(content, verdict.span, forming.ascii)
        refused = _gate(verdict, forming, statement, chars)
        if refused is not None:
            outcome.refusals.append(_refusal(forming, position, proposal, refused))
        elif len(outcome.candidates) >= policy.max_committed_per_consolidation:
            outcome.overflow += 1
        else:
            explicit = within(forming.remembered, *chars)
            outcome.candidates.append(_candidate(verdict, forming, statement, explicit=explicit))


def form_episode(
    episode: Episode,
    policy: FormationPolicy,
    proposals: Mapping[int, Sequence[Proposal]],
    *,
    source: SourcePosition,
) -> ClaimsBatchFormed:
    """Admit, gate and bound the proposals for one episode; return its one claims batch.

    ``proposals`` maps a message ordinal to what the extractor arms proposed for it. At most
    ``policy.scan_ceiling`` proposals are considered per consolidation, and at most
    ``policy.max_committed_per_consolidation`` become candidates; the rest is overflow. Every
    proposal is counted as proposed, including those past the scan ceiling (they are overflow),
    so the audit accounts for an extractor's overproduction instead of truncating it silently.
    """
    outcome = _Outcome()
    budget = policy.scan_ceiling
    admission_sets: tuple[frozenset[str], frozenset[str]] | None = None  # once an episode
    for message in episode_messages(episode):
        offered = list(proposals.get(message.ordinal, ()))
        considered = offered[: max(budget, 0)]
        budget -= len(considered)
        outcome.proposed += len(offered)
        outcome.overflow += len(offered) - len(considered)
        if not considered:
            continue  # nothing to admit: no message state to build (most messages propose none)
        if admission_sets is None:
            admission_sets = (
                frozenset(policy.unresolvable_terms),
                frozenset(policy.enabled_relations),
            )
        admission = MessageAdmission(
            message.content,
            project=episode.project,
            unresolvable_terms=admission_sets[0],
            max_name_bytes=policy.max_entity_name_bytes,
            enabled_relations=admission_sets[1],
        )
        _form_message(_MessageForming.of(episode, message, policy), admission, considered, outcome)
    counts = FormationCounts(
        proposed=outcome.proposed,
        admitted=len(outcome.candidates),
        refused=len(outcome.refusals),
        overflow=outcome.overflow,
        retracted=sum(c.polarity is Polarity.RETRACT for c in outcome.candidates),
    )
    return ClaimsBatchFormed(
        batch_id=batch_id(episode_scope(episode), policy.version),
        tenant=episode.tenant,
        principal=episode.principal,
        project=episode.project,
        session=episode.session,
        episode_id=episode.event_id,
        episode_type=episode.type,
        trigger="explicit" if isinstance(episode, MemoryRemembered) else "turn",
        source=source,
        occurred_at=episode.occurred_at,
        policy_version=policy.version,
        candidates=outcome.candidates,
        refusals=outcome.refusals,
        counts=counts,
        activation_corroborations=policy.activation_corroborations,
    )
