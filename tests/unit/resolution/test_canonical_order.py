"""A principal's projection is a function of the set of its claims batches, not of their order.

The projector resolves every principal's batches in canonical order (event time, project,
episode, batch) and re-resolves a principal from the batches it keeps when one arrives that
belongs before one already applied (:mod:`resolution.ordering`). Here the projector's chunk
loop is played in memory with the very planning functions the store calls, over every
interleaving hypothesis finds of per-project claim sequences and every way of cutting the
arrivals into chunks: the projected rows always equal one pass over the batches in canonical
order. The integration tests (tests/integration/test_order_independence.py) show the same on
real Kafka and PostgreSQL with one worker and two.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from engram.formation.corrections import candidate_content, candidate_hash, form_correction
from engram.formation.policy import FormationPolicy
from engram.resolution.beliefs import BeliefState, Changes
from engram.resolution.chunk import resolve_chunk
from engram.resolution.ordering import (
    PrincipalKey,
    canonical,
    chunk_order,
    deleted_hashes,
    order_key,
    principal_of,
    principals_to_rewind,
    redact,
    rewind_points,
)
from engram.resolution.undo import BatchUndo, undo_suffix
from engram.schemas.claims import ClaimsBatchFormed, SourcePosition, decode_claims_batch
from engram.schemas.corrections import BeliefCorrected, BeliefDeleted, CorrectionKind
from tests.support.episodes import turn
from tests.support.projecting import batch_of, claim

T = "t"
CITIES = ["Lisbon", "Porto", "Cork"]
TOOLS = ["Vim", "vim", "Emacs", "VIM"]


@dataclass
class _Principal:
    """What the store holds for one principal: its kept batches and its projected rows."""

    kept: dict[uuid.UUID, ClaimsBatchFormed] = field(default_factory=dict)
    undo: dict[uuid.UUID, BatchUndo] = field(default_factory=dict)
    state: BeliefState = field(default_factory=BeliefState)
    rows: list[Changes] = field(default_factory=list)

    def undo_after(self, point: bytes) -> list[ClaimsBatchFormed]:
        """Undo the kept batches after ``point`` as the store does, from their undo records
        alone; those batches, to resolve again."""
        suffix = sorted((b for b in self.kept.values() if order_key(b) > point), key=order_key)
        runs = {b.batch_id for b in suffix}
        merged = undo_suffix(self.undo.pop(b.batch_id) for b in suffix)
        state = self.state
        for belief_id in merged.beliefs_created:
            state.remove(state.beliefs[belief_id])
        for image in merged.beliefs_before.values():
            image.restore(state.beliefs[image.belief_id])
        entities = {e.entity_id: key for key, e in state.entities.items()}
        for alias in merged.aliases_before.values():
            state.entities[entities[alias.entity_id]].aliases = list(alias.aliases)
        for entity_id in merged.entities_created:
            del state.entities[entities[entity_id]]
        for changes in self.rows:
            state.cited -= {
                (e.belief_id, e.project, e.episode_id, e.message_ordinal)
                for e in changes.evidence
                if e.run_id in runs
            }
            changes.evidence = [e for e in changes.evidence if e.run_id not in runs]
            changes.refusals = [r for r in changes.refusals if r.run_id not in runs]
            changes.runs = [r for r in changes.runs if r.run_id not in runs]
            changes.rejections = [r for r in changes.rejections if r.run_id not in runs]
        state.rejections = {
            key: [r for r in found if r.run_id not in runs]
            for key, found in state.rejections.items()
        }
        state.applied_runs -= runs
        for batch in suffix:
            del self.kept[batch.batch_id]
        return suffix


class _Projector:
    """The store's chunk loop over an in-memory database, one entry per principal."""

    def __init__(self) -> None:
        self.principals: dict[PrincipalKey, _Principal] = {}

    def project(self, chunk: Sequence[ClaimsBatchFormed]) -> None:
        applied = {i for p in self.principals.values() for i in p.kept}
        todo = list({b.batch_id: b for b in chunk if b.batch_id not in applied}.values())
        last = {
            who: max(order_key(b) for b in p.kept.values())
            for who, p in self.principals.items()
            if p.kept
        }
        rewind = principals_to_rewind(todo, last)
        kept: list[ClaimsBatchFormed] = []
        for who, point in sorted(rewind_points(todo, rewind).items()):
            if point is None:  # a deletion: resolved again from nothing
                kept += self._of(who).kept.values()
                self.principals[who] = _Principal()
            else:
                kept += self._of(who).undo_after(point)
        tombstones = [t for p in self.principals.values() for t in p.state.tombstones]
        ordered = chunk_order(todo, rewind, kept, tombstones)
        for who in {principal_of(b) for b in ordered}:
            mine = [b for b in ordered if principal_of(b) == who]
            entry = self.principals.setdefault(who, _Principal())
            changes, outcomes = resolve_chunk(entry.state, mine)
            entry.rows.append(changes)
            for b, o in zip(mine, outcomes, strict=True):
                if not o.skipped:
                    entry.kept[b.batch_id] = b
                    entry.undo[b.batch_id] = o.undo

    def _of(self, who: PrincipalKey) -> _Principal:
        return self.principals.setdefault(who, _Principal())

    def content(self) -> dict[PrincipalKey, tuple[object, ...]]:
        return {who: _content(p.state, p.rows) for who, p in self.principals.items()}


