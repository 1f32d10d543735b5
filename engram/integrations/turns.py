"""What every adapter shares: whom its token names, and a framework's messages appended as one
turn of that principal's conversation, read back once the message index has it.

A framework message becomes an Engram message with the role that says who spoke — ``user`` for
the principal (the only words that can speak for them), ``assistant``, ``system`` or ``tool``
otherwise — so formation, corrections and forgetting treat a framework's history exactly as any
other turn.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from engram.client import AsyncEngram
from engram.schemas.api import LogPosition, Whoami
from engram.schemas.common import Role
from engram.schemas.episodes import Message, TurnAppended


@dataclass(frozen=True, slots=True)
class Said:
    """One message to append: who spoke (``role``), their words, and an optional ``author``
    (a name, a tool, or how an adapter marks a structured item)."""

    role: Role
    content: str
    author: str | None = None


class Conversation:
    """One session of one project, appended to and read for the principal its client's token
    names. ``wait_s`` bounds how long an append waits for the message index to hold it, so
    the next read shows it (0: return once appended)."""

    def __init__(
        self, engram: AsyncEngram, *, project: str, session: str, wait_s: float = 30.0
    ) -> None:
        self.engram = engram
        self.project = project
        self.session = session
        self.wait_s = wait_s
        self._who: Whoami | None = None

    async def who(self) -> Whoami:
        """The tenant and principal the token names, asked once."""
        if self._who is None:
            self._who = await self.engram.whoami()
        return self._who

    async def append(self, said: Sequence[Said]) -> LogPosition | None:
        """Append ``said`` as one turn (nothing for an empty list) and, unless ``wait_s`` is 0,
        wait until the message index has read it."""
        if not said:
            return None
        who = await self.who()
        turn = TurnAppended(
            event_id=uuid.uuid4(),
            tenant=who.tenant,
            principal=who.principal,
            project=self.project,
            session=self.session,
            occurred_at=datetime.now(UTC),
            messages=[
                Message(ordinal=i, role=s.role, content=s.content, author=s.author)
                for i, s in enumerate(said)
            ],
        )
        [where] = await self.engram.append_turns([turn])
        if self.wait_s > 0:
            await self.engram.wait_indexed(where, timeout_s=self.wait_s)
        return where


def refused(what: str, instead: str) -> NotImplementedError:
    """The error an adapter raises for an operation with no meaning in Engram: the episodic log
    is append-only ground truth, so nothing is removed by rewriting a history."""
    return NotImplementedError(
        f"{what} has no meaning in Engram: what was said stays on the episodic log, the ground "
        f"truth memory is derived from. {instead}"
    )


FORGET_INSTEAD = (
    "To take something back, correct or delete the belief (client.correct / client.delete, "
    "`engram beliefs reject|delete`), or forget the person (`engram principals forget`)."
)
