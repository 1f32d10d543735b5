"""``engram eval coverage``: how many known facts about a principal formed anything, automatically.

Given turns (JSONL episodes) and facts about their principals (JSONL, each naming the
``evidence_event_ids`` of the messages that state it), this forms every turn in process with the
deterministic arm under the policy in force (:func:`policies.behaviour.form`, what the formation
stage does), resolves each principal's batches in canonical order with the resolution core
(:func:`resolution.chunk.resolve_chunk`), and counts a fact covered when one of its evidence
messages is cited by an evidence row of a current or past belief of the principal. A candidate
resolution refused, or a duplicate that only reinforced, is counted as the projector would store
it.

It is a proxy for recall, never a measure of it: a belief cited by the right message can still
be the wrong fact, and a fact whose evidence is only the other speaker's words cannot be covered
at all. Read what forms.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from engram.formation.deterministic import trace
from engram.formation.policy import FormationPolicy
from engram.infra.errors import EngramFailure
from engram.ingest.jsonl import read_episodes
from engram.policies.behaviour import form
from engram.resolution.beliefs import BeliefState, Changes
from engram.resolution.chunk import resolve_chunk
from engram.resolution.ordering import canonical
from engram.schemas.claims import ClaimsBatchFormed
from engram.schemas.common import Role
from engram.schemas.episodes import MemoryRemembered, TurnAppended, episode_messages

MessageKey = tuple[str, int]
"""(episode id, message ordinal)."""

_COUNTED_STATUSES = frozenset({"active", "provisional", "superseded"})
"""A current belief or a past one; a retracted belief (the principal said it is untrue) is not."""


class FactsError(EngramFailure, ValueError):
    """A facts file that cannot be read as facts: names the line."""

    code = "invalid_facts"


@dataclass(frozen=True, slots=True)
class Fact:
    principal: str
    project: str
    text: str
    evidence: tuple[str, ...]
    """Event ids of the messages that state the fact."""


@dataclass(frozen=True, slots=True)
class MessageSeen:
    """One message of a turn, with what formation and resolution did with it."""

    episode_id: str
    ordinal: int
    principal: str
    role: str
    content: str
    occurred_on: date
    proposed: tuple[str, ...]
    """Candidates the formation core admitted, as statements."""
    refused: tuple[str, ...]
    """What the core's gates or resolution refused, as "statement (reason)"."""


@dataclass(slots=True)
class PrincipalCoverage:
    principal: str
    facts: int = 0
    covered: int = 0
    reachable: int = 0
    """Facts with at least one evidence message the principal spoke."""
    messages: int = 0
    """The principal's own messages (``user`` role)."""
    messages_forming: int = 0
    """The principal's messages cited by evidence of a counted belief."""
    beliefs: int = 0
    """Counted beliefs (current or past) of the principal."""

    @staticmethod
    def _share(part: int, whole: int) -> float:
        return round(part / whole, 4) if whole else 0.0

    def to_dict(self) -> dict[str, object]:
        return {
            "principal": self.principal,
            "facts": self.facts,
            "covered": self.covered,
            "share": self._share(self.covered, self.facts),
            "reachable": self.reachable,
            "messages": self.messages,
            "messages_forming": self.messages_forming,
            "messages_forming_share": self._share(self.messages_forming, self.messages),
            "beliefs": self.beliefs,
            "beliefs_per_message": self._share(self.beliefs, self.messages),
        }

    def add(self, other: PrincipalCoverage) -> None:
        self.facts += other.facts
        self.covered += other.covered
        self.reachable += other.reachable
        self.messages += other.messages
        self.messages_forming += other.messages_forming
        self.beliefs += other.beliefs


@dataclass(frozen=True, slots=True)
class Missed:
    """An uncovered fact and what happened to each of its evidence messages."""

    fact: Fact
    messages: tuple[MessageSeen, ...]
    abstained: tuple[tuple[str, ...], ...]
    """Per message, what the deterministic arm found and dropped, with why."""
    unknown: tuple[str, ...]
    """Evidence event ids not among the turns."""

    def to_dict(self) -> dict[str, object]:
        return {
            "principal": self.fact.principal,
            "fact": self.fact.text,
            "evidence": [
                {
                    "episode_id": m.episode_id,
                    "ordinal": m.ordinal,
                    "role": m.role,
                    "content": m.content,
                    "proposed": list(m.proposed),
                    "refused": list(m.refused),
                    "abstained": list(a),
                }
                for m, a in zip(self.messages, self.abstained, strict=True)
            ],
            "unknown_evidence": list(self.unknown),
        }


