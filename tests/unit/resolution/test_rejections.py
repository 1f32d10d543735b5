"""Which of a principal's rejections refuse a statement, and which qualify a belief formed
after them: the dates decide, so a replay in any order keeps a correction in force."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from engram.resolution.beliefs import RejectionRow
from engram.resolution.rejections import blocks
from engram.schemas.corrections import CorrectionKind

AT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _rejection(kind: CorrectionKind) -> RejectionRow:
    return RejectionRow(
        rejection_id=uuid.uuid4(),
        tenant="t",
        principal="ana",
        content_hash="h",
        kind=kind.value,
        subject_key="user",
        relation="lives_in",
        object_key="lisbon",
        facet=None,
        polarity="positive",
        statement="I live in Lisbon",
        replacement=None,
        scope="project:p",
        belief_id=uuid.uuid4(),
        correcting_event=uuid.uuid4(),
        run_id=uuid.uuid4(),
        occurred_at=AT,
    )


def test_untrue_and_changed_refuse_a_statement_told_before_or_at_the_rejection() -> None:
    for kind in (CorrectionKind.UNTRUE, CorrectionKind.CHANGED):
        assert blocks(_rejection(kind), AT - timedelta(days=1))
        assert blocks(_rejection(kind), AT)


def test_a_statement_told_after_the_rejection_forms_again() -> None:
    assert not blocks(_rejection(CorrectionKind.UNTRUE), AT + timedelta(seconds=1))


def test_not_here_and_unspecified_never_refuse_a_statement() -> None:
    for kind in (CorrectionKind.NOT_HERE, CorrectionKind.UNSPECIFIED):
        assert not blocks(_rejection(kind), AT - timedelta(days=1))
