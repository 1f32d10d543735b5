"""Resolution decides every change in memory: each outcome, checked without a database.

The integration tests (tests/integration/test_resolution.py) show the same rules hold once the
store has written the rows to PostgreSQL.
"""

from __future__ import annotations

import copy
import uuid
from datetime import timedelta

from engram.formation.core import name_uuid
from engram.formation.corrections import form_correction
from engram.formation.policy import FormationPolicy
from engram.resolution.beliefs import BeliefRow, BeliefState, Changes
from engram.resolution.chunk import BatchOutcome, resolve_chunk
from engram.resolution.confidence import real
from engram.schemas.claims import ClaimsBatchFormed, SourcePosition
from engram.schemas.common import Role, Trust
from engram.schemas.corrections import (
    BeliefCorrected,
    BeliefDeleted,
    ContentKey,
    CorrectionKind,
    PrincipalForgotten,
)
from engram.schemas.episodes import Message, TurnAppended
from engram.schemas.memory_events import MemoryChanged
from tests.support.episodes import turn
from tests.support.projecting import batch_of, claim

T = "t"


def _lives(city: str, seq: int, *, session: str = "s1", project: str = "p") -> ClaimsBatchFormed:
    text = f"I live in {city}."
    episode = turn(T, "ana", project, text, seq=seq, session=session)
    return batch_of(episode, claim("I", "lives_in", city, f"I live in {city}"), offset=seq)


def _resolve(
    *batches: ClaimsBatchFormed, state: BeliefState | None = None
) -> tuple[BeliefState, Changes, list[BatchOutcome]]:
    state = state if state is not None else BeliefState()
    changes, outcomes = resolve_chunk(state, batches)
    return state, changes, outcomes


def _reloaded(state: BeliefState, changes: Changes) -> BeliefState:
    """The state a later chunk would load: what the store wrote, read back."""
    written = {**copy.deepcopy(changes.beliefs_new), **copy.deepcopy(changes.beliefs_changed)}
    beliefs = {**copy.deepcopy(state.beliefs), **written}
    return BeliefState(beliefs.values(), entities=copy.deepcopy(list(state.entities.values())))


class TestANewClaimCreatesOneBeliefWithItsEvidence:
    def test_the_belief_its_evidence_its_run_and_a_formed_event_are_written(self) -> None:
        batch = _lives("Lisbon", 0)
        _, changes, [outcome] = _resolve(batch)
        [belief] = changes.beliefs_new.values()
        assert (belief.relation, belief.object_text, belief.status) == (
            "lives_in",
            "Lisbon",
            "active",
        )
        assert belief.valid_from == batch.occurred_at and belief.valid_to is None
        assert [e.quote for e in changes.evidence] == ["I live in Lisbon"]
        assert [r.committed for r in changes.runs] == [1]
        assert [e.type for e in changes.memory_events] == ["memory.formed"]
        assert outcome.created == [belief.belief_id]
        assert [f.offset for f in changes.formed] == [0]

    def test_a_named_end_becomes_one_entity_per_normalised_name(self) -> None:
        _, changes, _ = _resolve(_lives("Lisbon", 0))
        [entity] = changes.entities_new.values()
        assert (entity.normalized_name, entity.canonical_name) == ("lisbon", "Lisbon")

    def test_a_later_spelling_of_a_known_entity_is_an_alias_not_a_new_entity(self) -> None:
        state, _, _ = _resolve(_lives("Lisbon", 0))
        episode = turn(T, "ana", "p", "I use LISBON maps.", seq=1)
        uses = batch_of(episode, claim("I", "uses", "LISBON", "I use LISBON"), offset=1)
        _, changes, _ = _resolve(uses, state=state)
        assert not changes.entities_new
        [entity] = changes.entities_changed.values()
        assert (entity.canonical_name, entity.aliases) == ("Lisbon", ["LISBON"])


