"""Validation at the door of the formation stage, and the dead letters it produces.

A record that is not UTF-8, not JSON, too large, or not a valid episode cannot be formed, but
must never stop the stream: it goes to ``engram.episodes.dlq`` with headers naming the reason
and its source position, and the agent moves on to the next record. So does a valid episode
whose claims batch Kafka will not take (``claims_too_large``, ``claims_rejected``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from pydantic import ValidationError

from engram.schemas.log import LogEvent, decode_log_event


class DeadLetterReason(StrEnum):
    OVERSIZED = "oversized"
    NOT_UTF8 = "not_utf8"
    NOT_JSON = "not_json"
    CONTRACT = "contract_violation"
    CLAIMS_TOO_LARGE = "claims_too_large"
    """The episode was valid, but its claims batch is larger than Kafka takes."""
    CLAIMS_REJECTED = "claims_rejected"
    """The episode was valid, but Kafka refused its claims batch as invalid."""


@dataclass(frozen=True)
class DeadLetter:
    reason: DeadLetterReason
    detail: str

    def headers(self, *, topic: str, partition: int, offset: int) -> list[tuple[str, bytes]]:
        return [
            ("engram.reason", self.reason.value.encode()),
            ("engram.detail", self.detail[:1000].encode()),
            ("engram.source.topic", topic.encode()),
            ("engram.source.partition", str(partition).encode()),
            ("engram.source.offset", str(offset).encode()),
        ]


def admit_record(raw: bytes | None, *, max_bytes: int) -> LogEvent | DeadLetter:
    """The episode in ``raw``, or the dead letter saying precisely why there is none."""
    payload = raw or b""
    if len(payload) > max_bytes:
        return DeadLetter(DeadLetterReason.OVERSIZED, f"{len(payload)} bytes > {max_bytes}")
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as error:
        return DeadLetter(DeadLetterReason.NOT_UTF8, f"invalid UTF-8 at byte {error.start}")
    try:
        return decode_log_event(text)
    except ValidationError as error:
        first = error.errors()[0]
        if first["type"] == "json_invalid":  # its message says where: line and column
            return DeadLetter(DeadLetterReason.NOT_JSON, first["msg"][:300])
        where = ".".join(str(part) for part in first["loc"]) or "value"
        return DeadLetter(DeadLetterReason.CONTRACT, f"{where}: {first['msg']}")
