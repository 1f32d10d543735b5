"""The deterministic extractor as an evaluation arm: an async callable over messages."""

from __future__ import annotations

from engram.formation.deterministic import propose
from engram.formation.proposals import Proposal
from engram.schemas.episodes import Message


async def deterministic_arm(message: Message) -> list[Proposal]:
    return propose(message.content)