class TestADuplicateReinforcesInsteadOfAddingARow:
    def test_corroboration_confidence_and_evidence_grow_on_the_same_belief(self) -> None:
        state, first, _ = _resolve(_lives("Lisbon", 0))
        [original] = first.beliefs_new.values()
        before = original.confidence
        again = _lives("Lisbon", 1, session="s2")
        _, changes, [outcome] = _resolve(again, state=_reloaded(state, first))
        assert not changes.beliefs_new
        [belief] = changes.beliefs_changed.values()
        assert belief.corroboration == 2
        assert belief.confidence == real(before + 0.05)
        assert belief.last_reinforced_at == again.occurred_at
        assert outcome.reinforced == [belief.belief_id]
        assert [r.reinforced for r in changes.runs] == [1]

    def test_a_provisional_belief_becomes_active_after_the_policys_corroborations(self) -> None:
        policy = FormationPolicy(salience_threshold=0.6)  # activation_corroborations = 2
        episode = turn(T, "ana", "p", "I live in Lisbon.", seq=0)
        weak = batch_of(
            episode, claim("I", "lives_in", "Lisbon", "I live in Lisbon"), policy=policy
        )
        state, first, _ = _resolve(weak)
        assert [b.status for b in first.beliefs_new.values()] == ["provisional"]
        state = _reloaded(state, first)
        _, once, _ = _resolve(_lives("Lisbon", 1, session="s2"), state=state)
        assert [b.status for b in once.beliefs_changed.values()] == ["provisional"]
        state = _reloaded(state, once)
        _, twice, _ = _resolve(_lives("Lisbon", 2, session="s3"), state=state)
        assert [(b.status, b.corroboration) for b in twice.beliefs_changed.values()] == [
            ("active", 3)
        ]

    def test_the_number_of_corroborations_is_the_policy_the_batch_was_formed_under(self) -> None:
        weak = FormationPolicy(salience_threshold=0.6)
        eager = FormationPolicy(activation_corroborations=1)
        episode = turn(T, "ana", "p", "I live in Lisbon.", seq=0)
        lisbon = claim("I", "lives_in", "Lisbon", "I live in Lisbon")
        state, first, _ = _resolve(batch_of(episode, lisbon, policy=weak))
        again = batch_of(
            turn(T, "ana", "p", "I live in Lisbon.", seq=1, session="s2"), lisbon, policy=eager
        )
        _, changes, _ = _resolve(again, state=_reloaded(state, first))
        assert [b.status for b in changes.beliefs_changed.values()] == ["active"]

    def test_confidence_stops_at_the_reinforcement_ceiling(self) -> None:
        _, changes, _ = _resolve(*(_lives("Lisbon", seq, session=f"s{seq}") for seq in range(20)))
        [belief] = changes.beliefs_new.values()
        assert belief.corroboration == 20 and belief.confidence == real(0.95)

    def test_corroboration_in_two_projects_promotes_to_user_scope(self) -> None:
        _, changes, outcomes = _resolve(_lives("Lisbon", 0), _lives("Lisbon", 1, project="q"))
        [belief] = changes.beliefs_new.values()
        assert belief.scope == "user"
        assert belief.origin_scopes == ["project:p", "project:q"]
        assert outcomes[1].promoted == [belief.belief_id]
        assert "memory.promoted" in [e.type for e in changes.memory_events]

    def test_each_memory_event_is_what_validating_its_own_fields_gives(self) -> None:
        """Events are copied from a per-batch template without validation: each must still
        equal, and serialise as, the event built and validated from its own values."""
        batches = (_lives("Lisbon", 0), _lives("Lisbon", 1, project="q"), _lives("Porto", 2))
        _, changes, _ = _resolve(*batches)
        by_run = {b.batch_id: b for b in batches}
        assert [e.type for e in changes.memory_events] == [
            "memory.formed",
            "memory.reinforced",
            "memory.promoted",
            "memory.formed",
            "memory.superseded",
        ]
        assert {e.belief_id for e in changes.memory_events} == set(changes.beliefs_new)
        for event in changes.memory_events:
            batch = by_run[event.run_id]
            built = MemoryChanged(
                type=event.type,
                event_id=name_uuid("memory-event", batch.batch_id, event.type, event.belief_id),
                tenant=batch.tenant,
                principal=batch.principal,
                belief_id=event.belief_id,
                run_id=batch.batch_id,
                episode_id=batch.episode_id,
                occurred_at=batch.occurred_at,
                policy_version=batch.policy_version,
                project=batch.project,
            )
            assert event == built
            assert event.model_dump_json() == built.model_dump_json()


