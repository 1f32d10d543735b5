"""What a receipt says, from the counts the projector stored: never "nothing remains" while the
log holds the words, and the log's part as it lies — sealed under a destroyed key, or in clear."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from engram.schemas.common import day_of, forgetting_receipt_id
from engram.service.erasures import build_receipt, describe_retention, log_state

NOW = datetime(2026, 12, 4, tzinfo=UTC)


def _row(kind: str = "principal.forgotten", **changed: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "event_id": uuid.uuid4(),
        "kind": kind,
        "tenant": "t",
        "principal_hash": "0" * 64,
        "belief_id": uuid.uuid4() if kind == "belief.deleted" else None,
        "requested_at": NOW,
        "applied_at": NOW,
        "already": False,
        "erased": '{"belief": 3, "evidence": 4, "embedding_vector": 2}',
        "data_key_id": "destroyed" if kind == "principal.forgotten" else None,
        "episodes_sealed": 5,
        "episodes_in_clear": 0,
        "episodes_unknown": 0,
    }
    return row | changed


def test_a_forgetting_of_sealed_words_says_they_are_unreadable_from_now_on() -> None:
    receipt = build_receipt(_row(), principal="ana", topic="engram.episodes", retention_ms=-1)
    assert receipt.log.state == "sealed" and receipt.data_key.destroyed
    assert (
        receipt.says[0] == "Forgotten: 9 row(s) about ana deleted from PostgreSQL, and their "
        "data key destroyed."
    )
    assert "unreadable from now on in the log" in receipt.log.says


def test_a_forgetting_says_which_backups_still_open_the_words_and_until_when() -> None:
    """A database backup from before the forget holds the wrapped data key, which the KEK in use
    then opens: the receipt never promises "every backup" unreadable."""
    receipt = build_receipt(_row(), principal="ana", topic="engram.episodes", retention_ms=-1)
    said = receipt.log.says
    assert "every copy and backup" not in said
    assert "database backup taken before 2026-12-04 00:00 UTC" in said
    assert "`engram keys rotate`" in said and "destroyed" in said
    assert {r.table: r.rows for r in receipt.erased} == {
        "belief": 3,
        "evidence": 4,
        "embedding_vector": 2,
    }


def test_words_appended_in_clear_are_said_to_stay_for_the_topics_retention() -> None:
    row = _row(episodes_sealed=2, episodes_in_clear=3)
    receipt = build_receipt(row, principal="ana", topic="engram.episodes", retention_ms=-1)
    assert receipt.log.state == "partly_in_clear"
    assert "3 episode(s) stay in engram.episodes in clear" in receipt.log.says
    assert "which is forever" in receipt.log.says and "engram log encrypt" in receipt.log.says
    assert all("remains" not in line for line in receipt.says)
    bounded = build_receipt(
        _row(episodes_sealed=0, episodes_in_clear=1),
        principal="ana",
        topic="engram.episodes",
        retention_ms=604_800_000,
    )
    assert bounded.log.state == "in_clear" and "retention (7 days)" in bounded.log.says


def test_episodes_read_before_engram_recorded_how_are_treated_as_in_clear() -> None:
    row = _row(episodes_sealed=0, episodes_unknown=4)
    receipt = build_receipt(row, principal="ana", topic="engram.episodes", retention_ms=None)
    assert receipt.log.state == "unknown"
    assert "treat them as readable" in receipt.log.says
    assert receipt.log.retention == "unknown (the broker could not be asked)"


def test_a_deletion_says_the_turn_stays_sealed_until_the_principal_is_forgotten() -> None:
    row = _row("belief.deleted", episodes_sealed=1)
    receipt = build_receipt(row, principal="ana", topic="engram.episodes", retention_ms=-1)
    assert receipt.says[0].startswith(f"Deleted: belief {row['belief_id']}")
    assert not receipt.data_key.destroyed
    assert "until the principal is forgotten" in receipt.log.says


def test_an_erasure_with_nothing_left_to_erase_says_so() -> None:
    row = _row(already=True, erased="{}", data_key_id=None, episodes_sealed=0)
    receipt = build_receipt(row, principal="ana", topic="engram.episodes", retention_ms=-1)
    assert receipt.says[0] == "ana was forgotten already: nothing was left to erase."
    assert receipt.log.state == "not_in_log" and receipt.erased == []


@pytest.mark.parametrize(
    ("counts", "state"),
    [
        ((0, 0, 0), "not_in_log"),
        ((1, 0, 0), "sealed"),
        ((0, 1, 0), "in_clear"),
        ((0, 0, 1), "unknown"),
        ((1, 1, 0), "partly_in_clear"),
        ((1, 0, 1), "partly_in_clear"),
    ],
)
def test_the_logs_state_follows_the_counts(counts: tuple[int, int, int], state: str) -> None:
    assert log_state(*counts) == state


def test_retention_in_words() -> None:
    assert describe_retention(-1) == "forever"
    assert describe_retention(3_600_000) == "1 hour"
    assert describe_retention(7_200_000) == "2 hours"
    assert describe_retention(604_800_000) == "7 days"


def test_words_in_clear_are_given_the_cause_their_place_on_the_log_shows() -> None:
    row = _row(episodes_sealed=2, episodes_in_clear=3, episodes_in_clear_after_sealed=2)
    said = build_receipt(row, principal="ana", topic="engram.episodes", retention_ms=-1).log.says
    assert "1 of them were appended while the log was not encrypted" in said
    assert "2 of them were written straight to the topic by a producer other than" in said
    only_around = _row(episodes_sealed=2, episodes_in_clear=1, episodes_in_clear_after_sealed=1)
    said = build_receipt(only_around, principal="ana", topic="t", retention_ms=-1).log.says
    assert "not encrypted" not in said and "ENGRAM_KEYS_ENCRYPT_LOG is on" in said


def test_a_forgettings_receipt_id_is_not_its_records_id_and_needs_the_salt() -> None:
    record = uuid.UUID("0b7c2f1e-8d7a-4c1b-9a55-3e6f0d2c4b11")
    salt = uuid.UUID("5a0e7c3d-2b1f-4e9a-8c6d-7f1e2d3c4b5a")
    receipt = forgetting_receipt_id(record, salt)
    assert receipt == forgetting_receipt_id(record, salt)  # the door and the projector agree
    assert receipt != record and receipt.version == 4
    assert forgetting_receipt_id(record, uuid.UUID(int=salt.int ^ 1)) != receipt
    assert forgetting_receipt_id(record, None) == record  # no key, no pseudonym: named in clear


def test_a_forgotten_persons_rows_are_dated_by_the_day() -> None:
    moment = datetime(2026, 12, 6, 23, 59, 58, 123456, tzinfo=UTC)
    assert day_of(moment) == datetime(2026, 12, 6, tzinfo=UTC)
