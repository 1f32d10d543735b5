"""The deterministic extractor as an evaluation arm: an async callable over messages."""

from __future__ import annotations

from formation.deterministic import propose
from formation.proposals import Proposal
from schemas.episodes import Message


async def deterministic_arm(message: Message) -> list[Proposal]:
    return propose(message.content)
