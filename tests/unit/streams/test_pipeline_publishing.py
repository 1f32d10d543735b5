"""A claims batch Kafka failed to deliver is sent again, and its episode finishes — the
partition's acknowledgements are never stranded by a publish error. Pure: the producer is a
stand-in that answers each send with a future, the way aiokafka's does (the real broker's
paths are tests/faults/test_broker_outage.py and tests/integration/test_publish_rejections.py).
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

import asyncpg
from aiokafka.errors import NotLeaderForPartitionError

from engram.infra.backoff import Backoff
from engram.infra.metrics import PUBLISH_RETRIES
from engram.policies.in_force import default_policy
from engram.schemas.claims import SourcePosition
from engram.streams.formation_stage import FormationStage
from engram.streams.pipeline import FormationPipeline, Formed, Record, Work
from engram.streams.retrying import RetryPolicy
from engram.watermarks.backlog import BacklogEntry
from tests.support.conditions import wait_until
from tests.support.episodes import EPOCH, turn


class Producer:
    """Answers sends with futures; the first ``failing`` deliveries fail as a moving leader."""

    def __init__(self, failing: int):
        self.failing = failing
        self.sent: list[dict[str, Any]] = []

    async def send(self, **record: Any) -> asyncio.Future[Any]:
        self.sent.append(record)
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if self.failing:
            self.failing -= 1
            answer.set_exception(NotLeaderForPartitionError())
        else:
            answer.set_result("written")
        return answer


async def test_a_batch_whose_delivery_failed_is_sent_again_and_its_episode_acknowledged() -> None:
    producer, acked = Producer(failing=2), list[str]()
    stage = FormationStage(default_policy())
    pipeline = FormationPipeline(
        stage,
        cast(asyncpg.Pool, None),  # nothing here reaches the database
        send_claims=producer.send,
        send_dead_letter=producer.send,
        ack=acked.append,
        retry=RetryPolicy(1, 1.0, 5.0),
        max_bytes=1 << 20,
        max_in_flight=10,
        publish_backoff=Backoff(0.001, 0.002),
    )
    episode = turn("t", "ana", "p", "I live in Lisbon.", seq=1)
    record = Record("episodes", 0, 7, None, b"")
    pipeline.acks.track(0, 7, "episode 7")
    batch = await stage.form(episode, SourcePosition(topic="episodes", partition=0, offset=7))
    recorded: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    entry = BacklogEntry("episodes", 0, 7, "t", "p", episode.event_id, EPOCH, EPOCH)
    before = PUBLISH_RETRIES.labels("claims", "NotLeaderForPartitionError")._value.get()

    await pipeline._release(Formed(Work(record, episode, entry, True, recorded), batch))
    await wait_until(lambda: acked == ["episode 7"], timeout_s=5, what="the episode acknowledged")

    assert len(producer.sent) == 3 and len({r["value"] for r in producer.sent}) == 1
    assert PUBLISH_RETRIES.labels("claims", "NotLeaderForPartitionError")._value.get() == before + 2
    assert pipeline.oldest_unacknowledged_publish_s() == 0.0
    await pipeline.close()