class TestASameSourceReplayChangesNothing:
    def test_an_episode_formed_again_under_another_policy_is_a_replay(self) -> None:
        state, first, _ = _resolve(_lives("Lisbon", 0))
        episode = turn(T, "ana", "p", "I live in Lisbon.", seq=0)
        other_policy = FormationPolicy(default_confidence=0.45)
        again = batch_of(
            episode, claim("I", "lives_in", "Lisbon", "I live in Lisbon"), policy=other_policy
        )
        reloaded = _reloaded(state, first)
        reloaded.cited.update(
            (e.belief_id, e.project, e.episode_id, e.message_ordinal) for e in first.evidence
        )
        _, changes, [outcome] = _resolve(again, state=reloaded)
        assert not changes.beliefs_new and not changes.beliefs_changed and not changes.evidence
        assert outcome.created == outcome.reinforced == []

    def test_a_batch_whose_run_exists_is_skipped_but_its_episode_counts_as_formed(self) -> None:
        batch = _lives("Lisbon", 0)
        _, changes, [outcome] = _resolve(batch, state=BeliefState(applied_runs=[batch.batch_id]))
        assert outcome.skipped and not changes.runs and not changes.beliefs_new
        assert [f.offset for f in changes.formed] == [0]

    def test_the_same_batch_twice_in_one_chunk_is_applied_once(self) -> None:
        batch = _lives("Lisbon", 0)
        _, changes, outcomes = _resolve(batch, batch)
        assert [o.skipped for o in outcomes] == [False, True]
        assert len(changes.runs) == 1 and len(changes.beliefs_new) == 1


class TestANewerValueOfASingleValuedRelationSupersedes:
    def test_the_old_value_ends_when_the_new_one_begins(self) -> None:
        lisbon, porto = _lives("Lisbon", 0), _lives("Porto", 1)
        _, changes, outcomes = _resolve(lisbon, porto)
        old = next(b for b in changes.beliefs_new.values() if b.object_text == "Lisbon")
        new = next(b for b in changes.beliefs_new.values() if b.object_text == "Porto")
        assert old.status == "superseded" and old.superseded_by == new.belief_id
        assert old.valid_to == old.known_to == porto.occurred_at
        assert new.supersedes == old.belief_id and new.status == "active"
        assert outcomes[1].superseded == [old.belief_id]

    def test_an_existing_value_is_updated_not_inserted(self) -> None:
        state, first, _ = _resolve(_lives("Lisbon", 0))
        _, changes, _ = _resolve(_lives("Porto", 1), state=_reloaded(state, first))
        [old] = changes.beliefs_changed.values()
        assert old.object_text == "Lisbon" and old.status == "superseded"
        assert [b.object_text for b in changes.beliefs_new.values()] == ["Porto"]

    def test_a_retraction_supersedes_only_what_it_retracts(self) -> None:
        uses = [
            batch_of(
                turn(T, "ana", "p", f"I use {tool}.", seq=i),
                claim("I", "uses", tool, f"I use {tool}"),
                offset=i,
            )
            for i, tool in enumerate(["Vim", "Git"])
        ]
        retract = batch_of(
            turn(T, "ana", "p", "I no longer use Vim.", seq=5),
            claim("I", "uses", "Vim", "I no longer use Vim", polarity="retract"),
            offset=5,
        )
        _, changes, _ = _resolve(*uses, retract)
        status = {(b.object_text, b.polarity): b.status for b in changes.beliefs_new.values()}
        assert status == {
            ("Vim", "assert"): "superseded",
            ("Git", "assert"): "active",
            ("Vim", "retract"): "active",
        }


def _affirmed(seq: int, city: str) -> ClaimsBatchFormed:
    content = f"You live in {city}."
    shape = turn(T, "ana", "p", content, seq=seq)
    message = Message(ordinal=0, role=Role.ASSISTANT, trust=Trust.AFFIRMED, content=content)
    episode: TurnAppended = shape.model_copy(update={"messages": [message]})
    return batch_of(episode, claim("Ana", "lives_in", city, f"live in {city}"), offset=seq)


