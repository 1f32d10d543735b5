"""Bounded formation: at most twelve committed candidates per consolidation, overflow counted,
and every proposal reconciles to exactly one terminal outcome."""

from __future__ import annotations

import uuid
from collections import Counter
from datetime import UTC, datetime
from typing import Literal

from hypothesis import given, settings
from hypothesis import strategies as st

from engram.formation.policy import FormationPolicy
from engram.formation.proposals import Proposal
from engram.schemas.claims import ClaimsBatchFormed, RefusalReason, SourcePosition
from engram.schemas.common import Role, Trust
from engram.schemas.episodes import Message, TurnAppended
from tests.support.forming import episode
from tests.support.forming import form as form_with

POLICY = FormationPolicy()
SOURCE = SourcePosition(topic="engram.episodes", partition=0, offset=9)
PEOPLE = 300
CONTENT = " ".join(f"I know Person{i}." for i in range(PEOPLE))
SECRET_CONTENT = "I know Person0. My password is hunter2."

Kind = Literal["valid", "unmapped", "unlocatable", "not_asserted", "speaker_in_tool"]
KINDS: tuple[Kind, ...] = ("valid", "unmapped", "unlocatable", "not_asserted", "speaker_in_tool")


def knows(i: int, **overrides: str | None) -> Proposal:
    fields: dict[str, str | None] = {
        "subject": "I",
        "relation": "knows",
        "object": f"Person{i}",
        "quote": f"I know Person{i}.",
        "polarity": "assert",
        "tense": "present",
    }
    fields.update(overrides)
    return Proposal(extractor="test", **fields)  # type: ignore[arg-type]


def turn(*messages: tuple[Role, str]) -> TurnAppended:
    return episode(*messages, event=21)


def form(
    formed_from: TurnAppended,
    proposals: dict[int, list[Proposal]],
    policy: FormationPolicy = POLICY,
) -> ClaimsBatchFormed:
    return form_with(formed_from, by_message=proposals, policy=policy)


def reconciles(batch: ClaimsBatchFormed) -> bool:
    counts = batch.counts
    return (
        counts.proposed == counts.admitted + counts.refused + counts.overflow
        and counts.admitted == len(batch.candidates)
        and counts.refused == len(batch.refusals)
    )


class TestAtMostTwelveCandidatesAreCommittedPerConsolidation:
    def test_twenty_valid_proposals_commit_twelve_and_overflow_eight(self) -> None:
        batch = form(turn((Role.USER, CONTENT)), {0: [knows(i) for i in range(20)]})
        assert len(batch.candidates) == POLICY.max_committed_per_consolidation == 12
        assert batch.counts.overflow == 8
        assert batch.counts.proposed == 20
        assert reconciles(batch)

    def test_the_first_twelve_in_message_order_are_the_ones_committed(self) -> None:
        batch = form(turn((Role.USER, CONTENT)), {0: [knows(i) for i in range(20)]})
        assert [c.object.text for c in batch.candidates] == [f"Person{i}" for i in range(12)]

    def test_the_cap_spans_every_message_of_the_consolidation(self) -> None:
        episode = turn((Role.USER, CONTENT), (Role.USER, CONTENT))
        batch = form(episode, {0: [knows(i) for i in range(8)], 1: [knows(i) for i in range(8)]})
        assert len(batch.candidates) == 12
        assert Counter(c.message_ordinal for c in batch.candidates) == {0: 8, 1: 4}
        assert batch.counts.overflow == 4

    def test_refused_proposals_do_not_use_up_the_cap(self) -> None:
        refused = [knows(i, relation="adores") for i in range(30)]
        batch = form(turn((Role.USER, CONTENT)), {0: [*refused, *(knows(i) for i in range(12))]})
        assert len(batch.candidates) == 12
        assert batch.counts.refused == 30
        assert batch.counts.overflow == 0

    def test_a_gate_still_refuses_what_would_have_overflowed(self) -> None:
        episode = turn((Role.USER, CONTENT), (Role.USER, SECRET_CONTENT))
        batch = form(episode, {0: [knows(i) for i in range(12)], 1: [knows(0)]})
        assert batch.counts.overflow == 0
        assert [r.reason for r in batch.refusals] == [RefusalReason.SECRET]

    def test_the_cap_is_the_policys(self) -> None:
        policy = FormationPolicy(max_committed_per_consolidation=3)
        batch = form(turn((Role.USER, CONTENT)), {0: [knows(i) for i in range(5)]}, policy)
        assert (len(batch.candidates), batch.counts.overflow) == (3, 2)


