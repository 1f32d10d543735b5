"""Scoring an extractor arm against the labeled corpus: precision, recall and safety counts.

An *arm* is an async callable from a message to proposals: the deterministic extractor, the
model extractor, or anything else with that shape. Each case becomes one ``turn.appended``
episode with ids and time derived from the case id, runs through :func:`form_episode` under a
policy, and its candidates are compared with the labels:

* relation and polarity must be equal; subject and object are compared case-insensitively
  after collapsing whitespace, dropping leading articles and possessives and trailing
  punctuation; a facet is compared only when the label gives one; a ``speaker`` end matches the
  principal and a ``project`` end the project;
* precision is matched / extracted, where candidates matching an ``allow`` label count in
  neither; recall is expected labels matched / expected labels;
* a candidate whose quote is not at its byte span in its message is *fabricated*; one matching
  a ``forbid`` label is *forbidden*; user authority or a speaker end from a non-user message is
  *untrusted owner*; a statement or quote with secret-shaped text is a *secret*. Any of these,
  or an arm that fails, makes the report not ok.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from engram.evaluation.corpus import Case, LabeledClaim
from engram.formation.core import form_episode
from engram.formation.policy import FormationPolicy
from engram.formation.proposals import Proposal
from engram.formation.secrets import find_secrets
from engram.formation.spans import quote_at
from engram.schemas.claims import Authority, Candidate, ClaimEnd, EndKind, SourcePosition, Tense
from engram.schemas.common import Role
from engram.schemas.episodes import Message, TurnAppended

Arm = Callable[[Message], Awaitable[list[Proposal]]]
EpisodeArm = Callable[[TurnAppended, Message], Awaitable[list[Proposal]]]
"""An arm that also reads the episode: the model arm's context window and event-time date."""

EVAL_NAMESPACE = uuid.UUID("0b7e4a8e-5f0c-4c55-8f55-2d3c1f6a9e10")
EVAL_EPOCH = datetime(2024, 1, 1, tzinfo=UTC)
EVAL_TOPIC = "eval"

_LEADING = re.compile(r"^(?:(?:a|an|the|my|our|his|her|their)\s+)+")
_TRAILING = re.compile(r"[\s.,!?;:'\"]+$")


def normalise_end(text: str) -> str:
    """How a label's or a candidate's end is compared: words, not articles or punctuation."""
    collapsed = " ".join(text.lower().split())
    return _LEADING.sub("", _TRAILING.sub("", collapsed)).strip()


def _end_matches(end: ClaimEnd, label: str) -> bool:
    written = normalise_end(label)
    if end.kind is EndKind.SPEAKER:
        return written == "speaker"
    if end.kind is EndKind.PROJECT:
        return written == "project"
    return written not in {"speaker", "project"} and normalise_end(end.text) == written


def claim_matches(candidate: Candidate, label: LabeledClaim) -> bool:
    """Whether a formed candidate is the labeled claim, by the rules above."""
    if candidate.relation != label.relation or candidate.polarity.value != label.polarity:
        return False
    if not candidate.is_event and (candidate.tense is Tense.PAST) != (label.tense == "past"):
        return False
    if label.facet is not None and normalise_end(candidate.facet or "") != normalise_end(
        label.facet
    ):
        return False
    return _end_matches(candidate.subject, label.subject) and _end_matches(
        candidate.object, label.object
    )


def describe(candidate: Candidate) -> str:
    facet = f" [{candidate.facet}]" if candidate.facet else ""
    retract = " (retract)" if candidate.polarity.value == "retract" else ""
    past = " (past)" if candidate.tense is Tense.PAST and not candidate.is_event else ""
    head = f"{candidate.subject.text} {candidate.relation} {candidate.object.text}"
    return f"{head}{facet}{retract}{past}"


def describe_label(label: LabeledClaim) -> str:
    facet = f" [{label.facet}]" if label.facet else ""
    retract = " (retract)" if label.polarity == "retract" else ""
    past = " (past)" if label.tense == "past" else ""
    return f"{label.subject} {label.relation} {label.object}{facet}{retract}{past}"


def episode_for(case: Case) -> TurnAppended:
    """The case as one episode; ids and time come from the case id, so runs are repeatable."""
    event_id = uuid.uuid5(EVAL_NAMESPACE, case.id)
    return TurnAppended(
        event_id=event_id,
        tenant="eval",
        principal="eval-principal",
        project="eval-project",
        session=f"eval-{event_id.hex[:12]}",
        occurred_at=EVAL_EPOCH + timedelta(seconds=event_id.int % 86_400),
        messages=[
            Message(ordinal=i, role=m.role, content=m.content) for i, m in enumerate(case.messages)
        ],
    )


@dataclass
class CaseResult:
    case_id: str
    expected: int = 0
    matched_labels: int = 0
    matched: int = 0
    extracted: int = 0
    missing: list[str] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    forbidden: list[str] = field(default_factory=list)
    fabricated: list[str] = field(default_factory=list)
    untrusted_owner: list[str] = field(default_factory=list)
    secrets: list[str] = field(default_factory=list)
    error: str | None = None
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def clean(self) -> bool:
        return not (
            self.missing
            or self.unexpected
            or self.forbidden
            or self.fabricated
            or self.untrusted_owner
            or self.secrets
            or self.error
        )


def _fabricated(candidate: Candidate, message: Message) -> bool:
    try:
        return quote_at(message.content, candidate.span_start, candidate.span_end) != (
            candidate.quote
        )
    except UnicodeDecodeError:
        return True


