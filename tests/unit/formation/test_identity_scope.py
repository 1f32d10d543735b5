"""Identities derived from an episode name its tenant, principal and project, not its event id
alone (issue 25, item 3).

A producer chooses the ``event_id``; it is unique within its tenant, not across tenants. Two
tenants (or two principals of one tenant) whose producers use the same event id must form two
batches — other runs, candidates, refusals, beliefs — or the projector, which applies a batch
once, would skip the second as a duplicate and report it formed. The same episode appended
twice (a producer's retry) must still form one batch.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from engram.formation.corrections import candidate_hash, content_hash, form_correction
from engram.resolution.beliefs import BeliefState
from engram.resolution.chunk import resolve_chunk
from engram.resolution.ordering import redact
from engram.schemas.claims import ClaimsBatchFormed, RefusalReason, SourcePosition
from engram.schemas.common import Role
from engram.schemas.corrections import BeliefCorrected, ContentKey, CorrectionKind
from tests.support.forming import POLICY, SOURCE, episode, form, message, proposal

EVENT = 7
"""The event id every episode below shares."""


def _formed(
    tenant: str = "t", principal: str = "ada", project: str = "engram"
) -> ClaimsBatchFormed:
    """One episode with one admitted candidate and refusals (admission, and the speaker rule),
    under the shared event id, in the given scope."""
    turn = episode(
        message("I live in Lisbon. I enjoy teleporting."),
        message("You live in Oslo.", Role.ASSISTANT),
        event=EVENT,
        tenant=tenant,
        principal=principal,
        project=project,
    )
    return form(
        turn,
        (0, proposal()),
        (0, proposal(relation="enjoys_teleporting", obj="x", quote="I enjoy teleporting")),
        (1, proposal(obj="Oslo", quote="You live in Oslo")),
    )


def _ids(batch: ClaimsBatchFormed) -> tuple[set[uuid.UUID], set[uuid.UUID], set[uuid.UUID]]:
    return (
        {batch.batch_id},
        {c.candidate_id for c in batch.candidates},
        {r.refusal_id for r in batch.refusals},
    )


def test_the_episode_forms_a_candidate_and_refusals() -> None:
    batch = _formed()
    assert len(batch.candidates) == 1
    assert {r.reason for r in batch.refusals} >= {RefusalReason.NOT_SPOKEN_BY_PRINCIPAL}
    assert len(batch.refusals) == 2


def test_the_same_episode_twice_has_the_same_identities() -> None:
    assert _ids(_formed()) == _ids(_formed())
    assert _formed() == _formed()


@pytest.mark.parametrize(
    "other",
    [{"tenant": "other-tenant"}, {"principal": "bob"}, {"project": "other-project"}],
    ids=["tenant", "principal", "project"],
)
def test_an_episode_differing_only_in_its_scope_shares_no_identity(other: dict[str, str]) -> None:
    first, second = _formed(), _formed(**other)
    assert first.episode_id == second.episode_id  # the same event id
    for mine, theirs in zip(_ids(first), _ids(second), strict=True):
        assert mine and theirs
        assert mine.isdisjoint(theirs)


@pytest.mark.parametrize("other", [{"tenant": "other-tenant"}, {"principal": "bob"}])
def test_resolution_forms_both_episodes_and_skips_a_repeat(other: dict[str, str]) -> None:
    """In one chunk, as the projector resolves them: both form their belief, run and refusals;
    a copy of the first (appended twice) is skipped."""
    first, second = _formed(), _formed(**other)
    changes, outcomes = resolve_chunk(BeliefState(), [first, second, first])
    assert [o.skipped for o in outcomes] == [False, False, True]
    assert len({r.run_id for r in changes.runs}) == 2
    assert len(changes.beliefs_new) == 2
    assert {(b.tenant, b.principal, b.object_text) for b in changes.beliefs_new.values()} == {
        (first.tenant, first.principal, "Lisbon"),
        (second.tenant, second.principal, "Lisbon"),
    }
    assert len({e.evidence_id for e in changes.evidence}) == 2
    assert len({r.refusal_id for r in changes.refusals}) == 4
    assert len({e.event_id for e in changes.memory_events}) == 2


@pytest.mark.parametrize("other", [{"tenant": "other-tenant"}, {"principal": "bob"}])
def test_refusals_of_deleted_content_are_scoped_too(other: dict[str, str]) -> None:
    """A deletion turns a candidate into a tombstoned refusal named after the candidate (the
    same row resolution writes): each episode's is its own."""
    tombstoned: list[set[uuid.UUID]] = []
    for batch in (_formed(), _formed(**other)):
        [redacted] = redact([batch], {candidate_hash(c) for c in batch.candidates})
        tombstoned.append(
            {r.refusal_id for r in redacted.refusals if r.reason is RefusalReason.TOMBSTONED}
        )
    assert all(len(ids) == 1 for ids in tombstoned)
    assert tombstoned[0].isdisjoint(tombstoned[1])


LISBON = ContentKey(subject_key="speaker", relation="lives_in", object_key="entity:lisbon")


def _correction(**scope: str) -> BeliefCorrected:
    return BeliefCorrected(
        event_id=uuid.UUID(int=EVENT),
        tenant=scope.get("tenant", "t"),
        principal=scope.get("principal", "ada"),
        project="engram",
        session="s",
        occurred_at=datetime(2026, 1, 2, tzinfo=UTC),
        belief_id=uuid.UUID(int=1),
        kind=CorrectionKind.UNTRUE,
        content=LISBON,
        content_hash=content_hash(LISBON),
        statement="I live in Lisbon",
    )


@pytest.mark.parametrize("other", [{"tenant": "other-tenant"}, {"principal": "bob"}])
def test_corrections_and_their_rejections_are_scoped(other: dict[str, str]) -> None:
    source = SourcePosition(topic=SOURCE.topic, partition=0, offset=1)
    batches = [form_correction(_correction(**s), POLICY, source=source) for s in ({}, other)]
    assert batches[0].batch_id != batches[1].batch_id
    assert form_correction(_correction(), POLICY, source=source) == batches[0]
    changes, outcomes = resolve_chunk(BeliefState(), batches)
    assert not any(o.skipped for o in outcomes)
    assert len({r.rejection_id for r in changes.rejections}) == 2


def test_one_principal_in_two_projects_cites_both_episodes() -> None:
    """The same principal, the same words and event id in two projects: two episodes. The
    second reinforces the first's belief and is cited as evidence of it too."""
    first, second = _formed(), _formed(project="other-project")
    changes, outcomes = resolve_chunk(BeliefState(), [first, second])
    assert not any(o.skipped for o in outcomes)
    [belief] = changes.beliefs_new.values()
    assert belief.corroboration == 2
    assert {(e.belief_id, e.project) for e in changes.evidence} == {
        (belief.belief_id, "engram"),
        (belief.belief_id, "other-project"),
    }
    assert len({e.evidence_id for e in changes.evidence}) == 2
