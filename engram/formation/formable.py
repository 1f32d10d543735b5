"""Whether a message can form anything at all, decided before any extractor is asked.

The core refuses every claim of an untrusted message: a first-person claim as
``not_spoken_by_principal`` (the speaker rule), any other as ``untrusted_source``; and every
claim cited from a ``system`` message as ``system_restatement``, whatever its trust. Asking a
model about such a message costs a call whose every answer is refused, so the model arm does
not ask (:mod:`engram.streams.model.arm`); it counts the reason instead. The deterministic arm is
free and still runs, so what the audit shows of those messages is unchanged. Pure.
"""

from __future__ import annotations

from engram.schemas.claims import RefusalReason
from engram.schemas.common import Role, Trust
from engram.schemas.episodes import Message


def nothing_can_form(message: Message) -> RefusalReason | None:
    """The refusal every claim of ``message`` would meet, or None when one could be kept."""
    if message.role is Role.SYSTEM:
        return RefusalReason.SYSTEM_RESTATEMENT
    if message.effective_trust is Trust.UNTRUSTED:
        return RefusalReason.UNTRUSTED_SOURCE
    return None
