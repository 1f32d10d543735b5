"""The deterministic extractor as an evaluation arm: an async callable over messages."""

from __future__ import annotations

from schemas.episodes import Message
from streams.formation.deterministic import propose
from streams.formation.proposals import Proposal


async def deterministic_arm(message: Message) -> list[Proposal]:
    return propose(message.content)