class TestWhatNeitherAuthorityNorTimeOrdersIsAConflict:
    def test_a_newer_lower_authority_value_leaves_both_live_linked_and_flagged(self) -> None:
        user = batch_of(
            turn(T, "ana", "p", "Ana lives in Lisbon.", seq=0),
            claim("Ana", "lives_in", "Lisbon", "Ana lives in Lisbon"),
        )
        _, changes, outcomes = _resolve(user, _affirmed(1, "Porto"))
        lisbon = next(b for b in changes.beliefs_new.values() if b.object_text == "Lisbon")
        porto = next(b for b in changes.beliefs_new.values() if b.object_text == "Porto")
        # Both live; the affirmed value is weaker evidence, so it is provisional.
        assert (lisbon.status, porto.status) == ("active", "provisional")
        assert lisbon.conflicts_with == [porto.belief_id] and porto.conflicts_with == [
            lisbon.belief_id
        ]
        assert lisbon.flagged_for_review and porto.flagged_for_review
        assert outcomes[1].conflicted == [lisbon.belief_id]

    def test_a_value_starting_at_the_same_instant_is_refused_as_conflicting(self) -> None:
        lisbon = _lives("Lisbon", 0)
        porto_same_time = batch_of(
            turn(T, "ana", "p", "I live in Porto.", seq=0, session="s2"),
            claim("I", "lives_in", "Porto", "I live in Porto"),
            offset=1,
        )
        _, changes, _ = _resolve(lisbon, porto_same_time)
        assert [r.reason for r in changes.refusals] == ["conflicting_value"]
        assert [b.object_text for b in changes.beliefs_new.values()] == ["Lisbon"]

    def test_an_older_dated_new_value_is_refused_as_out_of_order(self) -> None:
        _, changes, _ = _resolve(_lives("Porto", 5), _lives("Lisbon", 1))
        assert [r.reason for r in changes.refusals] == ["out_of_order"]

    def test_an_older_dated_repeat_of_a_past_value_is_linked_not_reverted(self) -> None:
        lisbon, porto = _lives("Lisbon", 0), _lives("Porto", 5)
        late_lisbon = _lives("Lisbon", 2, session="s9")
        _, changes, outcomes = _resolve(lisbon, porto, late_lisbon)
        old = next(b for b in changes.beliefs_new.values() if b.object_text == "Lisbon")
        new = next(b for b in changes.beliefs_new.values() if b.object_text == "Porto")
        assert old.status == "superseded" and new.status == "active"
        assert old.conflicts_with == [new.belief_id] and new.conflicts_with == [old.belief_id]
        assert outcomes[2].conflicted == [new.belief_id]
        assert len([e for e in changes.evidence if e.belief_id == old.belief_id]) == 2


class TestChunkBoundariesDoNotChangeTheResult:
    def test_one_chunk_and_one_chunk_per_batch_write_the_same_final_rows(self) -> None:
        batches = [
            _lives(city, seq, session=f"s{seq}")
            for seq, city in enumerate(
                ["Lisbon", "Lisbon", "Porto", "Lisbon", "Lisbon", "Porto", "Porto"]
            )
        ]
        _, whole, _ = _resolve(*batches)
        state = BeliefState()
        final: dict[uuid.UUID, BeliefRow] = {}
        for batch in batches:
            _, changes, _ = _resolve(batch, state=state)
            final.update(copy.deepcopy(changes.beliefs_new))
            final.update(copy.deepcopy(changes.beliefs_changed))
            state = _reloaded(state, changes)
        assert whole.beliefs_new == final

    def test_confidence_is_kept_as_postgresql_real_stores_it(self) -> None:
        _, changes, _ = _resolve(_lives("Lisbon", 0), _lives("Lisbon", 1, session="s2"))
        [belief] = changes.beliefs_new.values()
        assert belief.confidence == real(belief.confidence)
        assert belief.last_reinforced_at - belief.valid_from == timedelta(minutes=1)


def _correction(
    target: BeliefRow, kind: CorrectionKind, seq: int, replacement: str | None = None
) -> ClaimsBatchFormed:
    event = BeliefCorrected(
        event_id=uuid.uuid5(uuid.NAMESPACE_URL, f"correction/{seq}"),
        tenant=T,
        principal="ana",
        project="other",
        session="corrections",
        occurred_at=turn(T, "ana", "p", "x", seq=seq).occurred_at,
        belief_id=target.belief_id,
        kind=kind,
        content=ContentKey(
            subject_key=target.subject_key,
            relation=target.relation,
            object_key=target.object_key,
            facet=target.facet,
            polarity="assert",
        ),
        content_hash=target.content_hash,
        statement=target.statement,
        replacement=replacement,
    )
    source = SourcePosition(topic="episodes", partition=0, offset=seq)
    return form_correction(event, FormationPolicy(), source=source)