@dataclass(slots=True)
class CoverageReport:
    policy_version: str
    principals: list[PrincipalCoverage]
    unknown_evidence: int = 0
    """Evidence event ids (over all facts) that name no turn of the input."""
    missed: list[Missed] = field(default_factory=list)
    refusals: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    """By (arm, reason, detail)."""
    arm: str = "deterministic"
    model: dict[str, object] | None = None
    """With a model arm: its calls, where its answers came from, whether they were stale."""

    @property
    def total(self) -> PrincipalCoverage:
        total = PrincipalCoverage("all")
        for row in self.principals:
            total.add(row)
        return total

    def to_dict(self) -> dict[str, object]:
        return {
            "arm": self.arm,
            "policy_version": self.policy_version,
            "refusals_by_reason": _by_reason(self.refusals),
            "refusals_by_detail": [
                {"arm": arm, "reason": reason, "detail": detail, "count": count}
                for (arm, reason, detail), count in sorted(
                    self.refusals.items(), key=lambda item: (-item[1], item[0])
                )
            ],
            **({"model": self.model} if self.model is not None else {}),
            "total": self.total.to_dict(),
            "principals": [p.to_dict() for p in self.principals],
            "unknown_evidence": self.unknown_evidence,
            "missed": [m.to_dict() for m in self.missed],
        }


def _by_reason(refusals: Counter[tuple[str, str, str]]) -> dict[str, dict[str, int]]:
    """Per arm, refusals by reason."""
    found: dict[str, Counter[str]] = {}
    for (arm, reason, _), count in refusals.items():
        found.setdefault(arm, Counter())[reason] += count
    return {arm: dict(sorted(counts.items())) for arm, counts in sorted(found.items())}


def load_facts(path: Path) -> list[Fact]:
    """Every fact of a JSONL file (``principal``, ``project``, ``fact``, ``evidence_event_ids``).

    Raises ``OSError`` when unreadable and :class:`FactsError` naming the line when malformed.
    """
    facts: list[Fact] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                evidence = row["evidence_event_ids"]
                if not isinstance(evidence, list):
                    raise TypeError("evidence_event_ids is not a list")
                facts.append(
                    Fact(
                        principal=str(row["principal"]),
                        project=str(row.get("project", "")),
                        text=str(row.get("fact", "")),
                        evidence=tuple(str(e) for e in evidence),
                    )
                )
            except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
                raise FactsError(f"{path}:{number}: not a fact ({exc})") from exc
    return facts


@dataclass(slots=True)
class _Formed:
    """What formed from the turns, per principal, after resolution."""

    policy_version: str
    messages: dict[MessageKey, MessageSeen] = field(default_factory=dict)
    cited: dict[str, set[MessageKey]] = field(default_factory=dict)
    """Per principal, the messages cited by evidence of a counted belief."""
    beliefs: dict[str, int] = field(default_factory=dict)
    statements: list[str] = field(default_factory=list)
    """The counted beliefs' statements, per principal in order of id."""
    refusals: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    """Refusals of formation and resolution by (arm, reason, detail)."""


def form_and_resolve(path: Path, policy: FormationPolicy) -> _Formed:
    """Form every episode of ``path`` with the deterministic arm, then resolve each principal's
    batches from an empty state in canonical order, as the projector would."""
    episodes: list[TurnAppended | MemoryRemembered] = []
    batches: list[ClaimsBatchFormed] = []
    for offset, episode in enumerate(read_episodes(path)):
        episodes.append(episode)
        batches.append(form(episode, policy, offset))
    return resolve_formed(episodes, batches, policy.version)


