"""The context window: the earlier messages of a session that the model sees beside a message.

A message is often unreadable alone ("Yes, that one — since last spring"), so the model is sent
a bounded window of what came before it in the same session, clearly marked as context. The
window is chosen newest first, at most ``max_messages`` messages and ``max_chars`` characters,
whole messages only, and handed back in conversation order. Context is never evidence: a claim
must still quote the principal's own current message, and admission locates every quote in
that message's bytes, so a quote copied from the context is refused as unlocatable.

Context text is redacted before it is stored or sent, with every secret pattern and every PII
kind Engram knows (not only the policy's): the stored copy is then the same whichever policy
wrote it, and a window never carries more than the strictest policy would send. Pure.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from engram.formation.gates import redact
from engram.formation.pii import PII_KINDS
from engram.schemas.common import Role

ALL_PII_KINDS: tuple[str, ...] = tuple(sorted(PII_KINDS))


@dataclass(frozen=True, slots=True)
class ContextMessage:
    """One earlier message of the session, already redacted."""

    role: Role
    content: str


def context_text(content: str) -> str:
    """A message as context holds it: every secret and every known PII kind redacted."""
    return redact(content, pii_kinds=ALL_PII_KINDS)


def context_window(
    earlier: Sequence[ContextMessage], *, max_messages: int, max_chars: int
) -> tuple[ContextMessage, ...]:
    """The newest messages of ``earlier`` (oldest first) that fit both bounds, in order.

    The walk stops at the first message that does not fit: a window never skips a long message
    to reach older ones, so what the model reads is always the contiguous end of the session.
    """
    chosen: list[ContextMessage] = []
    used = 0
    for message in reversed(earlier):
        if len(chosen) >= max_messages or used + len(message.content) > max_chars:
            break
        chosen.append(message)
        used += len(message.content)
    return tuple(reversed(chosen))


def context_digest(window: Sequence[ContextMessage]) -> str:
    """SHA-256 of a window's roles and texts, in order: part of a model answer's input key."""
    digest = hashlib.sha256()
    for message in window:
        digest.update(f"{message.role.value}\x1f{message.content}\x1e".encode())
    return digest.hexdigest()