def _deletion(target: BeliefRow, seq: int) -> ClaimsBatchFormed:
    """The principal deletes ``target``'s content (at its own time)."""
    event = BeliefDeleted(
        event_id=uuid.UUID(int=seq),
        tenant=T,
        principal="ana",
        project="p",
        session="corrections",
        occurred_at=target.valid_from,
        belief_id=target.belief_id,
        content_hash=target.content_hash,
    )
    source = SourcePosition(topic="e", partition=0, offset=seq)
    return form_correction(event, FormationPolicy(), source=source)


def _only(changes: Changes) -> BeliefRow:
    [belief] = changes.beliefs_new.values()
    return belief


class TestACorrectionIsAppliedByContent:
    def test_untrue_retracts_and_blocks_an_earlier_dated_statement(self) -> None:
        state, first, _ = _resolve(_lives("Lisbon", 0))
        lisbon = _only(first)
        _resolve(_correction(lisbon, CorrectionKind.UNTRUE, 5), state=state)
        assert lisbon.status == "retracted" and lisbon.valid_to is not None
        _, late, _ = _resolve(_lives("Lisbon", 3, session="s2"), state=state)
        assert [r.reason for r in late.refusals] == ["rejected_by_user"] and not late.beliefs_new
        _, later, _ = _resolve(_lives("Lisbon", 9, session="s3"), state=state)
        assert [b.object_text for b in later.beliefs_new.values()] == ["Lisbon"]

    def test_changed_supersedes_with_the_replacement_at_user_authority(self) -> None:
        state, first, _ = _resolve(_lives("Lisbon", 0))
        lisbon = _only(first)
        _, changes, [outcome] = _resolve(
            _correction(lisbon, CorrectionKind.CHANGED, 5, replacement="Porto"), state=state
        )
        porto = _only(changes)
        assert (porto.object_text, porto.authority, porto.status) == ("Porto", "user", "active")
        assert lisbon.status == "superseded" and lisbon.superseded_by == porto.belief_id
        assert porto.supersedes == lisbon.belief_id
        assert outcome.corrected == [lisbon.belief_id]
        assert [r.kind for r in changes.rejections] == ["changed"]

    def test_not_here_excludes_the_project_and_lowers_portability(self) -> None:
        state, first, _ = _resolve(_lives("Lisbon", 0))
        lisbon = _only(first)
        _resolve(_correction(lisbon, CorrectionKind.NOT_HERE, 5), state=state)
        assert lisbon.status == "active" and lisbon.excluded_scopes == ["project:other"]
        assert lisbon.portability == "contextual"

    def test_unspecified_flags_and_down_weights(self) -> None:
        state, first, _ = _resolve(_lives("Lisbon", 0))
        lisbon = _only(first)
        before = lisbon.confidence
        _resolve(_correction(lisbon, CorrectionKind.UNSPECIFIED, 5), state=state)
        assert lisbon.status == "active" and lisbon.flagged_for_review
        assert lisbon.confidence == real(before * 0.5)

    def test_a_correction_replayed_before_its_statement_still_applies(self) -> None:
        _, first, _ = _resolve(_lives("Lisbon", 0))
        lisbon = _only(first)
        state = BeliefState()
        _resolve(_correction(lisbon, CorrectionKind.NOT_HERE, 5), state=state)
        _, changes, _ = _resolve(_lives("Lisbon", 0), state=state)
        assert _only(changes).excluded_scopes == ["project:other"]


