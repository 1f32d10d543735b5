"""An agent runtime's use of Engram through the Python client: append a turn, wait until it has
formed, read what is believed with the exact words behind it, search it, correct a belief.

    engram tokens create --tenant default --principal ana     # prints the token once
    engram api &                                              # and `engram worker` running
    ENGRAM_TOKEN=engram_… python examples/client.py
"""

from __future__ import annotations

import asyncio
import os
import uuid
from datetime import UTC, datetime

from engram.client import AsyncEngram
from engram.schemas.common import Role
from engram.schemas.episodes import Message, TurnAppended


async def main() -> None:
    turn = TurnAppended(
        event_id=uuid.uuid4(),  # the episode's identity: reuse it when you retry
        tenant="default",
        principal="ana",
        project="garden-app",
        session="s1",
        occurred_at=datetime.now(UTC),
        messages=[Message(ordinal=0, role=Role.USER, content="I live in Lisbon.")],
    )
    url = os.environ.get("ENGRAM_URL", "http://127.0.0.1:8080")
    async with AsyncEngram(url, token=os.environ["ENGRAM_TOKEN"]) as engram:
        [where] = await engram.append_turns([turn])
        await engram.wait_formed(where, timeout_s=60)
        for belief in await engram.beliefs():
            quotes = ", ".join(
                f"“{e.quote}” [{e.span_start}:{e.span_end}]" for e in belief.evidence
            )
            print(f"{belief.belief_id}  {belief.statement}  ← {quotes}")
            if belief.relation == "lives_in":
                moved = await engram.correct(belief.belief_id, "changed", replacement="Porto")
                await engram.wait_formed(moved)
        print([b.statement for b in await engram.beliefs()])
        found = await engram.search("where do I live", limit=5)
        for hit in found.hits:
            print(f"{hit.score:.3f}  {hit.belief.statement}  ← {hit.belief.evidence[0].quote}")


if __name__ == "__main__":
    asyncio.run(main())