def _content(state: BeliefState, rows: Sequence[Changes]) -> tuple[object, ...]:
    """The projected rows as the digest sees them: every table, in key order."""
    return (
        sorted(state.entities.values(), key=lambda e: e.entity_id),
        sorted(state.beliefs.values(), key=lambda b: b.belief_id),
        sorted((e for c in rows for e in c.evidence), key=lambda e: e.evidence_id),
        sorted((r for c in rows for r in c.refusals), key=lambda r: r.refusal_id),
        sorted((r for c in rows for r in c.runs), key=lambda r: r.run_id),
        sorted((r for c in rows for r in c.rejections), key=lambda r: r.rejection_id),
    )


def _in_one_pass(batches: Sequence[ClaimsBatchFormed]) -> dict[PrincipalKey, tuple[object, ...]]:
    result = {}
    for who in {principal_of(b) for b in batches}:
        mine = canonical(b for b in batches if principal_of(b) == who)
        mine = redact(mine, deleted_hashes(mine))
        state = BeliefState()
        changes, _ = resolve_chunk(state, mine)
        result[who] = _content(state, [changes])
    return result


@st.composite
def _episode(draw: st.DrawFn, principal: str, project: str, n: int) -> ClaimsBatchFormed:
    """One turn of ``principal`` in ``project``: a city (single-valued), a tool (many, spelt
    several ways), sometimes a retraction; times collide across projects on purpose."""
    minute = draw(st.integers(0, 6))
    city, tool = draw(st.sampled_from(CITIES)), draw(st.sampled_from(TOOLS))
    claims = [claim("I", "lives_in", city, f"I live in {city}")]
    text = f"I live in {city}. I use {tool}."
    claims.append(claim("I", "uses", tool, f"I use {tool}"))
    if draw(st.booleans()):
        other = draw(st.sampled_from(TOOLS))
        text += f" I no longer use {other}."
        claims.append(claim("I", "uses", other, f"I no longer use {other}", polarity="retract"))
    episode = turn(T, principal, project, text, seq=minute, session=f"s{n}")
    return batch_of(episode, *claims, offset=n)


def _correction(principal: str, project: str, n: int, minute: int, kind: str) -> ClaimsBatchFormed:
    """A deletion of "uses Vim", or an "untrue" correction of "lives in Cork", at ``minute``."""
    obj, relation, quote = (
        ("Vim", "uses", "I use Vim") if kind == "delete" else ("Cork", "lives_in", "I live in Cork")
    )
    [c] = batch_of(turn(T, principal, project, quote), claim("I", relation, obj, quote)).candidates
    common = {
        "event_id": uuid.uuid5(uuid.NAMESPACE_URL, f"{principal}/{project}/{n}/{kind}"),
        "tenant": T,
        "principal": principal,
        "project": project,
        "session": "corrections",
        "occurred_at": turn(T, principal, project, "x", seq=minute).occurred_at,
        "belief_id": uuid.UUID(int=n),
        "content_hash": candidate_hash(c),
    }
    event: BeliefDeleted | BeliefCorrected = (
        BeliefDeleted(**common)
        if kind == "delete"
        else BeliefCorrected(
            **common,
            kind=CorrectionKind.UNTRUE,
            content=candidate_content(c),
            statement=c.statement,
        )
    )
    source = SourcePosition(topic="episodes", partition=0, offset=n)
    return form_correction(event, FormationPolicy(), source=source)