class TestDeletionAndForgetting:
    def test_deleted_content_never_forms_again_and_its_refusal_keeps_no_words(self) -> None:
        state, first, _ = _resolve(_lives("Lisbon", 0))
        lisbon = _only(first)
        _, changes, _ = _resolve(_deletion(lisbon, 1), state=state)
        assert [t.content_hash for t in changes.tombstones] == [lisbon.content_hash]
        assert lisbon.belief_id not in state.beliefs
        _, again, _ = _resolve(_lives("Lisbon", 9, session="s9"), state=state)
        [refusal] = again.refusals
        assert (refusal.reason, refusal.statement, refusal.quote) == ("tombstoned", "", "")

    def test_a_correction_of_deleted_content_keeps_no_words(self) -> None:
        """As the store's scrub of a deletion leaves it: a rewind resolves the correction again
        after the tombstone exists, and must write the same row the in-order run ended with
        (it wrote the redacted batch's placeholders, so the projection depended on order)."""
        state, first, _ = _resolve(_lives("Lisbon", 0))
        lisbon = _only(first)
        _resolve(_deletion(lisbon, 1), state=state)
        _, changes, _ = _resolve(_correction(lisbon, CorrectionKind.UNTRUE, 5), state=state)
        [rejection] = changes.rejections
        words = (rejection.subject_key, rejection.object_key, rejection.facet)
        assert words == (None, None, None)
        assert (rejection.statement, rejection.replacement) == (None, None)
        assert (rejection.content_hash, rejection.kind) == (lisbon.content_hash, "untrue")

    def test_a_change_to_deleted_content_keeps_no_words(self) -> None:
        """The store's scrub of a deletion also takes the words of a correction whose
        replacement it deletes; resolved with the replacement already deleted (in order, or
        again in a rewind), the correction writes the same: no words."""
        state, first, _ = _resolve(_lives("Lisbon", 0))
        lisbon = _only(first)
        _, second, _ = _resolve(_lives("Porto", 1, session="s2"), state=state)
        porto = _only(second)
        _resolve(_deletion(porto, 2), state=state)
        changed = _correction(lisbon, CorrectionKind.CHANGED, 5, replacement="Porto")
        _, changes, _ = _resolve(changed, state=state)
        [rejection] = changes.rejections
        assert (rejection.subject_key, rejection.object_key, rejection.replacement) == (
            None,
            None,
            None,
        )
        assert [r.reason for r in changes.refusals] == ["tombstoned"]

    def test_a_forgotten_principal_forms_nothing_and_writes_no_run(self) -> None:
        state = BeliefState()
        forgotten = PrincipalForgotten(
            event_id=uuid.uuid4(),
            tenant=T,
            principal="ana",
            project="principals",
            session="corrections",
            occurred_at=turn(T, "ana", "p", "x", seq=1).occurred_at,
        )
        batch = form_correction(
            forgotten, FormationPolicy(), source=SourcePosition(topic="e", partition=0, offset=1)
        )
        _, changes, _ = _resolve(batch, state=state)
        assert changes.forgotten == [(T, "ana")] and not changes.runs
        _, after, [outcome] = _resolve(_lives("Oslo", 9), state=state)
        assert outcome.skipped and not after.runs and not after.beliefs_new and not after.refusals


def test_deleting_the_same_content_twice_leaves_one_tombstone() -> None:
    state, first, _ = _resolve(_lives("Lisbon", 0))
    lisbon = _only(first)
    deletions = [_deletion(lisbon, seq) for seq in (1, 2)]
    _, changes, _ = _resolve(*deletions, state=state)
    assert len(changes.tombstones) == 1


def test_a_deletion_announces_the_rows_that_stood_before_its_rewind_once() -> None:
    """A deletion resolves its principal again from batches without the deleted words, so the
    deleted rows are not in the state it resolves with; the store hands their ids over
    (``BeliefState.deleting``) and each becomes one ``memory.deleted``, by the first deletion
    of the content in the chunk."""
    _, first, _ = _resolve(_lives("Lisbon", 0))
    lisbon = _only(first)
    state = BeliefState()  # emptied by the rewind
    state.deleting = {(T, "ana", lisbon.content_hash): [lisbon.belief_id]}
    deletions = [_deletion(lisbon, seq) for seq in (1, 2)]
    _, changes, outcomes = _resolve(*deletions, state=state)
    assert [o.deleted for o in outcomes] == [[lisbon.belief_id], []]
    assert [(e.type, e.belief_id, e.project) for e in changes.memory_events] == [
        ("memory.deleted", lisbon.belief_id, "p")
    ]
