"""Forming one episode: proposals in, one claims batch out (admitted, refused, overflow).

Pure: everything decided here comes from the episode's content, its event time, its log
position and the policy. Identities are name-based UUIDs over those, so a replay under the same
policy yields byte-identical batches.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from schemas.claims import (
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
from schemas.common import Polarity, Role, Trust
from schemas.episodes import MemoryRemembered, Message, TurnAppended, episode_messages
from streams.formation.admission import Admitted, MessageAdmission, Refused
from streams.formation.gates import classify_sensitivity, eligibility_refusal
from streams.formation.policy import FormationPolicy
from streams.formation.proposals import Proposal

ENGRAM_NAMESPACE = uuid.UUID("6f1c8a52-3d0e-4e57-9a1b-2b8f6c0e9d41")
EXPLICIT_CONFIDENCE = 0.9
DEFAULT_CONFIDENCE = 0.5

Episode = TurnAppended | MemoryRemembered


def name_uuid(*parts: object) -> uuid.UUID:
    """A deterministic identity: UUIDv5 over the parts, joined unambiguously."""
    return uuid.uuid5(ENGRAM_NAMESPACE, "\x1f".join(str(p) for p in parts))


def authorised_scope(episode: Episode) -> str:
    return f"project:{episode.project}"


def render_statement(
    subject: ClaimEnd, relation: str, obj: ClaimEnd, facet: str | None, polarity: str
) -> str:
    """The canonical statement, rendered locally: a model never authors belief prose."""
    verb = relation.replace("_", " ")
    if polarity == Polarity.RETRACT:
        verb = f"no longer {verb}"
    about = f" ({facet})" if facet else ""
    return f"{subject.text} {verb} {obj.text}{about}"


@dataclass
class _Outcome:
    candidates: list[Candidate] = field(default_factory=list)
    refusals: list[Refusal] = field(default_factory=list)
    proposed: int = 0
    overflow: int = 0


def _refusal(
    episode: Episode,
    message: Message,
    proposal: Proposal,
    reason: RefusalReason,
    detail: str,
    policy: FormationPolicy,
) -> Refusal:
    statement = proposal.statement or f"{proposal.subject} {proposal.relation} {proposal.object}"
    return Refusal(
        refusal_id=name_uuid(
            "refusal",
            episode.event_id,
            message.ordinal,
            proposal.relation,
            statement,
            proposal.quote,
            reason,
            proposal.extractor,
            policy.version,
        ),
        message_ordinal=message.ordinal,
        role=message.role,
        relation=proposal.relation,
        statement=statement,
        quote=proposal.quote,
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


def _trust_refusal(admitted: Admitted, message: Message) -> tuple[RefusalReason, str] | None:
    """The speaker rule, then the untrusted-source ban."""
    speaks_for_principal = EndKind.SPEAKER in (admitted.subject.kind, admitted.object.kind)
    if speaks_for_principal and message.role is not Role.USER:
        return (
            RefusalReason.NOT_SPOKEN_BY_PRINCIPAL,
            f"first-person claim in a {message.role} message",
        )
    if message.effective_trust is Trust.UNTRUSTED:
        return (
            RefusalReason.UNTRUSTED_SOURCE,
            f"derived solely from untrusted {message.role} content",
        )
    return None


def _gate(
    admitted: Admitted, message: Message, statement: str, episode: Episode, policy: FormationPolicy
) -> tuple[RefusalReason, str] | None:
    trust = _trust_refusal(admitted, message)
    if trust is not None:
        return trust
    for end in (admitted.subject, admitted.object):
        if len(end.text.encode()) > policy.max_entity_name_bytes:
            return RefusalReason.ENTITY_NAME_LIMIT, "an end's name is longer than the bound"
    scope = admitted.proposal.scope
    if scope is not None and scope != authorised_scope(episode):
        return RefusalReason.SCOPE_MISMATCH, f"proposed scope {scope!r} is not authorised"
    return eligibility_refusal(statement, message.content)


def _candidate(
    admitted: Admitted, message: Message, statement: str, episode: Episode, policy: FormationPolicy
) -> Candidate:
    proposal, relation = admitted.proposal, admitted.relation
    explicit = isinstance(episode, MemoryRemembered) and message.role is Role.USER
    reported = proposal.confidence if proposal.confidence is not None else DEFAULT_CONFIDENCE
    confidence = (
        max(reported, EXPLICIT_CONFIDENCE)
        if explicit
        else min(reported, policy.inferred_confidence_cap)
    )
    sensitivity = classify_sensitivity(f"{statement} {admitted.span.quote}")
    single = relation.cardinality == "single" or (
        relation.belief_type == "preference" and admitted.facet is not None
    )
    return Candidate(
        candidate_id=name_uuid(
            "candidate",
            episode.event_id,
            message.ordinal,
            relation.name,
            admitted.subject.kind,
            admitted.subject.text.lower(),
            admitted.object.kind,
            admitted.object.text.lower(),
            admitted.facet,
            proposal.polarity,
            policy.version,
        ),
        message_ordinal=message.ordinal,
        role=message.role,
        subject=admitted.subject,
        relation=relation.name,
        object=admitted.object,
        facet=admitted.facet,
        polarity=Polarity(proposal.polarity or ""),
        tense=Tense(proposal.tense or ""),
        statement=statement,
        quote=admitted.span.quote,
        span_start=admitted.span.start,
        span_end=admitted.span.end,
        belief_type=relation.belief_type.value,
        cardinality="single" if single else "many",
        is_event=relation.is_event,
        authority=_authority(message),
        confidence=round(confidence, 4),
        provisional=not explicit and confidence < policy.salience_threshold,
        portability=_portability(admitted),
        sensitivity=sensitivity,
        flagged_for_review=bool(sensitivity),
        scope=authorised_scope(episode),
        extractor=proposal.extractor,
    )


def _portability(admitted: Admitted) -> Portability:
    from streams.formation.vocabulary import clamp_portability

    proposed = admitted.proposal.portability
    valid = proposed if proposed in {p.value for p in Portability} else None
    return clamp_portability(admitted.relation, Portability(valid) if valid else None)


def _form_message(
    episode: Episode,
    message: Message,
    proposals: Sequence[Proposal],
    policy: FormationPolicy,
    outcome: _Outcome,
) -> None:
    admission = MessageAdmission(
        message.content,
        project=episode.project,
        unresolvable_terms=frozenset(policy.unresolvable_terms),
    )
    for proposal in proposals:
        verdict = admission.check(proposal)
        if isinstance(verdict, Refused):
            outcome.refusals.append(
                _refusal(episode, message, proposal, verdict.reason, verdict.detail, policy)
            )
            continue
        statement = render_statement(
            verdict.subject,
            verdict.relation.name,
            verdict.object,
            verdict.facet,
            proposal.polarity or "",
        )
        refused = _gate(verdict, message, statement, episode, policy)
        if refused is not None:
            outcome.refusals.append(_refusal(episode, message, proposal, *refused, policy))
        elif len(outcome.candidates) >= policy.max_committed_per_consolidation:
            outcome.overflow += 1
        else:
            outcome.candidates.append(_candidate(verdict, message, statement, episode, policy))


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
    ``policy.max_committed_per_consolidation`` become candidates; the rest is overflow.
    """
    outcome = _Outcome()
    budget = policy.scan_ceiling
    for message in episode_messages(episode):
        considered = list(proposals.get(message.ordinal, ()))[:budget]
        budget -= len(considered)
        outcome.proposed += len(considered)
        _form_message(episode, message, considered, policy, outcome)
    counts = FormationCounts(
        proposed=outcome.proposed,
        admitted=len(outcome.candidates),
        refused=len(outcome.refusals),
        overflow=outcome.overflow,
        retracted=sum(c.polarity is Polarity.RETRACT for c in outcome.candidates),
    )
    return ClaimsBatchFormed(
        batch_id=name_uuid("batch", episode.event_id, policy.version),
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
    )