@st.composite
def _arrivals(draw: st.DrawFn) -> tuple[list[ClaimsBatchFormed], list[list[ClaimsBatchFormed]]]:
    """Per-project sequences for two principals who each speak in two or three projects,
    merged in an order hypothesis chooses, cut into chunks it chooses."""
    sequences = []
    for principal in ("ana", "bo"):
        for project in draw(st.sampled_from([("p1", "p2"), ("p1", "p2", "p3")])):
            size = draw(st.integers(0, 4))
            sequence = [draw(_episode(principal, project, n)) for n in range(size)]  # log order
            kind = draw(st.sampled_from(["none", "none", "delete", "untrue"]))
            if kind != "none":
                at = draw(st.integers(0, len(sequence)))
                minute = draw(st.integers(0, 6))
                sequence.insert(at, _correction(principal, project, 100 + at, minute, kind))
            sequences.append(sequence)
    everything = [b for s in sequences for b in s]
    heads = [0] * len(sequences)
    merged: list[ClaimsBatchFormed] = []
    while len(merged) < len(everything):
        open_ = [i for i, s in enumerate(sequences) if heads[i] < len(s)]
        pick = draw(st.sampled_from(open_))
        merged.append(sequences[pick][heads[pick]])
        heads[pick] += 1
    chunks: list[list[ClaimsBatchFormed]] = []
    while merged:
        size = draw(st.integers(1, 4))
        chunks.append(merged[:size])
        merged = merged[size:]
    return everything, chunks


class TestTheProjectionIsAFunctionOfTheSetOfClaims:
    @settings(max_examples=300, deadline=None)
    @given(_arrivals())
    def test_any_interleaving_and_chunking_projects_what_one_canonical_pass_does(
        self, arrivals: tuple[list[ClaimsBatchFormed], list[list[ClaimsBatchFormed]]]
    ) -> None:
        everything, chunks = arrivals
        projector = _Projector()
        for chunk in chunks:
            projector.project(chunk)
        assert projector.content() == _in_one_pass(everything)

    @settings(max_examples=100, deadline=None)
    @given(_arrivals())
    def test_a_redelivered_batch_changes_nothing(
        self, arrivals: tuple[list[ClaimsBatchFormed], list[list[ClaimsBatchFormed]]]
    ) -> None:
        everything, chunks = arrivals
        projector = _Projector()
        for chunk in chunks:
            projector.project(chunk)
        projector.project(list(reversed(everything)))
        assert projector.content() == _in_one_pass(everything)


class TestALateEarlierBatchRewindsOnlyItsPrincipal:
    def test_a_batch_before_the_last_applied_one_rewinds_and_a_later_one_does_not(self) -> None:
        early = batch_of(
            turn(T, "ana", "p1", "I live in Cork.", seq=1),
            claim("I", "lives_in", "Cork", "I live in Cork"),
        )
        late = batch_of(
            turn(T, "ana", "p2", "I live in Oslo.", seq=5),
            claim("I", "lives_in", "Oslo", "I live in Oslo"),
        )
        applied = {principal_of(late): order_key(late)}
        assert principals_to_rewind([early], applied) == {(T, "ana")}
        assert principals_to_rewind([late], {principal_of(early): order_key(early)}) == set()
        assert principals_to_rewind([early], {}) == set()

    def test_ties_in_event_time_are_broken_by_project_then_episode(self) -> None:
        a = batch_of(
            turn(T, "ana", "a", "I live in Cork.", seq=3),
            claim("I", "lives_in", "Cork", "I live in Cork"),
        )
        b = batch_of(
            turn(T, "ana", "b", "I live in Oslo.", seq=3),
            claim("I", "lives_in", "Oslo", "I live in Oslo"),
        )
        assert canonical([b, a]) == [a, b] == canonical([a, b])


class TestARedactedBatchIsKeptWithoutTheDeletedWords:
    def test_it_round_trips_through_the_wire_format_without_them(self) -> None:
        text = "I live in Cork. I use Vim."
        said = batch_of(
            turn(T, "ana", "p1", text, seq=1),
            claim("I", "lives_in", "Cork", "I live in Cork"),
            claim("I", "uses", "Vim", "I use Vim"),
        )
        deletion = _correction("ana", "p1", 7, 3, "delete")
        untrue = _correction("ana", "p1", 8, 4, "untrue")
        assert isinstance(untrue.correction, BeliefCorrected)
        kept = redact(
            [said, untrue, deletion], deleted_hashes([deletion]) | {untrue.correction.content_hash}
        )
        for batch in kept:
            raw = batch.model_dump_json()
            assert decode_claims_batch(raw) == batch
            assert "Vim" not in raw and "Cork" not in raw.replace("lives_in", "")
        assert [c.relation for c in kept[0].candidates] == []
        assert {r.reason.value for r in kept[0].refusals} == {"tombstoned"}