class TestTheScanCeilingIsCountedNotSilentlyTruncated:
    def test_proposals_past_the_scan_ceiling_are_proposed_and_overflow(self) -> None:
        proposals = [knows(i, relation="adores") for i in range(PEOPLE)]
        batch = form(turn((Role.USER, CONTENT)), {0: proposals})
        assert batch.counts.proposed == PEOPLE
        assert batch.counts.refused == POLICY.scan_ceiling
        assert batch.counts.overflow == PEOPLE - POLICY.scan_ceiling
        assert reconciles(batch)

    def test_the_ceiling_spans_messages(self) -> None:
        policy = FormationPolicy(scan_ceiling=5)
        episode = turn((Role.USER, CONTENT), (Role.USER, CONTENT))
        batch = form(
            episode, {0: [knows(i) for i in range(4)], 1: [knows(i) for i in range(4)]}, policy
        )
        assert len(batch.candidates) == 5
        assert batch.counts.overflow == 3
        assert reconciles(batch)


def _proposal_for(kind: Kind, i: int) -> tuple[int, Proposal]:
    """A proposal of the given kind, and the ordinal of the message it is for."""
    match kind:
        case "valid":
            return 0, knows(i)
        case "unmapped":
            return 0, knows(i, relation="befriended")
        case "unlocatable":
            return 0, knows(i, quote=f"I met Person{i} once")
        case "not_asserted":
            return 0, knows(i, polarity="hedge")
        case "speaker_in_tool":
            return 1, knows(i)


proposal_lists = st.lists(
    st.tuples(st.sampled_from(KINDS), st.integers(min_value=0, max_value=PEOPLE - 1)),
    max_size=80,
)


class TestEveryProposalReconcilesToExactlyOneOutcome:
    @settings(max_examples=150, deadline=None)
    @given(proposal_lists, st.integers(min_value=0, max_value=20))
    def test_proposed_equals_admitted_plus_refused_plus_overflow(
        self, drawn: list[tuple[Kind, int]], cap: int
    ) -> None:
        policy = FormationPolicy(max_committed_per_consolidation=cap, scan_ceiling=60)
        proposals: dict[int, list[Proposal]] = {0: [], 1: []}
        for kind, i in drawn:
            ordinal, proposal = _proposal_for(kind, i)
            proposals[ordinal].append(proposal)
        episode = turn((Role.USER, CONTENT), (Role.TOOL, CONTENT))

        batch = form(episode, proposals, policy)

        assert batch.counts.proposed == len(drawn)
        assert reconciles(batch)
        assert len(batch.candidates) <= cap
        assert all(c.message_ordinal == 0 for c in batch.candidates)
        assert len({c.candidate_id for c in batch.candidates}) == len(batch.candidates)

    @settings(max_examples=50, deadline=None)
    @given(proposal_lists)
    def test_formation_is_deterministic(self, drawn: list[tuple[Kind, int]]) -> None:
        proposals: dict[int, list[Proposal]] = {0: [], 1: []}
        for kind, i in drawn:
            ordinal, proposal = _proposal_for(kind, i)
            proposals[ordinal].append(proposal)
        episode = turn((Role.USER, CONTENT), (Role.TOOL, CONTENT))
        first = form(episode, proposals).model_dump_json()
        assert form(episode, proposals).model_dump_json() == first

    @settings(max_examples=50, deadline=None)
    @given(st.lists(st.integers(min_value=0, max_value=PEOPLE - 1), max_size=40))
    def test_each_refusal_has_one_reason_and_each_admitted_proposal_one_candidate(
        self, people: list[int]
    ) -> None:
        episode = turn((Role.USER, CONTENT))
        batch = form(episode, {0: [knows(i) for i in people]})
        distinct = len(set(people))
        assert len(batch.candidates) == min(distinct, 12)
        assert batch.counts.overflow == max(distinct - 12, 0)
        assert Counter(r.reason for r in batch.refusals) == (
            Counter({RefusalReason.DUPLICATE_CLAIM: len(people) - distinct})
            if len(people) > distinct
            else Counter()
        )


class TestTrustIsPartOfTheOutcomeNotTheCount:
    def test_an_untrusted_message_cannot_crowd_out_the_principal(self) -> None:
        tool = " ".join(f"Person{i} knows Person{i + 1}." for i in range(40))
        flood = [
            Proposal(
                subject=f"Person{i}",
                relation="knows",
                object=f"Person{i + 1}",
                quote=f"Person{i} knows Person{i + 1}.",
                polarity="assert",
                tense="present",
                extractor="test",
            )
            for i in range(40)
        ]
        episode = TurnAppended(
            event_id=uuid.UUID(int=22),
            tenant="t",
            principal="ada",
            project="engram",
            session="s",
            occurred_at=datetime(2026, 1, 1, tzinfo=UTC),
            messages=[
                Message(ordinal=0, role=Role.TOOL, content=tool, trust=Trust.UNTRUSTED),
                Message(ordinal=1, role=Role.USER, content=CONTENT),
            ],
        )
        batch = form(episode, {0: flood, 1: [knows(0)]})
        assert [c.object.text for c in batch.candidates] == ["Person0"]
        assert batch.counts.refused == 40
        assert reconciles(batch)