def resolve_formed(
    episodes: Sequence[TurnAppended | MemoryRemembered],
    batches: Sequence[ClaimsBatchFormed],
    policy_version: str,
) -> _Formed:
    """Resolve each principal's batches (one per episode, in order) from an empty state in
    canonical order, as the projector would, and say what each message formed."""
    by_principal: dict[tuple[str, str], list[ClaimsBatchFormed]] = {}
    for batch in canonical(batches):
        by_principal.setdefault((batch.tenant, batch.principal), []).append(batch)
    changes: dict[tuple[str, str], Changes] = {}
    formed = _Formed(policy_version)
    for owner, owned in sorted(by_principal.items()):
        resolved, outcomes = resolve_chunk(BeliefState(), owned)
        changes[owner] = resolved
        deleted = {b for outcome in outcomes for b in outcome.deleted}
        counted = {
            belief_id
            for belief_id, row in resolved.beliefs_new.items()
            if row.status in _COUNTED_STATUSES and belief_id not in deleted
        }
        if resolved.forgotten:
            counted = set()
        cited = formed.cited.setdefault(owner[1], set())
        for row in resolved.evidence:
            if row.belief_id in counted:
                cited.add((str(row.episode_id), row.message_ordinal))
        formed.beliefs[owner[1]] = formed.beliefs.get(owner[1], 0) + len(counted)
        formed.statements.extend(
            resolved.beliefs_new[b].statement for b in sorted(counted, key=str)
        )
        for refusal in resolved.refusals:
            arm = "model" if refusal.extractor.startswith("model:") else "deterministic"
            formed.refusals[(arm, refusal.reason, refusal.detail)] += 1
    for episode, batch in zip(episodes, batches, strict=True):
        refusals = changes[(batch.tenant, batch.principal)].refusals
        for message in episode_messages(episode):
            key = (str(episode.event_id), message.ordinal)
            formed.messages[key] = MessageSeen(
                episode_id=key[0],
                ordinal=message.ordinal,
                principal=episode.principal,
                role=message.role.value,
                content=message.content,
                occurred_on=episode.occurred_at.date(),
                proposed=tuple(
                    c.statement for c in batch.candidates if c.message_ordinal == message.ordinal
                ),
                refused=tuple(
                    f"{r.statement} ({r.reason})"
                    for r in refusals
                    if str(r.episode_id) == key[0] and r.message_ordinal == message.ordinal
                ),
            )
    return formed


def measure(
    turns: Path,
    facts: Iterable[Fact],
    policy: FormationPolicy,
    *,
    show_missed: int = 0,
    seed: int = 0,
    formed: _Formed | None = None,
) -> CoverageReport:
    """Fact coverage of ``turns`` under ``policy``; ``show_missed`` uncovered facts drawn for
    ``seed`` with what formation did with their evidence messages. ``formed`` is what another
    arm formed of the same turns (:func:`resolve_formed`); by default the deterministic arm's."""
    if formed is None:
        formed = form_and_resolve(turns, policy)
    by_event: dict[str, list[MessageSeen]] = {}
    for seen in formed.messages.values():
        by_event.setdefault(seen.episode_id, []).append(seen)
    rows: dict[str, PrincipalCoverage] = {}
    for key, seen in formed.messages.items():
        if seen.role != Role.USER.value:
            continue
        row = rows.setdefault(seen.principal, PrincipalCoverage(seen.principal))
        row.messages += 1
        if key in formed.cited.get(seen.principal, set()):
            row.messages_forming += 1
    for principal, count in formed.beliefs.items():
        rows.setdefault(principal, PrincipalCoverage(principal)).beliefs = count
    unknown = 0
    uncovered: list[Fact] = []
    for fact in facts:
        row = rows.setdefault(fact.principal, PrincipalCoverage(fact.principal))
        row.facts += 1
        cited = formed.cited.get(fact.principal, set())
        messages = [m for e in fact.evidence for m in by_event.get(e, [])]
        unknown += sum(1 for e in fact.evidence if e not in by_event)
        if any(m.role == Role.USER.value and m.principal == fact.principal for m in messages):
            row.reachable += 1
        if any((m.episode_id, m.ordinal) in cited for m in messages):
            row.covered += 1
        else:
            uncovered.append(fact)
    report = CoverageReport(
        policy_version=formed.policy_version,
        principals=[rows[p] for p in sorted(rows)],
        unknown_evidence=unknown,
        refusals=formed.refusals,
    )
    if show_missed:
        drawn = _draw(uncovered, show_missed, seed)
        report.missed = [_missed(fact, by_event, policy) for fact in drawn]
    return report


def _draw(facts: list[Fact], n: int, seed: int) -> list[Fact]:
    if n >= len(facts):
        return list(facts)
    return [facts[i] for i in sorted(random.Random(seed).sample(range(len(facts)), n))]


def _missed(fact: Fact, by_event: dict[str, list[MessageSeen]], policy: FormationPolicy) -> Missed:
    messages = tuple(m for e in fact.evidence for m in by_event.get(e, []))
    abstained = tuple(_abstentions(m, policy) for m in messages)
    unknown = tuple(e for e in fact.evidence if e not in by_event)
    return Missed(fact, messages, abstained, unknown)


def _abstentions(message: MessageSeen, policy: FormationPolicy) -> tuple[str, ...]:
    """What the deterministic arm found in the message and dropped, with why (as in
    ``engram eval sample``'s recall sheet)."""
    found = trace(
        message.content,
        occurred_on=message.occurred_on,
        ceiling=policy.scan_ceiling,
    )
    return tuple(f"{a.claim} ({a.reason})" for a in found.abstentions)