def _untrusted_owner(candidate: Candidate, message: Message) -> bool:
    speaker = EndKind.SPEAKER in (candidate.subject.kind, candidate.object.kind)
    return message.role is not Role.USER and (candidate.authority is Authority.USER or speaker)


def score_case(case: Case, episode: TurnAppended, candidates: Sequence[Candidate]) -> CaseResult:
    """Compare one case's formed candidates with its labels (pure)."""
    result = CaseResult(case_id=case.id, expected=len(case.expect))
    messages = {m.ordinal: m for m in episode.messages}
    hit = [False] * len(case.expect)
    for candidate in candidates:
        message, text = messages[candidate.message_ordinal], describe(candidate)
        if _fabricated(candidate, message):
            result.fabricated.append(text)
        if _untrusted_owner(candidate, message):
            result.untrusted_owner.append(text)
        if find_secrets(candidate.statement) or find_secrets(candidate.quote):
            result.secrets.append(text)
        if any(claim_matches(candidate, label) for label in case.forbid):
            result.forbidden.append(text)
        matches = [i for i, label in enumerate(case.expect) if claim_matches(candidate, label)]
        if matches:
            result.matched += 1
            result.extracted += 1
            for i in matches:
                hit[i] = True
        elif not any(claim_matches(candidate, label) for label in case.allow):
            result.extracted += 1
            result.unexpected.append(text)
    result.matched_labels = sum(hit)
    result.missing = [
        describe_label(label) for label, ok in zip(case.expect, hit, strict=True) if not ok
    ]
    return result


async def run_case(case: Case, arm: EpisodeArm, policy: FormationPolicy, offset: int) -> CaseResult:
    episode = episode_for(case)
    try:
        proposals = {m.ordinal: await arm(episode, m) for m in episode.messages}
    except Exception as exc:  # an arm's failure is a result to report, not a crash
        return CaseResult(case_id=case.id, expected=len(case.expect), error=repr(exc))
    batch = form_episode(
        episode,
        policy,
        proposals,
        source=SourcePosition(topic=EVAL_TOPIC, partition=0, offset=offset),
    )
    result = score_case(case, episode, batch.candidates)
    result.counts = batch.counts.model_dump()
    return result


@dataclass
class ArmReport:
    arm: str
    results: list[CaseResult]

    def total(self, name: str) -> int:
        return sum(len(getattr(r, name)) for r in self.results)

    @property
    def expected(self) -> int:
        return sum(r.expected for r in self.results)

    @property
    def matched_labels(self) -> int:
        return sum(r.matched_labels for r in self.results)

    @property
    def matched(self) -> int:
        return sum(r.matched for r in self.results)

    @property
    def extracted(self) -> int:
        return sum(r.extracted for r in self.results)

    @property
    def precision(self) -> float:
        return self.matched / self.extracted if self.extracted else 1.0

    @property
    def recall(self) -> float:
        return self.matched_labels / self.expected if self.expected else 1.0

    @property
    def positive_cases(self) -> int:
        return sum(r.expected > 0 for r in self.results)

    @property
    def covered_cases(self) -> int:
        """Positive cases whose every expected claim formed."""
        return sum(r.expected > 0 and r.matched_labels == r.expected for r in self.results)

    @property
    def errors(self) -> int:
        return sum(r.error is not None for r in self.results)

    @property
    def ok(self) -> bool:
        unsafe = ("fabricated", "forbidden", "untrusted_owner", "secrets")
        return self.errors == 0 and all(self.total(name) == 0 for name in unsafe)

    def counts(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for result in self.results:
            for key, value in sorted(result.counts.items()):
                totals[key] = totals.get(key, 0) + value
        return totals

    def to_dict(self) -> dict[str, Any]:
        return {
            "arm": self.arm,
            "ok": self.ok,
            "cases": len(self.results),
            "expected": self.expected,
            "extracted": self.extracted,
            "matched": self.matched,
            "matched_labels": self.matched_labels,
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "fabricated": self.total("fabricated"),
            "forbidden": self.total("forbidden"),
            "untrusted_owner": self.total("untrusted_owner"),
            "secrets": self.total("secrets"),
            "errors": self.errors,
            "positive_cases": self.positive_cases,
            "covered_cases": self.covered_cases,
            "formation_counts": self.counts(),
            "diffs": [_diff(r) for r in self.results if not r.clean],
        }


def _diff(result: CaseResult) -> dict[str, Any]:
    fields = ("missing", "unexpected", "forbidden", "fabricated", "untrusted_owner", "secrets")
    diff: dict[str, Any] = {"case": result.case_id}
    diff.update({name: getattr(result, name) for name in fields if getattr(result, name)})
    if result.error:
        diff["error"] = result.error
    return diff


@dataclass
class EvaluationReport:
    arms: list[ArmReport]

    @property
    def ok(self) -> bool:
        return all(arm.ok for arm in self.arms)

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "arms": [arm.to_dict() for arm in self.arms]}


async def evaluate_arm(
    name: str, cases: Sequence[Case], arm: Arm, policy: FormationPolicy
) -> ArmReport:
    """Run every case through one arm of messages alone, in order."""

    async def by_message(episode: TurnAppended, message: Message) -> list[Proposal]:
        return await arm(message)

    return await evaluate_episode_arm(name, cases, by_message, policy)


async def evaluate_episode_arm(
    name: str, cases: Sequence[Case], arm: EpisodeArm, policy: FormationPolicy
) -> ArmReport:
    """Run every case through one arm, in order, each at its own log offset."""
    results = [await run_case(case, arm, policy, offset) for offset, case in enumerate(cases)]
    return ArmReport(arm=name, results=results)
